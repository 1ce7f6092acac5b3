/* PETSc semantics of the fused methods, one case per -test:
     history      monitor norms match the baseline's, one per iteration
     usertest     a user convergence test is honoured
     nullspace    singular Neumann Laplacian with MatNullSpace attached
     buildsol     KSPBuildSolution/KSPBuildResidual inside a monitor agree with the reported norm
     notconverged -ksp_error_if_not_converged gives PETSC_ERR_NOT_CONVERGED
     resolve      a second KSPSolve after the matrix changed (as SNES does)
     zerorhs      b = 0 converges at once to x = 0
     breakdown    a system built to break the method down gives the right reason
     nan          a NaN in b gives KSP_DIVERGED_NANORINF, never "converged"
     indefinite   (cg) a matrix whose indefiniteness shows after some
                  iterations: the baseline's reason at the baseline's iteration
     errorhistory KSPSetErrorHistory(): one entry per iteration; without it
                  the solve leaves the KSP without a DM (none is made for it)
     maxit        stopped by -ksp_max_it (-maxit, mid-cycle or at a cycle's
                  end for gmres): the backend chosen by the options against
                  the reference backend, x and the last norm; gmres's last
                  norm is the true residual of the x it returns
     pinned       (CUDA backend) host vectors pinned in place: solves with the
                  same b and x until both are pinned, then every way their
                  arrays change (new values, an array placed, given back and
                  freed and another placed, likely at the same address, a
                  replaced array, a duplicate, x destroyed and made again);
                  each solve's x against the known solution, and each
                  solve from the exact solution as its guess at iteration 0
     zeroguess    a zero guess over x full of NaN, three solves each with the
                  matrix's vectors and with host vectors: each converges to x*
                  in the first solve's iterations
   -method cg|bcgs|gmres as in compare.c */
#include "problems.h"
#include <petsc/private/kspimpl.h> /* ksp->dm: whether the solve made one */

static char method[16] = "cg", fused[32];

#define CHECK(cond, ...) \
  do { \
    if (!(cond)) { \
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: " __VA_ARGS__)); \
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n")); \
      *ok = PETSC_FALSE; \
    } \
  } while (0)

static PetscErrorCode MakeKSP(Mat A, const char *type, KSP *ksp)
{
  PetscFunctionBegin;
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), ksp));
  PetscCall(KSPSetOperators(*ksp, A, A));
  PetscCall(KSPSetType(*ksp, type));
  PetscCall(KSPSetTolerances(*ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
  PetscCall(KSPSetFromOptions(*ksp));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestHistory(Mat A, Vec b, PetscBool *ok)
{
  KSP        kb, kf;
  Vec        x;
  const PetscReal *hb, *hf;
  PetscInt   nb, nf, itsf, i, ncmp;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(MakeKSP(A, method, &kb));
  PetscCall(MakeKSP(A, fused, &kf));
  PetscCall(KSPSetResidualHistory(kb, NULL, PETSC_DECIDE, PETSC_TRUE));
  PetscCall(KSPSetResidualHistory(kf, NULL, PETSC_DECIDE, PETSC_TRUE));
  PetscCall(KSPSolve(kb, b, x));
  PetscCall(KSPSolve(kf, b, x));
  PetscCall(KSPGetResidualHistory(kb, &hb, &nb));
  PetscCall(KSPGetResidualHistory(kf, &hf, &nf));
  PetscCall(KSPGetIterationNumber(kf, &itsf));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  history: %s %" PetscInt_FMT " norms, %s %" PetscInt_FMT " norms over %" PetscInt_FMT " iterations; first %.6e / %.6e\n", method, nb, fused, nf, itsf, (double)hb[0], (double)hf[0]));
  if (!strcmp(method, "gmres")) CHECK(nf >= itsf + 1, "%" PetscInt_FMT " norms for %" PetscInt_FMT " iterations", nf, itsf);
  else CHECK(nf == itsf + 1, "%" PetscInt_FMT " norms recorded for %" PetscInt_FMT " iterations, expected one per iteration plus the initial", nf, itsf);
  /* the same norm, step by step, until rounding in long recurrences separates them */
  ncmp = PetscMin(PetscMin(nb, nf), 8);
  for (i = 0; i < ncmp; i++) CHECK(PetscAbsReal(hb[i] - hf[i]) <= 1e-6 * hb[i], "norm %" PetscInt_FMT ": %.10e against the baseline's %.10e", i, (double)hf[i], (double)hb[i]);
  PetscCall(KSPDestroy(&kb));
  PetscCall(KSPDestroy(&kf));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(0);
}

/* PETSc's methods that log an error history ask for the KSP's DM to do it,
   which makes a DMShell where there is none; the fused methods log one
   only where it is kept, and then at every iteration (no device loop) */
static PetscErrorCode TestErrorHistory(Mat A, Vec b, PetscBool *ok)
{
  KSP              kf;
  Vec              x;
  const PetscReal *he;
  PetscInt         ne, its, i;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(MakeKSP(A, fused, &kf));
  PetscCall(KSPSolve(kf, b, x));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  errorhistory: without a history the KSP has %s DM after the solve\n", kf->dm ? "a" : "no"));
  CHECK(!kf->dm, "the solve made a DM for a KSP that had none and keeps no error history");
  PetscCall(KSPSetErrorHistory(kf, NULL, PETSC_DECIDE, PETSC_TRUE));
  PetscCall(VecZeroEntries(x));
  PetscCall(KSPSolve(kf, b, x));
  PetscCall(KSPGetErrorHistory(kf, &he, &ne));
  PetscCall(KSPGetIterationNumber(kf, &its));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  errorhistory: %" PetscInt_FMT " entries over %" PetscInt_FMT " iterations, last %.6e\n", ne, its, ne ? (double)he[ne - 1] : -1.0));
  CHECK(its > 0, "no iteration");
  if (!strcmp(method, "gmres")) CHECK(ne >= its + 1, "%" PetscInt_FMT " error norms for %" PetscInt_FMT " iterations", ne, its);
  else CHECK(ne == its + 1, "%" PetscInt_FMT " error norms for %" PetscInt_FMT " iterations, expected one per iteration plus the initial", ne, its);
  for (i = 0; i < ne; i++) CHECK(PetscIsNormalReal(he[i]) || he[i] == 0.0, "error norm %" PetscInt_FMT " is %g", i, (double)he[i]);
  PetscCall(KSPDestroy(&kf));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(0);
}

static PetscErrorCode StopAtSeven(KSP ksp, PetscInt its, PetscReal rnorm, KSPConvergedReason *reason, void *ctx)
{
  PetscInt *calls = (PetscInt *)ctx;

  PetscFunctionBegin;
  (void)ksp;
  (void)rnorm;
  (*calls)++;
  *reason = its >= 7 ? KSP_CONVERGED_ITS : KSP_CONVERGED_ITERATING;
  PetscFunctionReturn(0);
}

static PetscErrorCode TestUserTest(Mat A, Vec b, PetscBool *ok)
{
  KSP                ksp;
  Vec                x;
  PetscInt           its, calls = 0;
  KSPConvergedReason reason;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(MakeKSP(A, fused, &ksp));
  PetscCall(KSPSetConvergenceTest(ksp, StopAtSeven, &calls, NULL));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  usertest: its %" PetscInt_FMT ", reason %s, test called %" PetscInt_FMT " times\n", its, KSPConvergedReasons[reason], calls));
  CHECK(its == 7, "user test stops at 7, the solve ran %" PetscInt_FMT, its);
  CHECK(reason == KSP_CONVERGED_ITS, "reason %s, expected CONVERGED_ITS from the user test", KSPConvergedReasons[reason]);
  CHECK(calls >= 8, "the user test was called %" PetscInt_FMT " times, expected once per iteration from 0", calls);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestNullSpace(PetscInt n, PetscBool *ok)
{
  Mat                A;
  Vec                xstar, b, x;
  MatNullSpace       nsp;
  KSP                kb, kf;
  PetscInt           itsb, itsf;
  KSPConvergedReason rb, rf;
  PetscReal          relb, relf, mean;

  PetscFunctionBegin;
  PetscCall(ProblemCreate(PETSC_COMM_WORLD, PROBLEM_NEUMANN2D, n, &A));
  PetscCall(MatNullSpaceCreate(PETSC_COMM_WORLD, PETSC_TRUE, 0, NULL, &nsp));
  PetscCall(MatSetNullSpace(A, nsp));
  PetscCall(ProblemExactSolution(A, &xstar, &b)); /* b = A x* is consistent */
  PetscCall(VecDuplicate(b, &x));
  PetscCall(MakeKSP(A, method, &kb));
  PetscCall(MakeKSP(A, fused, &kf));
  PetscCall(KSPSolve(kb, b, x));
  PetscCall(KSPGetIterationNumber(kb, &itsb));
  PetscCall(KSPGetConvergedReason(kb, &rb));
  PetscCall(ProblemTrueResidual(A, b, x, &relb));
  PetscCall(KSPSolve(kf, b, x));
  PetscCall(KSPGetIterationNumber(kf, &itsf));
  PetscCall(KSPGetConvergedReason(kf, &rf));
  PetscCall(ProblemTrueResidual(A, b, x, &relf));
  PetscCall(VecSum(x, &mean));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  nullspace: %s its %" PetscInt_FMT " %s res %.2e; %s its %" PetscInt_FMT " %s res %.2e, sum(x) %.2e\n", method, itsb, KSPConvergedReasons[rb], (double)relb, fused, itsf, KSPConvergedReasons[rf], (double)relf, (double)mean));
  CHECK(rf > 0, "%s did not converge on the singular system", fused);
  CHECK(PetscAbsInt(itsf - itsb) <= 2 || relf <= 10 * relb, "its %" PetscInt_FMT " vs %" PetscInt_FMT ", residual %.2e vs %.2e", itsf, itsb, (double)relf, (double)relb);
  CHECK(relf < 1e-6, "true residual %.2e", (double)relf);
  PetscCall(MatNullSpaceDestroy(&nsp));
  PetscCall(KSPDestroy(&kb));
  PetscCall(KSPDestroy(&kf));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xstar));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

typedef struct {
  Mat       A;
  Vec       b;
  PetscReal worst; /* largest | |b - A x_k| - reported norm | / |b| */
  PetscInt  calls;
} BuildCtx;

/* With PCNONE the reported norm is |b - A x_k|: build x_k and check it */
static PetscErrorCode BuildMonitor(KSP ksp, PetscInt its, PetscReal rnorm, void *ctx)
{
  BuildCtx *bc = (BuildCtx *)ctx;
  Vec       x, r, rr;
  PetscReal xr, rn, bn;

  PetscFunctionBegin;
  (void)its;
  PetscCall(KSPBuildSolution(ksp, NULL, &x));
  PetscCall(VecDuplicate(bc->b, &r));
  PetscCall(MatMult(bc->A, x, r));
  PetscCall(VecAYPX(r, -1.0, bc->b));
  PetscCall(VecNorm(r, NORM_2, &xr));
  PetscCall(KSPBuildResidual(ksp, NULL, NULL, &rr));
  PetscCall(VecNorm(rr, NORM_2, &rn));
  PetscCall(VecNorm(bc->b, NORM_2, &bn));
  bc->worst = PetscMax(bc->worst, PetscAbsReal(xr - rnorm) / bn);
  bc->worst = PetscMax(bc->worst, PetscAbsReal(rn - xr) / bn);
  bc->calls++;
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&rr));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestBuildSolution(Mat A, Vec b, PetscBool *ok)
{
  KSP      ksp;
  PC       pc;
  Vec      x;
  BuildCtx bc = {A, b, 0.0, 0};

  PetscFunctionBegin;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(MakeKSP(A, fused, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCNONE));
  PetscCall(KSPSetNormType(ksp, !strcmp(method, "gmres") ? KSP_NORM_PRECONDITIONED : (!strcmp(method, "cg") ? KSP_NORM_UNPRECONDITIONED : KSP_NORM_PRECONDITIONED)));
  PetscCall(KSPMonitorSet(ksp, BuildMonitor, &bc, NULL));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  buildsol: %" PetscInt_FMT " monitor calls, worst |(|b-Ax_k| - reported)|/|b| %.2e\n", bc.calls, (double)bc.worst));
  CHECK(bc.calls > 2, "monitor called %" PetscInt_FMT " times", bc.calls);
  CHECK(bc.worst < 1e-8, "the built solution does not have the reported residual norm: %.2e", (double)bc.worst);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestNotConverged(Mat A, Vec b, PetscBool *ok)
{
  KSP            ksp;
  Vec            x;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(MakeKSP(A, fused, &ksp));
  PetscCall(KSPSetTolerances(ksp, 1e-12, PETSC_DEFAULT, PETSC_DEFAULT, 3));
  PetscCall(KSPSetErrorIfNotConverged(ksp, PETSC_TRUE));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = KSPSolve(ksp, b, x);
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  notconverged: KSPSolve returned error %d\n", (int)ierr));
  CHECK(ierr == PETSC_ERR_NOT_CONVERGED, "expected PETSC_ERR_NOT_CONVERGED (%d), got %d", PETSC_ERR_NOT_CONVERGED, (int)ierr);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestResolve(Mat A, Vec b, Vec xstar, PetscBool *ok)
{
  KSP       ksp;
  Vec       x, b2;
  PetscReal rel1, rel2, err2;
  PetscInt  rstart, rend, i;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecDuplicate(b, &b2));
  PetscCall(MakeKSP(A, fused, &ksp));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(ProblemTrueResidual(A, b, x, &rel1));
  /* new values, same pattern, and a varying diagonal so a stale Jacobi would show */
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (i = rstart; i < rend; i++) {
    PetscScalar v = 1.0 + (PetscScalar)(i % 7);
    PetscCall(MatSetValue(A, i, i, v, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(MatMult(A, xstar, b2));
  PetscCall(KSPSolve(ksp, b2, x));
  PetscCall(ProblemTrueResidual(A, b2, x, &rel2));
  PetscCall(ProblemRelativeError(x, xstar, &err2));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  resolve: first solve res %.2e; after the matrix changed res %.2e, error %.2e\n", (double)rel1, (double)rel2, (double)err2));
  CHECK(rel1 < 1e-7 && rel2 < 1e-7, "true residuals %.2e, %.2e", (double)rel1, (double)rel2);
  CHECK(err2 < 1e-5, "error %.2e after the matrix changed", (double)err2);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b2));
  PetscFunctionReturn(0);
}

/* x from a zero guess against scale * xstar; then, from x as the guess,
   iteration 0 (which fails if the guess did not reach the device whole) */
static PetscErrorCode PinnedSolve(KSP ksp, Vec b, Vec x, Vec xstar, PetscReal scale, const char *when, PetscBool *ok)
{
  Vec       expected;
  PetscReal err, norm, bnorm;
  PetscInt  its;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(xstar, &expected));
  PetscCall(VecAXPBY(expected, scale, 0.0, xstar));
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_FALSE));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(VecAXPY(x, -1.0, expected));
  PetscCall(VecNorm(x, NORM_2, &err));
  PetscCall(VecNorm(expected, NORM_2, &norm));
  CHECK(err <= 1e-6 * norm, "%s: |x - %g x*| / |%g x*| = %.2e", when, (double)scale, (double)scale, (double)(err / norm));
  PetscCall(VecCopy(expected, x));
  PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_TRUE));
  /* from a nonzero guess the relative test is against the guess's own
     residual: an absolute one stops the exact guess at iteration 0 */
  PetscCall(VecNorm(b, NORM_2, &bnorm));
  PetscCall(KSPSetTolerances(ksp, 1e-10, 1e-9 * bnorm, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPSetTolerances(ksp, 1e-10, 1e-50, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  CHECK(its == 0, "%s: %" PetscInt_FMT " iterations from the exact solution as the guess", when, its);
  PetscCall(VecAXPY(x, -1.0, expected));
  PetscCall(VecNorm(x, NORM_2, &err));
  CHECK(err <= 1e-12 * norm, "%s: the exact guess came back as |x - %g x*| / |%g x*| = %.2e", when, (double)scale, (double)scale, (double)(err / norm));
  PetscCall(VecDestroy(&expected));
  PetscFunctionReturn(0);
}

/* whether -ksp_view says b and x crossed straight from and to their arrays
   (rank 0's view, which is the one printed) */
static PetscErrorCode PinnedSaid(KSP ksp, const char *when, PetscBool *ok)
{
  char       *text = NULL;
  size_t      len  = 0;
  FILE       *stream;
  PetscViewer viewer;
  PetscMPIInt said[2] = {0, 0}, rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)ksp), &rank));
  stream = open_memstream(&text, &len);
  PetscCheck(stream, PETSC_COMM_SELF, PETSC_ERR_SYS, "open_memstream() failed");
  PetscCall(PetscViewerASCIIOpenWithFILE(PetscObjectComm((PetscObject)ksp), stream, &viewer));
  PetscCall(KSPView(ksp, viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscCheck(fclose(stream) == 0, PETSC_COMM_SELF, PETSC_ERR_SYS, "fclose() of the view's stream failed");
  if (rank == 0) {
    said[0] = strstr(text, "backend: CUDA") != NULL;
    said[1] = strstr(text, "b straight from and to their arrays") && strstr(text, "x straight from and to their arrays");
  }
  free(text);
  PetscCallMPI(MPI_Bcast(said, 2, MPI_INT, 0, PetscObjectComm((PetscObject)ksp)));
  CHECK(said[0], "%s: not on the CUDA backend", when);
  CHECK(said[1], "%s: b and x not both pinned in place", when);
  PetscFunctionReturn(0);
}

/* A new host vector (VECSTANDARD) of v's layout, whatever v's type */
static PetscErrorCode HostVecLike(Vec v, Vec *h)
{
  PetscInt nlocal;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &nlocal));
  PetscCall(VecCreate(PetscObjectComm((PetscObject)v), h));
  PetscCall(VecSetSizes(*h, nlocal, PETSC_DETERMINE));
  PetscCall(VecSetType(*h, VECSTANDARD));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestPinned(Mat A, Vec xstar, PetscBool *ok)
{
  KSP          ksp;
  Vec          b, x, dup;
  PetscScalar *arr;
  PetscInt     nlocal;
  PetscReal    scale;

  PetscFunctionBegin;
  /* host vectors, whatever the matrix's own would be */
  PetscCall(VecGetLocalSize(xstar, &nlocal));
  PetscCall(HostVecLike(xstar, &b));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(MatMult(A, xstar, b));
  PetscCall(MakeKSP(A, fused, &ksp));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 20000));
  for (PetscInt k = 0; k < 3; k++) PetscCall(PinnedSolve(ksp, b, x, xstar, 1.0, "the same vectors", ok));
  PetscCall(PinnedSaid(ksp, "after three rounds with the same vectors", ok));
  PetscCall(VecScale(b, 2.0)); /* new values in the pinned array */
  PetscCall(PinnedSolve(ksp, b, x, xstar, 2.0, "b's pinned array scaled on the host", ok));
  for (scale = 3.0; scale <= 4.0; scale += 1.0) {
    /* an array placed and pinned, given back and freed; the next one
       likely gets its address, where a registration left behind would read
       the freed array's pages */
    PetscCall(PetscMalloc1(nlocal, &arr));
    PetscCall(VecPlaceArray(b, arr));
    PetscCall(MatMult(A, xstar, b));
    PetscCall(VecScale(b, scale));
    for (PetscInt k = 0; k < 3; k++) PetscCall(PinnedSolve(ksp, b, x, xstar, scale, "a placed array", ok));
    PetscCall(PinnedSaid(ksp, "a placed array", ok));
    PetscCall(VecResetArray(b));
    PetscCall(PetscFree(arr));
  }
  PetscCall(PinnedSolve(ksp, b, x, xstar, 2.0, "b's own array back", ok));
  PetscCall(PetscMalloc1(nlocal, &arr));
  PetscCall(VecReplaceArray(b, arr)); /* b's pinned array freed */
  PetscCall(MatMult(A, xstar, b));
  PetscCall(VecScale(b, 5.0));
  for (PetscInt k = 0; k < 3; k++) PetscCall(PinnedSolve(ksp, b, x, xstar, 5.0, "a replaced array", ok));
  PetscCall(PinnedSaid(ksp, "a replaced array", ok));
  PetscCall(VecDuplicate(b, &dup)); /* a duplicate of a pinned vector is a vector of its own */
  PetscCall(VecAXPBY(dup, 6.0 / 5.0, 0.0, b));
  for (PetscInt k = 0; k < 3; k++) PetscCall(PinnedSolve(ksp, dup, x, xstar, 6.0, "a duplicate of b", ok));
  PetscCall(VecDestroy(&dup));
  PetscCall(PinnedSolve(ksp, b, x, xstar, 5.0, "b after its duplicate was destroyed", ok));
  PetscCall(VecDestroy(&x)); /* the pinned x destroyed; a new one likely where it was */
  PetscCall(VecDuplicate(b, &x));
  for (PetscInt k = 0; k < 3; k++) PetscCall(PinnedSolve(ksp, b, x, xstar, 5.0, "x made again", ok));
  PetscCall(PinnedSaid(ksp, "x made again", ok));
  {
    /* b and x from one group of VecDuplicateVecs(), which may share one
       allocation that its first vector frees (PETSc's GEMV variant):
       destroyed first, while the others are pinned */
    Vec *group;

    PetscCall(VecDuplicateVecs(xstar, 3, &group));
    PetscCall(VecCopy(b, group[1]));
    for (PetscInt k = 0; k < 3; k++) PetscCall(PinnedSolve(ksp, group[1], group[2], xstar, 5.0, "b and x of one group", ok));
    PetscCall(VecDestroyVecs(3, &group));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  pinned: %s\n", *ok ? "every solve right, b and x pinned where expected" : "failed"));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestZeroRHS(Mat A, Vec b, PetscBool *ok)
{
  KSP                ksp;
  Vec                x, z;
  PetscReal          xn;
  PetscInt           its;
  KSPConvergedReason reason;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecDuplicate(b, &z));
  PetscCall(VecSet(z, 0.0));
  PetscCall(MakeKSP(A, fused, &ksp));
  PetscCall(KSPSolve(ksp, z, x));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(VecNorm(x, NORM_2, &xn));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  zerorhs: its %" PetscInt_FMT ", reason %s, |x| %.2e\n", its, KSPConvergedReasons[reason], (double)xn));
  CHECK(reason > 0 && its == 0 && xn == 0.0, "b = 0 must converge at once to x = 0");
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&z));
  PetscFunctionReturn(0);
}

/* Small systems on which each method must break down:
   cg:    indefinite diag(1,-1,...)             -> DIVERGED_INDEFINITE_MAT
   bcgs:  [[0,1],[1,0]] b = e1: <A r0, r0> = 0   -> DIVERGED_BREAKDOWN
   gmres: diag(0,1,...) b = e1: A r0 = 0         -> DIVERGED_BREAKDOWN */
static PetscErrorCode TestBreakdown(PetscBool *ok)
{
  Mat                A;
  Vec                b, x;
  KSP                ksp;
  PC                 pc;
  PetscInt           N = 4, rstart, rend, i;
  KSPConvergedReason reason, expect;
  PetscMPIInt        size;
  const PetscReal   *hist;
  PetscInt           nhist;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  N = PetscMax(4, 2 * size);
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, N, N, 2, NULL, 2, NULL, &A));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (i = rstart; i < rend; i++) {
    if (!strcmp(method, "cg")) PetscCall(MatSetValue(A, i, i, i % 2 ? -1.0 : 1.0, INSERT_VALUES));
    else if (!strcmp(method, "bcgs")) PetscCall(MatSetValue(A, i, i ^ 1, 1.0, INSERT_VALUES));
    else PetscCall(MatSetValue(A, i, i, i == 0 ? 0.0 : 1.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSet(b, 0.0));
  if (!strcmp(method, "cg")) PetscCall(VecSet(b, 1.0));
  else PetscCall(VecSetValue(b, 0, 1.0, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(b));
  PetscCall(VecAssemblyEnd(b));
  PetscCall(MakeKSP(A, fused, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCNONE));
  PetscCall(KSPSetResidualHistory(ksp, NULL, PETSC_DECIDE, PETSC_TRUE));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(KSPGetResidualHistory(ksp, &hist, &nhist));
  expect = !strcmp(method, "cg") ? KSP_DIVERGED_INDEFINITE_MAT : KSP_DIVERGED_BREAKDOWN;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  breakdown: reason %s (expected %s), %" PetscInt_FMT " norms recorded\n", KSPConvergedReasons[reason], KSPConvergedReasons[expect], nhist));
  CHECK(reason == expect, "reason %s, expected %s", KSPConvergedReasons[reason], KSPConvergedReasons[expect]);
  /* a breakdown in the first step still leaves iteration 0 seen, monitored and recorded */
  CHECK(nhist >= 1 && hist[0] > 0.0, "the initial residual norm is missing from the history (%" PetscInt_FMT " norms)", nhist);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* diag(1, 2, ..., N-1, -1/2), b = 1: <p,Ap> stays positive for a few
   iterations and then changes sign; the device loop (whose first test is made
   on the device) must stop where PETSc's cg does, with its verdict. */
static PetscErrorCode TestIndefinite(PetscBool *ok)
{
  Mat                A;
  Vec                b, x;
  KSP                kb, kf;
  PC                 pc;
  PetscInt           N = 30, rstart, rend, i, itsb, itsf;
  KSPConvergedReason rb, rf;

  PetscFunctionBegin;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, N, N, 1, NULL, 0, NULL, &A));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (i = rstart; i < rend; i++) PetscCall(MatSetValue(A, i, i, i < N - 1 ? (PetscScalar)(i + 1) : -0.5, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(MakeKSP(A, method, &kb));
  PetscCall(MakeKSP(A, fused, &kf));
  PetscCall(KSPGetPC(kb, &pc));
  PetscCall(PCSetType(pc, PCNONE));
  PetscCall(KSPGetPC(kf, &pc));
  PetscCall(PCSetType(pc, PCNONE));
  PetscCall(KSPSolve(kb, b, x));
  PetscCall(KSPSolve(kf, b, x));
  PetscCall(KSPGetConvergedReason(kb, &rb));
  PetscCall(KSPGetConvergedReason(kf, &rf));
  PetscCall(KSPGetIterationNumber(kb, &itsb));
  PetscCall(KSPGetIterationNumber(kf, &itsf));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  indefinite: %s %s at iteration %" PetscInt_FMT ", %s %s at %" PetscInt_FMT "\n", method, KSPConvergedReasons[rb], itsb, fused, KSPConvergedReasons[rf], itsf));
  CHECK(rb == KSP_DIVERGED_INDEFINITE_MAT && itsb > 0, "the baseline should find the matrix indefinite after some iterations (the test's premise)");
  CHECK(rf == rb && itsf == itsb, "%s: %s at iteration %" PetscInt_FMT ", expected %s at %" PetscInt_FMT, fused, KSPConvergedReasons[rf], itsf, KSPConvergedReasons[rb], itsb);
  PetscCall(KSPDestroy(&kb));
  PetscCall(KSPDestroy(&kf));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestNaN(Mat A, Vec b, PetscBool *ok)
{
  KSP                ksp;
  Vec                x, bn;
  KSPConvergedReason reason;
  PetscInt           rstart;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecDuplicate(b, &bn));
  PetscCall(VecCopy(b, bn));
  PetscCall(VecGetOwnershipRange(bn, &rstart, NULL));
  PetscCall(VecSetValue(bn, 0, PETSC_MAX_REAL * 10.0 - PETSC_MAX_REAL * 10.0, INSERT_VALUES)); /* NaN */
  PetscCall(VecAssemblyBegin(bn));
  PetscCall(VecAssemblyEnd(bn));
  PetscCall(MakeKSP(A, fused, &ksp));
  PetscCall(KSPSolve(ksp, bn, x));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  nan: reason %s\n", KSPConvergedReasons[reason]));
  CHECK(reason == KSP_DIVERGED_NANORINF, "a NaN in b gave %s, expected DIVERGED_NANORINF", KSPConvergedReasons[reason]);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&bn));
  PetscFunctionReturn(0);
}

/* v's values in a new host vector of v's layout (HostVecLike()): PETSc's
   vector operations do not mix a CUDA vector with a host one */
static PetscErrorCode HostCopy(Vec v, Vec *h)
{
  const PetscScalar *from;
  PetscScalar       *to;
  PetscInt           nlocal;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &nlocal));
  PetscCall(HostVecLike(v, h));
  PetscCall(VecGetArrayRead(v, &from));
  PetscCall(VecGetArrayWrite(*h, &to));
  PetscCall(PetscArraycpy(to, from, nlocal));
  PetscCall(VecRestoreArrayWrite(*h, &to));
  PetscCall(VecRestoreArrayRead(v, &from));
  PetscFunctionReturn(0);
}

/* A zero guess reads nothing of x (PETSc's KSPSetInitialGuessNonzero()
   default): x is full of NaN before each of three solves, with the
   matrix's own vectors (VECCUDA under aijcusparse) and with host vectors,
   and every solve converges to x*. The CUDA backend does not send such an
   x to the device at all, and must not take the x left there by the last
   solve for a guess either. */
static PetscErrorCode TestZeroGuess(Mat A, Vec xstar_native, PetscBool *ok)
{
  PetscFunctionBegin;
  for (PetscInt kind = 0; kind < 2; kind++) {
    const char        *which = kind ? "host vectors" : "the matrix's vectors";
    KSP                ksp;
    Vec                b, x, xstar;
    KSPConvergedReason reason;
    PetscReal          err, norm;
    PetscInt           its, its0 = -1;

    PetscCall(MatCreateVecs(A, NULL, &b));
    PetscCall(MatMult(A, xstar_native, b));
    if (kind) {
      Vec native = b;

      PetscCall(HostCopy(native, &b));
      PetscCall(VecDestroy(&native));
      PetscCall(HostCopy(xstar_native, &xstar));
    } else {
      PetscCall(PetscObjectReference((PetscObject)xstar_native));
      xstar = xstar_native;
    }
    PetscCall(VecDuplicate(b, &x));
    PetscCall(VecNorm(xstar, NORM_2, &norm));
    PetscCall(MakeKSP(A, fused, &ksp));
    for (PetscInt k = 0; k < 3; k++) {
      PetscCall(VecSet(x, PETSC_MAX_REAL * 10.0 - PETSC_MAX_REAL * 10.0)); /* NaN */
      PetscCall(KSPSolve(ksp, b, x));
      PetscCall(KSPGetConvergedReason(ksp, &reason));
      PetscCall(KSPGetIterationNumber(ksp, &its));
      CHECK(reason > 0, "%s, solve %" PetscInt_FMT ": a zero guess over x full of NaN gave %s", which, k, KSPConvergedReasons[reason]);
      /* the same b from zero each time: the same iterations; fewer would
         mean the last solve's x on the device served as a guess */
      if (k == 0) its0 = its;
      CHECK(its == its0, "%s, solve %" PetscInt_FMT ": %" PetscInt_FMT " iterations from a zero guess, the first solve took %" PetscInt_FMT, which, k, its, its0);
      PetscCall(VecAXPY(x, -1.0, xstar));
      PetscCall(VecNorm(x, NORM_2, &err));
      CHECK(err <= 1e-6 * norm, "%s, solve %" PetscInt_FMT ": |x - x*| / |x*| = %.2e from a zero guess over x full of NaN", which, k, (double)(err / norm));
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  zeroguess, %s: %s\n", which, *ok ? "three solves right from x full of NaN" : "failed"));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&xstar));
  }
  PetscFunctionReturn(0);
}

/* A solve that -ksp_max_it stops: the same x and last norm on the backend
   the options choose and on the reference backend. pgmresfused tests the
   residual of the x it returns at the last iteration (the start after the
   last cycle), which the device may make itself. */
static PetscErrorCode TestMaxIt(Mat A, Vec b, PetscBool *ok)
{
  KSP              kf, kr;
  Vec              xf, xr, r, z;
  PC               pc;
  const PetscReal *hf, *hr;
  PetscInt         nf, nr, itsf, itsr, dits, maxit = 45;
  PetscReal        dx, xnorm, znorm;
  KSPConvergedReason reasonf, reasonr;
  KSPFusedBackend  used;
  PetscMPIInt      size;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-maxit", &maxit, NULL));
  PetscCall(VecDuplicate(b, &xf));
  PetscCall(VecDuplicate(b, &xr));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(VecDuplicate(b, &z));
  PetscCall(MakeKSP(A, fused, &kf));
  PetscCall(MakeKSP(A, fused, &kr));
  PetscCall(KSPFusedSetBackend(kr, KSP_FUSED_BACKEND_REFERENCE));
  /* a tolerance no solve reaches in maxit iterations */
  PetscCall(KSPSetTolerances(kf, 1e-30, 1e-300, PETSC_DEFAULT, maxit));
  PetscCall(KSPSetTolerances(kr, 1e-30, 1e-300, PETSC_DEFAULT, maxit));
  PetscCall(KSPSetResidualHistory(kf, NULL, PETSC_DECIDE, PETSC_TRUE));
  PetscCall(KSPSetResidualHistory(kr, NULL, PETSC_DECIDE, PETSC_TRUE));
  PetscCall(KSPSolve(kf, b, xf));
  PetscCall(KSPSolve(kr, b, xr));
  PetscCall(KSPGetIterationNumber(kf, &itsf));
  PetscCall(KSPGetIterationNumber(kr, &itsr));
  PetscCall(KSPGetConvergedReason(kf, &reasonf));
  PetscCall(KSPGetConvergedReason(kr, &reasonr));
  PetscCall(KSPGetResidualHistory(kf, &hf, &nf));
  PetscCall(KSPGetResidualHistory(kr, &hr, &nr));
  PetscCall(KSPFusedGetBackendUsed(kf, &used));
  PetscCall(KSPFusedGetDeviceIterations(kf, &dits));
  PetscCall(VecNorm(xr, NORM_2, &xnorm));
  PetscCall(VecAXPY(xr, -1.0, xf));
  PetscCall(VecNorm(xr, NORM_2, &dx));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  maxit: %s on the %s backend: %" PetscInt_FMT " iterations (%" PetscInt_FMT " in the device loop), %s, last norm %.12e; reference: %" PetscInt_FMT ", %s, %.12e; |x - x_ref| / |x_ref| %.3e\n", fused, KSPFusedBackends[used], itsf, dits, KSPConvergedReasons[reasonf], nf ? (double)hf[nf - 1] : -1.0, itsr, KSPConvergedReasons[reasonr], nr ? (double)hr[nr - 1] : -1.0, (double)(dx / xnorm)));
  CHECK(itsf == maxit && itsr == maxit, "iterations %" PetscInt_FMT " and %" PetscInt_FMT " (reference), expected -ksp_max_it %" PetscInt_FMT, itsf, itsr, maxit);
  CHECK(reasonf == KSP_DIVERGED_ITS && reasonr == KSP_DIVERGED_ITS, "reasons %s and %s (reference), expected DIVERGED_ITS", KSPConvergedReasons[reasonf], KSPConvergedReasons[reasonr]);
  CHECK(nf == itsf + 1, "%" PetscInt_FMT " norms recorded for %" PetscInt_FMT " iterations, expected one per iteration plus the initial", nf, itsf);
  CHECK(dx <= 1e-8 * xnorm, "x differs from the reference backend's by %.3e relative", (double)(dx / xnorm));
  if (nf && nr) CHECK(PetscAbsReal(hf[nf - 1] - hr[nr - 1]) <= 1e-8 * hr[nr - 1], "last norm %.12e against the reference backend's %.12e", (double)hf[nf - 1], (double)hr[nr - 1]);
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  /* the device loop runs on one rank (on several, each synchronization is an MPI_Allreduce) */
  if (used == KSP_FUSED_BACKEND_CUDA && size == 1) CHECK(dits > 0, "no iteration in the device loop");
  if (!strcmp(method, "gmres") && nf) {
    /* the last norm is |B (b - A x)| of the returned x (left Jacobi or none) */
    PetscCall(MatMult(A, xf, r));
    PetscCall(VecAYPX(r, -1.0, b));
    PetscCall(KSPGetPC(kf, &pc));
    PetscCall(PCApply(pc, r, z));
    PetscCall(VecNorm(z, NORM_2, &znorm));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  maxit: |B (b - A x)| of the returned x %.12e\n", (double)znorm));
    CHECK(PetscAbsReal(hf[nf - 1] - znorm) <= 1e-10 * znorm, "last norm %.12e, but x's preconditioned residual is %.12e", (double)hf[nf - 1], (double)znorm);
  }
  PetscCall(KSPDestroy(&kf));
  PetscCall(KSPDestroy(&kr));
  PetscCall(VecDestroy(&xf));
  PetscCall(VecDestroy(&xr));
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&z));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char        test[32] = "history";
  ProblemType problem  = PROBLEM_LAP2D;
  PetscInt    n        = 24;
  PetscBool   ok       = PETSC_TRUE;
  Mat         A;
  Vec         xstar, b;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscFusedInitializePackage());
  PetscCall(ProblemIgnoreKSPType("semantics", "each test names its methods"));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-method", method, sizeof(method), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-test", test, sizeof(test), NULL));
  PetscCall(PetscOptionsGetEnum(NULL, NULL, "-problem", ProblemTypes, (PetscEnum *)&problem, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscSNPrintf(fused, sizeof(fused), "p%sfused", method));
  PetscCall(ProblemCreate(PETSC_COMM_WORLD, problem, n, &A));
  PetscCall(ProblemExactSolution(A, &xstar, &b));

  if (!strcmp(test, "history")) PetscCall(TestHistory(A, b, &ok));
  else if (!strcmp(test, "usertest")) PetscCall(TestUserTest(A, b, &ok));
  else if (!strcmp(test, "nullspace")) PetscCall(TestNullSpace(n, &ok));
  else if (!strcmp(test, "buildsol")) PetscCall(TestBuildSolution(A, b, &ok));
  else if (!strcmp(test, "notconverged")) PetscCall(TestNotConverged(A, b, &ok));
  else if (!strcmp(test, "resolve")) PetscCall(TestResolve(A, b, xstar, &ok));
  else if (!strcmp(test, "zerorhs")) PetscCall(TestZeroRHS(A, b, &ok));
  else if (!strcmp(test, "breakdown")) PetscCall(TestBreakdown(&ok));
  else if (!strcmp(test, "nan")) PetscCall(TestNaN(A, b, &ok));
  else if (!strcmp(test, "indefinite") && !strcmp(method, "cg")) PetscCall(TestIndefinite(&ok));
  else if (!strcmp(test, "errorhistory")) PetscCall(TestErrorHistory(A, b, &ok));
  else if (!strcmp(test, "maxit")) PetscCall(TestMaxIt(A, b, &ok));
  else if (!strcmp(test, "pinned")) PetscCall(TestPinned(A, xstar, &ok));
  else if (!strcmp(test, "zeroguess")) PetscCall(TestZeroGuess(A, xstar, &ok));
  else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "unknown -test %s", test);

  PetscCall(MatDestroy(&A));
  PetscCall(VecDestroy(&xstar));
  PetscCall(VecDestroy(&b));
  PetscCall(PetscFinalize());
  return ok ? 0 : 1;
}
