#!/bin/sh
# make deps: make sure PETSc (>= 3.18, real double) and the CUDA toolkit are there.
# Idempotent: installs Debian's petsc-dev with apt only when PETSc is missing.
PETSC_DIR=${1:-/usr/lib/petsc}
CUDA_HOME=${2:-/usr/local/cuda}

if [ ! -f "$PETSC_DIR/lib/petsc/conf/variables" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "deps: no PETSc at $PETSC_DIR; installing Debian's petsc-dev with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq petsc-dev >/dev/null || {
      echo "deps: apt-get install petsc-dev failed" >&2; exit 1; }
  else
    echo "deps: no PETSc found at PETSC_DIR=$PETSC_DIR." >&2
    echo "      Install PETSc 3.18 or later (real scalars, double precision), e.g. as root on" >&2
    echo "      Debian/Ubuntu: apt-get install petsc-dev; or set PETSC_DIR to your PETSc build." >&2
    exit 1
  fi
fi
if [ ! -f "$PETSC_DIR/lib/petsc/conf/variables" ]; then
  echo "deps: petsc-dev is installed but $PETSC_DIR/lib/petsc/conf/variables is missing; set PETSC_DIR" >&2
  exit 1
fi
if [ ! -x "$CUDA_HOME/bin/nvcc" ]; then
  echo "deps: no CUDA toolkit at CUDA_HOME=$CUDA_HOME (nvcc not found)." >&2
  echo "      Install the CUDA toolkit (12.x or 13.x) or set CUDA_HOME to it." >&2
  exit 1
fi
# clang with libFuzzer, for make fuzz (CI runs it)
if ! command -v clang >/dev/null 2>&1 || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "deps: installing Debian's clang and its runtime libraries (libFuzzer) for make fuzz"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang libclang-rt-dev >/dev/null || {
      echo "deps: apt-get install clang libclang-rt-dev failed" >&2; exit 1; }
  else
    echo "deps: no clang with libFuzzer; make fuzz needs it (apt-get install clang libclang-rt-dev)" >&2
  fi
fi
echo "deps: PETSc at $PETSC_DIR, CUDA toolkit at $CUDA_HOME: ok"
