#!/bin/bash
# Multi-GPU runs of the fused methods, one rank per GPU (each rank takes the
# device (node-local rank) mod (visible devices)). Run on the GPU host after
# tools/gpu-session.sh has unpacked the bundle:
#   bash tools/gpu-scaling.sh pair   issue 7: 3D Laplacian 252^3 (16M rows) on 1 and 2 GPUs,
#                                    timed (bench) and solved to rtol 1e-8 (iteration counts)
#   bash tools/gpu-scaling.sh N      issue 5: strong scaling on 400^3 (64M rows) and weak
#                                    scaling at 16M rows per GPU, on 1, 2, 4, 8 GPUs up to N
# Output: ${OUT:-out}/scaling.csv and the tables as text.
set -e
. /opt/ob/env.sh
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
bench() { # ranks side label
  mpirun --oversubscribe -n "$1" build/examples/bench -sizes2d 0 -sizes3d "$2" -its 100 -methods pcgfused,pgmresfused \
    -csv "$out/scaling.csv" -label "$3" | tee "$out/$3.txt"
}
if [ "$1" = pair ]; then
  for n in 1 2; do
    bench "$n" 252 "pair-$n"
    mpirun --oversubscribe -n "$n" build/examples/solve -n 252 -compare 0 -methods pcgfused,pgmresfused -pc_type jacobi | tee "$out/pair-solve-$n.txt"
  done
  exit 0
fi
ngpu=${1:-$(nvidia-smi -L | wc -l)}
for n in 1 2 4 8; do
  [ "$n" -le "$ngpu" ] || break
  bench "$n" 400 "strong-$n"   # the same 64M rows on n GPUs
  side=$(python3 -c "print(round((16e6*$n)**(1/3)))")
  [ "$side" = 400 ] || bench "$n" "$side" "weak-$n"   # 16M rows per GPU; at 4 GPUs that is the strong case
done
