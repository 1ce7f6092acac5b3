#!/bin/bash
# On the GPU host, after tools/gpu-session.sh has unpacked the bundle: the
# transient benchmark (examples/transient) with the fused methods and, in a
# CUDA PETSc, PETSc's own on the GPU (VECCUDA operands), the fused methods
# again with host vectors, then PETSc's on all CPU cores; CSV,
# tables and a plot into ${OUT:-out}. FUSED_BUILD picks the build.
set -e
. /opt/ob/env.sh
B=${FUSED_BUILD:-build}
if [ "$B" = build ]; then L=lib; else L=$B/lib; fi
export LD_LIBRARY_PATH=$PWD/$L:$LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p "$out"
ncores=$(nproc)
run() { # label, then transient's options
  label=$1; shift
  "$B/examples/transient" "$@" -pc_type jacobi -csv "$out/transient.csv" -label "gpu" -use_gpu_aware_mpi 0 | tee -a "$out/transient.txt"
  "$B/examples/transient" "$@" -pc_type jacobi -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij -csv "$out/transient.csv" -label "gpu-host-vectors" | tee -a "$out/transient.txt"
  mpirun --oversubscribe -n "$ncores" "$B/examples/transient" "$@" -pc_type jacobi -methods cg,bcgs,gmres -mat_type aij -csv "$out/transient.csv" -label "cpu-$ncores-ranks" | tee -a "$out/transient.txt"
}
run 2d-1e4 -dim 2 -n 100 -steps 1000
run 2d-1e5 -dim 2 -n 316 -steps 1000
run 3d-1e6 -dim 3 -n 100 -steps 100
python3 tools/transient_plot.py "$out/transient.csv" "$out/transient.png"
