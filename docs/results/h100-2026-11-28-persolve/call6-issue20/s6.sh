#!/bin/bash
# 2026-11-28 session 2, call 6: issue 20's targets in one run on the code of 75820c2 (tools/gpu-cuda-petsc.sh:
# bench beside PETSc's own GPU methods, GAMG, block Jacobi/ILU(0)), plus point-block Jacobi on the vector Laplacian
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-ws.tar.xz
out=${OUT:-out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
export LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
E=build/petsc-3.26-cuda/examples
timeout 200 $E/solve -problem veclap3d -n 70 -pc_type pbjacobi -methods pcgfused -use_gpu_aware_mpi 0 > $out/pbjacobi-veclap3d-70.txt 2>&1
OUT=$out timeout 470 bash tools/gpu-cuda-petsc.sh
date -u >> $out/device.txt
cat $out/bench-1.txt | grep -E "lap|us/iter|device"; grep -E "fused|cg |gmres |its|KSPSolve|GPU" $out/gamg-*.txt $out/bjacobi-*.txt $out/pbjacobi-*.txt | head -40
