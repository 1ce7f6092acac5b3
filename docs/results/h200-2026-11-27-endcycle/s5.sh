#!/bin/bash
# call 5 (2026-11-27, on an H100 asked for by name): pcgfused at 160^3 with A not marked symmetric, the build
# before (66fdb6f) and this one alternating, three rounds; and this one with -problem_symmetric, for issue 22's
# and 25's 213.9 us (H100, 2026-11-24).
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
tar -xJf .carry/builds.tar.xz
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
N=build/petsc-3.26-cuda; P=.carry/prev
for round in 1 2 3; do for v in prev now now-sym; do
  L=$PWD/$P; B=$P/bench; S=""
  [ $v != prev ] && L=$PWD/$N/lib B=$N/examples/bench
  [ $v = now-sym ] && S=-problem_symmetric
  echo "== $v round $round 160^3 $S" >> $out/bench160-h100.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 90 $B -sizes2d 0 -sizes3d 160 -its 50 -reps 3 -methods pcgfused -mat_type aijcusparse -vec_type cuda $S 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench160-h100.txt
done; done
cat $out/bench160-h100.txt
