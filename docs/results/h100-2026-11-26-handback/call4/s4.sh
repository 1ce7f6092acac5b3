#!/bin/bash
# call 4 (2026-11-26, evening): what the first solve of a process pays at 10^4 rows: bench's first problem,
# CUDA's lazy loading (default) against CUDA_MODULE_LOADING=EAGER, and the methods in either order
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p build/petsc-3.26-cuda/lib && xz -dc .carry/nowlib.so.xz > build/petsc-3.26-cuda/lib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
export LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH
a="-sizes3d 0 -its 50 -reps 5 -mat_type aijcusparse -vec_type cuda"
for round in 1 2; do
  for mode in LAZY EAGER; do
    for m in pcgfused,pbcgsfused,pgmresfused pgmresfused,pbcgsfused,pcgfused; do
      echo "== round $round $mode $m sizes 100" >> $out/first.txt
      /usr/bin/time -f "process %e s" env CUDA_MODULE_LOADING=$mode timeout 60 $B/bench -sizes2d 100 $a -methods $m 2>&1 | grep -E 'GPU|rror|process' >> $out/first.txt
    done
  done
  echo "== round $round LAZY sizes 32,100" >> $out/first.txt
  timeout 60 $B/bench -sizes2d 32,100 $a -methods pcgfused,pbcgsfused,pgmresfused 2>&1 | grep -E 'GPU|rror' >> $out/first.txt
done
cat $out/first.txt
