#!/bin/bash
# 2026-11-28 session 5, call 5: how often does the 160^3 GAMG setup hang (PETSc's MatPtAPSymbolic, calls 1-2)?
# Processes of PETSc's methods alone (no fused KSP, so none of our device work) alternating with pcgfused
# under -compare 1, as in the runs that hung; 45 s each at most.
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
out=${OUT:-out}/c5; mkdir -p $out
B=build/petsc-3.26-cuda
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G="-use_gpu_aware_mpi 0"
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
# watched FILE LIMIT cmd...: after LIMIT s still running, the GPU's use and where the trace stopped, then kill it
watched() {
  local f=$1 limit=$2; shift 2
  local t0=$(date +%s%N)
  "$@" -log_trace $f.trace > "$f" 2>&1 &
  local pid=$!
  for ((sec = 0; sec < limit; sec++)); do kill -0 $pid 2>/dev/null || break; sleep 1; done
  if kill -0 $pid 2>/dev/null; then
    { echo "=== still running after $limit s"; nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader; tail -4 $f.trace.0; } >> "$f.watch" 2>&1
    kill -TERM $pid; sleep 2; kill -KILL $pid 2>/dev/null
  fi
  wait $pid; local rc=$?
  echo "rc $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$f"
  rm -f $f.trace.0
  echo "$f: $(tail -1 "$f") $(grep -h 'Event' $f.watch 2>/dev/null | tail -1)"
}
cmd="$B/examples/solve -problem lap3d -n 160 -pc_type gamg -ksp_rtol 1e-8 $G"
for k in 1 2 3 4; do
  watched $out/petsc-cg-pipecg-$k.txt 45 $cmd -methods cg,pipecg -compare 0
  watched $out/pcgfused-compare-$k.txt 45 $cmd -methods pcgfused
done
date -u >> $out/device.txt
cd ${OUT:-out} && tar -cJf c5.tar.xz c5 && rm -rf c5
