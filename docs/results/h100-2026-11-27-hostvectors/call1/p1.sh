#!/bin/bash
# Call 1: where a GAMG-preconditioned CG solve spends its time, PETSc's cg
# against pcgfused (PETSc's -log_view, per-level MG events), and whether
# pgmresfused's first solve pays for CUDA's lazy loading of its kernels.
B=build/petsc-3.26-cuda
O=${OUT:-out}
G="-use_gpu_aware_mpi 0"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt; date -u >> $O/device.txt
which nsys >> $O/device.txt 2>&1
for m in cg pcgfused cg pcgfused; do
  timeout 120 $B/examples/solve -problem lap3d -n 160 -pc_type gamg -ksp_rtol 1e-8 -methods $m -compare 0 -log_view -pc_mg_log $G >> $O/gamg-lap3d-160-$m.txt 2>&1
done
for m in cg pcgfused; do
  timeout 120 $B/examples/solve -problem lap2d -n 2000 -pc_type gamg -ksp_rtol 1e-8 -methods $m -compare 0 -log_view -pc_mg_log $G >> $O/gamg-lap2d-2000-$m.txt 2>&1
done
for mode in LAZY EAGER LAZY EAGER; do
  for m in pgmresfused pcgfused; do
    echo "== $mode $m" >> $O/first.txt
    CUDA_MODULE_LOADING=$mode timeout 60 $B/examples/bench -sizes2d 100 -its 50 -reps 3 -methods $m -mat_type aijcusparse -vec_type cuda $G 2>&1 | grep -v '^$' | tail -4 >> $O/first.txt
  done
done
