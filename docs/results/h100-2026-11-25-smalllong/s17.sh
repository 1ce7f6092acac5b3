#!/bin/bash
# call 17: pgmresfused's single kernel with lanes where rows average 32 entries or more: the GMRES GPU tests, then
# us per iteration against the build before (prev = ce771ba), alternating, two rounds
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
real=tests/data/bcsstk13.mtx,tests/data/evsl_stiff1.mtx,tests/data/hypre_ams_A.mtx,tests/data/bcsstk08.mtx,tests/data/bcsstk21.mtx,tests/data/494_bus.mtx,tests/data/circuit_1.mtx,tests/data/memplus.mtx
for round in 1 2; do for v in prev now; do
  case $v in prev) L=$PWD/.carry/prevlib;; now) L=$PWD/build/petsc-3.26-cuda/lib;; esac
  echo "== $v round $round" >> $out/bench.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 100 $B/bench -sizes2d 100,316 -sizes3d 64 -f $real -its 50 -methods pgmresfused -mat_type aij -vec_type standard 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench.txt
done; done
cat $out/bench.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 400 bash tools/gpu-session.sh tests '^gpu-gmres-|gmres.*compensated|compensated.*gmres' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -E "^FAIL" $out/gpu-tests.txt | head
for f in build/petsc-3.26-cuda/test-logs/gpu-gmres-lanes*.log; do echo "== $f"; grep -E "its|ran|loop|FAIL" $f | head -6; done > $out/test-logs.txt 2>&1
