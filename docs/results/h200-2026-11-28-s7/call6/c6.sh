#!/bin/bash
# Session 7, call 6 (H200): cudapetsc-bcgs-gamg, the one test of ^gpu-(cg|bcgs)-|^cudapetsc- calls 2-5 did not run,
# code of 90aa897.
set -u
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
B=build/petsc-3.26-cuda
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PATH=$PATH:/usr/local/cuda/bin
O=$OUT/c6; mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; } > $O/gpu.txt 2>&1
FUSED_BUILD=$B timeout 200 bash tools/gpu-session.sh tests '^cudapetsc-bcgs-gamg$' > $O/tests.txt 2>&1
echo "tests rc $?" >> $O/tests.txt
date -u >> $O/gpu.txt
cd $OUT && tar -cJf c6.tar.xz c6 && rm -rf c6
