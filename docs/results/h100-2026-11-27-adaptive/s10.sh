#!/bin/bash
# call 10 (2026-11-27, review): after the record made rho itself, the adaptive pass took the row's w and the
# refill took the copy's own symmetry flag: the GPU tests of these paths, and pgmresfused per step at 10^4 rows
# (nu 0 and 0.9, two rounds) and the transient with the default.
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
out=${OUT:-out}; mkdir -p $out
tar -xJf .carry/builds.tar.xz
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 330 bash tools/gpu-session.sh tests 'adaptive|plain|end-on-device|symmetric|^hybcuda|^cudapetsc-(cg|gmres)|memplus-graph' > $out/gpu-tests.txt 2>&1
tail -1 $out/gpu-tests.txt; grep -E "^FAIL" -A3 $out/gpu-tests.txt | head -30
N=build/petsc-3.26-cuda
run() { LD_LIBRARY_PATH=$PWD/$N/lib:$LD_LIBRARY_PATH timeout 100 $N/examples/"$@"; }
for round in 1 2; do for a in 0 0.9; do
  echo "== nu $a round $round" >> $out/bench.txt
  run bench -sizes2d 100 -sizes3d 0 -its 50 -reps 30 -methods pgmresfused -mat_type aijcusparse -vec_type cuda -ksp_pgmresfused_adaptive $a 2>&1 | grep -E 'GPU|rror' >> $out/bench.txt
done; done
run transient -n 100 -steps 1000 -pc_type jacobi -methods pgmresfused -mat_type aijcusparse 2>&1 | grep -E 'fused|rror' >> $out/transient.txt
cat $out/bench.txt $out/transient.txt
