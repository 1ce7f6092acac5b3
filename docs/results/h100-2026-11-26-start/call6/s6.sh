#!/bin/bash
# call 6 (2026-11-26): the GPU tests call 5's time limit cut off (the rest of robust-gmres, some cudapetsc-bcgs,
# transient, every compensated one), then two more rounds of the transient benchmark at 10^4 unknowns, VECCUDA,
# prev (c7a2c62) and this build alternating
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p .carry/prevlib && xz -dc .carry/prevlib.so.xz > .carry/prevlib/libpetscfused.so
mkdir -p build/petsc-3.26-cuda/lib && xz -dc .carry/nowlib.so.xz > build/petsc-3.26-cuda/lib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
FUSED_BUILD=build/petsc-3.26-cuda timeout 300 bash tools/gpu-session.sh tests '^robust-gmres-(sherman5|kept3d|aniso2d|lap2d-neg|convdiff)|^cudapetsc-bcgs-(pbjacobi|veclap3d|gamg|bjacobi|asm|olm|breakdown)|^cudapetsc-gmres-veclap3d|transient|compensated' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -c '^PASS' $out/gpu-tests.txt; grep -E -A2 "^FAIL" $out/gpu-tests.txt | head -30
for round in 3 4; do for v in prev now; do
  L=$PWD/.carry/prevlib; [ $v = now ] && L=$PWD/build/petsc-3.26-cuda/lib
  echo "== $v round $round aijcusparse n 100" >> $out/transient.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 60 $B/transient -n 100 -steps 1000 -pc_type jacobi -methods pcgfused,pbcgsfused,pgmresfused 2>&1 | grep -E 'fused|rror' >> $out/transient.txt
done; done
grep -E "==|fused" $out/transient.txt
