#!/bin/bash
# call 21: the review's FusedRowLanesWithin(): GMRES lanes tests and bcsstk13/evsl per step
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
out=${OUT:-out}; mkdir -p $out
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH timeout 60 build/petsc-3.26-cuda/examples/bench -sizes2d 100 -sizes3d 0 -f tests/data/bcsstk13.mtx,tests/data/evsl_stiff1.mtx,tests/data/circuit_1.mtx -its 50 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij -vec_type standard 2>&1 | grep -E 'GPU|rror' | tee $out/bench.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 300 bash tools/gpu-session.sh tests 'lanes' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -E "^FAIL" $out/gpu-tests.txt | head
