#!/bin/bash
# Session 6, call 3 (H200): is the hang in cuSPARSE's reduce_by_key (GAMG's
# level-2 PtAP, cusparseSpGEMM_compute) a read of memory nobody wrote?
# fill.so fills every cudaMalloc'd block with FUSED_FILL_BYTE first.
# Streams: pcgfused as is (control); pcgfused with new blocks zeroed; PETSc's
# cg with new blocks 0xff; PETSc's cg with new blocks 0x01. Then initcheck
# over a small GAMG set-up of PETSc's cg alone.
set -u
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
B=build/petsc-3.26-cuda
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=$PATH:/usr/local/cuda/bin
O=$OUT/c3
mkdir -p "$O"
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; } > "$O/gpu.txt" 2>&1
SHIM=$PWD/.carry/fill.so

HUNT=${HUNT:-200}
hunt_end=$(($(date +%s) + HUNT))
hunt() {
  local stream=$1 fill=$2 methods=$3 run=0 pid waited log
  while [ "$(date +%s)" -lt "$hunt_end" ]; do
    run=$((run + 1))
    log=$O/hunt-$stream-$run.txt
    if [ "$fill" = none ]; then
      "$B/examples/solve" -problem lap3d -n 160 -pc_type gamg -ksp_rtol 1e-8 -compare 0 -no_signal_handler -methods "$methods" > "$log" 2>&1 &
    else
      LD_PRELOAD=$SHIM FUSED_FILL_BYTE=$fill "$B/examples/solve" -problem lap3d -n 160 -pc_type gamg -ksp_rtol 1e-8 -compare 0 -no_signal_handler -methods "$methods" > "$log" 2>&1 &
    fi
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
    echo "$stream fill=$fill $methods run $run rc $? $(date -u +%T)" >> "$O/hunt-index.txt"
  done
}
hunt plain none pcgfused &
hunt zero 0 pcgfused &
hunt cgff 255 cg &
hunt cg01 1 cg &
wait

timeout 150 compute-sanitizer --tool initcheck --print-limit 12 "$B/examples/solve" -problem lap3d -n 40 -pc_type gamg -ksp_rtol 1e-8 -compare 0 -no_signal_handler -methods cg > "$O/initcheck-cg-gamg.txt" 2>&1
echo "initcheck rc $?" >> "$O/initcheck-cg-gamg.txt"
cd "$OUT" && tar -cJf c3.tar.xz c3 && rm -rf c3
