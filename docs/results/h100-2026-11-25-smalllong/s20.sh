#!/bin/bash
# call 20: GMRES's groups on bcsstk13: lanes forced to 4, 8, 16 (the rule's), 32 (a scratch build with FUSED_TEST_LANES)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
out=${OUT:-out}; mkdir -p $out
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
for round in 1 2; do for l in 1 4 8 16 32; do
  echo "== lanes $l round $round" >> $out/bench.txt
  FUSED_TEST_LANES=$l LD_LIBRARY_PATH=$PWD/.carry/varlib:$LD_LIBRARY_PATH timeout 60 $B/bench -sizes2d 0 -sizes3d 0 -f tests/data/bcsstk13.mtx,tests/data/circuit_1.mtx,tests/data/bcsstk08.mtx -its 50 -methods pgmresfused -mat_type aij -vec_type standard 2>&1 | grep -E 'mtx|rror' >> $out/bench.txt
done; done
cat $out/bench.txt
