#!/bin/bash
# call 4 (2026-11-26, night): the code of b76c110. pcgfused on the irregular matrices of 10^6 and 10^7 rows
# (arrow, power law; both symmetric) with -problem_symmetric, prev (1babdb3) and now alternating, two rounds;
# then the rest of the GPU list: the robustness suite on the CUDA backend, soak, long rows, SpMV, compensated
# sums, transient and hybcuda
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p .carry/prevlib && xz -dc .carry/prevlib.so.xz > .carry/prevlib/libpetscfused.so
mkdir -p build/petsc-3.26-cuda/lib && xz -dc .carry/nowlib.so.xz > build/petsc-3.26-cuda/lib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
for round in 1 2; do for v in prev now; do
  L=$PWD/.carry/prevlib; [ $v = now ] && L=$PWD/build/petsc-3.26-cuda/lib
  echo "== $v round $round irregular -problem_symmetric" >> $out/irregular.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 70 $B/bench -sizes2d 0 -sizes3d 0 -arrow 1000000,10000000 -powerlaw 1000000,10000000 -its 50 -reps 3 -methods pcgfused -mat_type aijcusparse -vec_type cuda -problem_symmetric 2>&1 | grep -E 'GPU|rror|rows' >> $out/irregular.txt
done; done
cat $out/irregular.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 330 bash tools/gpu-session.sh tests '^robust|^gpu-(soak|long|spmv|robust|compensated|device)|transient|hybcuda|compensated' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -E "^FAIL" -A3 $out/gpu-tests.txt | head -30
