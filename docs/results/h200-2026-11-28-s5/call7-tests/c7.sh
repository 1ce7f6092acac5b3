#!/bin/bash
# 2026-11-28 session 5, call 7: the GPU tests of pgmresfused on the code kept (72e3a19: the launch facts at
# KSPSetUp, the partial sums' buffer left to the first solve), in three groups side by side, and the CUDA-PETSc tests of the other two methods beside them.
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
out=${OUT:-out}/c7; mkdir -p $out
B=build/petsc-3.26-cuda
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G="-use_gpu_aware_mpi 0"
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
export FUSED_BUILD=$B
( bash tools/gpu-session.sh tests '^gpu-gmres-(adaptive|first|nullspace|end|plain)' > $out/tests-a.txt 2>&1 ) &
( bash tools/gpu-session.sh tests '^gpu-gmres-(pbjacobi|maxit|lanes|lap|graph|convdiff|symmetric|restart|np|nonzero|none|monitor|ilu|host|gamg|evsl|errorhistory|cgs|bjacobi|basis|494)' > $out/tests-b.txt 2>&1 ) &
( bash tools/gpu-session.sh tests '^cudapetsc-gmres|^robust-gmres' > $out/tests-c.txt 2>&1 ) &
( bash tools/gpu-session.sh tests '^cudapetsc-(cg|bcgs)' > $out/tests-d.txt 2>&1 ) &
wait
for f in $out/tests-*.txt; do echo "$f: $(grep -E "passed|failed" $f | tail -1)"; grep -E "^FAIL|^not ok|FAIL" $f | head -5; done
date -u >> $out/device.txt
cd ${OUT:-out} && tar -cJf c7.tar.xz c7 && rm -rf c7
