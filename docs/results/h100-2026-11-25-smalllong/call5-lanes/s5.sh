#!/bin/bash
# call 5: CG's single kernel with a group of lanes a row (FUSED_LANES forces 1..32; unset: the rule) against the build before (prev)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
T0=$(date +%s)
real=tests/data/circuit_1.mtx,tests/data/memplus.mtx,tests/data/bcsstk08.mtx,tests/data/hypre_ams_A.mtx,tests/data/evsl_stiff1.mtx,tests/data/bcsstk13.mtx,tests/data/bcsstk21.mtx,tests/data/494_bus.mtx
for round in 1 2; do for v in prev auto 1 2 4 8 16 32; do
  case $v in prev) L=$PWD/.carry/prevlib; E=;; auto) L=$PWD/build/petsc-3.26-cuda/lib; E=;; *) L=$PWD/build/petsc-3.26-cuda/lib; E="FUSED_LANES=$v";; esac
  echo "== $v round $round" >> $out/bench.txt
  env $E LD_LIBRARY_PATH=$L:$LD_LIBRARY_PATH timeout 150 $B/bench -sizes2d 100,316 -sizes3d 64 -arrow 100000 -powerlaw 100000 -f $real -its 50 -methods pcgfused -mat_type aij -vec_type standard -csv $out/bench.csv -label $v-$round 2>&1 | grep -E 'GPU|rror' >> $out/bench.txt
done; echo "round $round $(( $(date +%s) - T0 ))s"; done
FUSED_BUILD=build/petsc-3.26-cuda timeout 300 bash tools/gpu-session.sh tests 'gpu-cg-|gpu-long-cg|robust-cg-(bcsstk|evsl|hypre|memplus|494)' > $out/gpu-tests.txt 2>&1
tail -2 $out/gpu-tests.txt; grep -E "^FAIL" $out/gpu-tests.txt | head
for m in bcsstk13 evsl_stiff1 bcsstk08 memplus; do
  LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH timeout 60 build/petsc-3.26-cuda/tests/compare -against reference -method cg -f tests/data/$m.mtx -pc_type jacobi -expect_device_loop true 2>&1 | tail -3 >> $out/compare.txt
done
cat $out/compare.txt
echo "all done $(( $(date +%s) - T0 ))s"
