#!/bin/bash
# call 7 (2026-11-26, evening): does a PETSc GPU solve first take the first-solve cost of the process away from
# pcgfused (then it is PETSc's or CUDA's first use, met by whichever solver runs first)?
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
out=${OUT:-out}; mkdir -p $out
mkdir -p build/petsc-3.26-cuda/lib && xz -dc .carry/nowlib.so.xz > build/petsc-3.26-cuda/lib/libpetscfused.so
B=build/petsc-3.26-cuda/examples
export LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH
a="-sizes2d 100 -sizes3d 0 -its 50 -reps 3 -mat_type aijcusparse -vec_type cuda"
for r in 1 2; do
  for m in cg,pcgfused pcgfused,cg gmres,pgmresfused bcgs,pbcgsfused; do
    echo "== round $r $m" >> $out/order.txt
    timeout 60 $B/bench $a -methods $m 2>&1 | grep -E "GPU|rror" >> $out/order.txt
  done
done
cat $out/order.txt
