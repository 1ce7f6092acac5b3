#!/bin/bash
# call 2 (2026-11-26, evening), run again as call 10 on the code of fdbf0f0: the rest of the GPU list on this build: the convergence suite (robust-*, which
# runs the single kernels at every matrix of tests/data), soak, long rows, compensated sums, transient, hybcuda
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p build/petsc-3.26-cuda/lib && xz -dc .carry/nowlib.so.xz > build/petsc-3.26-cuda/lib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 560 bash tools/gpu-session.sh tests '^robust|^gpu-(soak|long|spmv|robust|compensated|device)|transient|hybcuda|compensated' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -c '^PASS' $out/gpu-tests.txt; grep -E -A3 "^FAIL" $out/gpu-tests.txt | head -40
