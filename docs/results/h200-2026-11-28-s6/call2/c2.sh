#!/bin/bash
# Session 6, call 2 (H200): (a) the 160^3 GAMG set-up hang caught with PETSc's
# signal handler off (call 1's cuda-gdb attach made PETSc abort), the running
# kernels and host stacks; (b) memcheck over the CUDA-PETSc tests after the
# leak fix; (c) where the graph overtakes the single kernel for pgmresfused
# and pbcgsfused on the H200.
set -u
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
B=build/petsc-3.26-cuda
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=$PATH:/usr/local/cuda/bin
O=$OUT/c2
mkdir -p "$O"
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; } > "$O/gpu.txt" 2>&1

HUNT=${HUNT:-200}
hunt_end=$(($(date +%s) + HUNT))
hunt() {
  local stream=$1 run=0 pid waited log
  shift
  while [ "$(date +%s)" -lt "$hunt_end" ]; do
    run=$((run + 1))
    log=$O/hunt-$stream-$run.txt
    "$B/examples/solve" -problem lap3d -n 160 -pc_type gamg -ksp_rtol 1e-8 -compare 0 -no_signal_handler -log_trace "$O/trace-$stream-$run" "$@" > "$log" 2>&1 &
    pid=$!
    waited=0
    while kill -0 "$pid" 2> /dev/null && [ "$waited" -lt 45 ]; do
      sleep 1
      waited=$((waited + 1))
    done
    if kill -0 "$pid" 2> /dev/null; then
      echo "HUNG: still running after 45 s" >> "$log"
      nvidia-smi > "$O/hung-$stream-$run-smi.txt" 2>&1
      timeout 100 cuda-gdb -p "$pid" -batch -ex "info cuda kernels" -ex "info cuda devices" -ex "thread apply all bt 40" > "$O/hung-$stream-$run-gdb.txt" 2>&1
      tail -c 3000 "$O/trace-$stream-$run"* > "$O/hung-$stream-$run-tracetail.txt" 2> /dev/null
      kill -9 "$pid"
    else
      rm -f "$O/trace-$stream-$run"*
    fi
    wait "$pid" 2> /dev/null
    echo "$stream run $run rc $? $(date -u +%T)" >> "$O/hunt-index.txt"
  done
}
hunt f1 -methods pcgfused &
hunt f2 -methods pcgfused &
hunt f3 -methods pcgfused &
hunt c1 -methods cg &
wait
rm -f "$O"/trace-*

GPU_SANITIZE_TESTS='^(cudapetsc-cg-jacobi-nocopy|cudapetsc-cg-arrow-devicecsr|cudapetsc-cg-gamg-vcycle|cudapetsc-gmres-bjacobi-ilu-trisolve)$' \
  FUSED_BUILD=$B timeout 150 bash tools/gpu-session.sh cmd sh tools/gpu-sanitize.sh memcheck > "$O/memcheck.txt" 2>&1
echo "memcheck rc $?" >> "$O/memcheck.txt"
grep -h -B2 -A12 "LEAK\|Invalid\|ERROR" $B/test-logs/*.log $B/sanitize-logs/memcheck/*.log 2> /dev/null | head -200 > "$O/memcheck-detail.txt"

for round in 1 2; do
  for limit in default 0; do
    extra=""
    [ "$limit" != default ] && extra="-ksp_fused_single_kernel_rows $limit"
    echo "== round $round limit $limit" >> "$O/sweep.txt"
    timeout 60 "$B/examples/bench" -sizes2d 316,362,400,448,512 -sizes3d 0 -its 100 -reps 3 -mat_type aijcusparse -methods pgmresfused $extra >> "$O/sweep.txt" 2>&1
    timeout 60 "$B/examples/bench" -sizes2d 600,660,724 -sizes3d 0 -its 100 -reps 3 -mat_type aijcusparse -methods pbcgsfused $extra >> "$O/sweep.txt" 2>&1
  done
done
cd "$OUT" && tar -cJf c2.tar.xz c2 && rm -rf c2
