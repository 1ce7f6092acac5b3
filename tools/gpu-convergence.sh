#!/bin/bash
# On the GPU host, after tools/gpu-session.sh has unpacked the bundle: the
# speed check of the convergence work. Per iteration at 10^4 rows (100^2),
# 10^6 rows (1000^2) and 160^3, Jacobi, the three fused methods, the build
# before the change ($BASE: a folder with lib/ and examples/bench) and this
# build (build/, lib/) alternating, ROUNDS times each, into ${OUT:-out}.
set -e
. /opt/ob/env.sh
: "${BASE:?BASE: the earlier build (lib/ and examples/bench)}"
out=${OUT:-out}; mkdir -p "$out"
args="-sizes2d 100,1000 -sizes3d 160 -its 200 -methods pcgfused,pbcgsfused,pgmresfused"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/device.txt"
for round in $(seq 1 "${ROUNDS:-2}"); do
  LD_LIBRARY_PATH=$BASE/lib:$LD_LIBRARY_PATH "$BASE/examples/bench" $args -csv "$out/speed.csv" -label "before-$round" > "$out/before-$round.txt"
  LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH build/examples/bench $args -csv "$out/speed.csv" -label "after-$round" > "$out/after-$round.txt"
done
grep -h "us/it\|per it" "$out"/before-1.txt | head -3 || true
