#!/bin/bash
# On the GPU host, after tools/gpu-session.sh has unpacked the bundle: what a
# whole KSPSolve costs beyond its iterations (issue "many small solves"),
# this build against earlier ones, alternating, ROUNDS rounds, into ${OUT:-out}:
#   overhead.txt  bench's "per solve ms" (Jacobi, zero guess, -its 50) at
#                 10^4, 32^3 and 10^5 rows with VECCUDA/aijcusparse operands
#                 and with host operands; the transient benchmark's ms per
#                 time step (nonzero guess) at 10^4 and 10^5 unknowns
#   overhead.csv  bench's CSV rows of both
# Both builds run this build's programs; only the library differs, so that
# the figures are printed alike. VARIANTS="name:dir ...": earlier builds,
# each dir with its lib/ (BASE=dir alone means VARIANTS="before:dir").
# FUSED_BUILD: this build (default build/petsc-3.26-cuda), labelled "after".
set -e
B=${FUSED_BUILD:-build/petsc-3.26-cuda}
out=${OUT:-out}; mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G="-use_gpu_aware_mpi 0"
M=pcgfused,pbcgsfused,pgmresfused
one() { # label, library directory
  label=$1; lib=$2
  for ops in "" "-mat_type aij"; do
    echo "== $label bench ${ops:-VECCUDA operands}" >> "$out/overhead.txt"
    LD_LIBRARY_PATH=$lib:$LD_LIBRARY_PATH timeout 300 "$B/examples/bench" -sizes2d 100,316 -sizes3d 32 -its 50 -reps 5 -methods $M $ops $G \
      -csv "$out/overhead.csv" -label "$label${ops:+-host}" >> "$out/overhead.txt" 2>&1 || echo "rc $?" >> "$out/overhead.txt"
    for p in "-n 100 -steps 1000" "-n 316 -steps 300"; do
      echo "== $label transient $p ${ops:-VECCUDA operands}" >> "$out/overhead.txt"
      LD_LIBRARY_PATH=$lib:$LD_LIBRARY_PATH timeout 300 "$B/examples/transient" -dim 2 $p -pc_type jacobi -methods $M $ops $G >> "$out/overhead.txt" 2>&1 || echo "rc $?" >> "$out/overhead.txt"
    done
  done
}
VARIANTS=${VARIANTS:-${BASE:+before:$BASE}}
for r in $(seq 1 "${ROUNDS:-2}"); do
  for v in $VARIANTS; do one "${v%%:*}-$r" "$PWD/${v#*:}/lib"; done
  one "after-$r" "$PWD/$B/lib"
done
grep -E "^==|pcgfused|pbcgsfused|pgmresfused" "$out/overhead.txt" | grep -v "faster" > "$out/overhead-summary.txt" || true
