#!/bin/bash
# 2026-11-28 session 3, call 1: the build before (8b33310, base/) and the cycle's end from the blocks' own R
# (build/) alternating (base: only its library; the examples are the same): pgmresfused at 10^4 / 99,856 rows
# (VECCUDA), the transient's 10^4 steps; a trace build of the new code (marks inside the cycle's end); then the
# GPU tests of pgmresfused on the new build
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
mkdir -p base/build/petsc-3.26-cuda/lib && xz -dc .carry/base-lib.so.xz > base/build/petsc-3.26-cuda/lib/libpetscfused.so && tar -xJf .carry/builds-new.tar.xz
out=${OUT:-out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
E=build/petsc-3.26-cuda/examples
run() { local lib=$1; shift; LD_LIBRARY_PATH=$PWD/$lib:$LD_LIBRARY_PATH timeout 120 "$@"; }
mkdir -p trn && xz -dc .carry/trace-new.so.xz > trn/libpetscfused.so
for t in trn; do
  echo "== $t" >> $out/trace.txt
  FUSED_TRACE=1 run $t $E/bench -sizes2d 100 -sizes3d 0 -its 50 -reps 3 -mat_type aijcusparse -methods pgmresfused 2>&1 | grep PGMT | tail -2 >> $out/trace.txt
done
a="-sizes2d 100,316 -sizes3d 0 -its 50 -reps 5 -mat_type aijcusparse -methods pgmresfused"
for r in 1 2 3; do
  for b in base new; do
    if [ $b = base ]; then lib=base/build/petsc-3.26-cuda/lib; else lib=build/petsc-3.26-cuda/lib; fi
    echo "== $b round $r" >> $out/bench.txt
    run $lib $E/bench $a 2>&1 | grep -E "GPU \(CUDA\)|rror" >> $out/bench.txt
    echo "== $b round $r" >> $out/transient.txt
    run $lib $E/transient -n 100 -steps 1000 -pc_type jacobi -methods pgmresfused -mat_type aijcusparse 2>&1 | grep -E "fused|rror" >> $out/transient.txt
  done
done
cat $out/bench.txt $out/transient.txt
cut -c1-2500 $out/trace.txt
date -u >> $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 300 bash tools/gpu-session.sh tests '^gpu-gmres-|^cudapetsc-gmres|compensated-gmres|compensated-norm-gmres|^robust-gmres' > $out/tests.txt 2>&1
tail -8 $out/tests.txt
