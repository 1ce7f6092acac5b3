#!/bin/bash
# call 15: the compensated kernels loaded at KSPSetUp: the compensated tests, the three methods' GPU tests,
# and the first solve after KSPSetUp plain and compensated (10^4 rows)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
for round in 1 2; do for o in "" "-ksp_fused_compensated"; do
  echo "== round $round $o" >> $out/bench.txt
  LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH timeout 60 $B/bench -sizes2d 100 -sizes3d 0 -its 50 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij -vec_type standard $o 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench.txt
done; done
cat $out/bench.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 500 bash tools/gpu-session.sh tests 'compensated|^gpu-(cg|bcgs|gmres)-' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -E "^FAIL" $out/gpu-tests.txt | head
