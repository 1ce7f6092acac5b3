# pgmresfused's device loop on the GPU host: its tests, then the benchmark (run through tools/gpu-session.sh cmd)
bash tools/gpu-session.sh tests 'gmres' 2>&1 | grep -E "FAIL|passed" | head -30
. /opt/ob/env.sh; export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
build/examples/bench -sizes2d 100,316,1000 -sizes3d 64,160 -its 200 -methods pgmresfused 2>&1 | grep -E "^lap"
