#!/bin/bash
# call 13: the plain GPU tests of the three methods on this build (regressions of the compensated change)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
out=${OUT:-out}; mkdir -p $out
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 560 bash tools/gpu-session.sh tests "${1:-^gpu-(cg|bcgs|gmres)-}" > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -E "^FAIL" $out/gpu-tests.txt | head -20
