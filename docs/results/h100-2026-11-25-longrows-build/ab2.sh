#!/bin/bash
# per iteration: before (.carry/prevlib), batch1 (.carry/batch1: long rows batched in their own kernels), this build (also in the single kernels)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
out=${OUT:-out}; mkdir -p $out
nvidia-smi --query-gpu=name --format=csv,noheader | tee $out/device2.txt; date -u | tee -a $out/device2.txt
B=build/petsc-3.26-cuda/examples
real=tests/data/circuit_1.mtx,tests/data/memplus.mtx,tests/data/bcsstk08.mtx
for round in 1 2; do
  for v in before batch1 after; do
    case $v in before) L=$PWD/.carry/prevlib;; batch1) L=$PWD/.carry/batch1;; after) L=$PWD/build/petsc-3.26-cuda/lib;; esac
    echo "== $v round $round" >> $out/bench2.txt
    LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH $B/bench -sizes2d 100,316,1000 -sizes3d 0 -arrow 100000,1000000 -powerlaw 100000,1000000 -f $real -its 50 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij -vec_type standard -csv $out/bench2.csv -label $v-$round 2>&1 | grep -E 'GPU|rror' >> $out/bench2.txt || true
  done
done
python3 - $out/bench2.txt <<'PY'
import sys,collections,re
cur=None; d=collections.OrderedDict()
for l in open(sys.argv[1]):
    if l.startswith('=='): cur=l.split()[1]; continue
    f=l.split()
    if len(f)>6 and 'GPU' in l:
        key=(f[0],f[2]); d.setdefault(key,collections.OrderedDict()).setdefault(cur,[]).append(f[6])
print("%-20s %-12s %-14s %-14s %-14s"%("matrix","method","before","batch1","after"))
for (m,meth),v in d.items():
    print("%-20s %-12s %-14s %-14s %-14s"%(m,meth,",".join(v.get('before',[])),",".join(v.get('batch1',[])),",".join(v.get('after',[]))))
PY
