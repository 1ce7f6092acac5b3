#!/bin/bash
# call 5 (2026-11-26, evening): where the first solve of a process spends its extra millisecond (call 4):
# the CUDA API calls of a bench process (nsys, where the host has it) and PETSc's -info of the first solve
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-out}; mkdir -p $out
mkdir -p build/petsc-3.26-cuda/lib && xz -dc .carry/nowlib.so.xz > build/petsc-3.26-cuda/lib/libpetscfused.so
B=build/petsc-3.26-cuda/examples
export LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH
a="-sizes2d 100 -sizes3d 0 -its 50 -reps 5 -mat_type aijcusparse -vec_type cuda -methods pcgfused"
NSYS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys 2>/dev/null | head -1)
echo "nsys: $NSYS"
if [ -n "$NSYS" ]; then
  timeout 120 $NSYS profile -t cuda,cublas,cusparse -o $out/first --force-overwrite true $B/bench $a > $out/nsys-run.txt 2>&1
  timeout 120 $NSYS stats -r cuda_api_trace -f csv -o $out/trace $out/first.nsys-rep > /dev/null 2>&1
  timeout 60 $NSYS stats -r cuda_api_sum $out/first.nsys-rep 2>&1 | head -40
  rm -f $out/first.nsys-rep $out/first.sqlite
  ls $out
fi
timeout 60 $B/bench $a -info 2>&1 | grep -v -i "fused" | head -80 > $out/info.txt
grep -i -E "cublas|cusparse|device|handle|stream|init" $out/info.txt | head -30
