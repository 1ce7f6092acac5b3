#!/bin/bash
# Session 8, call 2 (H200): every CUDA runtime call of bench's solves at 10^4 rows with host vectors (shim)
set -u
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
B=build/petsc-3.26-cuda
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH
O=$OUT/c2; mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; } > $O/gpu.txt 2>&1
G="-use_gpu_aware_mpi 0"
a="-sizes2d 100 -sizes3d 0 -its 50 -reps 3 -mat_type aij -vec_type standard $G"
for m in pcgfused pbcgsfused pgmresfused; do
  timeout 60 $B/examples/bench $a -methods $m > $O/bench-$m.txt 2>&1
  LD_PRELOAD=$PWD/.carry/shim.so timeout 60 $B/examples/bench $a -methods $m > $O/shim-$m.txt 2>&1
  timeout 60 $B/examples/bench $a -methods $m -vec_type cuda -mat_type aijcusparse > $O/bench-cuda-$m.txt 2>&1
  LD_PRELOAD=$PWD/.carry/shim.so timeout 60 $B/examples/bench $a -methods $m -vec_type cuda -mat_type aijcusparse > $O/shim-cuda-$m.txt 2>&1
  timeout 60 $B/examples/bench $a -methods $m >> $O/bench-$m.txt 2>&1
done
date -u >> $O/gpu.txt
cd $OUT && tar -cJf c2.tar.xz c2 && rm -rf c2
