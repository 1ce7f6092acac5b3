#!/bin/bash
# call 2 (2026-11-26): pcgfused's single kernel makes the solve's start itself (start, first product, b's norm).
# GPU tests of pcgfused's paths, then the build before (prev = c7a2c62) and this one alternating, two rounds:
# transient ms per step (10^4 and 10^5 unknowns, VECCUDA and host vectors) and bench per iteration and per solve
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p .carry/prevlib && xz -dc .carry/prevlib.so.xz > .carry/prevlib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
FUSED_BUILD=build/petsc-3.26-cuda timeout 300 bash tools/gpu-session.sh tests '^cudapetsc-|^gpu-cg-|transient|^robust-cg|compensated' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -c '^PASS' $out/gpu-tests.txt; grep -E "^FAIL" $out/gpu-tests.txt | head -20
for round in 1 2; do for v in prev now; do
  L=$PWD/.carry/prevlib; [ $v = now ] && L=$PWD/build/petsc-3.26-cuda/lib
  for mt in aijcusparse aij; do for n in 100 316; do
    echo "== $v round $round $mt n $n" >> $out/transient.txt
    LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 60 $B/transient -n $n -steps 1000 -pc_type jacobi -methods pcgfused -mat_type $mt 2>&1 | grep -E 'fused|rror' >> $out/transient.txt
  done; done
  echo "== $v round $round" >> $out/bench.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 120 $B/bench -sizes2d 100,316,1000 -sizes3d 32,64 -its 50 -reps 5 -methods pcgfused -mat_type aijcusparse -vec_type cuda 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench.txt
done; done
cat $out/transient.txt; cat $out/bench.txt
