#!/bin/bash
# 2026-11-28 session 4, call 4: the GPU tests calls 1-3 left out (gmres in their names, not in call 1's filter), alone
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
out=${OUT:-out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 420 bash tools/gpu-session.sh tests '^(gpu-long-gmres-arrow-graph|gpu-long-gmres-arrow-np2|gpu-long-gmres-circuit1|gpu-long-gmres-memplus-graph|gpu-long-gmres-memplus-graph-plain|gpu-long-gmres-powerlaw|gpu-long-gmres-powerlaw-host|gpu-pinned-gmres|gpu-pinned-gmres-np2|gpu-soak-gmres-np2|hybcuda-gmres|hybcuda-gmres-np2)$' > $out/tests.txt 2>&1
date -u >> $out/device.txt
cat $out/tests.txt
