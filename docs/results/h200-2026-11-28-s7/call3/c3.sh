#!/bin/bash
# Session 7, call 3 (H200): the GPU tests of pcgfused, pbcgsfused and the
# CUDA-PETSc paths on the code of 90aa897 (the device-loop choice changed in
# code all three methods share), and pgmresfused's GMRES list once more.
set -u
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
B=build/petsc-3.26-cuda
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PATH=$PATH:/usr/local/cuda/bin
O=$OUT/c3; mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; } > $O/gpu.txt 2>&1
FUSED_BUILD=$B timeout 540 bash tools/gpu-session.sh tests '^gpu-(cg|bcgs)-|^cudapetsc-|^gpu-gmres-' > $O/tests.txt 2>&1
echo "tests rc $?" >> $O/tests.txt
date -u >> $O/gpu.txt
cd $OUT && tar -cJf c3.tar.xz c3 && rm -rf c3
