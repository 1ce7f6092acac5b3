# one-off: ncu on the single-kernel loops at 10,000 rows (run through tools/gpu-session.sh cmd)
. /opt/ob/env.sh; export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
for m in pgmresfused pcgfused; do
/usr/local/cuda/bin/ncu -k regex:SingleKernel -c 1 --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats build/examples/solve -problem lap2d -n 100 -methods $m -compare 0 -pc_type jacobi -ksp_max_it 90 -ksp_rtol 0 -ksp_atol 0 2>&1 | grep -vE "^==PROF==|^\s*$|----" | grep -E "Kernel|Duration|Stall|stall|Throughput|Warp Cycles|Issued|Registers|Block Limit|Achieved|Grid Size|cycles|Active Warps|Eligible|OPT|between" | cut -c1-160
done
