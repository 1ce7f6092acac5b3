#!/bin/bash
# On the GPU host: the
# SpMV benchmark of the hybcuda storage against cuSPARSE (issue 3) on the 2D
# and 3D Laplacians of 1M and 4M rows and the test matrices; table and CSV
# into ${OUT:-out}. cuSPARSE comes from the host's CUDA toolkit (gpu-session.sh
# finds it).
#   bash tools/gpu-session.sh cmd bash tools/gpu-spmv.sh
set -e
out=${OUT:-out}; mkdir -p "$out"
build/examples/spmv -sizes2d 1000,2000 -sizes3d 100,160 -f tests/data/494_bus.mtx,tests/data/bcsstk13.mtx,tests/data/olm1000.mtx,tests/data/west0479.mtx \
  -reps 200 -csv "$out/spmv.csv" -label "${LABEL:-gpu}" | tee "$out/spmv.txt"
