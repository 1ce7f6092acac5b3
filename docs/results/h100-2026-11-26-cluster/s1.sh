#!/bin/bash
# call 1 (2026-11-26): the single kernels on one thread-block cluster. grid_sums (one cluster against a small
# cooperative grid); us per iteration of the build before (prev = 91be3b0), this build (cluster up to 16384 rows)
# and this build with -ksp_fused_cluster_rows 0, alternating; the cluster forced at larger sizes, to place the
# default limit; then the GPU tests of the three methods (the cluster ones among them)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p .carry/prevlib && xz -dc .carry/prevlib.so.xz > .carry/prevlib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
timeout 60 $B/grid_sums > $out/grid_sums.txt 2>&1; grep -E 'one cluster|of 512, grid' $out/grid_sums.txt
run() { # name libdir options
  echo "== $1 $3" >> $out/bench.txt
  LD_LIBRARY_PATH=$2:$LD_LIBRARY_PATH timeout 60 $B/bench -sizes2d 50,70,100,128 -sizes3d 20,25 -its 50 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij -vec_type standard $3 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench.txt
}
run prev $PWD/.carry/prevlib ""
run now $PWD/build/petsc-3.26-cuda/lib ""
run off $PWD/build/petsc-3.26-cuda/lib "-ksp_fused_cluster_rows 0"
run now $PWD/build/petsc-3.26-cuda/lib ""
run prev $PWD/.carry/prevlib ""
cat $out/bench.txt
for v in forced off; do
  o="-ksp_fused_cluster_rows 1000000"; [ $v = off ] && o="-ksp_fused_cluster_rows 0"
  echo "== $v $o" >> $out/bench-large.txt
  LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH timeout 60 $B/bench -sizes2d 181,256 -sizes3d 32,40 -its 50 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij -vec_type standard $o 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench-large.txt
done
cat $out/bench-large.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 270 bash tools/gpu-session.sh tests '^gpu-(cg|bcgs|gmres)-' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -c '^PASS' $out/gpu-tests.txt; grep -E "^FAIL" $out/gpu-tests.txt | head
for f in build/petsc-3.26-cuda/test-logs/gpu-*cluster*.log; do echo "== $f"; grep -E "its|cluster|FAIL|rror" $f | head -8; done > $out/test-logs.txt 2>&1
grep -B2 -A8 FAIL $out/test-logs.txt | head -40
