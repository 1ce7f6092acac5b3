#!/bin/bash
# 2026-11-28 session 4, call 2: every GPU test of the list and the robustness suite on the CUDA backend,
# PETSc 3.26.1 with CUDA (the GMRES ones ran in call 1), four groups side by side; the OOM tests alone first.
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
out=${OUT:-out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
export FUSED_BUILD=build/petsc-3.26-cuda
# names of the GPU tests (expect gpu or gpuerror, after any petsc qualifier) that are in none of the groups
awk -F'|' '!/^#/ && NF>=4 { n=$1; gsub(/ /,"",n); e=$3; if (e ~ /gpu/) print n }' tests/list > $out/gpu-names.txt
rest=$(grep -Ev '^(gpu-cg-|gpu-long-cg|cudapetsc-cg|gpu-bcgs-|gpu-long-bcgs|cudapetsc-bcgs|gpu-gmres-|cudapetsc-gmres|robust)|gmres|-oom$' $out/gpu-names.txt | paste -sd'|')
timeout 120 bash tools/gpu-session.sh tests 'oom$' > $out/t0-oom.txt 2>&1
timeout 500 bash tools/gpu-session.sh tests '^gpu-cg-|^gpu-long-cg|^cudapetsc-cg' > $out/t1-cg.txt 2>&1 &
timeout 500 bash tools/gpu-session.sh tests '^gpu-bcgs-|^gpu-long-bcgs|^cudapetsc-bcgs' > $out/t2-bcgs.txt 2>&1 &
timeout 500 bash tools/gpu-session.sh tests '^robust' > $out/t3-robust.txt 2>&1 &
timeout 500 bash tools/gpu-session.sh tests "^($rest)\$" > $out/t4-rest.txt 2>&1 &
wait
for f in $out/t*.txt; do echo "== $f"; tail -1 $f; grep -E "^FAIL" $f | head -8; done
date -u >> $out/device.txt
