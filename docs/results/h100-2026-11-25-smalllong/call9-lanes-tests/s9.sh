#!/bin/bash
# call 9: the new lanes tests
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
out=${OUT:-out}; mkdir -p $out
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 300 bash tools/gpu-session.sh tests 'lanes' > $out/gpu-tests.txt 2>&1
cat $out/gpu-tests.txt | grep -E "PASS|FAIL|its |passed" | head -40
