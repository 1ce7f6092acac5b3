#!/bin/bash
# Call 4: the GPU tests of every path that moves host vectors (the pinned
# tests with the view read through an ASCII viewer now), then the transient
# benchmark with host vectors, pinning on and off in the same build,
# alternating, and -info's word on whether b and x were pinned.
B=build/petsc-3.26-cuda
O=${OUT:-out}
G="-use_gpu_aware_mpi 0"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt; date -u >> $O/device.txt
FUSED_BUILD=$B timeout ${TLIMIT:-420} bash tools/gpu-session.sh tests "${TESTS:-^gpu-|^cudapetsc-}" > $O/gpu-tests.txt 2>&1
. /opt/ob/env.sh
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for r in 1 2; do
  for pin in 0 1; do
    echo "== pin $pin round $r" >> $O/transient-pin.txt
    for n in 100 316; do
      timeout 100 $B/examples/transient -dim 2 -n $n -steps 1000 -pc_type jacobi -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij -ksp_fused_pin_host_vectors $pin $G 2>&1 | grep -E "^(pcg|pbcgs|pgmres|petsc-fused)" >> $O/transient-pin.txt
    done
    timeout 100 $B/examples/transient -dim 3 -n 100 -steps 100 -pc_type jacobi -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij -ksp_fused_pin_host_vectors $pin $G 2>&1 | grep -E "^(pcg|pbcgs|pgmres|petsc-fused)" >> $O/transient-pin.txt
  done
done
timeout 60 $B/examples/transient -dim 2 -n 100 -steps 10 -pc_type jacobi -methods pcgfused -mat_type aij -info $G 2>&1 | grep -i "pinned" | sort | uniq -c > $O/transient-info.txt
