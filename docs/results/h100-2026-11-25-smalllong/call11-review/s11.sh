#!/bin/bash
# call 11: after the review's mends (one helper for the single kernel's row limit, the loop partials' bound, BiCGStab's s row): GPU tests and per iteration against the build before (prev = ce771ba)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
real=tests/data/bcsstk13.mtx,tests/data/evsl_stiff1.mtx,tests/data/memplus.mtx
for round in 1 2; do for v in prev now; do
  case $v in prev) L=$PWD/.carry/prevlib;; now) L=$PWD/build/petsc-3.26-cuda/lib;; esac
  echo "== $v round $round" >> $out/bench.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 100 $B/bench -sizes2d 100 -sizes3d 0 -arrow 100000 -f $real -its 50 -methods pcgfused,pbcgsfused -mat_type aij -vec_type standard 2>&1 | grep -E 'GPU|rror' >> $out/bench.txt
done; done
FUSED_BUILD=build/petsc-3.26-cuda timeout 450 bash tools/gpu-session.sh tests 'lanes|maxit|gpu-(cg|bcgs)-|gpu-long|cudapetsc-(cg|bcgs)-' > $out/gpu-tests.txt 2>&1
tail -2 $out/gpu-tests.txt; grep -E "^FAIL" $out/gpu-tests.txt | head
