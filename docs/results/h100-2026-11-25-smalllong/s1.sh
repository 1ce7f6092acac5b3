#!/bin/bash
# call 1: long-row limit on small matrices (base vs lim16), single kernel vs graph with long rows at 10^6, nsys of small solves
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
NEW=$PWD/build/petsc-3.26-cuda/lib; BASE=$PWD/.carry/baselib
real=tests/data/circuit_1.mtx,tests/data/memplus.mtx,tests/data/bcsstk08.mtx,tests/data/tumorAntiAngiogenesis_2.mtx,tests/data/rdb2048.mtx
T0=$(date +%s)
for round in 1 2; do for v in base lim16; do
  case $v in base) L=$BASE;; lim16) L=$NEW;; esac
  echo "== $v round $round" >> $out/spmv.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 100 $B/spmv -sizes2d 0 -sizes3d 0 -arrow 100000 -powerlaw 100000 -f $real -reps 50 >> $out/spmv.txt 2>&1
done; done
echo "spmv done $(( $(date +%s) - T0 ))s"
for round in 1 2; do for v in base lim16; do
  case $v in base) L=$BASE;; lim16) L=$NEW;; esac
  echo "== $v round $round" >> $out/bench.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 120 $B/bench -sizes2d 100 -sizes3d 0 -f $real -its 50 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij -vec_type standard -csv $out/bench.csv -label $v-$round 2>&1 | grep -E 'GPU|rror' >> $out/bench.txt
done; done
echo "bench done $(( $(date +%s) - T0 ))s"
for round in 1 2; do for v in single graph; do
  case $v in single) O="";; graph) O="-ksp_fused_single_kernel_rows 0";; esac
  echo "== $v round $round" >> $out/graph.txt
  LD_LIBRARY_PATH=$BASE:$LD_LIBRARY_PATH timeout 120 $B/bench -sizes2d 0 -sizes3d 0 -arrow 100000,1000000 -powerlaw 100000,1000000 -its 50 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij -vec_type standard $O -csv $out/graph.csv -label $v-$round 2>&1 | grep -E 'GPU|rror' >> $out/graph.txt
done; done
echo "graph done $(( $(date +%s) - T0 ))s"
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
echo "nsys: $NSYS"
if [ -n "$NSYS" ]; then
  LD_LIBRARY_PATH=$BASE:$LD_LIBRARY_PATH timeout 120 $NSYS profile -t cuda,osrt --force-overwrite true -o $out/small $B/bench -sizes2d 100 -sizes3d 0 -its 50 -reps 20 -methods pcgfused -mat_type aijcusparse -vec_type cuda -use_gpu_aware_mpi 0 > $out/nsys-run.txt 2>&1
  timeout 100 $NSYS stats -r cuda_api_sum,cuda_gpu_kern_sum,cuda_api_trace --format csv -o $out/small $out/small.nsys-rep > /dev/null 2>&1
  ls $out
fi
echo "all done $(( $(date +%s) - T0 ))s"
