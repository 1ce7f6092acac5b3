#!/bin/bash
# call 3 (2026-11-26, night): the code of a58c766 plus the PetscInfo line and bench's floor for a known symmetric A
# (11 passes). GPU tests of the three methods and the CUDA-PETSc paths; then prev (1babdb3) and now alternating:
# pcgfused on 160^3 (now with and without -problem_symmetric) and on the irregular matrices of 10^6 and 10^7 rows
# with -problem_symmetric for both builds (the floor the same for both: this bench binary)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p .carry/prevlib && xz -dc .carry/prevlib.so.xz > .carry/prevlib/libpetscfused.so
mkdir -p build/petsc-3.26-cuda/lib && xz -dc .carry/nowlib.so.xz > build/petsc-3.26-cuda/lib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 340 bash tools/gpu-session.sh tests '^gpu-(cg|bcgs|gmres)-|^cudapetsc-' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -E "^FAIL" -A3 $out/gpu-tests.txt | head -30
B=build/petsc-3.26-cuda/examples
for round in 1 2; do for v in prev now now-sym; do
  L=$PWD/.carry/prevlib; [ $v != prev ] && L=$PWD/build/petsc-3.26-cuda/lib
  S=""; [ $v != now ] && S=-problem_symmetric
  echo "== $v round $round 160^3 $S" >> $out/bench160.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 40 $B/bench -sizes2d 0 -sizes3d 160 -its 50 -reps 3 -methods pcgfused -mat_type aijcusparse -vec_type cuda $S 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench160.txt
done; for v in prev now; do
  L=$PWD/.carry/prevlib; [ $v = now ] && L=$PWD/build/petsc-3.26-cuda/lib
  echo "== $v round $round irregular -problem_symmetric" >> $out/irregular.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 60 $B/bench -sizes2d 0 -sizes3d 0 -arrow 1e6,1e7 -powerlaw 1e6,1e7 -its 50 -reps 3 -methods pcgfused -mat_type aijcusparse -vec_type cuda -problem_symmetric 2>&1 | grep -E 'GPU|rror|rows' >> $out/irregular.txt
done; done
cat $out/bench160.txt $out/irregular.txt
