#!/bin/bash
# call 7: BiCGStab's single kernel with lanes a row against the build before (prev), and the GPU tests of CG
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
T0=$(date +%s)
real=tests/data/circuit_1.mtx,tests/data/memplus.mtx,tests/data/bcsstk08.mtx,tests/data/hypre_ams_A.mtx,tests/data/evsl_stiff1.mtx,tests/data/bcsstk13.mtx,tests/data/bcsstk21.mtx,tests/data/494_bus.mtx,tests/data/hypre_ams_M.mtx,tests/data/bcsstm10.mtx
for round in 1 2; do for v in prev now; do
  case $v in prev) L=$PWD/.carry/prevlib;; now) L=$PWD/build/petsc-3.26-cuda/lib;; esac
  echo "== $v round $round" >> $out/bench.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 150 $B/bench -sizes2d 100,316,1000 -sizes3d 64 -arrow 100000 -powerlaw 100000 -f $real -its 50 -methods pcgfused,pbcgsfused -mat_type aij -vec_type standard -csv $out/bench.csv -label $v-$round 2>&1 | grep -E 'GPU|rror' >> $out/bench.txt
done; echo "round $round $(( $(date +%s) - T0 ))s"; done
FUSED_BUILD=build/petsc-3.26-cuda timeout 420 bash tools/gpu-session.sh tests 'gpu-bcgs-|gpu-long-bcgs|robust-bcgs-|robust-attainable-bcgs|cudapetsc-bcgs-' > $out/gpu-tests.txt 2>&1
tail -2 $out/gpu-tests.txt; grep -E "^FAIL" $out/gpu-tests.txt | head
echo "all done $(( $(date +%s) - T0 ))s"
