#!/bin/bash
# Multi-GPU scaling of the fused methods (issue 5), for a host with 4 or 8
# GPUs: strong scaling of CG and GMRES(30) on a 3D Laplacian of 64M rows
# (400^3) and weak scaling at 16M rows (252^3-ish) per GPU, one rank per GPU.
#   bash tools/gpu-scaling.sh [max GPUs, default: all visible]
# Output: ${OUT:-out}/scaling.csv and the bench tables; each rank takes the
# device (node-local rank) mod (visible devices).
set -e
. /opt/ob/env.sh
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p "$out"
ngpu=${1:-$(nvidia-smi -L | wc -l)}
for n in 1 2 4 8; do
  [ "$n" -le "$ngpu" ] || break
  # strong: the same 64M rows on n GPUs
  mpirun --oversubscribe -n "$n" build/examples/bench -sizes2d 0 -sizes3d 400 -its 100 -methods pcgfused,pgmresfused \
    -csv "$out/scaling.csv" -label "strong-$n" | tee "$out/strong-$n.txt"
  # weak: 16M rows per GPU (side = round(cbrt(16e6 n)))
  side=$(python3 -c "print(round((16e6*$n)**(1/3)))")
  mpirun --oversubscribe -n "$n" build/examples/bench -sizes2d 0 -sizes3d "$side" -its 100 -methods pcgfused,pgmresfused \
    -csv "$out/scaling.csv" -label "weak-$n" | tee "$out/weak-$n.txt"
done
