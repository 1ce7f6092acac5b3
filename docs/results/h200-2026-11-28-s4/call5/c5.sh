#!/bin/bash
# 2026-11-28 session 4, call 5: tools/gpu-cuda-petsc.sh (the README's "where it stands" table) on the H200,
# again: call 3's instance was slow in every host-device interaction.
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
out=${OUT:-out}; mkdir -p $out/stands
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $out/device.txt; date -u >> $out/device.txt
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OUT=$out/stands timeout 330 bash tools/gpu-cuda-petsc.sh > $out/stands.log 2>&1
date -u >> $out/device.txt
grep -E "GPU \(CUDA\)|GPU \(PETSc\)" $out/stands/bench-1.txt; grep -E "KSPSolve|its" $out/stands/gamg-*.txt $out/stands/bjacobi*.txt | head -20
(cd $out && tar -cJf stands.tar.xz stands && rm -rf stands)
tail -3 $out/stands.log; cat $out/device.txt
