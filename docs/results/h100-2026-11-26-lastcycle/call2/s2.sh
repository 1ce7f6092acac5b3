#!/bin/bash
# call 2 (2026-11-26, night): pcgfused's graph loop takes <y,z> = <p,y> - beta <p,y_last> where A is known symmetric
# (the product no longer reads r), on top of call 1's pgmresfused change. GPU tests of pcgfused, the new symmetric
# and max_it tests; then prev (1babdb3) and now alternating, three rounds: CG at 160^3 (now with and without
# -problem_symmetric) and all three methods at 10^4 rows, 30 solves each (the fastest counts)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p .carry/prevlib && xz -dc .carry/prevlib.so.xz > .carry/prevlib/libpetscfused.so
mkdir -p build/petsc-3.26-cuda/lib && xz -dc .carry/nowlib.so.xz > build/petsc-3.26-cuda/lib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 200 bash tools/gpu-session.sh tests 'symmetric|^gpu-cg-|maxit' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -E "^FAIL" -A3 $out/gpu-tests.txt | head -30
B=build/petsc-3.26-cuda/examples
for round in 1 2 3; do for v in prev now now-sym; do
  L=$PWD/.carry/prevlib; [ $v != prev ] && L=$PWD/build/petsc-3.26-cuda/lib
  S=""; [ $v != now ] && S=-problem_symmetric
  echo "== $v round $round 160^3 $S" >> $out/bench160.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 90 $B/bench -sizes2d 0 -sizes3d 160 -its 50 -reps 5 -methods pcgfused -mat_type aijcusparse -vec_type cuda $S 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench160.txt
done; for v in prev now; do
  L=$PWD/.carry/prevlib; [ $v = now ] && L=$PWD/build/petsc-3.26-cuda/lib
  echo "== $v round $round 10^4 rows" >> $out/bench1e4.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 60 $B/bench -sizes2d 100 -sizes3d 0 -its 50 -reps 30 -methods pgmresfused,pcgfused,pbcgsfused -mat_type aijcusparse -vec_type cuda 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench1e4.txt
done; done
cat $out/bench160.txt $out/bench1e4.txt
