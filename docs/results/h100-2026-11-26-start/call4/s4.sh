#!/bin/bash
# call 4 (2026-11-26): as call 3, after the wide pbcgsfused kernel's start went back to kernels of its own and the
# single kernel leaves product_p made. GPU tests of both methods, then prev (c7a2c62) and this build alternating:
# bench per iteration and per solve, and transient ms per step (10^4 and 10^5 unknowns, VECCUDA and host vectors)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p .carry/prevlib && xz -dc .carry/prevlib.so.xz > .carry/prevlib/libpetscfused.so
mkdir -p build/petsc-3.26-cuda/lib && xz -dc .carry/nowlib.so.xz > build/petsc-3.26-cuda/lib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
FUSED_BUILD=build/petsc-3.26-cuda timeout 360 bash tools/gpu-session.sh tests '^cudapetsc-|^gpu-cg-|^gpu-bcgs-|transient|^robust-cg|^robust-bcgs|compensated' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -c '^PASS' $out/gpu-tests.txt; grep -E -A2 "^FAIL" $out/gpu-tests.txt | head -30
for round in 1 2; do for v in prev now; do
  L=$PWD/.carry/prevlib; [ $v = now ] && L=$PWD/build/petsc-3.26-cuda/lib
  echo "== $v round $round" >> $out/bench.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 120 $B/bench -sizes2d 32,100,316 -sizes3d 32,64 -its 50 -reps 5 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aijcusparse -vec_type cuda 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench.txt
  for mt in aijcusparse aij; do for n in 100 316; do
    echo "== $v round $round $mt n $n" >> $out/transient.txt
    LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 60 $B/transient -n $n -steps 1000 -pc_type jacobi -methods pcgfused,pbcgsfused -mat_type $mt 2>&1 | grep -E 'fused|rror' >> $out/transient.txt
  done; done
done; done
for round in 3 4; do for v in prev now; do
  L=$PWD/.carry/prevlib; [ $v = now ] && L=$PWD/build/petsc-3.26-cuda/lib
  echo "== $v round $round aij n 316" >> $out/transient.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 60 $B/transient -n 316 -steps 1000 -pc_type jacobi -methods pcgfused,pbcgsfused -mat_type aij 2>&1 | grep -E 'fused|rror' >> $out/transient.txt
done; done
cat $out/bench.txt; grep -E "==|fused" $out/transient.txt
