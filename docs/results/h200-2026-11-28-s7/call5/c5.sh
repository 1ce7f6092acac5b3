#!/bin/bash
# Session 7, call 5 (H200): the GAMG GPU tests call 3's time limit left,
# code of 90aa897.
set -u
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
B=build/petsc-3.26-cuda
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PATH=$PATH:/usr/local/cuda/bin
O=$OUT/c5; mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; } > $O/gpu.txt 2>&1
FUSED_BUILD=$B timeout 280 bash tools/gpu-session.sh tests '^(cudapetsc-cg-gamg-np2-pcapply|gpu-cg-gamg-vcycle|gpu-bcgs-gamg-vcycle-2d|gpu-cg-gamg-wcycle-roundtrip|gpu-cg-gamg-sor-stays)$' > $O/tests.txt 2>&1
echo "tests rc $?" >> $O/tests.txt
date -u >> $O/gpu.txt
cd $OUT && tar -cJf c5.tar.xz c5 && rm -rf c5
