#!/bin/bash
# 2026-11-28 session 2, call 5: 0cce6cd (prev/) against this build (build/: eight warp sums by a
# reduce-scatter of 9 shuffles instead of 8 trees of 5), alternating, the order swapped each round; GPU tests
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
mkdir -p prev && tar -xJf .carry/builds-prev.tar.xz -C prev && tar -xJf .carry/builds-ws.tar.xz
out=${OUT:-out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version --format=csv > $out/device.txt; date -u >> $out/device.txt
E=build/petsc-3.26-cuda/examples
run() { local lib=$1; shift; LD_LIBRARY_PATH=$PWD/$lib:$LD_LIBRARY_PATH timeout 120 "$@"; }
one() {
  local b=$1 r=$2 lib
  if [ $b = prev ]; then lib=prev/build/petsc-3.26-cuda/lib; else lib=build/petsc-3.26-cuda/lib; fi
  echo "== $b round $r" >> $out/bench.txt
  run $lib $E/bench -sizes2d 100,316,1000 -sizes3d 64 -its 50 -reps 3 -methods pgmresfused -mat_type aijcusparse 2>&1 | grep -E "GPU \(CUDA\)|rror" >> $out/bench.txt
  echo "== $b round $r" >> $out/transient.txt
  run $lib $E/transient -n 100 -steps 1000 -pc_type jacobi -methods pgmresfused -mat_type aijcusparse 2>&1 | grep -E "GPU|rror" >> $out/transient.txt
}
for r in 1 2 3; do
  if [ $((r % 2)) = 1 ]; then one prev $r; one new $r; else one new $r; one prev $r; fi
done
cat $out/bench.txt $out/transient.txt
FUSED_BUILD=build/petsc-3.26-cuda timeout 300 bash tools/gpu-session.sh tests '^gpu-gmres-|^cudapetsc-gmres|compensated-gmres|compensated-norm-gmres' > $out/tests.txt 2>&1
grep -E "^FAIL" $out/tests.txt | head; tail -2 $out/tests.txt
