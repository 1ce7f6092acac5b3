#!/bin/bash
# 2026-11-28 session 3, call 5: the plain builds, 8b33310 (base: its library; the examples are the same) and
# fccbaec (the blocks' own R at a cycle's end, the back solve in registers), alternating, three rounds:
# pgmresfused per iteration at 10^4, 99,856 and 10^6 rows and 64^3 (150-iteration solves, VECCUDA), and the
# transient's 10^4-unknown steps
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
mkdir -p base/build/petsc-3.26-cuda/lib && xz -dc .carry/base-lib.so.xz > base/build/petsc-3.26-cuda/lib/libpetscfused.so && tar -xJf .carry/builds-new.tar.xz
out=${OUT:-out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
E=build/petsc-3.26-cuda/examples
run() { local lib=$1; shift; LD_LIBRARY_PATH=$PWD/$lib:$LD_LIBRARY_PATH timeout 150 "$@"; }
a="-sizes2d 100,316,1000 -sizes3d 64 -its 150 -reps 3 -mat_type aijcusparse -methods pgmresfused"
for r in 1 2 3; do
  if [ $r = 2 ]; then order="new base"; else order="base new"; fi
  for b in $order; do
    if [ $b = base ]; then lib=base/build/petsc-3.26-cuda/lib; else lib=build/petsc-3.26-cuda/lib; fi
    echo "== $b round $r" >> $out/bench.txt
    run $lib $E/bench $a 2>&1 | grep -E "GPU \(CUDA\)|rror" >> $out/bench.txt
    echo "== $b round $r" >> $out/transient.txt
    run $lib $E/transient -n 100 -steps 1000 -pc_type jacobi -methods pgmresfused -mat_type aijcusparse 2>&1 | grep -E "^pgmresfused|rror" >> $out/transient.txt
  done
done
date -u >> $out/device.txt
cat $out/bench.txt $out/transient.txt
