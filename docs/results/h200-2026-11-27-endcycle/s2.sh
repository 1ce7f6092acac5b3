#!/bin/bash
# call 2 (2026-11-27): the code of the session's end (adaptive simpler GMRES, host-driven; the tests call 1
# found wrong, mended). GPU tests of everything the session touched and of pcgfused's paths (its graph now
# takes A's symmetry where the device finds it), then the build before (prev = 66fdb6f) and this one
# alternating on the irregular matrices of 10^6 rows, A not marked symmetric.
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
tar -xJf .carry/builds.tar.xz
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 150 bash tools/gpu-session.sh tests "adaptive|end-on-device|symmetric|basis-oom|scaled" > $out/gpu-tests-new.txt 2>&1
tail -1 $out/gpu-tests-new.txt; grep -E "^FAIL" -A3 $out/gpu-tests-new.txt | head -30
FUSED_BUILD=build/petsc-3.26-cuda timeout ${TESTS_S:-300} bash tools/gpu-session.sh tests "^gpu-(cg|bcgs)-|^robust-(cg|gmres)-[a-z0-9]*-(none|jacobi)|^gpu-long-|^cudapetsc-cg" > $out/gpu-tests-broad.txt 2>&1
tail -1 $out/gpu-tests-broad.txt; grep -E "^FAIL" -A3 $out/gpu-tests-broad.txt | head -30
N=build/petsc-3.26-cuda; P=.carry/prev
run() {
  local v=$1 p=$2; shift 2
  if [ $v = prev ]; then LD_LIBRARY_PATH=$PWD/$P:$LD_LIBRARY_PATH timeout 120 $P/$p "$@"; else LD_LIBRARY_PATH=$PWD/$N/lib:$LD_LIBRARY_PATH timeout 120 $N/examples/$p "$@"; fi
}
for round in 1 2; do for v in prev now; do
  echo "== $v round $round irregular 10^6 (not marked symmetric)" >> $out/bench-irregular.txt
  run $v bench -sizes2d 0 -sizes3d 0 -arrow 1000000 -powerlaw 1000000 -its 50 -reps 3 -methods pcgfused -mat_type aijcusparse -vec_type cuda 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench-irregular.txt
done; done
cat $out/bench-irregular.txt
