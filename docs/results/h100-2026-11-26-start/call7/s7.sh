#!/bin/bash
# call 7 (2026-11-26): after the three starts' host code went into one helper (KSPFusedCUDAStartInKernel()):
# the GPU tests of the in-place, first-test and single-kernel paths, and one transient run of the three methods
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p build/petsc-3.26-cuda/lib && xz -dc .carry/nowlib.so.xz > build/petsc-3.26-cuda/lib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
FUSED_BUILD=build/petsc-3.26-cuda timeout 300 bash tools/gpu-session.sh tests '^cudapetsc-|^gpu-(cg|bcgs|gmres)-first|transient|^gpu-(cg|bcgs|gmres)-(nonzero|norm|lanes|lap|494)' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -c '^PASS' $out/gpu-tests.txt; grep -E -A2 "^FAIL" $out/gpu-tests.txt | head -30
LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH timeout 60 $B/transient -n 100 -steps 1000 -pc_type jacobi -methods pcgfused,pbcgsfused,pgmresfused 2>&1 | grep -E 'fused|rror' | tee $out/transient.txt
