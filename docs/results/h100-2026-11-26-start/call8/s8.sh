#!/bin/bash
# call 8 (2026-11-26): where the transient benchmark stands against PETSc's own methods (issue 23's target): 1,000
# steps at 10^4 unknowns, our three methods and PETSc's cg, bcgs and gmres on the GPU (aijcusparse, VECCUDA), then
# PETSc's on 16 MPI ranks of the host's CPU cores (aij)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p build/petsc-3.26-cuda/lib && xz -dc .carry/nowlib.so.xz > build/petsc-3.26-cuda/lib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; nproc; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
export LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH
for round in 1 2; do
  echo "== round $round GPU" | tee -a $out/transient.txt
  timeout 120 $B/transient -n 100 -steps 1000 -pc_type jacobi -methods pcgfused,pbcgsfused,pgmresfused,cg,bcgs,gmres 2>&1 | grep -E 'fused|cg|bcgs|gmres|rror|x ours' | tee -a $out/transient.txt
  echo "== round $round CPU, 16 ranks" | tee -a $out/transient.txt
  timeout 120 mpirun -n 16 --oversubscribe --bind-to core $B/transient -n 100 -steps 1000 -pc_type jacobi -methods cg,bcgs,gmres -mat_type aij 2>&1 | grep -E 'cg|bcgs|gmres|rror' | tee -a $out/transient.txt
done
