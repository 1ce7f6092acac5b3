#!/bin/bash
# On the GPU host, after tools/gpu-session.sh has unpacked the bundle: the
# benchmark on the GPU (one rank) and PETSc's CPU methods on all cores, CSV
# and plots into ${OUT:-out}. "gpu" or "cpu" as the argument runs one half.
set -e
. /opt/ob/env.sh
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p "$out"
sizes="-sizes2d 100,316,1000,2000,4000 -sizes3d 64,160,252"
if [ "${1:-all}" != cpu ]; then
  build/examples/bench $sizes -its 200 -csv "$out/bench.csv" -label gpu | tee "$out/bench-gpu.txt"
  # ViennaCL 1.7.1 in the same run, where make viennacl built it (up to 4M
  # rows: its host-side assembly of the 16M-row matrices takes minutes)
  if [ -x build/examples/viennacl_bench ]; then
    build/examples/viennacl_bench -sizes2d 100,316,1000,2000 -sizes3d 64,160 -its 200 -csv "$out/bench.csv" -label viennacl | tee "$out/bench-viennacl.txt"
  fi
fi
if [ "${1:-all}" != gpu ]; then
  ncores=$(nproc)
  mpirun --oversubscribe -n "$ncores" build/examples/bench $sizes -its 100 -methods cg,bcgs,gmres -csv "$out/bench.csv" -label "cpu-$ncores-ranks" | tee "$out/bench-cpu.txt"
fi
python3 tools/bench_plot.py "$out/bench.csv" "$out/bench"
