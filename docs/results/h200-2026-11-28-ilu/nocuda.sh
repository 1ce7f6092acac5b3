#!/bin/bash
# PETSc 3.26.1 built without CUDA (its bundle: .carry/ob-nocuda.tar.xz, this
# build: .carry/builds-nocuda.tar.xz): PETSc factors ILU(0) on the host, our
# triangular solves run on the device. The GPU tests of the ILU paths, then
# GMRES with block Jacobi/ILU(0) on the convection-diffusion problem:
# PETSc's gmres on one CPU core, pgmresfused with -ksp_fused_ilu 0 (the whole
# solve on the reference backend, as before) and pgmresfused (the GPU).
B=build/petsc-3.26
O=${OUT:-out}
mkdir -p /opt/nc && tar -xJf .carry/ob-nocuda.tar.xz -C /opt/nc && tar -xJf .carry/builds-nocuda.tar.xz
. /opt/nc/ob/env.sh
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt; date -u >> $O/device.txt
FUSED_BUILD=$B FUSED_LIB=$B/lib/libpetscfused.so MPIEXEC="mpirun --oversubscribe" FUSED_REQUIRE_GPU=1 TESTS_FILTER='trisolve|ilu' timeout 150 sh tests/run.sh > $O/tests.txt 2>&1
tail -2 $O/tests.txt
run() { echo "== $*" >> $O/ilu.txt; timeout 100 $B/examples/solve -ksp_rtol 1e-8 -compare 0 "$@" 2>&1 | grep -E '^(gmres|pgmresfused) ' >> $O/ilu.txt; }
CD="-problem convdiff -n 300 -pc_type bjacobi -sub_pc_type ilu"
run $CD -methods gmres
run $CD -methods pgmresfused -ksp_fused_ilu 0
run $CD -methods pgmresfused
timeout 60 $B/examples/solve $CD -methods pgmresfused -compare 0 -ksp_view -info 2>&1 | grep -E 'preconditioner:|backend:|iterations:|ILU|triangular' > $O/view.txt
cat $O/ilu.txt $O/view.txt
date -u >> $O/device.txt
