#!/bin/bash
# call 7: point-block Jacobi on the 3-component vector Laplacian, 1,029,000 rows, pcgfused beside PETSc's cg (75820c2)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
[ -d build/petsc-3.26-cuda ] || tar -xJf .carry/builds-ws.tar.xz
out=${OUT:-out}; mkdir -p $out
export LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
timeout 200 build/petsc-3.26-cuda/examples/solve -problem veclap3d -n 70 -pc_type pbjacobi -methods pcgfused -use_gpu_aware_mpi 0 > $out/pbjacobi-veclap3d-70.txt 2>&1
grep -E "rows|GPU \(|speed" $out/pbjacobi-veclap3d-70.txt
