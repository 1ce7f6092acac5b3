#!/bin/bash
# call 9 (2026-11-26, evening): the first solve of a process, the build before (prev = 3dfd630) and this one
# (no DMShell for KSPLogErrorHistory() without an error history; the first cooperative launch at KSPSetUp)
# alternating, two rounds, each method first in its process; then the GPU tests of the three methods' paths
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p .carry/prevlib && xz -dc .carry/prevlib.so.xz > .carry/prevlib/libpetscfused.so
mkdir -p build/petsc-3.26-cuda/lib && xz -dc .carry/nowlib.so.xz > build/petsc-3.26-cuda/lib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
a="-sizes2d 100 -sizes3d 0 -its 50 -reps 3 -mat_type aijcusparse -vec_type cuda"
for round in 1 2; do for v in prev now; do
  L=$PWD/.carry/prevlib; [ $v = now ] && L=$PWD/build/petsc-3.26-cuda/lib
  for m in pcgfused pbcgsfused pgmresfused; do
    echo "== $v round $round $m first" >> $out/first.txt
    LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 60 $B/bench $a -methods $m 2>&1 | grep -E 'GPU|rror' >> $out/first.txt
  done
  echo "== $v round $round transient" >> $out/transient.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 60 $B/transient -n 100 -steps 1000 -pc_type jacobi -methods pcgfused,pbcgsfused,pgmresfused 2>&1 | grep -E 'fused|rror' >> $out/transient.txt
done; done
cat $out/first.txt $out/transient.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 330 bash tools/gpu-session.sh tests '^gpu-(cg|bcgs|gmres)-|^cudapetsc-' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -c '^PASS' $out/gpu-tests.txt; grep -E "^FAIL" $out/gpu-tests.txt | head -20
