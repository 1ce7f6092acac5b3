#!/bin/bash
# trace build (scratch, not kept): host timers around pgmresfused's solve and globaltimer/clock64 marks in its single kernel
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
[ -d build/petsc-3.26-cuda ] || tar -xJf .carry/builds.tar.xz
out=${OUT:-out}; mkdir -p $out
mkdir -p .carry/tr && xz -dc .carry/tracelib.so.xz > .carry/tr/libpetscfused.so
B=build/petsc-3.26-cuda/examples
a="-sizes2d 100 -sizes3d 0 -its 50 -reps 3 -mat_type aijcusparse -methods pgmresfused"
for r in 1 2; do
  LD_LIBRARY_PATH=$PWD/.carry/tr:$LD_LIBRARY_PATH FUSED_TRACE=1 timeout 60 $B/bench $a > $out/trace-$r.txt 2>&1
  LD_LIBRARY_PATH=$PWD/.carry/tr:$LD_LIBRARY_PATH timeout 60 $B/bench $a > $out/notrace-$r.txt 2>&1
done
grep GPU $out/*.txt
grep HOSTSOLVE $out/trace-1.txt | tail -8
grep HOSTSTART $out/trace-1.txt | tail -8
grep PGMT $out/trace-1.txt | tail -3 | cut -c1-3000
