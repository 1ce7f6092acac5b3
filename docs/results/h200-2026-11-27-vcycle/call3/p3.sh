#!/bin/bash
# Call 3 (and 4, with the groups only where rows hold 48 entries or more): the coarse levels' products with a group of threads a row. Tests,
# ncu of one V-cycle at 160^3, and the GAMG solves (cg, pcgfused through
# PCApply(), pcgfused in the V-cycle), alternating, two rounds.
B=build/petsc-3.26-cuda
O=${OUT:-out}
G="-use_gpu_aware_mpi 0"
mkdir -p /opt; [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt; date -u >> $O/device.txt
FUSED_BUILD=$B timeout 200 bash tools/gpu-session.sh tests 'gamg|vcycle|pcapply' > $O/tests.txt 2>&1
. /opt/ob/env.sh
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || ls /usr/local/cuda/bin/ncu)
timeout 200 $NCU --clock-control none --kernel-name regex:'FusedMG|FusedCSRVector|FusedSpMV|FusedLongRows' --launch-skip 200 --launch-count 40 --metrics gpu__time_duration.sum,dram__bytes.sum $B/examples/solve -problem lap3d -n 160 -pc_type gamg -ksp_rtol 1e-8 -methods pcgfused -compare 0 $G > $O/ncu.txt 2>&1
for round in 1 2; do
  for p in "lap3d -n 160" "lap2d -n 2000"; do
    for m in "cg" "pcgfused -ksp_fused_mg 0" "pcgfused"; do
      echo "== $p $m" >> $O/gamg.txt
      timeout 100 $B/examples/solve -problem $p -pc_type gamg -ksp_rtol 1e-8 -methods $m -compare 0 $G 2>&1 | grep -E '^(cg|pcgfused) ' >> $O/gamg.txt
    done
  done
done
date -u >> $O/device.txt
