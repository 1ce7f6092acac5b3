#!/bin/bash
# 2026-11-28 session 5, call 6: call 4 saw pgmresfused's step at 10^4 rows 0.2-0.3 us slower with its single
# kernel made ready at KSPSetUp (new, 963da07), though no kernel changed. Three libraries alternating, four
# rounds: base (55366fb), new, and facts (the launch facts made ready at KSPSetUp, the partial sums' buffer
# still made by the first solve, as in base); bench at 10^4 and 99,856 rows, 50 iterations.
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/bench-only.tar.xz
for v in base new facts; do mkdir -p /tmp/$v && xz -dc .carry/$v-lib.so.xz > /tmp/$v/libpetscfused.so; done
out=${OUT:-out}/c6; mkdir -p $out
B=build/petsc-3.26-cuda
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G="-use_gpu_aware_mpi 0"
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
a="-sizes2d 100,316 -sizes3d 0 -its 50 -reps 3 -mat_type aijcusparse $G -methods pgmresfused"
for r in 1 2 3 4; do
  case $r in 1) order="base new facts";; 2) order="facts base new";; 3) order="new facts base";; 4) order="base facts new";; esac
  for v in $order; do
    LD_LIBRARY_PATH=/tmp/$v:$LD_LIBRARY_PATH timeout 60 $B/examples/bench $a 2>&1 | grep "GPU (CUDA)" | sed "s/^/$v round $r: /" >> $out/ab.txt
  done
done
sort -s -k1,1 $out/ab.txt
date -u >> $out/device.txt
cd ${OUT:-out} && tar -cJf c6.tar.xz c6 && rm -rf c6
