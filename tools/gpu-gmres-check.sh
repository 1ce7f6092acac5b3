# the device loops on the GPU host: their tests, then the benchmark (run through tools/gpu-session.sh cmd)
bash tools/gpu-session.sh tests 'gmres|graph|history|breakdown|nan|notconverged|resolve' 2>&1 | grep -E "FAIL|passed" | head -30
. /opt/ob/env.sh; export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
build/examples/bench -sizes2d 100,316,1000 -sizes3d 64,160 -its 200 2>&1 | grep -E "^lap"
echo "graph loop for all (single kernel rows 0):"
build/examples/bench -sizes2d 316,1000 -sizes3d 64 -its 200 -ksp_fused_single_kernel_rows 0 2>&1 | grep -E "^lap"
