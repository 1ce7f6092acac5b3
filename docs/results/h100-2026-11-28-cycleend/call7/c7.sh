#!/bin/bash
# 2026-11-28 session 3, call 7: the trace builds of fccbaec (trb) and of the spread's quotients made all at
# once (trn), alternating, two rounds: the marks of a 10^4-row solve, and the transient's 10^4-unknown steps
# (most steps adapt; the kernel ends each solve's cycle); then the GPU tests of pgmresfused on the plain build
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
out=${OUT:-out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
E=build/petsc-3.26-cuda/examples
run() { local lib=$1; shift; LD_LIBRARY_PATH=$PWD/$lib:$LD_LIBRARY_PATH timeout 120 "$@"; }
mkdir -p trb trn && xz -dc .carry/trace-fcc.so.xz > trb/libpetscfused.so && xz -dc .carry/trace-new.so.xz > trn/libpetscfused.so
for r in 1 2; do
  for t in trb trn; do
    echo "== $t round $r" >> $out/trace.txt
    FUSED_TRACE=1 run $t $E/bench -sizes2d 100 -sizes3d 0 -its 50 -reps 3 -mat_type aijcusparse -methods pgmresfused 2>&1 | grep PGMT | tail -1 >> $out/trace.txt
    echo "== $t round $r" >> $out/transient.txt
    run $t $E/transient -n 100 -steps 1000 -pc_type jacobi -methods pgmresfused -mat_type aijcusparse 2>&1 | grep -E "^pgmresfused|rror" >> $out/transient.txt
  done
done
date -u >> $out/device.txt
cat $out/transient.txt; cut -c1-900 $out/trace.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 300 bash tools/gpu-session.sh tests '^gpu-gmres-|^cudapetsc-gmres|compensated-gmres|compensated-norm-gmres|^robust-gmres' > $out/tests.txt 2>&1
tail -3 $out/tests.txt
