#!/bin/bash
# call 8 (2026-11-26, evening): a scratch build of f3bd952 with host timers around pcgfused's solve (FUSED_TRACE,
# not kept): where the first solve of a process spends its extra time, against a later problem's first solve
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
out=${OUT:-out}; mkdir -p $out
mkdir -p .carry/tr && xz -dc .carry/tracelib.so.xz > .carry/tr/libpetscfused.so
B=build/petsc-3.26-cuda/examples
export LD_LIBRARY_PATH=$PWD/.carry/tr:$LD_LIBRARY_PATH FUSED_TRACE=1
a="-sizes3d 0 -its 50 -reps 1 -mat_type aijcusparse -vec_type cuda -methods pcgfused"
for r in 1 2; do
  echo "== round $r sizes 100" >> $out/trace.txt
  timeout 60 $B/bench -sizes2d 100 $a 2>&1 | grep -E "GPU|TRACE|rror" >> $out/trace.txt
  echo "== round $r sizes 32,100" >> $out/trace.txt
  timeout 60 $B/bench -sizes2d 32,100 $a 2>&1 | grep -E "GPU|TRACE|rror" >> $out/trace.txt
done
cat $out/trace.txt
