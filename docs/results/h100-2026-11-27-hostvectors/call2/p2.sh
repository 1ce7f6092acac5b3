#!/bin/bash
# Call 2: what host vectors' trips cost (pcie.cu), the fused methods' cost of
# a solve beyond its iterations with host vectors and with VECCUDA at several
# sizes, and pgmresfused's first solve under lazy and eager module loading.
B=build/petsc-3.26-cuda
O=${OUT:-out}
G="-use_gpu_aware_mpi 0"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt; date -u >> $O/device.txt
.carry/pcie > $O/pcie.txt 2>&1; .carry/pcie >> $O/pcie.txt 2>&1
for r in 1 2; do
  timeout 200 $B/examples/bench -sizes2d 100,316,1000 -sizes3d 64 -its 50 -reps 3 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aij -vec_type standard $G >> $O/bench-host.txt 2>&1
  timeout 200 $B/examples/bench -sizes2d 100,316,1000 -sizes3d 64 -its 50 -reps 3 -methods pcgfused,pbcgsfused,pgmresfused -mat_type aijcusparse -vec_type cuda $G >> $O/bench-cuda.txt 2>&1
done
for mode in LAZY EAGER LAZY EAGER; do
  for m in pgmresfused pcgfused; do
    echo "== $mode $m" >> $O/first.txt
    CUDA_MODULE_LOADING=$mode timeout 60 $B/examples/bench -sizes2d 100 -its 50 -reps 3 -methods $m -mat_type aijcusparse $G 2>&1 | grep -E "^lap2d-100 " >> $O/first.txt
  done
done
