#!/bin/bash
# call 5 (2026-11-26): after the review (one give-back of b and x, grid_sums's cluster launch in one helper): the cudapetsc GPU tests (the in-place ones asserting KSPFusedGetSystemInPlace()),
# the transient ones and the single kernels' first-solve tests
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 300 bash tools/gpu-session.sh tests '^cudapetsc-|transient|^gpu-(cg|bcgs|gmres)-first' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -c '^PASS' $out/gpu-tests.txt; grep -E "^FAIL" $out/gpu-tests.txt | head
for f in build/petsc-3.26-cuda/test-logs/cudapetsc-*inplace*.log; do echo "== $f"; grep -E "its |b and x|device loop|FAIL|rror" $f | head -6; done > $out/test-logs.txt 2>&1
cat $out/test-logs.txt
timeout 60 build/petsc-3.26-cuda/examples/grid_sums > $out/grid_sums.txt 2>&1; grep -E "one cluster|cluster of" $out/grid_sums.txt
