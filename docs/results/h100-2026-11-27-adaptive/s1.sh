#!/bin/bash
# call 1 (2026-11-27, second session): adaptive simpler GMRES in pgmresfused's device loops (the graph, the
# single kernel with and without the cycle ends). GPU tests of GMRES, then per-iteration cost: the build
# before (prev = 7df6aac, its own bench and transient) and this one with -ksp_pgmresfused_adaptive 0 and 0.9,
# alternating, two rounds. PART=tests: the tests; PART=bench: the timings.
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
tar -xJf .carry/builds.tar.xz   # build/petsc-3.26-cuda (now) and .carry/prev (7df6aac: lib, bench, transient, solve)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
if [ "${PART:-tests}" = tests ] || [ "$PART" = all ]; then
FUSED_BUILD=build/petsc-3.26-cuda timeout ${TESTS_S:-400} bash tools/gpu-session.sh tests "${TESTS:-adaptive|^gpu-gmres-|^gpu-long-gmres|^cudapetsc-gmres}" > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -E "^FAIL" -A3 $out/gpu-tests.txt | head -40
fi
N=build/petsc-3.26-cuda; P=.carry/prev
run() { # v cmd...: the program of build v with its library
  local v=$1 p=$2; shift 2
  case $v in
    prev) LD_LIBRARY_PATH=$PWD/$P:$LD_LIBRARY_PATH timeout 120 $P/$p "$@" ;;
    now0) LD_LIBRARY_PATH=$PWD/$N/lib:$LD_LIBRARY_PATH timeout 120 $N/examples/$p "$@" -ksp_pgmresfused_adaptive 0 ;;
    now9) LD_LIBRARY_PATH=$PWD/$N/lib:$LD_LIBRARY_PATH timeout 120 $N/examples/$p "$@" -ksp_pgmresfused_adaptive 0.9 ;;
  esac
}
if [ "${PART:-tests}" = bench ] || [ "$PART" = all ]; then
for round in 1 2; do for v in prev now0 now9; do
  echo "== $v round $round" >> $out/bench.txt
  run $v bench -sizes2d 100,1000 -sizes3d 160 -its 50 -reps 5 -methods pgmresfused -mat_type aijcusparse -vec_type cuda 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench.txt
done; done
for v in prev now0 now9; do
  echo "== $v transient" >> $out/transient.txt
  run $v transient -n 100 -steps 1000 -pc_type jacobi -methods pgmresfused -mat_type aijcusparse 2>&1 | grep -E 'fused|rror' >> $out/transient.txt
done
for v in now0 now9; do for a in "-problem lap3d -n 160" "-n 1000" "-n 100"; do
  echo "== $v $a: adaptive steps" >> $out/steps.txt
  run $v solve $a -methods pgmresfused -pc_type jacobi -mat_type aijcusparse -vec_type cuda -compare 0 -ksp_view -info 2>&1 | grep -E 'pgmresfused |Adaptive simpler|adaptive simpler|rror' >> $out/steps.txt
done; done
cat $out/bench.txt $out/transient.txt $out/steps.txt
fi
