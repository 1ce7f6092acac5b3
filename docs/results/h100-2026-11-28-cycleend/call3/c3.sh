#!/bin/bash
# 2026-11-28 session 3, call 3: the trace builds of 8b33310 (trb) and of the new code (trn; rjj and xi made once a step for the record, the blocks' copies and the next step), the same marks
# (trb also after the barrier the new code drops), alternating; then bench at 10^4 rows with 150-iteration
# solves, the two trace libraries alternating (without FUSED_TRACE their marks are the only difference from
# the plain builds; the carry has no room for the plain base library beside them)
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
mkdir -p trn && xz -dc .carry/trace-new.so.xz > trn/libpetscfused.so
out=${OUT:-out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
E=build/petsc-3.26-cuda/examples
run() { local lib=$1; shift; LD_LIBRARY_PATH=$PWD/$lib:$LD_LIBRARY_PATH timeout 120 "$@"; }
mkdir -p trb && xz -dc .carry/trace-base.so.xz > trb/libpetscfused.so
for r in 1; do
  for t in trb trn; do
    echo "== $t round $r" >> $out/trace.txt
    FUSED_TRACE=1 run $t $E/bench -sizes2d 100 -sizes3d 0 -its 50 -reps 3 -mat_type aijcusparse -methods pgmresfused 2>&1 | grep PGMT | tail -1 >> $out/trace.txt
  done
done
a="-sizes2d 100 -sizes3d 0 -its 150 -reps 5 -mat_type aijcusparse -methods pgmresfused"
for r in 1 2 3; do
  for b in trb trn; do
    lib=$b
    echo "== $b round $r" >> $out/bench.txt
    run $lib $E/bench $a 2>&1 | grep -E "GPU \(CUDA\)|rror" >> $out/bench.txt
  done
done
date -u >> $out/device.txt
cat $out/bench.txt; cut -c1-1800 $out/trace.txt
echo "== plain new" >> $out/bench.txt
run build/petsc-3.26-cuda/lib $E/bench $a 2>&1 | grep -E "GPU \(CUDA\)|rror" >> $out/bench.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 300 bash tools/gpu-session.sh tests '^gpu-gmres-|^cudapetsc-gmres|compensated-gmres|compensated-norm-gmres|^robust-gmres' > $out/tests.txt 2>&1
tail -4 $out/tests.txt
tail -2 $out/bench.txt
