#!/bin/bash
# call 2 (2026-11-26): the landing build (src as at 91be3b0): the GPU tests that did not run on that build in its
# session ('^gpu-(cg|bcgs)-|^cudapetsc-'), the robustness suite on the CUDA backend, and -log_view of repeated
# 10^4-row solves with VECCUDA operands (where a solve's time outside its iterations goes)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
for m in pcgfused pbcgsfused pgmresfused; do
  LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH timeout 60 $B/bench -sizes2d 100 -sizes3d 0 -its 50 -reps 20 -methods $m -mat_type aijcusparse -vec_type cuda -log_view > $out/logview-$m.txt 2>&1
  grep -E 'GPU \(CUDA\)|^KSPSolve|^Fused|^PCGFused|^PBCGSFused|^PGMRESFused|^PCApply|^VecCopy|^MatMult ' $out/logview-$m.txt | cut -c1-120
done
FUSED_BUILD=build/petsc-3.26-cuda timeout 300 bash tools/gpu-session.sh tests '^gpu-(cg|bcgs)-|^cudapetsc-' > $out/gpu-tests-a.txt 2>&1
tail -1 $out/gpu-tests-a.txt; grep -c '^PASS' $out/gpu-tests-a.txt; grep -E "^FAIL" $out/gpu-tests-a.txt | head
FUSED_BUILD=build/petsc-3.26-cuda timeout 200 bash tools/gpu-session.sh tests '^robust' > $out/gpu-tests-robust.txt 2>&1
tail -1 $out/gpu-tests-robust.txt; grep -c '^PASS' $out/gpu-tests-robust.txt; grep -E "^FAIL" $out/gpu-tests-robust.txt | head
