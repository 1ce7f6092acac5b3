#!/bin/bash
# call 8: GPU tests after FusedKernelFactsOf() returns a spare entry where its table is full (no NULL cases)
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
tar -xJf .carry/builds-ws.tar.xz
out=${OUT:-out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 280 bash tools/gpu-session.sh tests '^gpu-gmres-|^gpu-cg-bjacobi|^cudapetsc-gmres|^cudapetsc-cg-gamg|trisolve' > $out/tests.txt 2>&1
grep -E "^FAIL" $out/tests.txt | head; tail -2 $out/tests.txt
