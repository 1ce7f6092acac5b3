#!/bin/bash
# Session 6, call 4 (H200): the library that clears each device block before
# freeing it (FusedFree): four streams of pcgfused's 160^3 GAMG processes, then
# the CUDA-PETSc GPU tests of CG and GMRES.
set -u
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
B=build/petsc-3.26-cuda
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=$PATH:/usr/local/cuda/bin
O=$OUT/c4
mkdir -p "$O"
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; } > "$O/gpu.txt" 2>&1
HUNT=${HUNT:-200}
hunt_end=$(($(date +%s) + HUNT))
hunt() {
  local stream=$1 run=0 pid waited log
  while [ "$(date +%s)" -lt "$hunt_end" ]; do
    run=$((run + 1))
    log=$O/hunt-$stream-$run.txt
    "$B/examples/solve" -problem lap3d -n 160 -pc_type gamg -ksp_rtol 1e-8 -compare 0 -no_signal_handler -methods pcgfused > "$log" 2>&1 &
    pid=$!
    waited=0
    while kill -0 "$pid" 2> /dev/null && [ "$waited" -lt 45 ]; do
      sleep 1
      waited=$((waited + 1))
    done
    if kill -0 "$pid" 2> /dev/null; then
      echo "HUNG: still running after 45 s" >> "$log"
      timeout 60 cuda-gdb -p "$pid" -batch -ex "info cuda kernels" -ex "bt 30" > "$O/hung-$stream-$run-gdb.txt" 2>&1
      kill -9 "$pid"
    fi
    wait "$pid" 2> /dev/null
    echo "$stream run $run rc $? $(date -u +%T)" >> "$O/hunt-index.txt"
  done
}
for s in f1 f2 f3 f4; do hunt $s & done
wait
grep -h "^pcgfused " "$O"/hunt-*.txt | sort | uniq -c | sort -rn | head -5 > "$O/hunt-rows.txt"
FUSED_BUILD=$B timeout 170 bash tools/gpu-session.sh tests '^cudapetsc-(cg|gmres)-' > "$O/tests.txt" 2>&1
echo "tests rc $?" >> "$O/tests.txt"
cd "$OUT" && tar -cJf c4.tar.xz c4 && rm -rf c4
