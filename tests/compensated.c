/* -ksp_fused_compensated: the reductions' sums are compensated. The
   right-hand side is b_0 = 1 and b_i = 1e-8 (i > 0) on the identity, so the
   first residual norm of a zero guess is sqrt(1 + (n - 1) fl(1e-8)^2): a
   sum whose small terms each fall below half an ulp of the large one. The
   test asserts that a fused method's iteration-0 norm (its own <r,r>, from
   the fused steps) is within 4 ulps of the exact value with compensated
   sums; and, on the reference backend on one rank, where the terms are
   added one after another, that plain sums miss it by far more (so the
   check can tell them apart).

     compensated -method pcgfused|pbcgsfused|pgmresfused [-n N] [-ksp_fused_backend ...] */
#include <float.h>
#include <petscksp.h>
#include <petscfused.h>

/* iteration 0's residual norm from a solve with compensated sums or not */
static PetscErrorCode FirstNorm(Mat A, Vec b, const char *method, PetscBool compensated, PetscReal *rnorm0, KSPFusedBackend *used)
{
  KSP        ksp;
  PC         pc;
  Vec        x;
  PetscReal  hist[8];
  PetscInt   nhist;
  const PetscReal *h;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, method));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCNONE));
  PetscCall(KSPSetTolerances(ksp, 1e-12, PETSC_DEFAULT, PETSC_DEFAULT, 5));
  PetscCall(KSPSetResidualHistory(ksp, hist, 8, PETSC_TRUE));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPFusedSetCompensated(ksp, compensated));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetResidualHistory(ksp, &h, &nhist));
  PetscCheck(nhist >= 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s recorded no residual norm", method);
  *rnorm0 = h[0];
  PetscCall(KSPFusedGetBackendUsed(ksp, used));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat             A;
  Vec             b;
  PetscInt        n = 400000, lo, hi;
  char            method[64] = "pcgfused";
  PetscMPIInt     size;
  PetscReal       plain, comp;
  long double     exact;
  double          tiny = 1e-8, ulp;
  KSPFusedBackend used;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscFusedInitializePackage());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-method", method, sizeof(method), NULL));
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n, n, 1, NULL, 0, NULL, &A));
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) PetscCall(MatSetValue(A, i, i, 1.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatCreateVecs(A, &b, NULL));
  for (PetscInt i = lo; i < hi; i++) PetscCall(VecSetValue(b, i, i == 0 ? 1.0 : tiny, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(b));
  PetscCall(VecAssemblyEnd(b));
  /* each small square is a double; their sum and the 1 in long double are exact enough */
  exact = sqrtl(1.0L + (long double)(n - 1) * (long double)(tiny * tiny));
  ulp   = (double)exact * DBL_EPSILON;

  PetscCall(FirstNorm(A, b, method, PETSC_TRUE, &comp, &used));
  PetscCall(FirstNorm(A, b, method, PETSC_FALSE, &plain, &used));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s on %s, %d rank(s), n %" PetscInt_FMT ": |r0| exact %.17Lg\n  compensated %.17g (%.1f ulps off)\n  plain       %.17g (%.1f ulps off)\n", method, used == KSP_FUSED_BACKEND_CUDA ? "CUDA" : "the reference backend", size, n, exact,
                        (double)comp, (double)(fabsl((long double)comp - exact) / ulp), (double)plain, (double)(fabsl((long double)plain - exact) / ulp)));
  PetscCheck(fabsl((long double)comp - exact) <= 4 * ulp, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: compensated |r0| %.17g is %.1f ulps from %.17Lg", method, (double)comp, (double)(fabsl((long double)comp - exact) / ulp), exact);
  if (used == KSP_FUSED_BACKEND_REFERENCE && size == 1) PetscCheck(fabsl((long double)plain - exact) > 1000 * ulp, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: plain sums came within 1000 ulps (%.17g): the problem no longer tells compensated sums from plain ones", method, (double)plain);
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
