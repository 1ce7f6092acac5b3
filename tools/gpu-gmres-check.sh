# the device loops on the GPU host: their tests, then the benchmark (run through tools/gpu-session.sh cmd)
bash tools/gpu-session.sh tests 'gmres|gpu-bcgs|breakdown|nan' 2>&1 | grep -E "FAIL|passed" | head -30
. /opt/ob/env.sh; export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
build/examples/bench -sizes2d 100,316,1000 -sizes3d 64 -its 200 -methods pgmresfused,pbcgsfused 2>&1 | grep -E "^lap"
