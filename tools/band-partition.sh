#!/bin/bash
# Issue 7's partitioning target: on band and five-band matrices made of copies
# of each test matrix (examples/problems.h, ProblemCreateBanded), the halo per
# product under row blocks, graph partitioning (PT-Scotch) and hypergraph
# partitioning (Zoltan PHG). Runs on the CPU:
#   bash tools/band-partition.sh [copies] [ranks...]     (default 64 copies, 2 and 4 ranks)
# Prints one line per case; the ratio is row blocks over the partitioner's halo.
set -e
copies=${1:-64}; shift || true
ranks=${*:-2 4}
mpiexec=${MPIEXEC:-mpiexec --oversubscribe}
[ "$(id -u)" = 0 ] && mpiexec="$mpiexec --allow-run-as-root"
printf "%-10s %-9s %5s %8s %12s %12s %7s %12s %7s\n" matrix band ranks rows rowblocks graph ratio hypergraph ratio
for f in ${MATRICES:-tests/data/494_bus.mtx tests/data/olm1000.mtx tests/data/west0479.mtx tests/data/bcsstk13.mtx}; do
  for band in band fiveband; do
    for np in $ranks; do
      line() { $mpiexec -n "$np" build/examples/solve -f "$f" -band "$band" -band_copies "$copies" -partition "$1" \
                 -methods pgmresfused -compare 0 -ksp_max_it 1 -pc_type jacobi 2>&1 | grep "^partition"; }
      g=$(line graph); h=$(line hypergraph)
      rb=$(echo "$g" | sed -E 's/.*product ([0-9]+) -> .*/\1/')
      gv=$(echo "$g" | sed -E 's/.*-> ([0-9]+) values.*/\1/')
      hv=$(echo "$h" | sed -E 's/.*-> ([0-9]+) values.*/\1/')
      rows=$($mpiexec -n 1 build/examples/solve -f "$f" -band "$band" -band_copies "$copies" -methods pgmresfused -compare 0 -ksp_max_it 1 2>&1 | sed -nE 's/.* ([0-9]+) rows.*/\1/p' | head -1)
      printf "%-10s %-9s %5s %8s %12s %12s %6.1fx %12s %6.1fx\n" "$(basename "$f" .mtx)" "$band" "$np" "$rows" "$rb" "$gv" \
        "$(echo "$rb / $gv" | bc -l)" "$hv" "$(echo "$rb / $hv" | bc -l)"
    done
  done
done
