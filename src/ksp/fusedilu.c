/* PETSc's ILU(0) preconditioner (PCILU, or PCBJACOBI whose block on each
   rank is solved by ILU(0)) applied by petsc-fused's own triangular solves
   on the device (src/cuda/trisolve.cu), in place of PCApply() between the
   fused steps. ILU(0) in a given row order is one factorization: the
   factors are computed here from the matrix PETSc factored, in its natural
   order, split into levels of rows that do not depend on each other, and
   checked against PETSc's PCApply() on a probe vector before they are used
   (another ordering, a shift that acted, fill: they differ, and PCApply()
   stays; -ksp_view says why). PETSc's cuSPARSE solves walk the same levels
   with a launch (or more) each; ours walk all of them in one launch per
   triangle. */
#include "ksp/fusedimpl.h"
#include <petsc/private/pcimpl.h> /* whether the PC is set up */

/* The PC that holds the ILU factorization: ksp's PC where it is PCILU, its
   block's where it is block Jacobi with one block on this rank solved by
   ILU alone; NULL where the PC is neither (nothing of this file applies) */
static PetscErrorCode FusedILUFactorPC(KSP ksp, PC *fpc, char *why, size_t whylen)
{
  PC        pc = ksp->pc;
  PetscBool isilu, isbjacobi, preonly;

  PetscFunctionBegin;
  *fpc = NULL;
  if (!pc->setupcalled) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCILU, &isilu));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCBJACOBI, &isbjacobi));
  if (isilu) *fpc = pc;
  else if (isbjacobi) {
    PetscInt nlocal, first;
    KSP     *sub;
    PC       subpc;

    PetscCall(PCBJacobiGetSubKSP(pc, &nlocal, &first, &sub));
    if (nlocal != 1) {
      PetscCall(PetscSNPrintf(why, whylen, "block Jacobi with %" PetscInt_FMT " blocks on a rank (petsc-fused's solves take one)", nlocal));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(KSPGetPC(sub[0], &subpc));
    PetscCall(PetscObjectTypeCompare((PetscObject)subpc, PCILU, &isilu));
    if (!isilu || !subpc->setupcalled) PetscFunctionReturn(PETSC_SUCCESS); /* another block solver: not ours; or not factored yet (KSPSetUpOnBlocks()) */
    PetscCall(PetscObjectTypeCompare((PetscObject)sub[0], KSPPREONLY, &preonly));
    if (!preonly) {
      PetscCall(PetscSNPrintf(why, whylen, "the block's solver is %s, not preonly", ((PetscObject)sub[0])->type_name));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    *fpc = subpc;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What keeps the factorization of fpc from our solves (*why), and the
   matrix it factored (*B) */
static PetscErrorCode FusedILUCheck(KSP ksp, KSPFused *fused, PC fpc, Mat *B, char *why, size_t whylen)
{
  PetscInt     levels, m, n, nlocal;
  PetscBool    isaij;
  MatNullSpace nullsp;
  Mat          Amat;

  PetscFunctionBegin;
  *B = NULL;
  PetscCall(PCGetOperators(fpc, NULL, B));
  PetscCall(PCFactorGetLevels(fpc, &levels));
  PetscCall(PCGetOperators(ksp->pc, &Amat, NULL));
  PetscCall(MatGetLocalSize(Amat, &nlocal, NULL));
  PetscCall(MatGetNullSpace(Amat, &nullsp));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)*B, &isaij, MATSEQAIJ, "seqaijcusparse", ""));
  PetscCall(MatGetSize(*B, &m, &n));
  if (!fused->ilu.enabled) PetscCall(PetscSNPrintf(why, whylen, "-ksp_fused_ilu is off"));
  else if (levels != 0) PetscCall(PetscSNPrintf(why, whylen, "ILU(%" PetscInt_FMT "): petsc-fused's solves take ILU(0)", levels));
  else if (!isaij) PetscCall(PetscSNPrintf(why, whylen, "the factored matrix is %s, not a sequential AIJ matrix", ((PetscObject)*B)->type_name));
  else if (m != nlocal || n != nlocal) PetscCall(PetscSNPrintf(why, whylen, "the factored matrix is %" PetscInt_FMT " x %" PetscInt_FMT ", the operator has %" PetscInt_FMT " rows here", m, n, nlocal));
  else if (nullsp && ksp->pc_side == PC_LEFT) PetscCall(PetscSNPrintf(why, whylen, "PETSc removes the operator's null space after each application"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ILU(0) of the n x n CSR matrix (ia, ja, a) into lu (its pattern: L's
   unit diagonal not stored, U's diagonal at diag[i]), row by row as
   PETSc's factorization computes it; *why at an unsorted row, a missing
   diagonal or a zero pivot */
static PetscErrorCode FusedILUFactor(PetscInt n, const PetscInt ia[], const PetscInt ja[], const PetscScalar a[], PetscScalar lu[], PetscInt diag[], char *why, size_t whylen)
{
  PetscInt *where; /* where[j]: the position of column j in the row at hand, -1 where none */

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(n, &where));
  for (PetscInt j = 0; j < n; j++) where[j] = -1;
  PetscCall(PetscArraycpy(lu, a, ia[n]));
  for (PetscInt i = 0; i < n && !why[0]; i++) {
    diag[i] = -1;
    for (PetscInt k = ia[i]; k < ia[i + 1]; k++) {
      if (k > ia[i] && ja[k] <= ja[k - 1]) {
        PetscCall(PetscSNPrintf(why, whylen, "row %" PetscInt_FMT " of the factored matrix has unsorted or repeated columns", i));
        break;
      }
      if (ja[k] == i) diag[i] = k;
      where[ja[k]] = k;
    }
    if (!why[0] && diag[i] < 0) PetscCall(PetscSNPrintf(why, whylen, "row %" PetscInt_FMT " of the factored matrix has no diagonal entry", i));
    for (PetscInt k = ia[i]; k < diag[i] && !why[0]; k++) {
      const PetscInt c = ja[k];

      lu[k] /= lu[diag[c]];
      for (PetscInt kk = diag[c] + 1; kk < ia[c + 1]; kk++)
        if (where[ja[kk]] >= 0) lu[where[ja[kk]]] -= lu[k] * lu[kk];
    }
    if (!why[0] && lu[diag[i]] == 0.0) PetscCall(PetscSNPrintf(why, whylen, "a zero pivot in row %" PetscInt_FMT, i));
    for (PetscInt k = ia[i]; k < ia[i + 1]; k++) where[ja[k]] = -1;
  }
  PetscCall(PetscFree(where));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One triangle of lu in the device's layout (FusedTriHost): its rows'
   levels (a row one past the latest it reads), the rows level by level in
   their order, the entries (naming the positions of the rows they read) as
   ELL of width 2, 4 or 8 where every row fits, else CSR by position. Arrays in t->... are the caller's to free (PetscFree). */
static PetscErrorCode FusedILUTriangle(PetscInt n, const PetscInt ia[], const PetscInt ja[], const PetscScalar lu[], const PetscInt diag[], PetscBool upper, FusedTriHost *t)
{
  PetscInt *level, *count, *start, *row, *col, *ptr = NULL, nlevels = 0, most = 0, width, nnz = 0;
  PetscReal *val, *dinv = NULL;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(n, &level));
  for (PetscInt s = 0; s < n; s++) {
    const PetscInt i = upper ? n - 1 - s : s, from = upper ? diag[i] + 1 : ia[i], to = upper ? ia[i + 1] : diag[i];
    PetscInt       l = 0;

    for (PetscInt k = from; k < to; k++) l = PetscMax(l, level[ja[k]] + 1);
    level[i] = l;
    nlevels  = PetscMax(nlevels, l + 1);
    most     = PetscMax(most, to - from);
    nnz += to - from;
  }
  if (!n) nlevels = 0;
  width = most <= 2 ? 2 : most <= 4 ? 4 : most <= 8 ? 8 : 0;
  PetscCall(PetscCalloc1(nlevels + 1, &count));
  PetscCall(PetscMalloc1(nlevels + 1, &start));
  for (PetscInt i = 0; i < n; i++) count[level[i] + 1]++;
  start[0] = 0;
  for (PetscInt l = 0; l < nlevels; l++) start[l + 1] = start[l] + count[l + 1];
  for (PetscInt l = 0; l < nlevels; l++) count[l] = start[l]; /* the next free position of level l */
  PetscCall(PetscMalloc1(n, &row));
  for (PetscInt i = 0; i < n; i++) row[count[level[i]]++] = i;
  for (PetscInt p = 0; p < n; p++) level[row[p]] = p; /* from here: each row's position */
  if (width) {
    PetscCall(PetscMalloc2(n * width, &col, n * width, &val));
    for (PetscInt k = 0; k < n * width; k++) {
      col[k] = -1;
      val[k] = 0.0;
    }
  } else {
    PetscCall(PetscMalloc1(n + 1, &ptr));
    PetscCall(PetscMalloc2(nnz, &col, nnz, &val));
    ptr[0] = 0;
  }
  if (upper) PetscCall(PetscMalloc1(n, &dinv));
  for (PetscInt p = 0; p < n; p++) {
    const PetscInt i = row[p], from = upper ? diag[i] + 1 : ia[i], to = upper ? ia[i + 1] : diag[i];

    for (PetscInt k = from; k < to; k++) {
      const PetscInt at = width ? (k - from) * n + p : ptr[p] + (k - from);

      col[at] = level[ja[k]]; /* the device reads solved values by position */
      val[at] = PetscRealPart(lu[k]);
    }
    if (!width) ptr[p + 1] = ptr[p] + (to - from);
    if (upper) dinv[p] = 1.0 / PetscRealPart(lu[diag[i]]);
  }
  PetscCall(PetscFree(level));
  PetscCall(PetscFree(count));
  t->n           = (int)n;
  t->nlevels     = (int)nlevels;
  t->width       = (int)width;
  t->level_start = (const int *)start;
  t->row         = (const int *)row;
  t->ptr         = (const int *)ptr;
  t->col         = (const int *)col;
  t->val         = val;
  t->dinv        = dinv;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FusedILUTriangleFree(FusedTriHost *t)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(t->level_start));
  PetscCall(PetscFree(t->row));
  PetscCall(PetscFree(t->ptr));
  PetscCall(PetscFree2(t->col, t->val)); /* const for the device layer, ours here */
  PetscCall(PetscFree(t->dinv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The factors of B to the device; *why where they cannot go */
static PetscErrorCode FusedILUBuild(KSP ksp, KSPFused *fused, Mat B, PetscBool block, char *why, size_t whylen)
{
  KSPFusedILU       *ilu = &fused->ilu;
  const PetscInt    *ia, *ja;
  const PetscScalar *a;
  PetscScalar       *lu;
  PetscInt          *diag, n;
  PetscBool          done;
  FusedTriHost       tri[2];
  PCType             type;
  int                err;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  if (!done) {
    PetscCall(PetscSNPrintf(why, whylen, "the factored matrix (%s) gives no CSR arrays", ((PetscObject)B)->type_name));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatSeqAIJGetArrayRead(B, &a));
  PetscCall(PetscMalloc2(ia[n], &lu, n, &diag));
  PetscCall(FusedILUFactor(n, ia, ja, a, lu, diag, why, whylen));
  PetscCall(MatSeqAIJRestoreArrayRead(B, &a));
  if (!why[0]) {
    PetscCall(FusedILUTriangle(n, ia, ja, lu, diag, PETSC_FALSE, &tri[0]));
    PetscCall(FusedILUTriangle(n, ia, ja, lu, diag, PETSC_TRUE, &tri[1]));
  }
  PetscCall(MatRestoreRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCall(PetscFree2(lu, diag));
  if (why[0]) PetscFunctionReturn(PETSC_SUCCESS);
  err = FusedDevTriCreate((int)fused->device, &tri[0], &tri[1], (int)ilu->wide_level, &ilu->dev);
  if (!err) {
    const int   grids = FusedDevTriGrids(ilu->dev);
    const char *by[]  = {"one block each", "L by a grid of blocks, U by one block", "L by one block, U by a grid of blocks", "a grid of blocks each"};

    PetscCall(PCGetType(ksp->pc, &type));
    PetscCall(PetscSNPrintf(ilu->text, sizeof(ilu->text), "on the device: PETSc's %s (ILU(0)%s) in petsc-fused's own triangular solves, one launch each, level by level (%d rows: L in %d levels, U in %d; %s, -ksp_fused_ilu_wide_level), checked against PCApply(); the rest of each iteration fused", type, block ? " of the rank's block" : "", tri[0].n, tri[0].nlevels, tri[1].nlevels, by[grids]));
  }
  PetscCall(FusedILUTriangleFree(&tri[0]));
  PetscCall(FusedILUTriangleFree(&tri[1]));
  PetscCallFusedCUDA(err);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FusedILUApplySolves(KSPFused *fused, const double *in, double *out)
{
  PetscFunctionBegin;
  PetscCallFusedCUDA(FusedDevTriApply(fused->ilu.dev, fused->work.cuda, in, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode KSPFusedILUReset(KSPFused *fused)
{
  KSPFusedILU *ilu = &fused->ilu;

  PetscFunctionBegin;
  PetscCallFusedCUDA(FusedDevTriDestroy(&ilu->dev));
  ilu->active = PETSC_FALSE;
  ilu->key    = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What the factorization is made of now: the PC, the factoring PC, its
   factor and the matrix it factored, with their states */
static PetscErrorCode FusedILUKey(KSP ksp, KSPFused *fused, PC fpc, Mat B, PetscInt64 *key)
{
  Mat F;

  PetscFunctionBegin;
  PetscCall(PCFactorGetMatrix(fpc, &F));
  *key = (PetscInt64)1469598103934665603ULL;
  PetscCall(KSPFusedKeyAddObject(key, (PetscObject)ksp->pc));
  PetscCall(KSPFusedKeyAddObject(key, (PetscObject)fpc));
  PetscCall(KSPFusedKeyAddObject(key, (PetscObject)F));
  PetscCall(KSPFusedKeyAddObject(key, (PetscObject)B));
  KSPFusedKeyAdd(key, (PetscInt64)fused->device);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every rank's verdict: where one rank's block cannot go, none goes (the
   ranks apply the PC together); *why on each rank */
static PetscErrorCode FusedILUAgree(KSP ksp, char *why, size_t whylen)
{
  PetscMPIInt mine = why[0] ? 1 : 0, any;

  PetscFunctionBegin;
  PetscCallMPI(MPIU_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)ksp)));
  if (any && !mine) PetscCall(PetscSNPrintf(why, whylen, "another rank's block cannot go (-info there says why)"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether ksp's PC is a set-up ILU(0) whose factors our solves take, judged
   from its type, level and matrix alone (the build checks the rest against
   PCApply()). For a PETSc without CUDA, whose PCs run on the host: only
   such a PC sends the solve to the device. Collective. */
PETSC_INTERN PetscErrorCode KSPFusedILUFits(KSP ksp, KSPFused *fused, PetscBool *fits)
{
  PC   fpc;
  Mat  B;
  char why[384] = "";

  PetscFunctionBegin;
  *fits = PETSC_FALSE;
  PetscCall(FusedILUFactorPC(ksp, &fpc, why, sizeof(why)));
  if (!fpc && !why[0]) PetscFunctionReturn(PETSC_SUCCESS);
  if (fpc) PetscCall(FusedILUCheck(ksp, fused, fpc, &B, why, sizeof(why)));
  PetscCall(FusedILUAgree(ksp, why, sizeof(why)));
  if (why[0]) PetscCall(PetscInfo(ksp, "PETSc's ILU does not go to the device: %s\n", why));
  *fits = (PetscBool)!why[0];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Before a solve whose PC runs on the device through PCApply(): where that
   PC is an ILU(0) factorization, our triangular solves of it, built (and
   checked) where it changed. scratch_in and scratch_out: two device vectors
   of the solver's work that are free until the system goes up. Collective. */
PETSC_INTERN PetscErrorCode KSPFusedILUPrepare(KSP ksp, KSPFused *fused, double *scratch_in, double *scratch_out)
{
  KSPFusedILU *ilu = &fused->ilu;
  PC           fpc = NULL;
  Mat          B   = NULL;
  PetscInt64   key = 0;
  PetscMPIInt  size;
  char         why[384] = "";

  PetscFunctionBegin;
  ilu->active = PETSC_FALSE;
  if (fused->pcplace != KSP_FUSED_PC_DEVICE || !ksp->vec_rhs) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &size));
  PetscCall(FusedILUFactorPC(ksp, &fpc, why, sizeof(why)));
  if (size > 1) {
    PetscMPIInt mine = fpc || why[0] ? 1 : 0, all;

    PetscCallMPI(MPIU_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, PetscObjectComm((PetscObject)ksp)));
    if (!all) PetscFunctionReturn(PETSC_SUCCESS); /* not an ILU PC on every rank: not ours */
  } else if (!fpc && !why[0]) PetscFunctionReturn(PETSC_SUCCESS);
  if (fpc) PetscCall(FusedILUCheck(ksp, fused, fpc, &B, why, sizeof(why)));
  PetscCall(FusedILUAgree(ksp, why, sizeof(why)));
  if (!why[0]) {
    PetscMPIInt changed, any;

    PetscCall(FusedILUKey(ksp, fused, fpc, B, &key));
    changed = key != ilu->key;
    PetscCallMPI(MPIU_Allreduce(&changed, &any, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)ksp))); /* a change on any rank rebuilds on all */
    if (any) {
      PetscReal rel = 0;

      PetscCall(KSPFusedILUReset(fused));
      ilu->why[0] = 0;
      PetscCall(PetscLogEventBegin(KSP_Fused_Convert, ksp, 0, 0, 0));
      PetscCall(FusedILUBuild(ksp, fused, B, (PetscBool)(fpc != ksp->pc), ilu->why, sizeof(ilu->why)));
      PetscCall(FusedILUAgree(ksp, ilu->why, sizeof(ilu->why)));
      if (!ilu->why[0]) {
        PetscCall(KSPFusedCompareWithPCApply(ksp, fused, FusedILUApplySolves, scratch_in, scratch_out, &rel));
        if (!(rel <= FUSED_ILU_VERIFY_TOL)) PetscCall(PetscSNPrintf(ilu->why, sizeof(ilu->why), "its solves and PETSc's PCApply() differ by %g (relative) on a probe vector: not ILU(0) in the natural ordering without shifts", (double)rel));
      }
      PetscCall(PetscLogEventEnd(KSP_Fused_Convert, ksp, 0, 0, 0));
      if (ilu->why[0]) {
        PetscCall(PetscInfo(ksp, "PETSc's ILU stays with PCApply(): %s\n", ilu->why));
        PetscCall(KSPFusedILUReset(fused)); /* the device copies go; the verdict stays for this factorization */
      } else PetscCall(PetscInfo(ksp, "PETSc's ILU(0) on the device in petsc-fused's triangular solves (%zu bytes), matching PCApply() to %g (relative) on a probe vector\n", FusedDevTriBytes(ilu->dev), (double)rel));
      ilu->key = key;
    }
    if (ilu->why[0]) PetscCall(PetscStrncpy(why, ilu->why, sizeof(why)));
  }
  PetscCall(KSPFusedOwnPCPlace(fused, why, "triangular solves", ilu->text, sizeof(ilu->text), &ilu->active));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* out = B in on the device by our triangular solves (fused->ilu.active) */
PETSC_INTERN PetscErrorCode KSPFusedILUApply(KSP ksp, KSPFused *fused, const double *in, double *out)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(KSP_Fused_ILUSolve, ksp, 0, 0, 0));
  PetscCall(FusedILUApplySolves(fused, in, out));
  PetscCall(PetscLogEventEnd(KSP_Fused_ILUSolve, ksp, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
