#!/bin/bash
# call 4 (2026-11-27): what -ksp_pgmresfused_adaptive 0.9 costs per iteration (host-driven steps) against the
# default device loop, Jacobi, VECCUDA, two rounds alternating.
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
tar -xJf .carry/builds.tar.xz
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
N=build/petsc-3.26-cuda
for round in 1 2; do for a in 0 0.9; do
  echo "== round $round -ksp_pgmresfused_adaptive $a" >> $out/bench-adaptive.txt
  LD_LIBRARY_PATH=$PWD/$N/lib:$LD_LIBRARY_PATH timeout 120 $N/examples/bench -sizes2d 100,1000 -sizes3d 0 -its 50 -reps 3 -methods pgmresfused -mat_type aijcusparse -vec_type cuda -ksp_pgmresfused_adaptive $a 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench-adaptive.txt
done; done
cat $out/bench-adaptive.txt
