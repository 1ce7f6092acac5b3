#!/bin/bash
# PETSc's ILU(0) (block Jacobi/ILU(0), PCILU) in petsc-fused's own
# triangular solves (src/ksp/fusedilu.c, src/cuda/trisolve.cu), PETSc 3.26.1
# with CUDA: first the GPU tests of the ILU paths, then the solves of issue
# 20's line (convection-diffusion, 10^6 rows, GMRES with block Jacobi/ILU(0),
# rtol 1e-8): PETSc's gmres on the GPU, pgmresfused through PCApply()
# (-ksp_fused_ilu 0: PETSc's cuSPARSE solves, the path before) and
# pgmresfused with our solves; each in a process of its own after a warm-up
# solve (examples/solve), alternating, two rounds. Then CG with ILU(0) on the
# 3D Laplacian 100^3 (wide levels: a grid of blocks), -log_view and -ksp_view.
B=build/petsc-3.26-cuda
O=${OUT:-out}
G="-use_gpu_aware_mpi 0"
mkdir -p /opt; [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
[ -x $B/examples/solve ] || tar -xJf .carry/builds.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt; date -u >> $O/device.txt
. /opt/ob/env.sh
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
FUSED_BUILD=$B timeout ${TEST_LIMIT:-150} bash tools/gpu-session.sh tests "${TESTS:-trisolve|ilu}" > $O/tests.txt 2>&1
tail -3 $O/tests.txt
run() { echo "== $*" >> $O/ilu.txt; timeout 100 $B/examples/solve -ksp_rtol 1e-8 -compare 0 $G "$@" 2>&1 | grep -E '^(cg|bcgs|gmres|pcgfused|pbcgsfused|pgmresfused) ' >> $O/ilu.txt; }
CD="-problem convdiff -n 1000 -pc_type bjacobi -sub_pc_type ilu"
for round in 1 2; do
  run $CD -methods gmres
  run $CD -methods pgmresfused -ksp_fused_ilu 0
  run $CD -methods pgmresfused
done
L3="-problem lap3d -n 100 -pc_type ilu"
run $L3 -methods cg
run $L3 -methods pcgfused
[ -n "$ONE_BLOCK" ] && run $L3 -methods pcgfused -ksp_fused_ilu_wide_level 100000000
timeout 60 $B/examples/solve $CD -methods pgmresfused -compare 0 $G -ksp_view -log_view -info 2>&1 | grep -E 'ILU|triangular|preconditioner:|backend:|iterations:|Fused|KSPSolve|PCApply|MatMult |^pgmresfused ' > $O/view-log.txt
cat $O/ilu.txt
date -u >> $O/device.txt
