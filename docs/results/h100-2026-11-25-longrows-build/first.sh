#!/bin/bash
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH
lib=$(find / -name 'libcusparse.so.12*' -not -path '/proc/*' 2>/dev/null | head -1); [ -n "$lib" ] && export LD_LIBRARY_PATH=$(dirname "$lib"):$LD_LIBRARY_PATH
out=${OUT:-out}; mkdir -p $out
B=build/petsc-3.26-cuda/examples
date -u > $out/first.txt
for r in 1 2; do
for mode in lazy eager host; do
  echo "== $mode run $r" >> $out/first.txt
  case $mode in
    lazy) $B/bench -sizes2d 32,100 -sizes3d 0 -its 50 -methods pcgfused,pbcgsfused,pgmresfused 2>&1 | grep -E 'GPU|rror' >> $out/first.txt;;
    eager) CUDA_MODULE_LOADING=EAGER $B/bench -sizes2d 32,100 -sizes3d 0 -its 50 -methods pcgfused,pbcgsfused,pgmresfused 2>&1 | grep -E 'GPU|rror' >> $out/first.txt;;
    host) $B/bench -sizes2d 32,100 -sizes3d 0 -its 50 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij -vec_type standard 2>&1 | grep -E 'GPU|rror' >> $out/first.txt;;
  esac
done; done
$B/spmv -sizes2d 1000 -sizes3d 0 -arrow 100000,1000000,10000000 -powerlaw 1000000 -reps 20 > $out/spmv-build.txt 2>&1
cat $out/first.txt; grep -E 'arrow|powerlaw|lap' $out/spmv-build.txt | cut -c1-150
