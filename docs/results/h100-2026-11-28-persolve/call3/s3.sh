#!/bin/bash
# 2026-11-28 session 2, call 3: the build before (6a3d6be, base/) and this one (build/) alternating:
# bench at 10^4 / 10^5 / 64^3 (VECCUDA), the transient's 10^4 steps; the trace build of this one; then GPU tests
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
mkdir -p base && tar -xJf .carry/builds.tar.xz -C base && tar -xJf .carry/builds-new.tar.xz
out=${OUT:-out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
E=build/petsc-3.26-cuda/examples
run() { local lib=$1; shift; LD_LIBRARY_PATH=$PWD/$lib:$LD_LIBRARY_PATH timeout 120 "$@"; }
a="-sizes2d 100,316 -sizes3d 64 -its 50 -reps 3 -mat_type aijcusparse"
for r in 1 2 3; do
  for b in base new; do
    if [ $b = base ]; then lib=base/build/petsc-3.26-cuda/lib; else lib=build/petsc-3.26-cuda/lib; fi
    echo "== $b round $r" >> $out/bench.txt
    run $lib $E/bench $a 2>&1 | grep -E "GPU \(CUDA\)|rror" >> $out/bench.txt
    echo "== $b round $r" >> $out/transient.txt
    run $lib $E/transient -n 100 -steps 1000 -pc_type jacobi -methods pcgfused,pbcgsfused,pgmresfused -mat_type aijcusparse 2>&1 | grep -E "fused|rror" >> $out/transient.txt
  done
done
mkdir -p tr && xz -dc .carry/tracelib-new.so.xz > tr/libpetscfused.so
FUSED_TRACE=1 run tr $E/bench -sizes2d 100 -sizes3d 0 -its 50 -reps 3 -mat_type aijcusparse -methods pgmresfused > $out/trace.txt 2>&1
cat $out/bench.txt $out/transient.txt
grep PGMT $out/trace.txt | tail -1 | cut -c1-1500
FUSED_BUILD=build/petsc-3.26-cuda timeout 330 bash tools/gpu-session.sh tests '^gpu-gmres-|^cudapetsc-gmres' > $out/tests.txt 2>&1
tail -5 $out/tests.txt
