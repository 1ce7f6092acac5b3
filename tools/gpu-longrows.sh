#!/bin/bash
# On the GPU host, after tools/gpu-session.sh has unpacked the bundle: the
# long-row work (issue 22) in one call, into ${OUT:-out}.
#   FULL=1: the SpMV benchmark and the solver benchmark on the irregular
#           matrices (generated arrow and power-law matrices of $SIZES rows,
#           default 10^5 to 10^7, and the real ones with long rows).
#   VARIANTS="name:dir ...": per iteration on the stencils and the smaller
#           irregular matrices, each earlier build (dir: lib/ and
#           examples/bench) and this one alternating, ROUNDS times (2), all
#           into ab.txt and ab.csv.
set -e
. /opt/ob/env.sh
out=${OUT:-out}; mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/device.txt"
real=tests/data/circuit_1.mtx,tests/data/memplus.mtx,tests/data/bcsstk08.mtx
sizes=${SIZES:-100000,1000000,10000000}
methods=pcgfused,pbcgsfused,pgmresfused
if [ -n "$FULL" ]; then
  # this build's library first: the bundle may carry an older copy
  export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
  build/examples/spmv -sizes2d 1000 -sizes3d 160 -arrow "$sizes" -powerlaw "$sizes" -f "$real" -reps 50 -csv "$out/spmv.csv" -label h100 > "$out/spmv.txt" 2>&1 || echo "spmv failed: $?" >> "$out/spmv.txt"
  build/examples/bench -sizes2d 100,316,1000 -sizes3d 0 -arrow "$sizes" -powerlaw "$sizes" -f "$real" -its 50 -methods $methods -csv "$out/bench.csv" -label h100 > "$out/bench.txt" 2>&1 || echo "bench failed: $?" >> "$out/bench.txt"
fi
if [ -n "$VARIANTS" ]; then
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for v in $VARIANTS this:.; do
      name=${v%%:*}; dir=${v#*:}
      if [ "$name" = this ]; then lib=$PWD/lib bench=build/examples/bench; else lib=$dir/lib bench=$dir/examples/bench; fi
      for args in "-sizes2d 100,1000 -sizes3d 160 -its 200" "-sizes2d 0 -sizes3d 0 -arrow 100000,1000000 -powerlaw 100000,1000000 -its 50"; do
        echo "== $name round $round: $args" >> "$out/ab.txt"
        LD_LIBRARY_PATH=$lib:$LD_LIBRARY_PATH "$bench" $args -methods $methods -csv "$out/ab.csv" -label "$name-$round" 2>&1 | grep -E "GPU|CPU|rror" >> "$out/ab.txt" || true
      done
    done
  done
fi
