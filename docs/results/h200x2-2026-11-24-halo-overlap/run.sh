#!/bin/bash
# The halo overlap of pbcgsfused and pgmresfused on two GPUs of one host
# (nvidia-h200-x2, 2026-11-24), from the repository root with
# .carry/ob.tar.xz (the PETSc 3.26.1 CUDA bundle), the new build in
# build/petsc-3.26-cuda and the build before (b4c4bd9: libpetscfused.so
# and solve) in .carry/before: the 2-rank GPU tests, then us per iteration
# on 252^3 (16M rows) on 1 GPU and on 2 (one rank each), the two builds
# alternating on 2 ranks, two rounds.
rm -rf /opt/ob; mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
export FUSED_BUILD=build/petsc-3.26-cuda
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 120 bash tools/gpu-session.sh tests '^gpu-(cg|bcgs|gmres)-np2$|^gpu-(bcgs|gmres)-nullspace-np2$' 2>&1 | grep -v "^PASS" | tail -8
source /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() { # ranks, build, then solve's arguments
  local n=$1 b=$2; shift 2
  if [ $b = before ]; then L=$PWD/.carry/before; S=.carry/before/solve; else L=$PWD/build/petsc-3.26-cuda/lib; S=build/petsc-3.26-cuda/examples/solve; fi
  timeout 60 mpirun --oversubscribe -n $n -x LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH $S "$@" 2>&1 | grep -E "^(pcgfused|pbcgsfused|pgmresfused) "
}
for round in 1 2; do
  echo "== round $round new, 1 rank: lap3d n=252 jacobi"
  run 1 new -problem lap3d -n 252 -pc_type jacobi -methods pcgfused,pbcgsfused,pgmresfused -ksp_max_it 100 -compare 0
  for b in before new; do
    echo "== round $round $b, 2 ranks on 2 GPUs: lap3d n=252 jacobi"
    run 2 $b -problem lap3d -n 252 -pc_type jacobi -methods pcgfused,pbcgsfused,pgmresfused -ksp_max_it 100 -compare 0
  done
done
date -u
