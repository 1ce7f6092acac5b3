#!/bin/bash
# Session 7, call 1 (H200): pgmresfused's single kernel only where its basis
# fits in shared memory (new) against 2^19 rows alone (base, c7ad9f5),
# alternating, two rounds; the GMRES GPU tests on the new build; where a
# 10^4-row solve with host vectors spends its time (nsys, if the device has it).
set -u
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
mkdir -p /tmp/base && xz -dc .carry/base/libpetscfused.so.xz > /tmp/base/libpetscfused.so
B=build/petsc-3.26-cuda
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PATH=$PATH:/usr/local/cuda/bin
O=$OUT/c1; mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; which nsys ncu; } > $O/gpu.txt 2>&1
G="-use_gpu_aware_mpi 0"
a="-sizes2d 100,316,362,448,512,724 -sizes3d 48,64,80 -its 100 -reps 3 -mat_type aijcusparse $G -methods pgmresfused"
for r in 1 2; do
  case $r in 1) order="base new";; 2) order="new base";; esac
  for v in $order; do
    if [ $v = base ]; then L=/tmp/base; else L=$PWD/$B/lib; fi
    LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 120 $B/examples/bench $a > $O/bench-$v-$r.txt 2>&1
    grep "GPU (CUDA)" $O/bench-$v-$r.txt | sed "s/^/$v round $r: /" >> $O/ab.txt
  done
done
sort -s -k1,1 $O/ab.txt > $O/ab-sorted.txt
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH
$B/examples/solve -problem lap3d -n 64 -pc_type jacobi -methods pgmresfused -compare 0 -ksp_view $G > $O/view-64.txt 2>&1
$B/examples/solve -problem lap2d -n 316 -pc_type jacobi -methods pgmresfused -compare 0 -ksp_view $G > $O/view-316.txt 2>&1
FUSED_BUILD=$B timeout 330 bash tools/gpu-session.sh tests '^gpu-gmres-|^cudapetsc-gmres|^gpu-compensated-gmres|^gpu-long-gmres' > $O/tests.txt 2>&1
echo "tests rc $?" >> $O/tests.txt
if command -v nsys > /dev/null; then
  timeout 90 nsys profile -o $O/hv --force-overwrite true -t cuda,osrt $B/examples/bench -sizes2d 100 -sizes3d 0 -its 50 -reps 5 -mat_type aij -vec_type standard $G -methods pcgfused > $O/nsys-run.txt 2>&1
  timeout 60 nsys stats --report cuda_api_trace --report cuda_gpu_trace --format csv -o $O/hv $O/hv.nsys-rep > $O/nsys-stats.txt 2>&1
  rm -f $O/hv.sqlite
fi
date -u >> $O/gpu.txt
cd $OUT && tar -cJf c1.tar.xz c1 && rm -rf c1
