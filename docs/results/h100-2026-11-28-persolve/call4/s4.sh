#!/bin/bash
# 2026-11-28 session 2, call 4: the build before (6a3d6be, base/) and this one (build/: the hand-back in
# 8-byte words, launch facts kept) alternating, the order swapped each round; then the GPU tests
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
mkdir -p base && tar -xJf .carry/builds.tar.xz -C base && tar -xJf .carry/builds-new.tar.xz
out=${OUT:-out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
E=build/petsc-3.26-cuda/examples
run() { local lib=$1; shift; LD_LIBRARY_PATH=$PWD/$lib:$LD_LIBRARY_PATH timeout 120 "$@"; }
one() {
  local b=$1 r=$2 lib
  if [ $b = base ]; then lib=base/build/petsc-3.26-cuda/lib; else lib=build/petsc-3.26-cuda/lib; fi
  echo "== $b round $r" >> $out/bench.txt
  run $lib $E/bench -sizes2d 100,316 -sizes3d 0 -its 50 -reps 5 -mat_type aijcusparse 2>&1 | grep -E "GPU \(CUDA\)|rror" >> $out/bench.txt
  echo "== $b round $r" >> $out/transient.txt
  run $lib $E/transient -n 100 -steps 1000 -pc_type jacobi -methods pcgfused,pbcgsfused,pgmresfused -mat_type aijcusparse 2>&1 | grep -E "GPU|rror" >> $out/transient.txt
}
for r in 1 2 3 4; do
  if [ $((r % 2)) = 1 ]; then one base $r; one new $r; else one new $r; one base $r; fi
done
cat $out/bench.txt $out/transient.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 400 bash tools/gpu-session.sh tests '^gpu-(cg|bcgs|gmres)-|^cudapetsc-' > $out/tests.txt 2>&1
grep -E "^FAIL" $out/tests.txt | head; tail -2 $out/tests.txt
