#!/bin/bash
# Iterations to rtol 1e-8 on 1 and 2 GPUs (nvidia-h200-x2), 252^3 with Jacobi,
# the fused methods beside PETSc's cg and bcgs on the GPU; the build of this
# session in build/petsc-3.26-cuda, .carry/ob.tar.xz the PETSc 3.26.1 CUDA bundle
rm -rf /opt/ob; mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
source /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
date -u
for n in 1 2; do
  echo "== $n rank(s), one GPU each: lap3d n=252 jacobi, rtol 1e-8"
  timeout 120 mpirun --oversubscribe -n $n -x LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH build/petsc-3.26-cuda/examples/solve -problem lap3d -n 252 -pc_type jacobi -methods pcgfused,pbcgsfused -ksp_max_it 5000 -warm_up 0 2>&1 | grep -E "^(pcgfused|pbcgsfused|cg|pipecg|bcgs) "
done
date -u
