#!/bin/bash
# 2026-11-28 session 5, call 4: pgmresfused's single kernel made ready at KSPSetUp (its launch facts and the
# partial sums' buffer) against the build before (base), alternating, three rounds: the first KSPSolve after
# KSPSetUp and the rest of a solve at 10^4 rows; pcgfused beside it (unchanged). Then the GPU tests of
# pgmresfused in three groups side by side.
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
mkdir -p /tmp/base && xz -dc .carry/base-lib.so.xz > /tmp/base/libpetscfused.so
out=${OUT:-out}/c4; mkdir -p $out
B=build/petsc-3.26-cuda
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G="-use_gpu_aware_mpi 0"
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
a="-sizes2d 100,316 -sizes3d 0 -its 50 -reps 3 -mat_type aijcusparse $G"
for r in 1 2 3; do
  order="base new"; [ $r = 2 ] && order="new base"
  for v in $order; do
    lib=$PWD/$B/lib; [ $v = base ] && lib=/tmp/base
    for m in pgmresfused pcgfused; do
      LD_LIBRARY_PATH=$lib:$LD_LIBRARY_PATH timeout 60 $B/examples/bench $a -methods $m 2>&1 | grep "GPU (CUDA)" | sed "s/^/$v round $r: /" >> $out/ab.txt
    done
  done
done
cat $out/ab.txt
date -u >> $out/device.txt
export FUSED_BUILD=$B
( bash tools/gpu-session.sh tests '^gpu-gmres-(adaptive|first|nullspace|end|plain)' > $out/tests-a.txt 2>&1 ) &
( bash tools/gpu-session.sh tests '^gpu-gmres-(pbjacobi|maxit|lanes|lap|graph|convdiff|symmetric|restart|np|nonzero|none|monitor|ilu|host|gamg|evsl|errorhistory|cgs|bjacobi|basis|494)' > $out/tests-b.txt 2>&1 ) &
( bash tools/gpu-session.sh tests '^cudapetsc-gmres|^robust-gmres' > $out/tests-c.txt 2>&1 ) &
wait
for f in $out/tests-*.txt; do echo "$f: $(grep -E "passed|failed" $f | tail -1)"; grep -E "^FAIL|^not ok|FAIL" $f | head -5; done
date -u >> $out/device.txt
cd ${OUT:-out} && tar -cJf c4.tar.xz c4 && rm -rf c4
