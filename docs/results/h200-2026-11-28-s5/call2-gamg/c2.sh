#!/bin/bash
# 2026-11-28 session 5, call 2: the 160^3 GAMG solve with pcgfused hung in call 1 (-compare 1: no line in 200 s)
# after it had run alone in 8.7 s: several runs, each with -log_trace, watched (GPU use, the process's state,
# cuda-gdb's backtraces where the toolkit has it), packed into one file.
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
out=${OUT:-out}/c2; mkdir -p $out
B=build/petsc-3.26-cuda
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G="-use_gpu_aware_mpi 0"
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
ls /usr/local/cuda/bin/ | grep -i gdb >> $out/device.txt
# watched FILE LIMIT cmd...: after LIMIT s still running, say what the process and the GPU are doing, then kill it
watched() {
  local f=$1 limit=$2; shift 2
  local t0=$(date +%s%N)
  "$@" > "$f" 2>&1 &
  local pid=$!
  for ((sec = 0; sec < limit; sec++)); do kill -0 $pid 2>/dev/null || break; sleep 1; done
  if kill -0 $pid 2>/dev/null; then
    {
      echo "=== still running after $limit s"
      nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv
      grep -E "State|Threads|VmRSS" /proc/$pid/status
      for t in /proc/$pid/task/*; do echo "task $(basename $t): $(cat $t/wchan) $(awk '{print $3, $14, $15}' $t/stat)"; done
      top -b -n 1 -p $pid | tail -2
      if [ -x /usr/local/cuda/bin/cuda-gdb ]; then timeout 60 /usr/local/cuda/bin/cuda-gdb -p $pid -batch -ex "info cuda kernels" -ex "thread apply all bt 25" 2>&1 | tail -150; fi
    } >> "$f.watch" 2>&1
    kill -TERM $pid; sleep 3; kill -KILL $pid 2>/dev/null
  fi
  wait $pid; local rc=$?
  echo "rc $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$f"
  echo "$f: $(tail -1 "$f")"
}
s="$B/examples/solve -problem lap3d -n 160 -pc_type gamg -ksp_rtol 1e-8 $G"
for k in 1 2 3; do watched $out/alone-$k.txt 40 $s -methods pcgfused -compare 0 -log_trace $out/alone-$k.trace; done
watched $out/compare.txt 60 $s -methods pcgfused -log_trace $out/compare.trace
watched $out/cg-alone.txt 40 $s -methods cg -compare 0 -log_trace $out/cg-alone.trace
for f in $out/*.trace.*; do [ -f $f ] && { tail -40 $f > $f.tail; wc -l $f >> $out/trace-lines.txt; }; done
date -u >> $out/device.txt
date -u >> $out/device.txt
cat $out/*.watch 2>/dev/null | head -60
cd ${OUT:-out} && tar -cJf c2.tar.xz c2 && rm -rf c2
