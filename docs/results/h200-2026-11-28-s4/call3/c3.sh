#!/bin/bash
# 2026-11-28 session 4, call 3: the soak tests alone (they read the whole device's memory use, which the
# parallel groups of call 2 disturbed); then tools/gpu-cuda-petsc.sh (the README's "where it stands" table) on the H200.
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
out=${OUT:-out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 150 bash tools/gpu-session.sh tests 'soak' > $out/soak.txt 2>&1
grep -h "growth" build/petsc-3.26-cuda/test-logs/*soak*.log >> $out/soak.txt
date -u >> $out/device.txt
OUT=$out/stands timeout 380 bash tools/gpu-cuda-petsc.sh > $out/stands.log 2>&1
date -u >> $out/device.txt
cat $out/soak.txt | tail -8; grep -E "GPU \(CUDA\)|GPU \(PETSc\)" $out/stands/bench-1.txt | head -40
