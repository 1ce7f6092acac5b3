#!/bin/bash
# 2026-11-28 session 5, call 1: (a) the 160^3 GAMG solve that printed nothing in s4/call5, alone, with its
# exit status and time; (b) where the first KSPSolve after KSPSetUp spends at 10^4 rows (shim.c markers).
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
out=${OUT:-out}; mkdir -p $out
B=build/petsc-3.26-cuda
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G="-use_gpu_aware_mpi 0"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $out/device.txt; date -u >> $out/device.txt
run() { local f=$1; shift; local t0=$(date +%s%N); "$@" > "$f" 2>&1; local rc=$?; echo "rc $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$f"; echo "$f: $(tail -1 "$f")"; }
run $out/gamg160-pcgfused-alone.txt timeout 150 $B/examples/solve -problem lap3d -n 160 -pc_type gamg -ksp_rtol 1e-8 -methods pcgfused -compare 0 $G
if grep -q "rc 0" $out/gamg160-pcgfused-alone.txt; then
  run $out/gamg160-compare.txt timeout 200 $B/examples/solve -problem lap3d -n 160 -pc_type gamg -ksp_rtol 1e-8 -methods pcgfused $G
else
  run $out/gamg160-pcgfused-mg0.txt timeout 120 $B/examples/solve -problem lap3d -n 160 -pc_type gamg -ksp_rtol 1e-8 -methods pcgfused -compare 0 -ksp_fused_mg 0 $G
  run $out/gamg120-pcgfused.txt timeout 100 $B/examples/solve -problem lap3d -n 120 -pc_type gamg -ksp_rtol 1e-8 -methods pcgfused -compare 0 $G
fi
date -u >> $out/device.txt
a="-sizes2d 100 -sizes3d 0 -its 50 -reps 3 -mat_type aijcusparse $G"
for m in pgmresfused pcgfused pbcgsfused; do
  run $out/bench-$m.txt timeout 60 $B/examples/bench $a -methods $m
  LD_PRELOAD=$PWD/.carry/shim.so timeout 60 $B/examples/bench $a -methods $m > $out/shim-$m.txt 2>&1
  run $out/bench2-$m.txt timeout 60 $B/examples/bench $a -methods $m
done
grep -h "GPU (CUDA)" $out/bench*.txt
date -u >> $out/device.txt
