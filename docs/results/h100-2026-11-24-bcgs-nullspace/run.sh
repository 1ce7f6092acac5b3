#!/bin/bash
# The BiCGStab null space session (2026-11-24), on the GPU host, from the
# repository root with .carry/ob.tar.xz (the PETSc 3.26.1 CUDA bundle), the
# new build in build/petsc-3.26-cuda and the build before the change (its
# libpetscfused.so and solve) in .carry/before: the GPU tests matching $1,
# then us per iteration of both builds, alternating, two rounds.
rm -rf /opt/ob; mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
export FUSED_BUILD=build/petsc-3.26-cuda
date -u
bash tools/gpu-session.sh tests "${1:-nullspace|^gpu-bcgs|^cudapetsc-bcgs|^gpu-gmres}" 2>&1 | grep -v "^PASS" | tail -40
source /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
run() { # build, then solve's arguments
  local b=$1; shift
  if [ $b = before ]; then L=$PWD/.carry/before; S=.carry/before/solve; else L=$PWD/build/petsc-3.26-cuda/lib; S=build/petsc-3.26-cuda/examples/solve; fi
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH $S "$@" 2>&1 | grep -E "^(pbcgsfused|bcgs) "
}
for round in 1 2; do
  for b in before new; do
    echo "== round $round $b: neumann2d n=1000 (null space: the constants) jacobi"
    run $b -problem neumann2d -n 1000 -pc_type jacobi -methods pbcgsfused -ksp_max_it 600 -compare 0
    echo "== round $round $b: neumann2d n=100 (null space) jacobi"
    run $b -problem neumann2d -n 100 -pc_type jacobi -methods pbcgsfused -ksp_max_it 600 -compare 0
    echo "== round $round $b: lap2d n=100 / 1000, lap3d n=160 jacobi (no null space)"
    run $b -problem lap2d -n 100 -pc_type jacobi -methods pbcgsfused -ksp_max_it 600 -compare 0
    run $b -problem lap2d -n 1000 -pc_type jacobi -methods pbcgsfused -ksp_max_it 600 -compare 0
    run $b -problem lap3d -n 160 -pc_type jacobi -methods pbcgsfused -ksp_max_it 300 -compare 0
    echo "== round $round $b: veclap3d n=70 pbjacobi skew 0.3"
    run $b -problem veclap3d -n 70 -problem_block_skew 0.3 -pc_type pbjacobi -methods pbcgsfused -ksp_max_it 300 -compare 0
  done
done
echo "== new against PETSc's GPU bcgs, neumann2d n=1000 (null space) jacobi, to rtol 1e-8"
run new -problem neumann2d -n 1000 -pc_type jacobi -ksp_max_it 20000 -methods pbcgsfused
echo "== -ksp_view new, neumann2d n=1000"
LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH build/petsc-3.26-cuda/examples/solve -problem neumann2d -n 1000 -pc_type jacobi -methods pbcgsfused -ksp_max_it 60 -compare 0 -ksp_view 2>&1 | grep -E "preconditioner:|backend|iterations"
date -u
