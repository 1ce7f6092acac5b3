# the device loops on the GPU host: their tests, the benchmark, and ncu on whole graph launches (run through tools/gpu-session.sh cmd)
bash tools/gpu-session.sh tests 'gmres|gpu-cg|gpu-bcgs|breakdown|nan' 2>&1 | grep -E "FAIL|passed" | head -30
. /opt/ob/env.sh; export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
build/examples/bench -sizes2d 100,316,1000 -sizes3d 64,160 -its 200 2>&1 | grep -E "^lap"
for n in 1000; do
  /usr/local/cuda/bin/ncu --graph-profiling graph -c 4 --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum build/examples/solve -problem lap2d -n $n -methods pgmresfused -compare 0 -pc_type jacobi -ksp_max_it 62 -ksp_rtol 0 -ksp_atol 0 -ksp_fused_single_kernel_rows 0 2>&1 | grep -E "Graph|Kernel|graph|duration|bytes" | cut -c1-150
done
