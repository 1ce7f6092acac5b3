#!/bin/bash
# Session 7, call 2 (H200): call 1's rule with an L2 criterion added (the
# single kernel where the basis fits in shared memory or a cycle's working
# set takes at most 3/4 of L2) against c7ad9f5 (base), alternating, two
# rounds; the GMRES GPU tests on the new build.
set -u
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
mkdir -p /tmp/base && xz -dc .carry/base/libpetscfused.so.xz > /tmp/base/libpetscfused.so
B=build/petsc-3.26-cuda
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PATH=$PATH:/usr/local/cuda/bin
O=$OUT/c2; mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; } > $O/gpu.txt 2>&1
G="-use_gpu_aware_mpi 0"
a="-sizes2d 100,316,362,400,448,512 -sizes3d 48,52,56,64 -its 100 -reps 3 -mat_type aijcusparse $G -methods pgmresfused"
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
for n in 48 52 64; do $B/examples/solve -problem lap3d -n $n -pc_type jacobi -methods pgmresfused -compare 0 -ksp_view $G > $O/view-3d-$n.txt 2>&1; done
FUSED_BUILD=$B timeout 330 bash tools/gpu-session.sh tests '^gpu-gmres-|^cudapetsc-gmres|^gpu-compensated-gmres|^gpu-long-gmres' > $O/tests.txt 2>&1
echo "tests rc $?" >> $O/tests.txt
date -u >> $O/gpu.txt
cd $OUT && tar -cJf c2.tar.xz c2 && rm -rf c2
