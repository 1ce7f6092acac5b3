#!/bin/bash
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH
out=${OUT:-out}; mkdir -p $out
B=build/petsc-3.26-cuda/examples
date -u > $out/first2.txt
for r in 1 2; do
  for v in before after; do
    if [ $v = before ]; then L=$PWD/.carry/loadonly; else L=$PWD/build/petsc-3.26-cuda/lib; fi
    echo "== $v run $r" >> $out/first2.txt
    LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH $B/bench -sizes2d 32,100 -sizes3d 0 -its 50 -methods pcgfused,pbcgsfused,pgmresfused 2>&1 | grep -E 'GPU|rror' >> $out/first2.txt
  done
done
cat $out/first2.txt
