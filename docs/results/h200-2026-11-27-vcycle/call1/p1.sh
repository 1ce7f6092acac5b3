#!/bin/bash
# Call 1: PETSc's GAMG in petsc-fused's own device V-cycle. Its GPU tests,
# then KSPSolve times with GAMG at 160^3 and 2000^2: PETSc's cg, pcgfused
# with PCApply() (-ksp_fused_mg 0, the path before this change) and
# pcgfused with the V-cycle, each in a process of its own, alternating.
B=build/petsc-3.26-cuda
O=${OUT:-out}
G="-use_gpu_aware_mpi 0"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt; date -u >> $O/device.txt
FUSED_BUILD=$B timeout 200 bash tools/gpu-session.sh tests 'gamg|vcycle|pcapply' > $O/tests.txt 2>&1
. /opt/ob/env.sh
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH
timeout 60 $B/examples/solve -problem lap3d -n 100 -pc_type gamg -ksp_rtol 1e-8 -methods pcgfused -compare 0 -ksp_view -info $G 2>&1 | grep -i 'multigrid\|V-cycle\|preconditioner:\|iterations' > $O/view.txt
for round in 1 2; do
  for p in "lap3d -n 160" "lap2d -n 2000"; do
    for m in "cg" "pcgfused -ksp_fused_mg 0" "pcgfused"; do
      echo "== $p $m" >> $O/gamg.txt
      timeout 100 $B/examples/solve -problem $p -pc_type gamg -ksp_rtol 1e-8 -methods $m -compare 0 $G 2>&1 | grep -E '^(cg|pcgfused) ' >> $O/gamg.txt
    done
  done
done
date -u >> $O/device.txt
