#!/bin/bash
# call 5 (2026-11-26, night): the code of b76c110; the GPU test that call 4's time limit cut
# (gpu-compensated-gmres-basis-global), with the max_it tests again
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p build/petsc-3.26-cuda/lib && xz -dc .carry/nowlib.so.xz > build/petsc-3.26-cuda/lib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 200 bash tools/gpu-session.sh tests 'gpu-compensated-gmres-basis-global|maxit' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -E "^(FAIL|PASS) gpu-compensated-gmres-basis-global" -A3 $out/gpu-tests.txt
