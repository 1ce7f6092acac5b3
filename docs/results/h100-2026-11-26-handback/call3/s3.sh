#!/bin/bash
# call 3 (2026-11-26, evening): where the build of 3dfd630 stands, for the README's results: the transient
# benchmark (tools/gpu-transient.sh: the fused methods, PETSc's on the GPU and on all CPU cores), per iteration
# on the stencils beside PETSc's own GPU methods (aijcusparse, VECCUDA), and the irregular matrices (SpMV
# against cuSPARSE, the three methods per iteration against their floor)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p build/petsc-3.26-cuda/lib && xz -dc .carry/nowlib.so.xz > build/petsc-3.26-cuda/lib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; nproc; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
export LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH
G="-use_gpu_aware_mpi 0"
FUSED_BUILD=build/petsc-3.26-cuda OUT=$out/transient timeout 200 bash tools/gpu-transient.sh > $out/transient.log 2>&1 || echo "transient rc $?" >> $out/transient.log
grep -E "unknowns|fused|^(cg|bcgs|gmres) |rc " $out/transient/transient.txt $out/transient.log | head -40
timeout 200 $B/bench -sizes2d 100,316,1000 -sizes3d 64,160 -its 50 -mat_type aijcusparse -vec_type cuda $G -csv $out/bench-stencils.csv -label h100 > $out/bench-stencils.txt 2>&1 || echo "rc $?" >> $out/bench-stencils.txt
cat $out/bench-stencils.txt | grep -v "^ *$" | head -60
real=tests/data/circuit_1.mtx,tests/data/memplus.mtx,tests/data/bcsstk08.mtx,tests/data/bcsstk13.mtx,tests/data/evsl_stiff1.mtx,tests/data/hypre_ams_A.mtx
timeout 120 $B/spmv -sizes2d 1000 -sizes3d 160 -arrow 100000,1000000,10000000 -powerlaw 100000,1000000,10000000 -f $real -reps 50 -csv $out/spmv.csv -label h100 > $out/spmv.txt 2>&1 || echo "rc $?" >> $out/spmv.txt
cat $out/spmv.txt | head -40
timeout 150 $B/bench -sizes2d 0 -sizes3d 0 -arrow 100000,1000000,10000000 -powerlaw 100000,1000000,10000000 -f $real -its 50 -methods pcgfused,pbcgsfused,pgmresfused -csv $out/bench-irregular.csv -label h100 > $out/bench-irregular.txt 2>&1 || echo "rc $?" >> $out/bench-irregular.txt
cat $out/bench-irregular.txt | head -40
