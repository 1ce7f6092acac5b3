#!/bin/bash
# On the GPU host, after tools/gpu-session.sh has unpacked the bundle: the
# measurements of the fused methods inside PETSc 3.26.1 built with CUDA
# (build/petsc-3.26-cuda), into ${OUT:-out}:
#   bench-*.txt   per iteration, Jacobi, aijcusparse + VECCUDA operands, beside
#                 PETSc's own GPU methods; alternating with BASE (a build to
#                 compare with, host operands) where BASE is given
#   gamg-*.txt    whole KSPSolve with PETSc's GAMG (and GMRES with block
#                 Jacobi/ILU) against PETSc's methods with the same PC
#   ex2.txt       PETSc's unmodified ex2 (EX2) through -dll_append on the GPU
# BASE=dir with lib/ and examples/ of the build before the change (optional).
set -e
B=build/petsc-3.26-cuda
out=${OUT:-out}; mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G="-use_gpu_aware_mpi 0"
new() { LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH "$@"; }
# into FILE cmd...: cmd's output to FILE, and its exit status where it failed
into() { local f=$1; shift; "$@" > "$f" 2>&1 || echo "rc $?" >> "$f"; }
sizes="-sizes2d ${SIZES2D:-100,316,1000} -sizes3d ${SIZES3D:-160}"
for pass in 1 2; do
  if [ -n "$BASE" ]; then
    into "$out/bench-before-$pass.txt" env LD_LIBRARY_PATH=$PWD/$BASE/lib:$LD_LIBRARY_PATH timeout 300 $BASE/examples/bench $sizes -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij $G -csv "$out/bench.csv" -label "before-host-operands-$pass"
  fi
  if [ $pass = 1 ]; then methods=""; else methods="-methods pcgfused,pbcgsfused,pgmresfused"; fi
  into "$out/bench-$pass.txt" new timeout 400 $B/examples/bench $sizes $methods $G -csv "$out/bench.csv" -label "cuda-operands-$pass"
done
# GAMG, rtol 1e-8, warm solves (-warm_up), PETSc's cg and pipecg beside
into "$out/gamg-lap3d-160.txt" new timeout 240 $B/examples/solve -problem lap3d -n 160 -pc_type gamg -ksp_rtol 1e-8 -methods pcgfused $G
into "$out/gamg-lap2d-2000.txt" new timeout 240 $B/examples/solve -problem lap2d -n 2000 -pc_type gamg -ksp_rtol 1e-8 -methods pcgfused $G
into "$out/bjacobi-ilu-convdiff-1000.txt" new timeout 240 $B/examples/solve -problem convdiff -n 1000 -pc_type bjacobi -sub_pc_type ilu -ksp_rtol 1e-8 -methods pgmresfused $G
into "$out/gamg-ksp-view.txt" new timeout 120 $B/examples/solve -problem lap3d -n 100 -pc_type gamg -ksp_rtol 1e-8 -methods pcgfused -compare 0 -ksp_view $G
if [ -n "$EX2" ]; then
  into "$out/ex2.txt" new timeout 120 "$EX2" -m 1000 -n 1000 -dll_append $PWD/$B/lib/libpetscfused.so -mat_type aijcusparse -vec_type cuda -ksp_type pcgfused -pc_type gamg -ksp_view -log_view $G
fi
python3 tools/bench_plot.py "$out/bench.csv" "$out/bench" || true
