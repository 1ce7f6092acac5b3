#!/bin/bash
# shim trace of bench's solves at 10^4 rows: every CUDA runtime call, pgmresfused against pcgfused
mkdir -p /opt && tar -xJf .carry/builds.tar.xz && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
out=${OUT:-out}; mkdir -p $out
B=build/petsc-3.26-cuda/examples
export LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt
a="-sizes2d 100 -sizes3d 0 -its 50 -reps 3 -mat_type aijcusparse -vec_type cuda"
for m in pgmresfused pcgfused; do
  timeout 60 $B/bench $a -methods $m > $out/bench-$m.txt 2>&1
  LD_PRELOAD=$PWD/.carry/shim.so timeout 60 $B/bench $a -methods $m > $out/shim-$m.txt 2>&1
done
for m in pgmresfused pcgfused; do timeout 60 $B/bench $a -methods $m >> $out/bench-$m.txt 2>&1; done
grep GPU $out/bench-*.txt
grep -c SHIM $out/shim-*.txt
