#!/bin/bash
# call 10: the final build (loop buffers made on one rank only)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
out=${OUT:-out}; mkdir -p $out
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 400 bash tools/gpu-session.sh tests 'maxit|lanes|gpu-cg-first|gpu-gmres-first|np2|np3' > $out/gpu-tests.txt 2>&1
tail -2 $out/gpu-tests.txt; grep -E "^FAIL" $out/gpu-tests.txt | head
