#!/bin/bash
# On the GPU host, after tools/gpu-session.sh has unpacked the bundle: the
# benchmark on the GPU (one rank) and PETSc's CPU methods on all cores, CSV
# and plots into ${OUT:-out}.
set -e
. /opt/ob/env.sh
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p "$out"
sizes="-sizes2d 100,316,1000,2000,4000 -sizes3d 64,160,252 -its 200"
build/examples/bench $sizes -csv "$out/bench.csv" -label gpu | tee "$out/bench-gpu.txt"
ncores=$(nproc)
mpirun --oversubscribe -n "$ncores" build/examples/bench $sizes -methods cg,bcgs,gmres -csv "$out/bench.csv" -label "cpu-$ncores-ranks" | tee "$out/bench-cpu.txt"
python3 tools/bench_plot.py "$out/bench.csv" "$out/bench"
