#!/bin/bash
# bash tools/gpu-session.sh ...  On the GPU host (see README, "GPU runs"): unpack the offline bundle that
# carries PETSc and MPI, then run what is asked: "tests [FILTER]" runs the
# test list (only names matching FILTER), "cmd ..." runs a command.
set -e
mkdir -p /opt
[ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
# cuSPARSE (build/examples/spmv) from the host's CUDA toolkit, where the rpath does not find it
if [ -x build/examples/spmv ] && ! ldd build/examples/spmv | grep -q 'libcusparse.*=> /'; then
  lib=$(find / -name 'libcusparse.so.12*' -not -path '/proc/*' 2>/dev/null | head -1)
  [ -n "$lib" ] && export LD_LIBRARY_PATH=$(dirname "$lib"):$LD_LIBRARY_PATH
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
what=$1; shift
case "$what" in
  tests) MPIEXEC="mpirun --oversubscribe" FUSED_REQUIRE_GPU=1 TESTS_FILTER="$1" sh tests/run.sh ;;
  cmd) "$@" ;;
esac
