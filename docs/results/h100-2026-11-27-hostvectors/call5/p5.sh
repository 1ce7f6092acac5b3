#!/bin/bash
# Call 5: the pinned array's edges through one staging half (one wait per
# download). The GPU tests that call 4's time limit left out and the pinned
# tests again; then bench's cost of a solve beyond its iterations with host
# vectors, the build before the session (prev/: e281331) and this one
# alternating, two rounds; the transient benchmark at 10^4 unknowns with
# pinning off and on.
B=build/petsc-3.26-cuda
O=${OUT:-out}
G="-use_gpu_aware_mpi 0"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt; date -u >> $O/device.txt
FUSED_BUILD=$B timeout ${TLIMIT:-300} bash tools/gpu-session.sh tests "$(cat docs/results/h100-2026-11-27-hostvectors/call5/p5-tests.txt)" > $O/gpu-tests.txt 2>&1
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for r in 1 2; do
  for v in prev new; do
    if [ $v = prev ]; then D=prev; else D=$B; fi
    echo "== $v round $r" >> $O/bench-host.txt
    LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH timeout 150 $D/examples/bench -sizes2d 100,316,1000 -sizes3d 64 -its 50 -reps 3 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij -vec_type standard $G 2>&1 | grep -E "^(lap|problem)" >> $O/bench-host.txt
  done
  for pin in 0 1; do
    echo "== pin $pin round $r" >> $O/transient-pin.txt
    LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH timeout 100 $B/examples/transient -dim 2 -n 100 -steps 1000 -pc_type jacobi -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij -ksp_fused_pin_host_vectors $pin $G 2>&1 | grep -E "^(pcg|pbcgs|pgmres|petsc-fused)" >> $O/transient-pin.txt
  done
done
