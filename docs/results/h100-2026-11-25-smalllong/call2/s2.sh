#!/bin/bash
# call 2: GPU tests of the long-row changes; per iteration: before the session (base), now, now with CG's single kernel batching long rows (b8)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
T0=$(date +%s)
FUSED_BUILD=build/petsc-3.26-cuda timeout 300 bash tools/gpu-session.sh tests 'gpu-long|hybcuda|formats|devicecsr|gpu-spmv' > $out/gpu-tests.txt 2>&1
tail -3 $out/gpu-tests.txt; grep -E "^FAIL" $out/gpu-tests.txt | head
echo "tests done $(( $(date +%s) - T0 ))s"
real=tests/data/circuit_1.mtx,tests/data/memplus.mtx,tests/data/bcsstk08.mtx
for round in 1 2; do for v in base now b8; do
  case $v in base) L=$PWD/.carry/baselib;; now) L=$PWD/build/petsc-3.26-cuda/lib;; b8) L=$PWD/.carry/b8lib;; esac
  M=pcgfused,pbcgsfused,pgmresfused; [ $v = b8 ] && M=pcgfused
  echo "== $v round $round" >> $out/bench.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 150 $B/bench -sizes2d 100,1000 -sizes3d 0 -arrow 100000,1000000 -powerlaw 100000,1000000 -f $real -its 50 -methods $M -mat_type aij -vec_type standard -csv $out/bench.csv -label $v-$round 2>&1 | grep -E 'GPU|rror' >> $out/bench.txt
  echo "$v $round $(( $(date +%s) - T0 ))s"
done; done
LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH timeout 60 $B/solve -problem arrow -n 600000 -ksp_type pcgfused -pc_type jacobi -ksp_view > $out/view-arrow.txt 2>&1
grep -i "device loop\|graph\|cooperative\|long rows" $out/view-arrow.txt | head -5
echo "all done $(( $(date +%s) - T0 ))s"
