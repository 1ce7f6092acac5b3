#!/bin/bash
# The same solves on an H100 (the library of call6): PETSc's gmres and
# pgmresfused with our triangular solves, block Jacobi/ILU(0), the 10^6-row
# convection-diffusion problem, each in a process of its own after a
# warm-up solve, alternating, two rounds.
B=build/petsc-3.26-cuda
O=${OUT:-out}
mkdir -p /opt; [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
[ -x $B/examples/solve ] || tar -xJf .carry/builds.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt; date -u >> $O/device.txt
. /opt/ob/env.sh
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH
run() { echo "== $*" >> $O/ilu.txt; timeout 100 $B/examples/solve -ksp_rtol 1e-8 -compare 0 -use_gpu_aware_mpi 0 "$@" 2>&1 | grep -E '^(gmres|pgmresfused) ' >> $O/ilu.txt; }
CD="-problem convdiff -n 1000 -pc_type bjacobi -sub_pc_type ilu"
for round in 1 2; do
  run $CD -methods gmres
  run $CD -methods pgmresfused
done
cat $O/ilu.txt
date -u >> $O/device.txt
