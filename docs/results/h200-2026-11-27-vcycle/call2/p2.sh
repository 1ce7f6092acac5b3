#!/bin/bash
# Call 2: where the device V-cycle's time goes at 160^3 (ncu, the V-cycle's
# kernels of one solve after the warm-up, by name), and -ksp_view's line.
B=build/petsc-3.26-cuda
O=${OUT:-out}
G="-use_gpu_aware_mpi 0"
mkdir -p /opt; [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt; date -u >> $O/device.txt
timeout 60 $B/examples/solve -problem lap3d -n 160 -pc_type gamg -ksp_rtol 1e-8 -methods pcgfused -compare 0 -ksp_view $G 2>&1 | grep -E 'preconditioner:|#equations|^ +[0-9]+ +1 ' > $O/view.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || ls /usr/local/cuda/bin/ncu)
timeout 240 $NCU --clock-control none --kernel-name regex:'FusedMG|FusedCSRVector|FusedSpMV|FusedLongRows' --launch-skip 200 --launch-count 60 --metrics gpu__time_duration.sum,dram__bytes.sum $B/examples/solve -problem lap3d -n 160 -pc_type gamg -ksp_rtol 1e-8 -methods pcgfused -compare 0 $G > $O/ncu.txt 2>&1
date -u >> $O/device.txt
