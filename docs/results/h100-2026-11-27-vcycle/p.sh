#!/bin/bash
# On an H100: PETSc's GAMG through PETSc's own cg, bcgs and gmres on the GPU,
# through the fused methods with PCApply() (-ksp_fused_mg 0: the path before
# the V-cycle) and through the fused methods with petsc-fused's own V-cycle;
# each solve in a process of its own (examples/solve: one warm-up solve, then
# the timed one), alternating, three rounds for CG. Then the GPU tests of
# the multigrid paths.
B=build/petsc-3.26-cuda
O=${OUT:-out}
G="-use_gpu_aware_mpi 0"
mkdir -p /opt; [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt; date -u >> $O/device.txt
. /opt/ob/env.sh
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH
run() { echo "== $*" >> $O/gamg.txt; timeout 100 $B/examples/solve -pc_type gamg -ksp_rtol 1e-8 -compare 0 $G "$@" 2>&1 | grep -E '^(cg|bcgs|gmres|pcgfused|pbcgsfused|pgmresfused) ' >> $O/gamg.txt; }
for round in 1 2 3; do
  for p in "lap3d -n 160" "lap2d -n 2000"; do
    run -problem $p -methods cg
    run -problem $p -methods pcgfused -ksp_fused_mg 0
    run -problem $p -methods pcgfused
  done
done
for round in 1 2; do
  run -problem lap3d -n 160 -methods bcgs
  run -problem lap3d -n 160 -methods pbcgsfused
  run -problem lap3d -n 160 -methods gmres
  run -problem lap3d -n 160 -methods pgmresfused
done
timeout 60 $B/examples/solve -problem lap3d -n 160 -pc_type gamg -ksp_rtol 1e-8 -methods pcgfused -compare 0 -ksp_view -log_view $G > $O/view-log.txt 2>&1
FUSED_BUILD=$B timeout 200 bash tools/gpu-session.sh tests 'gamg|vcycle|pcapply' > $O/tests.txt 2>&1
date -u >> $O/device.txt
