#!/bin/bash
# bash tools/gpu-session.sh ...  On the GPU host (see README, "GPU runs"): unpack the offline bundle that
# carries PETSc and MPI, then run what is asked: "tests [FILTER]" runs the
# test list (only names matching FILTER), "cmd ..." runs a command.
# FUSED_BUILD=build/petsc-3.26-cuda picks that build (its programs and its
# library) instead of the default build/ and lib/; one bundle may carry the
# PETSc libraries of both.
set -e
mkdir -p /opt
[ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export FUSED_BUILD=${FUSED_BUILD:-build}
if [ "$FUSED_BUILD" = build ]; then export FUSED_LIB=lib/libpetscfused.so; else export FUSED_LIB=$FUSED_BUILD/lib/libpetscfused.so; fi
# this build's own library first: the bundle may hold another build's copy
export LD_LIBRARY_PATH=$PWD/$(dirname "$FUSED_LIB"):$LD_LIBRARY_PATH
# cuSPARSE (build/examples/spmv) from the host's CUDA toolkit, where the rpath does not find it
if [ -x build/examples/spmv ] && ! ldd build/examples/spmv | grep -q 'libcusparse.*=> /'; then
  lib=$(find / -name 'libcusparse.so.12*' -not -path '/proc/*' 2>/dev/null | head -1)
  [ -n "$lib" ] && export LD_LIBRARY_PATH=$(dirname "$lib"):$LD_LIBRARY_PATH
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=$PATH:${CUDA_HOME:-/usr/local/cuda}/bin # compute-sanitizer
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
what=$1; shift
case "$what" in
  tests) MPIEXEC="mpirun --oversubscribe" FUSED_REQUIRE_GPU=1 TESTS_FILTER="$1" sh tests/run.sh ;;
  cmd) "$@" ;;
esac
