#!/bin/bash
# Session 8, call 1 (H200): where the irregular matrices' iterations go.
# bench on arrow and power law at 10^5 and 10^6 rows (default loop, graph
# forced, single kernel forced); ncu kernel durations of the graph loops.
set -u
mkdir -p /opt && tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
tar -xJf .carry/builds-new.tar.xz
B=build/petsc-3.26-cuda
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PATH=$PATH:/usr/local/cuda/bin
export LD_LIBRARY_PATH=$PWD/$B/lib:$LD_LIBRARY_PATH
O=$OUT/c1; mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; } > $O/gpu.txt 2>&1
G="-use_gpu_aware_mpi 0"
a="-sizes2d 0 -sizes3d 0 -arrow 100000,1000000 -powerlaw 100000,1000000 -its 50 -reps 3 -mat_type aijcusparse -problem_symmetric $G -methods pcgfused,pbcgsfused,pgmresfused"
timeout 100 $B/examples/bench $a > $O/bench-default.txt 2>&1
timeout 100 $B/examples/bench $a -ksp_fused_single_kernel_rows 0 > $O/bench-graph.txt 2>&1
timeout 100 $B/examples/bench $a -ksp_fused_single_kernel_rows 4194304 > $O/bench-single.txt 2>&1
timeout 60 $B/examples/bench -sizes2d 316,1000 -sizes3d 0 -its 50 -reps 3 -mat_type aijcusparse $G -methods pcgfused,pbcgsfused,pgmresfused > $O/bench-stencil.txt 2>&1
timeout 60 $B/examples/spmv -sizes2d 1000 -sizes3d 0 -arrow 100000,1000000 -powerlaw 100000,1000000 > $O/spmv.txt 2>&1
for p in "-arrow 100000" "-arrow 1000000" "-powerlaw 100000" "-powerlaw 1000000"; do
  for m in pcgfused pbcgsfused; do
    tag=$(echo "$p-$m" | tr -d ' ')
    timeout 90 ncu --metrics gpu__time_duration.sum,dram__bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active --csv \
      $B/examples/bench -sizes2d 0 -sizes3d 0 $p -its 4 -reps 1 -mat_type aijcusparse -problem_symmetric $G -methods $m -ksp_fused_single_kernel_rows 0 > $O/ncu$tag.csv 2> $O/ncu$tag.err
  done
done
date -u >> $O/gpu.txt
cd $OUT && tar -cJf c1.tar.xz c1 && rm -rf c1
