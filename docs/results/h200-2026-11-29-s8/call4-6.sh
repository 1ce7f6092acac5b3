#!/bin/bash
# Session 8, calls 4 and 5 (H200): GPU tests of 4204b52, bash .carry/c4.sh NAME REGEX
set -u
name=$1; regex=$2
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
B=build/petsc-3.26-cuda
O=$OUT/$name; mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; git log --oneline -1; } > $O/gpu.txt 2>&1
FUSED_BUILD=$B timeout 545 bash tools/gpu-session.sh tests "$regex" > $O/tests.txt 2>&1
echo "tests rc $?" >> $O/tests.txt
date -u >> $O/gpu.txt
cd $OUT && tar -cJf $name.tar.xz $name && rm -rf $name
