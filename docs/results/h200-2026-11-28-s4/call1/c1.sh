#!/bin/bash
# 2026-11-28 session 4, call 1: base (the library of a4839e2) against the change (the cycle scratch's
# layout in one accessor, PGMRESCycleKeptIn(); GPU tests at restart 64 and 65), alternating, two rounds:
# pgmresfused per iteration at 10^4 rows (150-iteration solves, VECCUDA); then the GMRES GPU tests.
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
mkdir -p base/build/petsc-3.26-cuda/lib && xz -dc .carry/base-lib.so.xz > base/build/petsc-3.26-cuda/lib/libpetscfused.so && tar -xJf .carry/builds-new.tar.xz
out=${OUT:-out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
E=build/petsc-3.26-cuda/examples
run() { local lib=$1; shift; LD_LIBRARY_PATH=$PWD/$lib:$LD_LIBRARY_PATH timeout 150 "$@"; }
a="-sizes2d 100 -sizes3d 0 -its 150 -reps 3 -mat_type aijcusparse -methods pgmresfused"
for r in 1 2; do
  if [ $r = 2 ]; then order="new base"; else order="base new"; fi
  for b in $order; do
    if [ $b = base ]; then lib=base/build/petsc-3.26-cuda/lib; else lib=build/petsc-3.26-cuda/lib; fi
    echo "== $b round $r" >> $out/bench.txt
    run $lib $E/bench $a 2>&1 | grep -E "GPU \(CUDA\)|rror" >> $out/bench.txt
  done
done
cat $out/bench.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 420 bash tools/gpu-session.sh tests '^gpu-gmres-|^cudapetsc-gmres|compensated-gmres|compensated-norm-gmres|^robust-gmres|robust-bcgs-memplus' > $out/tests.txt 2>&1
tail -5 $out/tests.txt; grep -E "^FAIL|FAIL:" $out/tests.txt | head
date -u >> $out/device.txt
