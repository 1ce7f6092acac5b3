#!/bin/bash
# PETSc 3.26.1 built without CUDA (its bundle: .carry/ob-nocuda.tar.xz, this
# build: .carry/builds-nocuda.tar.xz): GAMG's hierarchy on the host, our
# V-cycle on the device. The GPU tests of the multigrid paths, then the
# solves: PETSc's cg on one CPU core, pcgfused with -ksp_fused_mg 0 (the
# reference backend on the host, as before) and pcgfused (the GPU).
B=build/petsc-3.26
O=${OUT:-out}
mkdir -p /opt/nc && tar -xJf .carry/ob-nocuda.tar.xz -C /opt/nc && tar -xJf .carry/builds-nocuda.tar.xz
. /opt/nc/ob/env.sh
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt; date -u >> $O/device.txt
FUSED_BUILD=$B FUSED_LIB=$B/lib/libpetscfused.so MPIEXEC="mpirun --oversubscribe" FUSED_REQUIRE_GPU=1 TESTS_FILTER='gamg|vcycle|roundtrip' timeout 250 sh tests/run.sh > $O/tests.txt 2>&1
run() { echo "== $*" >> $O/gamg.txt; timeout 120 $B/examples/solve -pc_type gamg -ksp_rtol 1e-8 -compare 0 "$@" 2>&1 | grep -E '^(cg|pcgfused) ' >> $O/gamg.txt; }
for p in "lap3d -n 100" "lap2d -n 1000"; do
  run -problem $p -methods cg
  run -problem $p -methods pcgfused -ksp_fused_mg 0
  run -problem $p -methods pcgfused
done
timeout 60 $B/examples/solve -problem lap3d -n 60 -pc_type gamg -methods pcgfused -compare 0 -ksp_view -info 2>&1 | grep -E 'preconditioner:|backend:|V-cycle|multigrid' > $O/view.txt
date -u >> $O/device.txt
