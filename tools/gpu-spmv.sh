#!/bin/bash
# On the GPU host, after tools/gpu-session.sh has unpacked the bundle: the
# SpMV benchmark of the hybcuda storage against cuSPARSE (issue 3) on the 2D
# and 3D Laplacians of 1M and 4M rows and the test matrices; table and CSV
# into ${OUT:-out}. cuSPARSE comes from the host's CUDA toolkit.
set -e
. /opt/ob/env.sh
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
if ! ldd build/examples/spmv | grep -q 'libcusparse.*=> /'; then
  dir=$(dirname "$(find / -name 'libcusparse.so.12*' -not -path '/proc/*' 2>/dev/null | head -1)")
  export LD_LIBRARY_PATH=$dir:$LD_LIBRARY_PATH
fi
out=${OUT:-out}; mkdir -p "$out"
build/examples/spmv -sizes2d 1000,2000 -sizes3d 100,160 -f tests/data/494_bus.mtx,tests/data/bcsstk13.mtx,tests/data/olm1000.mtx,tests/data/west0479.mtx \
  -reps 200 -csv "$out/spmv.csv" -label "${LABEL:-gpu}" | tee "$out/spmv.txt"
