/* A plain PETSc program that has never heard of petsc-fused: it is built
   without our header or library. Run with
     -dll_append lib/libpetscfused.so -ksp_type pgmresfused
   it must solve with the fused method. Asserts the type that ran (given as
   -expect_type), convergence, and the true residual within 10x the relative
   tolerance (1e-10 unless the options change it). -expect_rtol R and
   -expect_max_it M assert the tolerances in force after the options (for
   PETSc's own meaning of negative values, which changed between versions). */
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
  PetscReal          rn, bn, rtol, expect_rtol = -1.0;
  PetscInt           max_it, expect_max_it = -1;
  PetscBool          same, ok = PETSC_TRUE, has_rtol, has_max_it;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-expect_type", expect, sizeof(expect), NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-expect_rtol", &expect_rtol, &has_rtol));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_max_it", &expect_max_it, &has_max_it));
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
  PetscCall(KSPGetTolerances(ksp, &rtol, NULL, NULL, &max_it));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  rtol %g, max_it %" PetscInt_FMT " after the options\n", (double)rtol, max_it));
  if (has_rtol && rtol != expect_rtol) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: rtol %g, expected %g\n", (double)rtol, (double)expect_rtol));
    ok = PETSC_FALSE;
  }
  if (has_max_it && max_it != expect_max_it) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: max_it %" PetscInt_FMT ", expected %" PetscInt_FMT "\n", max_it, expect_max_it));
    ok = PETSC_FALSE;
  }
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetType(ksp, &type));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rn));
  PetscCall(VecNorm(b, NORM_2, &bn));
  PetscCall(PetscStrcmp(type, expect, &same));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  ran %s, reason %s, true rel. residual %.2e\n", type ? type : "(no type)", KSPConvergedReasons[reason], (double)(rn / bn)));
  if (!same) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: KSP type %s, expected %s\n", type ? type : "(no type)", expect));
    ok = PETSC_FALSE;
  }
  if (reason <= 0 || rn / bn > 10 * rtol) {
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
