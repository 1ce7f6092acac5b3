#!/bin/bash
# call 14: compensated sums in the single-kernel loops too: the compensated tests, then us per iteration of the build
# before (prev = ce771ba), this build plain and compensated, alternating, two rounds
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 240 bash tools/gpu-session.sh tests 'compensated' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -E "^FAIL" $out/gpu-tests.txt | head
for f in build/petsc-3.26-cuda/test-logs/gpu-compensated*.log; do echo "== $f"; grep -E "its|ran|loop|FAIL" $f | head -6; done > $out/test-logs.txt 2>&1
B=build/petsc-3.26-cuda/examples
for round in 1 2; do for v in prev now comp; do
  case $v in prev) L=$PWD/.carry/prevlib; o="";; now) L=$PWD/build/petsc-3.26-cuda/lib; o="";; comp) L=$PWD/build/petsc-3.26-cuda/lib; o="-ksp_fused_compensated";; esac
  echo "== $v round $round" >> $out/bench.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 120 $B/bench -sizes2d 100,316,1000 -sizes3d 64,160 -f tests/data/bcsstk13.mtx -its 50 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij -vec_type standard $o 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench.txt
done; done
grep -E "==|lap2d-100 |bcsstk13" $out/bench.txt | head -40
