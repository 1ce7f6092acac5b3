#!/bin/bash
# before/after: the long rows' build and product (issue 22); this build and .carry/prevlib alternating
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
lib=$(find / -name 'libcusparse.so.12*' -not -path '/proc/*' 2>/dev/null | head -1); [ -n "$lib" ] && export LD_LIBRARY_PATH=$(dirname "$lib"):$LD_LIBRARY_PATH
out=${OUT:-out}; mkdir -p $out
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/device.txt
date -u | tee -a $out/device.txt
B=build/petsc-3.26-cuda/examples
real=tests/data/circuit_1.mtx,tests/data/memplus.mtx,tests/data/bcsstk08.mtx
for round in ${ROUNDS:-1 2}; do
  for v in before after; do
    if [ $v = before ]; then L=$PWD/.carry/prevlib; else L=$PWD/build/petsc-3.26-cuda/lib; fi
    echo "== $v round $round" | tee -a $out/spmv.txt $out/bench.txt
    LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH $B/spmv -sizes2d 1000 -sizes3d 0 -arrow 100000,1000000,10000000 -powerlaw 100000,1000000,10000000 -f $real -reps 50 -csv $out/spmv.csv -label $v-$round >> $out/spmv.txt 2>&1 || echo "spmv failed $?" >> $out/spmv.txt
    LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH $B/bench -sizes2d 0 -sizes3d 0 -arrow 100000,1000000 -powerlaw 100000,1000000 -f $real -its 50 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij -vec_type standard -csv $out/bench.csv -label $v-$round 2>&1 | grep -E 'GPU|rror' >> $out/bench.txt || true
    LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH $B/bench -sizes2d 100,1000 -sizes3d 160 -its 100 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij -vec_type standard -csv $out/bench-stencil.csv -label $v-$round 2>&1 | grep -E 'GPU|rror' >> $out/bench.txt || true
  done
done
grep -E '^==|arrow|powerlaw|circuit|memplus|bcsstk|lap' $out/spmv.txt | cut -c1-150
cat $out/bench.txt | cut -c1-160
