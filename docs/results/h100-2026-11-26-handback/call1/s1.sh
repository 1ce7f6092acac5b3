#!/bin/bash
# call 1 (2026-11-26, evening): the single kernels hand their results back themselves (no hand-back kernel) and
# pcgfused's null-space single kernels carry no start code. GPU tests of the single-kernel and CUDA-PETSc paths,
# then the build before (prev = 57c23fe) and this one alternating, two rounds: transient ms per step (10^4
# unknowns, VECCUDA and host vectors) and bench per iteration and per solve
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p .carry/prevlib && xz -dc .carry/prevlib.so.xz > .carry/prevlib/libpetscfused.so
mkdir -p build/petsc-3.26-cuda/lib && xz -dc .carry/nowlib.so.xz > build/petsc-3.26-cuda/lib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
for round in 1 2; do for v in prev now; do
  L=$PWD/.carry/prevlib; [ $v = now ] && L=$PWD/build/petsc-3.26-cuda/lib
  for mt in aijcusparse aij; do
    echo "== $v round $round $mt n 100" >> $out/transient.txt
    LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 60 $B/transient -n 100 -steps 1000 -pc_type jacobi -methods pcgfused,pbcgsfused,pgmresfused -mat_type $mt 2>&1 | grep -E 'fused|rror' >> $out/transient.txt
  done
  echo "== $v round $round" >> $out/bench.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 100 $B/bench -sizes2d 100,316 -sizes3d 32 -its 50 -reps 5 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aijcusparse -vec_type cuda 2>&1 | grep -E 'GPU|rror|rows' >> $out/bench.txt
done; done
cat $out/transient.txt; cat $out/bench.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 330 bash tools/gpu-session.sh tests '^gpu-(cg|bcgs|gmres)-|^cudapetsc-' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -c '^PASS' $out/gpu-tests.txt; grep -E "^FAIL" $out/gpu-tests.txt | head -20
