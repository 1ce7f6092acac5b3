#!/bin/bash
# call 6 (2026-11-26, evening): the CUDA runtime calls over 20 us of a bench process (an LD_PRELOAD shim,
# scratch), to see what the first solve of a process meets that later first solves do not
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
out=${OUT:-out}; mkdir -p $out
mkdir -p build/petsc-3.26-cuda/lib && xz -dc .carry/nowlib.so.xz > build/petsc-3.26-cuda/lib/libpetscfused.so
B=build/petsc-3.26-cuda/examples
export LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH
a="-sizes3d 0 -its 50 -reps 1 -mat_type aijcusparse -vec_type cuda -methods pcgfused"
LD_PRELOAD=$PWD/.carry/shim.so timeout 60 $B/bench -sizes2d 100 $a > $out/shim-100.txt 2>&1
LD_PRELOAD=$PWD/.carry/shim.so timeout 60 $B/bench -sizes2d 32,100 $a > $out/shim-32-100.txt 2>&1
grep -v SHIM $out/shim-100.txt | grep GPU; grep -c SHIM $out/shim-100.txt; grep SHIM $out/shim-100.txt | tail -60
