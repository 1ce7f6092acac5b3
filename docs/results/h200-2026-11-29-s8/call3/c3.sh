#!/bin/bash
# Session 8, call 3 (H200): a zero guess no longer uploaded (new) against 6cd03e5 (base),
# alternating, two rounds; host vectors and VECCUDA; then the pinned and shim check.
set -u
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
mkdir -p /tmp/base && xz -dc .carry/base/libpetscfused.so.xz > /tmp/base/libpetscfused.so
B=build/petsc-3.26-cuda
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PATH=$PATH:/usr/local/cuda/bin
O=$OUT/c3; mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; } > $O/gpu.txt 2>&1
G="-use_gpu_aware_mpi 0"
a="-sizes2d 100,316,1000 -sizes3d 64 -its 50 -reps 3 $G -methods pcgfused,pbcgsfused,pgmresfused"
for r in 1 2; do
  case $r in 1) order="base new";; 2) order="new base";; esac
  for v in $order; do
    if [ $v = base ]; then L=/tmp/base; else L=$PWD/$B/lib; fi
    LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 120 $B/examples/bench $a -mat_type aij -vec_type standard > $O/bench-host-$v-$r.txt 2>&1
    grep "GPU (CUDA)" $O/bench-host-$v-$r.txt | sed "s/^/host $v round $r: /" >> $O/ab.txt
    LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 120 $B/examples/bench $a -mat_type aijcusparse > $O/bench-cuda-$v-$r.txt 2>&1
    grep "GPU (CUDA)" $O/bench-cuda-$v-$r.txt | sed "s/^/cuda $v round $r: /" >> $O/ab.txt
  done
done
sort -s -k1,2 $O/ab.txt | sort -s -k5,5 -k7,7 > $O/ab-sorted.txt
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH
LD_PRELOAD=$PWD/.carry/shim.so timeout 60 $B/examples/bench -sizes2d 100 -sizes3d 0 -its 50 -reps 3 $G -mat_type aij -vec_type standard -methods pcgfused > $O/shim-pcgfused.txt 2>&1
FUSED_BUILD=$B timeout 200 bash tools/gpu-session.sh tests '^gpu-pinned|zeroguess|nonzero-guess|inplace' > $O/tests.txt 2>&1
echo "tests rc $?" >> $O/tests.txt
date -u >> $O/gpu.txt
cd $OUT && tar -cJf c3.tar.xz c3 && rm -rf c3
