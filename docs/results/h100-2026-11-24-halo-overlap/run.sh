#!/bin/bash
# The halo overlap of pbcgsfused and pgmresfused (2026-11-24), on the GPU
# host from the repository root: .carry/ob.tar.xz (the PETSc 3.26.1 CUDA
# bundle), the new build in build/petsc-3.26-cuda, the build before (its
# libpetscfused.so and solve) in .carry/before. The multi-rank GPU tests,
# then us per iteration on 2 ranks sharing the one GPU, both builds
# alternating, two rounds (2 ranks on one GPU: not the 2-GPU set-up of
# issue 24, which was not lent).
rm -rf /opt/ob; mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
export FUSED_BUILD=build/petsc-3.26-cuda
date -u
bash tools/gpu-session.sh tests "${1:-np[234]|halo}" 2>&1 | grep -v "^PASS" | tail -20
source /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { # build, then solve's arguments
  local b=$1; shift
  if [ $b = before ]; then L=$PWD/.carry/before; S=.carry/before/solve; else L=$PWD/build/petsc-3.26-cuda/lib; S=build/petsc-3.26-cuda/examples/solve; fi
  mpirun --oversubscribe -n 2 -x LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH $S "$@" 2>&1 | grep -E "^(pcgfused|pbcgsfused|pgmresfused) "
}
for round in 1 2; do
  for b in before new; do
    echo "== round $round $b: 2 ranks, lap3d n=160 jacobi"
    run $b -problem lap3d -n 160 -pc_type jacobi -methods pbcgsfused,pgmresfused -ksp_max_it 300 -compare 0
    echo "== round $round $b: 2 ranks, lap2d n=1000 jacobi"
    run $b -problem lap2d -n 1000 -pc_type jacobi -methods pbcgsfused,pgmresfused -ksp_max_it 600 -compare 0
  done
done
date -u
