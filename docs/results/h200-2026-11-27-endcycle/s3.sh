#!/bin/bash
# call 3 (2026-11-27): the rest of the GPU list the session's changes reach (soak with re-assembly, whose
# every build now checks symmetry; hybcuda; compensated sums; transient; the BiCGStab and attainable suites;
# long rows), on the code of the session's end.
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
tar -xJf .carry/builds.tar.xz
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout ${TESTS_S:-520} bash tools/gpu-session.sh tests "${TESTS:-^gpu-(soak|spmv|compensated|device|robust)|transient|hybcuda|^compensated|^robust-(bcgs|attainable)|^long-}" > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -E "^FAIL" -A3 $out/gpu-tests.txt | head -40
