#!/bin/bash
# call 3 (2026-11-26): VECCUDA b and x read and written in place in the single-kernel loop. The cudapetsc GPU tests
# (the in-place ones among them) and the transient ones; then the build before (prev = 91be3b0, the same code but
# for this change) and this build alternating, two rounds: bench's per-solve cost with VECCUDA and with host vectors,
# and the transient benchmark's ms per time step at 10^4 unknowns
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p .carry/prevlib && xz -dc .carry/prevlib.so.xz > .carry/prevlib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
FUSED_BUILD=build/petsc-3.26-cuda timeout 200 bash tools/gpu-session.sh tests '^cudapetsc-|transient|^gpu-(cg|bcgs|gmres)-first' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -c '^PASS' $out/gpu-tests.txt; grep -E "^FAIL" $out/gpu-tests.txt | head
grep -h -A3 'inplace' $out/gpu-tests.txt | head -20
for round in 1 2; do for v in prev now; do
  L=$PWD/.carry/prevlib; [ $v = now ] && L=$PWD/build/petsc-3.26-cuda/lib
  for vt in cuda standard; do
    mt=aijcusparse; [ $vt = standard ] && mt=aij
    echo "== $v round $round vec_type $vt" >> $out/bench.txt
    LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 60 $B/bench -sizes2d 100,316 -sizes3d 32 -its 50 -reps 5 -methods pcgfused,pbcgsfused,pgmresfused -mat_type $mt -vec_type $vt 2>&1 | grep -E 'GPU|rror' >> $out/bench.txt
  done
  echo "== $v round $round" >> $out/transient.txt
  LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 60 $B/transient -n 100 -steps 1000 -pc_type jacobi -methods pcgfused,pbcgsfused,pgmresfused 2>&1 | grep -E 'fused|rror' >> $out/transient.txt
done; done
cat $out/bench.txt; cat $out/transient.txt
