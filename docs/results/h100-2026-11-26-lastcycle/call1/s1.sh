#!/bin/bash
# call 1 (2026-11-26, night): pgmresfused's single kernel ends the last cycle at max_it and makes the start after it,
# which the host tests (no update and start kernels, no wait for the start's sums). GPU tests of pgmresfused and the
# new max_it tests, then the build before (prev = 1babdb3) and this one alternating, three rounds: bench per
# iteration, per solve and first solve (10^4, 10^5 rows, 32^3), transient ms per step (10^4 unknowns, VECCUDA)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p .carry/prevlib && xz -dc .carry/prevlib.so.xz > .carry/prevlib/libpetscfused.so
mkdir -p build/petsc-3.26-cuda/lib && xz -dc .carry/nowlib.so.xz > build/petsc-3.26-cuda/lib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 260 bash tools/gpu-session.sh tests '^gpu-gmres-|^cudapetsc-gmres|^gpu-(cg|bcgs)-maxit|^robust-[a-z0-9-]*gmres' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -c '^PASS' $out/gpu-tests.txt; grep -E "^FAIL" -A3 $out/gpu-tests.txt | head -30
B=build/petsc-3.26-cuda/examples
for round in 1 2 3; do for v in prev now; do
  L=$PWD/.carry/prevlib; [ $v = now ] && L=$PWD/build/petsc-3.26-cuda/lib
  echo "== $v round $round" >> $out/bench.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 60 $B/bench -sizes2d 100,316 -sizes3d 32 -its 50 -reps 5 -methods pgmresfused,pcgfused -mat_type aijcusparse -vec_type cuda 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench.txt
  echo "== $v round $round n 100" >> $out/transient.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 60 $B/transient -n 100 -steps 1000 -pc_type jacobi -methods pgmresfused -mat_type aijcusparse 2>&1 | grep -E 'fused|rror' >> $out/transient.txt
done; done
cat $out/bench.txt $out/transient.txt
