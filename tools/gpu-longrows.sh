#!/bin/bash
# On the GPU host, after tools/gpu-session.sh has unpacked the bundle: the
# long-row work (issue 22) in one call. The SpMV benchmark and the solver
# benchmark on the irregular matrices (generated arrow and power-law
# matrices of 10^5 to 10^7 rows, and the real ones with long rows), then the
# stencils per iteration with the build before the change ($BASE: lib/ and
# examples/bench) and this one alternating, ROUNDS times, into ${OUT:-out}.
set -e
. /opt/ob/env.sh
# this build's library first: the bundle may carry an older copy
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
out=${OUT:-out}; mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/device.txt"
real=tests/data/circuit_1.mtx,tests/data/memplus.mtx,tests/data/bcsstk08.mtx
sizes=${SIZES:-100000,1000000,10000000}
build/examples/spmv -sizes2d 1000 -sizes3d 160 -arrow "$sizes" -powerlaw "$sizes" -f "$real" -reps 50 -csv "$out/spmv.csv" -label h100 > "$out/spmv.txt" 2>&1 || echo "spmv failed: $?" >> "$out/spmv.txt"
build/examples/bench -sizes2d 100,316,1000 -sizes3d 0 -arrow "$sizes" -powerlaw "$sizes" -f "$real" -its 50 -methods pcgfused,pbcgsfused,pgmresfused -csv "$out/bench.csv" -label h100 > "$out/bench.txt" 2>&1 || echo "bench failed: $?" >> "$out/bench.txt"
if [ -n "$BASE" ]; then
  args="-sizes2d 100,1000 -sizes3d 160 -its 200 -methods pcgfused,pbcgsfused,pgmresfused"
  for round in $(seq 1 "${ROUNDS:-2}"); do
    LD_LIBRARY_PATH=$BASE/lib:$LD_LIBRARY_PATH "$BASE/examples/bench" $args -csv "$out/stencils.csv" -label "before-$round" > "$out/stencils-before-$round.txt" 2>&1
    LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH build/examples/bench $args -csv "$out/stencils.csv" -label "after-$round" > "$out/stencils-after-$round.txt" 2>&1
  done
fi
