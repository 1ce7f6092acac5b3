#!/bin/bash
# call 1 (2026-11-27): (a) pgmresfused's single kernel ends the cycle where the test stops the solve (no host
# update after the wait); (b) the device copy of the operator is checked against its transpose at its build, and
# pcgfused's graph takes <y,z> from A's symmetry without MAT_SYMMETRIC. GPU tests of both, then the build
# before (prev = 66fdb6f, its own bench and transient) and this one alternating.
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
tar -xJf .carry/builds.tar.xz   # build/petsc-3.26-cuda (now) and .carry/prev (66fdb6f: lib, bench, transient, solve)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout ${TESTS_S:-280} bash tools/gpu-session.sh tests "${TESTS:-end-on-device|symmetric|^gpu-gmres-|^cudapetsc-(gmres|cg)|hybcuda-cg|scaled}" > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -E "^FAIL" -A3 $out/gpu-tests.txt | head -30
N=build/petsc-3.26-cuda; P=.carry/prev
run() { # v cmd...: the program of build v with its library
  local v=$1 p=$2; shift 2
  if [ $v = prev ]; then LD_LIBRARY_PATH=$PWD/$P:$LD_LIBRARY_PATH timeout 90 $P/$p "$@"; else LD_LIBRARY_PATH=$PWD/$N/lib:$LD_LIBRARY_PATH timeout 90 $N/examples/$p "$@"; fi
}
for round in 1 2 3; do for v in prev now; do
  echo "== $v round $round 10^4" >> $out/bench1e4.txt
  run $v bench -sizes2d 100 -sizes3d 0 -its 50 -reps 30 -methods pgmresfused -mat_type aijcusparse -vec_type cuda 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench1e4.txt
  echo "== $v round $round transient" >> $out/transient.txt
  run $v transient -n 100 -steps 1000 -pc_type jacobi -methods pgmresfused -mat_type aijcusparse 2>&1 | grep -E 'fused|rror' >> $out/transient.txt
done; done
for round in 1 2; do for v in prev now; do
  echo "== $v round $round 160^3 (A not marked symmetric)" >> $out/bench160.txt
  run $v bench -sizes2d 0 -sizes3d 160 -its 50 -reps 3 -methods pcgfused -mat_type aijcusparse -vec_type cuda 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench160.txt
done; done
for v in prev now; do
  echo "== $v solve 160^3 setup" >> $out/setup160.txt
  run $v solve -problem lap3d -n 160 -methods pcgfused -pc_type jacobi -mat_type aijcusparse -compare 0 -ksp_view -info 2>&1 | grep -E 'pcgfused |transpose|symmetric|rror' >> $out/setup160.txt
done
cat $out/bench1e4.txt $out/transient.txt $out/bench160.txt $out/setup160.txt
