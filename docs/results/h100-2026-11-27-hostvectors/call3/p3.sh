#!/bin/bash
# Call 3: host vectors pinned in place. GPU tests of the new and the touched
# paths; then the build before (prev/: e281331) and this one alternating, two
# rounds: bench's cost of a solve beyond its iterations with host vectors, and
# the transient benchmark with host vectors.
B=build/petsc-3.26-cuda
O=${OUT:-out}
G="-use_gpu_aware_mpi 0"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt; date -u >> $O/device.txt
FUSED_BUILD=$B timeout 280 bash tools/gpu-session.sh tests "${TESTS:-^gpu-pinned|errorhistory|inplace|hostvec}" > $O/gpu-tests.txt 2>&1
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for r in 1 2; do
  for v in prev new; do
    if [ $v = prev ]; then D=prev; else D=$B; fi
    echo "== $v round $r" | tee -a $O/bench-host.txt >> $O/transient-host.txt
    LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH timeout 150 $D/examples/bench -sizes2d 100,316,1000 -sizes3d 64 -its 50 -reps 3 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij -vec_type standard $G 2>&1 | grep -E "^(lap|problem)" >> $O/bench-host.txt
    for n in 100 316; do
      LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH timeout 100 $D/examples/transient -dim 2 -n $n -steps 1000 -pc_type jacobi -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij $G >> $O/transient-host.txt 2>&1
    done
    LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH timeout 100 $D/examples/transient -dim 3 -n 100 -steps 100 -pc_type jacobi -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij $G >> $O/transient-host.txt 2>&1
  done
done
