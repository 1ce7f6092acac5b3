#!/bin/bash
# call 3: -ksp_max_it beyond the loop's history (before / now), the first solve with the loop's buffers made at KSPSetUp (before / now), GPU tests
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples; T=build/petsc-3.26-cuda/tests
NOW=$PWD/build/petsc-3.26-cuda/lib; BEFORE=$PWD/.carry/b8lib
T0=$(date +%s)
for v in before now; do case $v in before) L=$BEFORE;; now) L=$NOW;; esac
  for m in cg bcgs gmres; do
    echo "== $v $m -ksp_max_it -3" >> $out/maxit.txt
    LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 60 $T/compare -against reference -method $m -problem lap2d -n 30 -pc_type jacobi -ksp_max_it -3 >> $out/maxit.txt 2>&1; echo "rc=$?" >> $out/maxit.txt
  done
done
grep -E "^==|rc=|rror" $out/maxit.txt | head -30
for round in 1 2 3; do for v in before now; do case $v in before) L=$BEFORE;; now) L=$NOW;; esac
  echo "== $v round $round" >> $out/first.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 100 $B/bench -sizes2d 32,100 -sizes3d 0 -its 50 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aijcusparse -vec_type cuda -use_gpu_aware_mpi 0 -csv $out/first.csv -label $v-$round 2>&1 | grep -E 'GPU|rror' >> $out/first.txt
done; done
echo "first done $(( $(date +%s) - T0 ))s"
FUSED_BUILD=build/petsc-3.26-cuda timeout 360 bash tools/gpu-session.sh tests 'maxit|gpu-(cg|bcgs|gmres)-first|gpu-long|hybcuda|gpu-soak|cudapetsc-(cg|bcgs|gmres)-' > $out/gpu-tests.txt 2>&1
tail -2 $out/gpu-tests.txt; grep -E "^FAIL" $out/gpu-tests.txt | head
echo "all done $(( $(date +%s) - T0 ))s"
