#!/bin/bash
# usage: sweep.sh LABEL  (env BCGS_KAPPA passed through)
cd /work/main
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cases=()
for m in 494_bus bcsstk08 bcsstk13 bcsstk21 bcsstm10 circuit_1 evsl_stiff1 hypre_ams_A hypre_ams_M isooctane_jac memplus olm1000 pde2961 rdb2048 sherman5 tumorAntiAngiogenesis_2 west0479; do cases+=("-f tests/data/$m.mtx"); done
cases+=("-problem kept3d -n 20" "-problem kept3d -n 20 -problem_dirichlet_scale 1e4" "-problem jump2d -n 64" "-problem aniso2d -n 64" "-problem convdiff -n 100 -problem_peclet 10" "-problem convdiff -n 100 -problem_peclet 100" "-problem convdiff -n 100 -problem_peclet 1000" "-problem lap2d -n 48 -problem_negate" "-problem lap2d -n 32 -problem_scale 1e3" "-f tests/data/494_bus.mtx -problem_scale 1e3" "-f tests/data/hypre_ams_A.mtx -problem_scale 1e3" "-f tests/data/sherman5.mtx -problem_scale 1e3" "-f tests/data/pde2961.mtx -problem_scale 1e3")
for c in "${cases[@]}"; do for pc in none jacobi; do for np in 1 2 4; do
  out=$(timeout 300 mpiexec --oversubscribe -n $np build/tests/compare -robust -method bcgs $c -pc_type $pc -ksp_max_it 5000 2>&1 | tr '\n' ' ')
  echo "np$np $pc $c :: $out"
done; done; done
