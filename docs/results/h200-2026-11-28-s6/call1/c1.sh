#!/bin/bash
# Session 6, call 1 (H200): (a) the 160^3 GAMG set-up that hung 3 of 17 times:
# pcgfused's and PETSc's cg's processes side by side, each hung one caught with
# cuda-gdb (running kernels, host stacks); (b) the single-kernel row limit swept
# on the H200; (c) memcheck over CUDA-PETSc tests.
set -u
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
B=build/petsc-3.26-cuda
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=$PATH:/usr/local/cuda/bin
O=$OUT/c1
mkdir -p "$O"
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; command -v cuda-gdb compute-sanitizer; } > "$O/gpu.txt" 2>&1

# (a) four streams of 160^3 GAMG processes for HUNT seconds: two of pcgfused, two of PETSc's cg
HUNT=${HUNT:-220}
hunt_end=$(($(date +%s) + HUNT))
hunt() {
  local stream=$1 methods=$2 run=0 pid waited log
  while [ "$(date +%s)" -lt "$hunt_end" ]; do
    run=$((run + 1))
    log=$O/hunt-$stream-$run.txt
    "$B/examples/solve" -problem lap3d -n 160 -pc_type gamg -ksp_rtol 1e-8 -methods "$methods" -compare 0 > "$log" 2>&1 &
    pid=$!
    waited=0
    while kill -0 "$pid" 2> /dev/null && [ "$waited" -lt 50 ]; do
      sleep 1
      waited=$((waited + 1))
    done
    if kill -0 "$pid" 2> /dev/null; then
      echo "HUNG: still running after 50 s" >> "$log"
      nvidia-smi > "$O/hung-$stream-$run-smi.txt" 2>&1
      timeout 90 cuda-gdb -p "$pid" -batch -ex "info cuda kernels" -ex "thread apply all bt 30" > "$O/hung-$stream-$run-gdb.txt" 2>&1
      kill -9 "$pid"
    fi
    wait "$pid" 2> /dev/null
    echo "$stream $methods run $run rc $? $(date -u +%T)" >> "$O/hunt-index.txt"
  done
}
hunt f1 pcgfused &
hunt c1 cg &
hunt f2 pcgfused &
hunt c2 cg &
wait

# (b) the single-kernel row limit: the default, 0 (the graph at every size), 2^22 (the single kernel at every size)
for round in 1 2; do
  for limit in default 0 4194304; do
    extra=""
    [ "$limit" != default ] && extra="-ksp_fused_single_kernel_rows $limit"
    echo "== round $round limit $limit" >> "$O/sweep.txt"
    timeout 100 "$B/examples/bench" -sizes2d 512,724,1000 -sizes3d 64,80,100 -its 100 -reps 3 -mat_type aijcusparse -methods pcgfused,pbcgsfused,pgmresfused $extra >> "$O/sweep.txt" 2>&1
  done
done

# (c) memcheck over CUDA-PETSc paths: the device CSR, GAMG in our V-cycle, ILU in our triangular solves
GPU_SANITIZE_TESTS='^(cudapetsc-cg-gamg-vcycle|cudapetsc-cg-jacobi-nocopy|cudapetsc-cg-arrow-devicecsr|cudapetsc-gmres-bjacobi-ilu-trisolve|cudapetsc-bcgs-gamg-vcycle|cudapetsc-cg-gamg)$' \
  FUSED_BUILD=$B timeout 170 bash tools/gpu-session.sh cmd sh tools/gpu-sanitize.sh memcheck > "$O/memcheck.txt" 2>&1
echo "memcheck rc $?" >> "$O/memcheck.txt"
cp -r $B/sanitize-logs "$O/" 2> /dev/null
cd "$OUT" && tar -cJf c1.tar.xz c1 && rm -rf c1
