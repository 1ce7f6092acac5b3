#!/bin/bash
# call 5 (2026-11-26): pgmresfused's single kernel (the one that ends cycles) makes the solve's first start too.
# GPU tests of every GPU path but the robust CG/BiCGStab cases (run in calls 3 and 4), then prev (c7a2c62) and this
# build alternating, two rounds: bench per iteration and per solve, transient ms per step at 10^4 unknowns
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p .carry/prevlib && xz -dc .carry/prevlib.so.xz > .carry/prevlib/libpetscfused.so
mkdir -p build/petsc-3.26-cuda/lib && xz -dc .carry/nowlib.so.xz > build/petsc-3.26-cuda/lib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
FUSED_BUILD=build/petsc-3.26-cuda timeout 380 bash tools/gpu-session.sh tests '^(gpu-|cudapetsc-|robust-gmres)|transient|compensated' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -c '^PASS' $out/gpu-tests.txt; grep -E -A2 "^FAIL" $out/gpu-tests.txt | head -30
for round in 1 2; do for v in prev now; do
  L=$PWD/.carry/prevlib; [ $v = now ] && L=$PWD/build/petsc-3.26-cuda/lib
  echo "== $v round $round" >> $out/bench.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 100 $B/bench -sizes2d 32,100,316 -sizes3d 32,64 -its 50 -reps 5 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aijcusparse -vec_type cuda 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench.txt
  for mt in aijcusparse aij; do
    echo "== $v round $round $mt n 100" >> $out/transient.txt
    LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 60 $B/transient -n 100 -steps 1000 -pc_type jacobi -methods pcgfused,pbcgsfused,pgmresfused -mat_type $mt 2>&1 | grep -E 'fused|rror' >> $out/transient.txt
  done
done; done
cat $out/bench.txt; grep -E "==|fused" $out/transient.txt
