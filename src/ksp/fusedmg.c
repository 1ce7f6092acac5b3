/* PETSc's multigrid preconditioners (PCMG and the PCs built on it: PCGAMG)
   applied by petsc-fused's own V-cycle on the device (src/cuda/mgcycle.cu),
   in place of PCApply() between the fused steps. PETSc keeps building the
   hierarchy; this file reads it: each level's operator, interpolation and
   restriction go to the device, each smoother is found as a polynomial in the
   Jacobi-preconditioned operator by applying it once to a probe vector, and
   the coarsest solve as a dense matrix by applying it to the unit vectors.
   The V-cycle built so is checked against PETSc's PCApply() on a probe
   vector before it is used; whatever it cannot reproduce stays with
   PCApply(), and -ksp_view says why. */
#include "ksp/fusedimpl.h"
#include <petsc/private/pcimpl.h> /* whether the PC is set up (its hierarchy exists) */

/* What the hierarchy is made of now: the PC, and each level's smoother,
   operator, interpolation and restriction, with their states */
static PetscErrorCode FusedMGKey(KSP ksp, KSPFused *fused, PetscInt nlevels, PetscInt64 *key)
{
  PC pc = ksp->pc;

  PetscFunctionBegin;
  *key = (PetscInt64)1469598103934665603ULL;
  PetscCall(KSPFusedKeyAddObject(key, (PetscObject)pc));
  KSPFusedKeyAdd(key, (PetscInt64)nlevels);
  KSPFusedKeyAdd(key, (PetscInt64)(size_t)fused->op.mat); /* the finest level may use the solver's device copy */
  for (PetscInt l = 0; l < nlevels; l++) {
    KSP smooth;
    Mat A;

    PetscCall(PCMGGetSmoother(pc, l, &smooth));
    PetscCall(KSPFusedKeyAddObject(key, (PetscObject)smooth));
    PetscCall(KSPGetOperators(smooth, &A, NULL));
    PetscCall(KSPFusedKeyAddObject(key, (PetscObject)A));
    if (l > 0) {
      Mat P, R;

      PetscCall(PCMGGetInterpolation(pc, l, &P));
      PetscCall(PCMGGetRestriction(pc, l, &R));
      PetscCall(KSPFusedKeyAddObject(key, (PetscObject)P));
      PetscCall(KSPFusedKeyAddObject(key, (PetscObject)R));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode KSPFusedMGReset(KSPFused *fused)
{
  KSPFusedMG *mg = &fused->mg;

  PetscFunctionBegin;
  PetscCallFusedCUDA(FusedDevMGDestroy(&mg->dev));
  for (PetscInt k = 0; k < 3 * mg->nlevels; k++) PetscCall(FusedDeviceOperatorRelease(&mg->ops[k]));
  PetscCall(PetscFree(mg->ops));
  mg->nlevels = 0;
  mg->active  = PETSC_FALSE;
  mg->key     = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* M (or its transpose) to the device as an rows x cols operator in CSR (a
   square one in format); *why set where M is not a sequential AIJ matrix */
static PetscErrorCode FusedMGMatToDevice(KSPFused *fused, Mat M, PetscInt rows, PetscInt cols, PetscInt format, FusedDeviceOperator *op, const char *what, char *why, size_t whylen)
{
  Mat            use = M, T = NULL;
  PetscInt       m, n, nr;
  PetscBool      isaij, done;
  FusedDeviceCSR csr;
  PetscErrorCode err;
  PetscLayout    cmap;

  PetscFunctionBegin;
  PetscCall(MatGetSize(M, &m, &n));
  if (m == cols && n == rows && m != n) {
    PetscCall(MatTranspose(M, MAT_INITIAL_MATRIX, &T));
    use = T;
  } else if (m != rows || n != cols) {
    PetscCall(PetscSNPrintf(why, whylen, "the %s is %" PetscInt_FMT " x %" PetscInt_FMT " between levels of %" PetscInt_FMT " and %" PetscInt_FMT " rows", what, m, n, rows, cols));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscObjectTypeCompareAny((PetscObject)use, &isaij, MATSEQAIJ, "seqaijcusparse", ""));
  if (!isaij) {
    PetscCall(PetscSNPrintf(why, whylen, "the %s is %s, not a sequential AIJ matrix", what, ((PetscObject)use)->type_name));
    PetscCall(MatDestroy(&T));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscMemzero(&csr, sizeof(csr)));
  PetscCall(MatGetRowIJ(use, 0, PETSC_FALSE, PETSC_FALSE, &nr, &csr.ia, &csr.ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "cannot get the CSR arrays of the multigrid %s", what);
  csr.n = nr;
  PetscCall(MatSeqAIJGetArrayRead(use, &csr.va));
  PetscCall(MatGetLayouts(use, NULL, &cmap));
  err = FusedDeviceOperatorCreate(fused->device, &csr, rows == cols ? format : FUSED_FORMAT_CSR, cmap, FUSED_HALO_AUTO, op);
  PetscCall(MatSeqAIJRestoreArrayRead(use, &csr.va));
  PetscCall(MatRestoreRowIJ(use, 0, PETSC_FALSE, PETSC_FALSE, &nr, &csr.ia, &csr.ja, &done));
  PetscCall(MatDestroy(&T));
  PetscCall(err);
  if (rows != cols) PetscCallFusedCUDA(FusedDevMatSetColumns(op->mat, (int)cols));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Solves G c = g (m x m, G symmetric positive definite in exact arithmetic)
   by Gaussian elimination with partial pivoting */
static PetscBool FusedMGSolveSmall(PetscInt m, PetscReal G[], PetscReal g[], PetscReal c[])
{
  for (PetscInt k = 0; k < m; k++) {
    PetscInt p = k;
    for (PetscInt i = k + 1; i < m; i++)
      if (PetscAbsReal(G[i * m + k]) > PetscAbsReal(G[p * m + k])) p = i;
    if (G[p * m + k] == 0.0) return PETSC_FALSE;
    for (PetscInt j = 0; j < m; j++) {
      const PetscReal t = G[k * m + j];
      G[k * m + j]      = G[p * m + j];
      G[p * m + j]      = t;
    }
    {
      const PetscReal t = g[k];
      g[k]              = g[p];
      g[p]              = t;
    }
    for (PetscInt i = k + 1; i < m; i++) {
      const PetscReal f = G[i * m + k] / G[k * m + k];
      for (PetscInt j = k; j < m; j++) G[i * m + j] -= f * G[k * m + j];
      g[i] -= f * g[k];
    }
  }
  for (PetscInt k = m - 1; k >= 0; k--) {
    PetscReal s = g[k];
    for (PetscInt j = k + 1; j < m; j++) s -= G[k * m + j] * c[j];
    c[k] = s / G[k * m + k];
  }
  return PETSC_TRUE;
}

/* The smoother of level l as x = x0 + sum_j coef[j] (BA)^j B (b - A x0):
   its Jacobi (or no) PC's B = dinv, and coef from one application to a
   probe vector z from x = 0, least squares over the Krylov vectors
   (BA)^j B z; *why set where the smoother is not such a polynomial */
/* Whether level l's smoother can be a polynomial in its preconditioned
   operator: Chebyshev or Richardson, with Jacobi or no PC, a fixed number of
   steps; else *why */
static PetscErrorCode FusedMGCheckSmoother(KSP smooth, PetscInt l, char *why, size_t whylen)
{
  PetscBool   poly, diag;
  KSPNormType normtype;
  PetscInt    maxit;
  PC          spc;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)smooth, &poly, KSPCHEBYSHEV, KSPRICHARDSON, ""));
  PetscCall(KSPGetPC(smooth, &spc));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)spc, &diag, PCJACOBI, PCNONE, ""));
  PetscCall(KSPGetNormType(smooth, &normtype));
  PetscCall(KSPGetTolerances(smooth, NULL, NULL, NULL, &maxit));
  if (!poly || !diag) PetscCall(PetscSNPrintf(why, whylen, "the smoother on level %" PetscInt_FMT " is %s with %s; the device V-cycle smooths with chebyshev or richardson and jacobi or none", l, ((PetscObject)smooth)->type_name, ((PetscObject)spc)->type_name));
  else if (normtype != KSP_NORM_NONE) PetscCall(PetscSNPrintf(why, whylen, "the smoother on level %" PetscInt_FMT " tests convergence (norm type %s), so its steps vary", l, KSPNormTypes[normtype]));
  else if (maxit > FUSED_MG_MAX_DEGREE) PetscCall(PetscSNPrintf(why, whylen, "the smoother on level %" PetscInt_FMT " takes %" PetscInt_FMT " steps; the device V-cycle takes at most %d", l, maxit, FUSED_MG_MAX_DEGREE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FusedMGProbeSmoother(KSP smooth, PetscInt l, Mat A, Vec dinv, PetscInt *m, PetscReal coef[], char *why, size_t whylen)
{
  PetscInt    maxit;
  PC          spc;
  Vec         z, y, t, *v;
  PetscReal   G[FUSED_MG_MAX_DEGREE * FUSED_MG_MAX_DEGREE], g[FUSED_MG_MAX_DEGREE], ynorm, rnorm;
  PetscScalar dots[FUSED_MG_MAX_DEGREE];

  PetscFunctionBegin;
  PetscCall(FusedMGCheckSmoother(smooth, l, why, whylen));
  if (why[0]) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPGetPC(smooth, &spc));
  PetscCall(KSPGetTolerances(smooth, NULL, NULL, NULL, &maxit));
  *m = maxit;
  PetscCall(MatCreateVecs(A, &z, &y));
  PetscCall(VecSet(z, 1.0));
  PetscCall(PCApply(spc, z, dinv)); /* a diagonal PC's action on ones: its inverse diagonal */
  if (maxit == 0) {
    PetscCall(VecDestroy(&z));
    PetscCall(VecDestroy(&y));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(KSPFusedFillProbe(z, l));
  PetscCall(VecSet(y, 0.0));
  PetscCall(KSPSolve(smooth, z, y));
  PetscCall(VecDuplicate(z, &t));
  PetscCall(VecDuplicateVecs(z, maxit, &v));
  PetscCall(VecPointwiseMult(v[0], dinv, z));
  for (PetscInt j = 1; j < maxit; j++) {
    PetscCall(MatMult(A, v[j - 1], t));
    PetscCall(VecPointwiseMult(v[j], dinv, t));
  }
  for (PetscInt j = 0; j < maxit; j++) {
    PetscCall(VecMDot(v[j], maxit, v, dots));
    for (PetscInt k = 0; k < maxit; k++) G[j * maxit + k] = PetscRealPart(dots[k]);
    PetscCall(VecDot(y, v[j], &dots[0]));
    g[j] = PetscRealPart(dots[0]);
  }
  if (!FusedMGSolveSmall(maxit, G, g, coef)) PetscCall(PetscSNPrintf(why, whylen, "the smoother on level %" PetscInt_FMT ": its Krylov vectors are dependent on the probe vector", l));
  else {
    /* what the polynomial leaves of the smoother's own result */
    PetscCall(VecNorm(y, NORM_2, &ynorm));
    PetscCall(VecCopy(y, t));
    for (PetscInt j = 0; j < maxit; j++) PetscCall(VecAXPY(t, -coef[j], v[j]));
    PetscCall(VecNorm(t, NORM_2, &rnorm));
    if (!(rnorm <= FUSED_MG_PROBE_TOL * ynorm)) PetscCall(PetscSNPrintf(why, whylen, "the smoother on level %" PetscInt_FMT " is not a polynomial of degree %" PetscInt_FMT " in its preconditioned operator (the closest one leaves %g of its result)", l, maxit - 1, (double)(ynorm > 0 ? rnorm / ynorm : rnorm)));
  }
  PetscCall(VecDestroyVecs(maxit, &v));
  PetscCall(VecDestroy(&t));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The coarsest solve as a dense matrix, row by row: its columns are its
   results on the unit vectors; *why set where it is not a direct solve */
static PetscErrorCode FusedMGProbeCoarse(KSP coarse, Mat A, PetscInt n, PetscScalar dense[], char *why, size_t whylen)
{
  PetscBool          preonly;
  Vec                e, col;
  const PetscScalar *c;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)coarse, KSPPREONLY, &preonly));
  if (!preonly) {
    PetscCall(PetscSNPrintf(why, whylen, "the coarse solve is an iterative %s, not a direct solve (-mg_coarse_ksp_type preonly)", ((PetscObject)coarse)->type_name));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatCreateVecs(A, &col, &e));
  for (PetscInt j = 0; j < n; j++) {
    KSPConvergedReason reason;

    PetscCall(VecZeroEntries(e));
    PetscCall(VecSetValue(e, j, 1.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(e));
    PetscCall(VecAssemblyEnd(e));
    PetscCall(KSPSolve(coarse, e, col));
    PetscCall(KSPGetConvergedReason(coarse, &reason));
    if (reason < 0) {
      PetscCall(PetscSNPrintf(why, whylen, "the coarse solve failed on a unit vector (%s)", KSPConvergedReasons[reason]));
      break;
    }
    PetscCall(VecGetArrayRead(col, &c));
    for (PetscInt i = 0; i < n; i++) dense[i * n + j] = c[i];
    PetscCall(VecRestoreArrayRead(col, &c));
  }
  PetscCall(VecDestroy(&e));
  PetscCall(VecDestroy(&col));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The hierarchy of ksp's PC on the device, or *why */
static PetscErrorCode FusedMGBuild(KSP ksp, KSPFused *fused, PetscInt nlevels, char *why, size_t whylen)
{
  KSPFusedMG *mg = &fused->mg;
  PC          pc = ksp->pc;
  Mat         Aksp, A[FUSED_MG_MAX_LEVELS];
  int         n[FUSED_MG_MAX_LEVELS];
  PetscReal   coef[FUSED_MG_MAX_DEGREE];
  PetscInt    m = 0;
  Vec         dinv;
  char        smoothing[128] = "";

  PetscFunctionBegin;
  PetscCall(PCGetOperators(pc, &Aksp, NULL));
  for (PetscInt l = 0; l < nlevels; l++) {
    KSP      smooth;
    PetscInt rows, cols;

    PetscCall(PCMGGetSmoother(pc, l, &smooth));
    PetscCall(KSPGetOperators(smooth, &A[l], NULL));
    PetscCall(MatGetSize(A[l], &rows, &cols));
    n[l] = (int)rows;
    if (rows != cols) {
      PetscCall(PetscSNPrintf(why, whylen, "level %" PetscInt_FMT "'s operator is %" PetscInt_FMT " x %" PetscInt_FMT, l, rows, cols));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  if (n[0] > FUSED_MG_COARSE_MAX) {
    PetscCall(PetscSNPrintf(why, whylen, "the coarsest level has %d rows; the device V-cycle solves at most %d there, as a dense matrix (-pc_gamg_coarse_eq_limit)", n[0], FUSED_MG_COARSE_MAX));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscCalloc1(3 * nlevels, &mg->ops));
  mg->nlevels = nlevels;
  PetscCallFusedCUDA(FusedDevMGCreate((int)fused->device, (int)nlevels, n, &mg->dev));
  PetscCall(MatCreateVecs(A[nlevels - 1], &dinv, NULL));
  for (PetscInt l = nlevels - 1; l >= 1 && !why[0]; l--) {
    KSP                  smooth;
    Mat                  P, R;
    FusedDeviceOperator *opA = &mg->ops[3 * l], *opP = &mg->ops[3 * l + 1], *opR = &mg->ops[3 * l + 2];
    const PetscScalar   *d;
    PetscInt             ml = 0;

    PetscCall(PCMGGetSmoother(pc, l, &smooth));
    if (l < nlevels - 1) {
      PetscCall(VecDestroy(&dinv));
      PetscCall(MatCreateVecs(A[l], &dinv, NULL));
    }
    PetscCall(FusedMGProbeSmoother(smooth, l, A[l], dinv, &ml, coef, why, whylen));
    if (why[0]) break;
    if (l == nlevels - 1) m = ml;
    else if (ml != m) m = -1; /* said as "varies" */
    if (A[l] == Aksp && fused->op.mat && !fused->op.halo) {
      PetscCall(FusedDeviceOperatorBorrow(fused->device, fused->op.mat, fused->op.nnz, opA)); /* the solver's own copy */
    } else {
      PetscCall(FusedMGMatToDevice(fused, A[l], n[l], n[l], fused->format, opA, "level operator", why, whylen));
      if (why[0]) break;
    }
    PetscCall(PCMGGetInterpolation(pc, l, &P));
    PetscCall(FusedMGMatToDevice(fused, P, n[l], n[l - 1], FUSED_FORMAT_CSR, opP, "interpolation", why, whylen));
    if (why[0]) break;
    PetscCall(PCMGGetRestriction(pc, l, &R));
    PetscCall(FusedMGMatToDevice(fused, R, n[l - 1], n[l], FUSED_FORMAT_CSR, opR, "restriction", why, whylen));
    if (why[0]) break;
    PetscCall(VecGetArrayRead(dinv, &d));
    {
      double c[FUSED_MG_MAX_DEGREE];
      int    err;

      for (PetscInt j = 0; j < ml; j++) c[j] = (double)coef[j];
      err = FusedDevMGSetLevel(mg->dev, (int)l, opA->mat, d, (int)ml, c, opP->mat, opR->mat);
      PetscCall(VecRestoreArrayRead(dinv, &d));
      PetscCallFusedCUDA(err);
    }
  }
  PetscCall(VecDestroy(&dinv));
  if (!why[0]) {
    KSP          coarse;
    PetscScalar *dense;

    PetscCall(PCMGGetCoarseSolve(pc, &coarse));
    PetscCall(PetscMalloc1((size_t)n[0] * (size_t)n[0], &dense));
    PetscCall(FusedMGProbeCoarse(coarse, A[0], n[0], dense, why, whylen));
    if (!why[0]) {
      const int err = FusedDevMGSetCoarse(mg->dev, dense);
      PetscCall(PetscFree(dense));
      PetscCallFusedCUDA(err);
    } else PetscCall(PetscFree(dense));
  }
  if (!why[0]) {
    const char *type;

    PetscCall(PCGetType(pc, &type));
    if (m >= 0) PetscCall(PetscSNPrintf(smoothing, sizeof(smoothing), "%" PetscInt_FMT " smoothing step%s", m, m == 1 ? "" : "s"));
    else PetscCall(PetscSNPrintf(smoothing, sizeof(smoothing), "smoothing steps that vary by level"));
    PetscCall(PetscSNPrintf(mg->text, sizeof(mg->text), "on the device: PETSc's %s hierarchy (%" PetscInt_FMT " levels, %d to %d rows) in petsc-fused's own V-cycle: %s before and after, each a polynomial in the Jacobi-preconditioned operator and one kernel per product, the coarsest solve a dense %d x %d matrix; the rest of each iteration fused", type, nlevels, n[nlevels - 1], n[0], smoothing, n[0], n[0]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FusedMGApplyCycle(KSPFused *fused, const double *in, double *out)
{
  PetscFunctionBegin;
  PetscCallFusedCUDA(FusedDevMGApply(fused->mg.dev, fused->work.cuda, in, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Our V-cycle against PETSc's PCApply() on a probe vector; *why where they differ */
static PetscErrorCode FusedMGVerify(KSP ksp, KSPFused *fused, double *scratch_in, double *scratch_out, char *why, size_t whylen)
{
  PetscReal rel;

  PetscFunctionBegin;
  PetscCall(KSPFusedCompareWithPCApply(ksp, fused, FusedMGApplyCycle, scratch_in, scratch_out, &rel));
  if (!(rel <= FUSED_MG_VERIFY_TOL)) PetscCall(PetscSNPrintf(why, whylen, "its V-cycle and PETSc's PCApply() differ by %g (relative) on a probe vector: the cycle is not a plain V-cycle (a W-cycle, several cycles per application, distinct post-smoothers)", (double)rel));
  else PetscCall(PetscInfo(ksp, "The device V-cycle matches PETSc's PCApply() to %g (relative) on a probe vector\n", (double)rel));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What of the PC as a whole keeps it from our V-cycle (*why) */
static PetscErrorCode FusedMGCheckPC(KSP ksp, KSPFused *fused, PetscInt nlevels, char *why, size_t whylen)
{
  PC           pc = ksp->pc;
  PCMGType     type;
  PetscMPIInt  size;
  Mat          Amat;
  MatNullSpace nullsp;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)pc), &size));
  PetscCall(PCMGGetType(pc, &type));
  PetscCall(PCGetOperators(pc, &Amat, NULL));
  PetscCall(MatGetNullSpace(Amat, &nullsp));
  if (!fused->mg.enabled) PetscCall(PetscSNPrintf(why, whylen, "-ksp_fused_mg is off"));
  else if (size > 1) PetscCall(PetscSNPrintf(why, whylen, "it runs on one rank only"));
  else if (nlevels > FUSED_MG_MAX_LEVELS) PetscCall(PetscSNPrintf(why, whylen, "%" PetscInt_FMT " levels, more than %d", nlevels, FUSED_MG_MAX_LEVELS));
  else if (type != PC_MG_MULTIPLICATIVE) PetscCall(PetscSNPrintf(why, whylen, "the multigrid is %s, not multiplicative", PCMGTypes[type]));
  else if (nullsp && ksp->pc_side == PC_LEFT) PetscCall(PetscSNPrintf(why, whylen, "PETSc removes the operator's null space after each application"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether ksp's PC is a set-up PETSc multigrid whose parts our V-cycle
   takes, judged from their types and sizes alone (the build checks the
   rest: the smoothers' polynomials and the whole cycle against
   PCApply()). For a PETSc without CUDA, whose PCs cannot run on the
   device: only such a PC sends the solve there. */
PETSC_INTERN PetscErrorCode KSPFusedMGFits(KSP ksp, KSPFused *fused, PetscBool *fits)
{
  PC        pc = ksp->pc;
  PetscInt  nlevels = 0;
  char      why[384] = "";
  KSP       coarse;
  PetscBool preonly;

  PetscFunctionBegin;
  *fits = PETSC_FALSE;
  if (!pc->setupcalled) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PCMGGetLevels(pc, &nlevels));
  if (nlevels < 1) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(FusedMGCheckPC(ksp, fused, nlevels, why, sizeof(why)));
  for (PetscInt l = 0; l < nlevels && !why[0]; l++) {
    KSP       smooth;
    Mat       A;
    PetscBool isaij;

    PetscCall(PCMGGetSmoother(pc, l, &smooth));
    PetscCall(KSPGetOperators(smooth, &A, NULL));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &isaij, MATSEQAIJ, "seqaijcusparse", ""));
    if (!isaij) PetscCall(PetscSNPrintf(why, sizeof(why), "level %" PetscInt_FMT "'s operator is %s, not a sequential AIJ matrix", l, ((PetscObject)A)->type_name));
    else if (l > 0) {
      Mat P, R;

      PetscCall(FusedMGCheckSmoother(smooth, l, why, sizeof(why)));
      PetscCall(PCMGGetInterpolation(pc, l, &P));
      PetscCall(PCMGGetRestriction(pc, l, &R));
      for (PetscInt k = 0; k < 2 && !why[0]; k++) {
        Mat M = k ? R : P;

        PetscCall(PetscObjectTypeCompareAny((PetscObject)M, &isaij, MATSEQAIJ, "seqaijcusparse", ""));
        if (!isaij) PetscCall(PetscSNPrintf(why, sizeof(why), "level %" PetscInt_FMT "'s %s is %s, not a sequential AIJ matrix", l, k ? "restriction" : "interpolation", ((PetscObject)M)->type_name));
      }
    }
    else {
      PetscInt n;

      PetscCall(MatGetSize(A, &n, NULL));
      if (n > FUSED_MG_COARSE_MAX) PetscCall(PetscSNPrintf(why, sizeof(why), "the coarsest level has %" PetscInt_FMT " rows, more than %d", n, FUSED_MG_COARSE_MAX));
    }
  }
  if (!why[0]) {
    PetscCall(PCMGGetCoarseSolve(pc, &coarse));
    PetscCall(PetscObjectTypeCompare((PetscObject)coarse, KSPPREONLY, &preonly));
    if (!preonly) PetscCall(PetscSNPrintf(why, sizeof(why), "the coarse solve is an iterative %s", ((PetscObject)coarse)->type_name));
  }
  if (why[0]) PetscCall(PetscInfo(ksp, "PETSc's multigrid does not go to the device: %s\n", why));
  *fits = (PetscBool)!why[0];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Before a solve whose PC runs on the device through PCApply(): where that
   PC is a PETSc multigrid hierarchy, our V-cycle of it, built (and checked)
   where the hierarchy changed. scratch_in and scratch_out: two device
   vectors of the solver's work that are free until the system goes up. */
PETSC_INTERN PetscErrorCode KSPFusedMGPrepare(KSP ksp, KSPFused *fused, double *scratch_in, double *scratch_out)
{
  KSPFusedMG *mg = &fused->mg;
  PC          pc = ksp->pc;
  PetscInt    nlevels = 0;
  PetscInt64  key;
  char        why[384] = "";

  PetscFunctionBegin;
  mg->active = PETSC_FALSE;
  if (fused->pcplace != KSP_FUSED_PC_DEVICE || !pc->setupcalled || !ksp->vec_rhs) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PCMGGetLevels(pc, &nlevels));
  if (nlevels < 1) PetscFunctionReturn(PETSC_SUCCESS); /* not a multigrid PC */
  PetscCall(FusedMGCheckPC(ksp, fused, nlevels, why, sizeof(why)));
  if (!why[0]) {
    PetscCall(FusedMGKey(ksp, fused, nlevels, &key));
    if (key != mg->key) {
      PetscCall(KSPFusedMGReset(fused));
      mg->why[0] = 0;
      PetscCall(PetscLogEventBegin(KSP_Fused_Convert, ksp, 0, 0, 0));
      PetscCall(FusedMGBuild(ksp, fused, nlevels, mg->why, sizeof(mg->why)));
      if (!mg->why[0]) PetscCall(FusedMGVerify(ksp, fused, scratch_in, scratch_out, mg->why, sizeof(mg->why)));
      PetscCall(PetscLogEventEnd(KSP_Fused_Convert, ksp, 0, 0, 0));
      if (mg->why[0]) {
        PetscCall(PetscInfo(ksp, "PETSc's multigrid stays with PCApply(): %s\n", mg->why));
        PetscCall(KSPFusedMGReset(fused)); /* the device copies go; the verdict stays for this hierarchy */
      } else PetscCall(PetscInfo(ksp, "PETSc's multigrid on the device in petsc-fused's V-cycle, %zu bytes of its own\n", FusedDevMGBytes(mg->dev)));
      mg->key = key;
    }
    if (mg->why[0]) PetscCall(PetscStrncpy(why, mg->why, sizeof(why)));
  }
  PetscCall(KSPFusedOwnPCPlace(fused, why, "V-cycle", mg->text, sizeof(mg->text), &mg->active));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* out = B in on the device by our V-cycle (fused->mg.active) */
PETSC_INTERN PetscErrorCode KSPFusedMGApply(KSP ksp, KSPFused *fused, const double *in, double *out)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(KSP_Fused_MGCycle, ksp, 0, 0, 0));
  PetscCallFusedCUDA(FusedDevMGApply(fused->mg.dev, fused->work.cuda, in, out));
  PetscCall(PetscLogEventEnd(KSP_Fused_MGCycle, ksp, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
