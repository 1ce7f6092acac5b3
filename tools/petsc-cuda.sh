#!/bin/sh
# make petsc-cuda: build PETSc 3.26.1 with CUDA into PREFIX (outside the clone)
# from PyPI's source distribution, and print the PETSC_DIR to use. With a third
# argument "nocuda" (make petsc-nocuda), the same PETSc without CUDA.
# Reuses PREFIX when it already holds that build. Needs Debian's MPI, BLAS/LAPACK,
# PT-Scotch and Zoltan (make deps installs them with petsc-dev) and the CUDA
# toolkit; downloads nothing but the source from PyPI. About 17 minutes on 2 cores.
set -e
PREFIX=${1:?usage: petsc-cuda.sh PREFIX [CUDA_HOME] [nocuda]}
CUDA_HOME=${2:-/usr/local/cuda}
CUDA=${3:-cuda}
VERSION=3.26.1

if [ -f "$PREFIX/lib/petsc/conf/petscvariables" ] && grep -q "PETSC_VERSION_MINOR *26" "$PREFIX/include/petscversion.h" 2>/dev/null; then
  if grep -q "^#define PETSC_HAVE_CUDA 1" "$PREFIX/include/petscconf.h"; then have=cuda; else have=nocuda; fi
  [ "$have" = "$CUDA" ] || { echo "petsc-cuda: $PREFIX holds PETSc $VERSION $have, not $CUDA; choose another prefix" >&2; exit 1; }
  echo "petsc-cuda: PETSc $VERSION ($CUDA) already at $PREFIX"
  echo "PETSC_DIR=$PREFIX"
  exit 0
fi
if [ "$CUDA" = cuda ]; then
  [ -x "$CUDA_HOME/bin/nvcc" ] || { echo "petsc-cuda: no nvcc at CUDA_HOME=$CUDA_HOME" >&2; exit 1; }
  CUDA_OPTIONS="--with-cuda=1 --with-cuda-dir=$CUDA_HOME --with-cuda-arch=90 CUDAOPTFLAGS=-O2"
else
  CUDA_OPTIONS="--with-cuda=0"
fi
command -v mpicc >/dev/null || { echo "petsc-cuda: no mpicc; run 'make deps' first (Debian's petsc-dev brings Open MPI)" >&2; exit 1; }
if ! python3 -m pip --version >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "petsc-cuda: installing python3-pip (to fetch PETSc's source from PyPI)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
  else
    echo "petsc-cuda: needs pip (python3 -m pip) to fetch PETSc's source from PyPI" >&2; exit 1
  fi
fi

WORK=${PETSC_CUDA_WORK:-${TMPDIR:-/tmp}/petsc-fused-petsc-$VERSION}
mkdir -p "$WORK"
if [ ! -f "$WORK/petsc-$VERSION/configure" ]; then
  echo "petsc-cuda: fetching petsc==$VERSION's source from PyPI"
  python3 -m pip download -q --no-deps --no-binary :all: --no-build-isolation "petsc==$VERSION" -d "$WORK" 2>/dev/null ||
    python3 -m pip download -q --no-deps --no-binary :all: "petsc==$VERSION" -d "$WORK"
  tar -xzf "$WORK/petsc-$VERSION.tar.gz" -C "$WORK"
fi
cd "$WORK/petsc-$VERSION"
unset PETSC_DIR PETSC_ARCH
ARCH=arch-fused-$CUDA
# Debian's PT-Scotch and Zoltan, so that partitioning works in this build as in Debian's
PARTITIONERS=""
if [ -f /usr/include/scotch/ptscotch.h ] && [ -f /usr/include/trilinos/zoltan.h ]; then
  PARTITIONERS="--with-ptscotch-include=/usr/include/scotch --with-ptscotch-lib=[/usr/lib/x86_64-linux-gnu/libptesmumps.so,/usr/lib/x86_64-linux-gnu/libptscotchparmetisv3.so,/usr/lib/x86_64-linux-gnu/libptscotch.so,/usr/lib/x86_64-linux-gnu/libptscotcherr.so,/usr/lib/x86_64-linux-gnu/libesmumps.so,/usr/lib/x86_64-linux-gnu/libscotch.so,/usr/lib/x86_64-linux-gnu/libscotcherr.so] --with-zoltan-include=/usr/include/trilinos --with-zoltan-lib=/usr/lib/x86_64-linux-gnu/libtrilinos_zoltan.so"
fi
echo "petsc-cuda: configuring (log: $WORK/petsc-$VERSION/configure.log)"
# shellcheck disable=SC2086
./configure PETSC_ARCH=$ARCH --prefix="$PREFIX" $CUDA_OPTIONS \
  --with-fc=0 --with-cc=mpicc --with-cxx=mpicxx --with-debugging=0 COPTFLAGS=-O2 CXXOPTFLAGS=-O2 \
  --with-shared-libraries=1 --with-x=0 --with-blaslapack-lib="-L/usr/lib/x86_64-linux-gnu -llapack -lblas" \
  $PARTITIONERS > configure.out 2>&1 || { tail -30 configure.out >&2; exit 1; }
echo "petsc-cuda: building (about 13 minutes on 2 cores with CUDA)"
make PETSC_DIR="$PWD" PETSC_ARCH=$ARCH MAKE_NP="$(nproc)" all > make.out 2>&1 || { tail -30 make.out >&2; exit 1; }
make PETSC_DIR="$PWD" PETSC_ARCH=$ARCH install > install.out 2>&1 || { tail -30 install.out >&2; exit 1; }
echo "petsc-cuda: installed"
echo "PETSC_DIR=$PREFIX"
