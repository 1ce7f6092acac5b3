/* A plain PETSc program that has never heard of petsc-fused: it is built
   without our header or library. Run with
     -dll_append lib/libpetscfused.so -ksp_type pgmresfused
   it must solve with the fused method. Asserts the type that ran (given as
   -expect_type), convergence, and the true residual. */
#include <petscksp.h>

int main(int argc, char **argv)
{
  Mat                A;
  Vec                x, b, r;
  KSP                ksp;
  KSPType            type;
  KSPConvergedReason reason;
  char               expect[64] = "";
  PetscInt           n = 400, i, rstart, rend;
  PetscReal          rn, bn;
  PetscBool          same, ok = PETSC_TRUE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-expect_type", expect, sizeof(expect), NULL));
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n, n, 3, NULL, 1, NULL, &A));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (i = rstart; i < rend; i++) {
    if (i > 0) PetscCall(MatSetValue(A, i, i - 1, -1.0, INSERT_VALUES));
    if (i < n - 1) PetscCall(MatSetValue(A, i, i + 1, -1.0, INSERT_VALUES));
    PetscCall(MatSetValue(A, i, i, 2.5, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetType(ksp, &type));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rn));
  PetscCall(VecNorm(b, NORM_2, &bn));
  PetscCall(PetscStrcmp(type, expect, &same));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  ran %s, reason %s, true rel. residual %.2e\n", type, KSPConvergedReasons[reason], (double)(rn / bn)));
  if (!same) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: KSP type %s, expected %s\n", type, expect));
    ok = PETSC_FALSE;
  }
  if (reason <= 0 || rn / bn > 1e-9) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: did not solve\n"));
    ok = PETSC_FALSE;
  }
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&r));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return ok ? 0 : 1;
}
