#!/bin/bash
# call 7 (2026-11-27): the device copy is checked against its transpose only where the method uses it
# (pcgfused, one rank, A's symmetry unknown to PETSc) and in hybcuda matrices. The CG/symmetry GPU tests, then
# the build before (prev = 7df6aac) and this one alternating: first solve (the copy's build in it) and us per
# iteration at 160^3, the three methods, A not marked symmetric.
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
tar -xJf .carry/builds.tar.xz
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout ${TESTS_S:-300} bash tools/gpu-session.sh tests "${TESTS:-symmetric|^gpu-cg-|hybcuda|^cudapetsc-cg|^gpu-spmv}" > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -E "^FAIL" -A3 $out/gpu-tests.txt | head -40
N=build/petsc-3.26-cuda; P=.carry/prev
run() {
  local v=$1 p=$2; shift 2
  if [ $v = prev ]; then LD_LIBRARY_PATH=$PWD/$P:$LD_LIBRARY_PATH timeout 150 $P/$p "$@"; else LD_LIBRARY_PATH=$PWD/$N/lib:$LD_LIBRARY_PATH timeout 150 $N/examples/$p "$@"; fi
}
for round in 1 2; do for v in prev now; do
  echo "== $v round $round" >> $out/bench160.txt
  run $v bench -sizes2d 0 -sizes3d 160 -its 50 -reps 3 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aijcusparse -vec_type cuda 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench160.txt
done; done
for v in prev now; do for m in pcgfused pgmresfused; do
  echo "== $v $m: the copy's build (-log_view FusedToDevice)" >> $out/setup160.txt
  run $v solve -problem lap3d -n 160 -methods $m -pc_type jacobi -mat_type aijcusparse -vec_type cuda -compare 0 -log_view 2>&1 | grep -E "^FusedToDevice|^KSPSetUp|^KSPSolve |rror" >> $out/setup160.txt
done; done
cat $out/bench160.txt $out/setup160.txt
