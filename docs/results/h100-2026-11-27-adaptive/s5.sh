#!/bin/bash
# call 5 (2026-11-27): adaptive simpler GMRES the default (nu 0.9), in the graph with a null space and point-block
# Jacobi too. PART=tests: the GPU tests of GMRES (every name with gmres, the CUDA-PETSc ones included);
# PART=bench: the build before (prev = 7df6aac) and this one with its defaults, alternating, two rounds.
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
tar -xJf .carry/builds.tar.xz
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
if [ "${PART:-tests}" = tests ]; then
FUSED_BUILD=build/petsc-3.26-cuda timeout ${TESTS_S:-520} bash tools/gpu-session.sh tests "${TESTS:-gmres}" > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -E "^FAIL" -A3 $out/gpu-tests.txt | head -40
fi
if [ "${PART:-tests}" = bench ]; then
N=build/petsc-3.26-cuda; P=.carry/prev
run() {
  local v=$1 p=$2; shift 2
  if [ $v = prev ]; then LD_LIBRARY_PATH=$PWD/$P:$LD_LIBRARY_PATH timeout 120 $P/$p "$@"; else LD_LIBRARY_PATH=$PWD/$N/lib:$LD_LIBRARY_PATH timeout 120 $N/examples/$p "$@"; fi
}
for round in 1 2; do for v in prev now; do
  echo "== $v round $round" >> $out/bench.txt
  run $v bench -sizes2d 100,1000 -sizes3d 160 -its 50 -reps 5 -methods pgmresfused -mat_type aijcusparse -vec_type cuda 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench.txt
  echo "== $v round $round transient" >> $out/transient.txt
  run $v transient -n 100 -steps 1000 -pc_type jacobi -methods pgmresfused -mat_type aijcusparse 2>&1 | grep -E 'fused|rror' >> $out/transient.txt
done; done
for v in prev now; do
  echo "== $v isooctane_jac scaled by 2e3, Jacobi" >> $out/stall.txt
  run $v solve -f tests/data/isooctane_jac.mtx -problem_scale 2e3 -methods pgmresfused -pc_type jacobi -compare 1 2>&1 | grep -E 'gmres|rror' >> $out/stall.txt
done
cat $out/bench.txt $out/transient.txt $out/stall.txt
fi
