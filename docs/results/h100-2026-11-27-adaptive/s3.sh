#!/bin/bash
# call 3 (2026-11-27): where adaptive simpler GMRES's time goes at 10^4 rows: the adaptive kernel with nu so
# small that no step adapts (0.01), against 0, 0.5 and 0.9; the adaptive steps of each transient solve.
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
out=${OUT:-out}; mkdir -p $out
[ -d build/petsc-3.26-cuda/examples ] || tar -xJf .carry/builds.tar.xz
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
N=build/petsc-3.26-cuda
run() { LD_LIBRARY_PATH=$PWD/$N/lib:$LD_LIBRARY_PATH timeout 120 $N/examples/"$@"; }
for round in 1 2; do for a in 0 0.01 0.5 0.9; do
  echo "== nu $a round $round" >> $out/bench.txt
  run bench -sizes2d 100 -sizes3d 0 -its 50 -reps 30 -methods pgmresfused -mat_type aijcusparse -vec_type cuda -ksp_pgmresfused_adaptive $a 2>&1 | grep -E 'GPU|rror' >> $out/bench.txt
  echo "== nu $a round $round: 30 its" >> $out/bench.txt
  run bench -sizes2d 100 -sizes3d 0 -its 30 -reps 30 -methods pgmresfused -mat_type aijcusparse -vec_type cuda -ksp_pgmresfused_adaptive $a 2>&1 | grep -E 'GPU|rror' >> $out/bench.txt
done; done
for a in 0 0.01 0.5 0.9; do
  echo "== nu $a transient" >> $out/transient.txt
  run transient -n 100 -steps 1000 -pc_type jacobi -methods pgmresfused -mat_type aijcusparse -ksp_pgmresfused_adaptive $a 2>&1 | grep -E 'fused|rror' >> $out/transient.txt
  run transient -n 100 -steps 50 -pc_type jacobi -methods pgmresfused -mat_type aijcusparse -ksp_pgmresfused_adaptive $a -info 2>&1 | grep 'Adaptive simpler' | awk '{a+=$5; n+=$7} END {print "adaptive steps", a, "of", n}' >> $out/transient.txt
  run bench -sizes2d 100 -sizes3d 0 -its 50 -reps 1 -methods pgmresfused -mat_type aijcusparse -vec_type cuda -ksp_pgmresfused_adaptive $a -info 2>&1 | grep 'Adaptive simpler' | tail -1 >> $out/transient.txt
done
cat $out/bench.txt $out/transient.txt
