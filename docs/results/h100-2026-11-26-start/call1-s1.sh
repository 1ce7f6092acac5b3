#!/bin/bash
# call 1 (2026-11-26 session 3): where a 10^4-row transient step's time goes (scratch trace build of c7a2c62)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p .carry/tracelib && xz -dc .carry/tracelib.so.xz > .carry/tracelib/libpetscfused.so
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } | tee $out/device.txt
B=build/petsc-3.26-cuda/examples
T=$PWD/.carry/tracelib; M=$PWD/build/petsc-3.26-cuda/lib
for round in 1 2; do
  for mt in aijcusparse aij; do
    echo "== main $mt round $round"; LD_LIBRARY_PATH=$M:$LD_LIBRARY_PATH $B/transient -n 100 -steps 1000 -pc_type jacobi -methods pcgfused -mat_type $mt 2>&1 | grep -E 'fused|rror'
    echo "== trace $mt round $round"; FUSED_TRACE=1 LD_LIBRARY_PATH=$T:$LD_LIBRARY_PATH $B/transient -n 100 -steps 1000 -pc_type jacobi -methods pcgfused -mat_type $mt 2>&1 | grep -E 'fused|rror|TRACE'
  done
done 2>&1 | tee $out/trace.txt
LD_LIBRARY_PATH=$M:$LD_LIBRARY_PATH $B/transient -n 100 -steps 1000 -pc_type jacobi -methods pcgfused -log_view > $out/logview.txt 2>&1
grep -E "^(KSPSolve|KSPPCG|KSPFused|VecCopy|PCApply)" $out/logview.txt
