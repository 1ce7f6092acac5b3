#!/bin/bash
# call 8: GPU tests of the final build
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
out=${OUT:-out}; mkdir -p $out
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
T0=$(date +%s)
FUSED_BUILD=build/petsc-3.26-cuda timeout 560 bash tools/gpu-session.sh tests 'gpu-(cg|bcgs|gmres|spmv|robust|device)|^spmv|cudapetsc-gmres|hybcuda' > $out/gpu-tests.txt 2>&1
tail -2 $out/gpu-tests.txt; grep -E "^FAIL" $out/gpu-tests.txt | head
echo "all done $(( $(date +%s) - T0 ))s"
