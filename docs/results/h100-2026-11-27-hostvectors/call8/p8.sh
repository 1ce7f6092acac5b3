#!/bin/bash
# Call 8: where GAMG's V-cycle spends its time on the device: PETSc's cg with
# GAMG at 160^3 and 2000^2 under -log_view_gpu_time (each event timed on the
# GPU, with the waits that costs), -pc_mg_log's per-level events; and
# bench's cost of a 10^4-row solve beyond its iterations with VECCUDA, host
# vectors pinned and host vectors staged, three runs each, alternating.
B=build/petsc-3.26-cuda
O=${OUT:-out}
G="-use_gpu_aware_mpi 0"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt; date -u >> $O/device.txt
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
timeout 120 $B/examples/solve -problem lap3d -n 160 -pc_type gamg -ksp_rtol 1e-8 -methods cg -compare 0 -log_view -log_view_gpu_time -pc_mg_log $G > $O/gamg-lap3d-160-gputime.txt 2>&1
timeout 120 $B/examples/solve -problem lap2d -n 2000 -pc_type gamg -ksp_rtol 1e-8 -methods cg -compare 0 -log_view -log_view_gpu_time -pc_mg_log $G > $O/gamg-lap2d-2000-gputime.txt 2>&1
for r in 1 2 3; do
  for how in cuda pinned staged; do
    case $how in
      cuda) opts="-mat_type aijcusparse -vec_type cuda" ;;
      pinned) opts="-mat_type aij -vec_type standard -ksp_fused_pin_host_vectors 1" ;;
      staged) opts="-mat_type aij -vec_type standard -ksp_fused_pin_host_vectors 0" ;;
    esac
    echo "== $how round $r" >> $O/bench-1e4.txt
    timeout 60 $B/examples/bench -sizes2d 100 -its 50 -reps 5 -methods pcgfused,pbcgsfused,pgmresfused $opts $G 2>&1 | grep -E "^lap" >> $O/bench-1e4.txt
  done
done
