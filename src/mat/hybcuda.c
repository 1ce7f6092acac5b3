/* MATHYBCUDA: the sparse matrix on the GPU (see hybcudaimpl.h). seqhybcuda
   extends seqaij and mpihybcuda extends mpiaij, as PETSc's aijcusparse does;
   on several ranks the diagonal and off-diagonal blocks go to the device as
   one operator and the off-process entries of x come through a VecScatter. */
#include "mat/hybcudaimpl.h"

PetscLogEvent MAT_HYBCUDA_Build, MAT_HYBCUDA_Values, MAT_HYBCUDA_Mult;

static PetscErrorCode MatHYBCUDAIsMPI(Mat A, PetscBool *mpi)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIHYBCUDA, mpi));
  PetscFunctionReturn(0);
}

/* Whether a row of the (square, sequential) matrix stores no diagonal entry:
   a shift then adds entries on the host (PETSc's MatMissingDiagonal() is gone
   from current versions, so this asks the CSR pattern, whose columns AIJ
   keeps sorted) */
static PetscErrorCode MatHYBCUDAMissingDiagonal(Mat A, PetscBool *missing)
{
  const PetscInt *ia, *ja;
  PetscInt        n, i, lo, hi, mid;
  PetscBool       done;

  PetscFunctionBegin;
  *missing = PETSC_TRUE;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  if (!done) PetscFunctionReturn(PETSC_SUCCESS);
  *missing = PETSC_FALSE;
  for (i = 0; i < n && !*missing; i++) {
    for (lo = ia[i], hi = ia[i + 1]; lo < hi;) {
      mid = lo + (hi - lo) / 2;
      if (ja[mid] < i) lo = mid + 1;
      else hi = mid;
    }
    if (lo == ia[i + 1] || ja[lo] != i) *missing = PETSC_TRUE;
  }
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The diagonal and off-diagonal blocks of an AIJ or hybcuda matrix (Ao NULL
   on one rank). MatMPIAIJGetSeqAIJ() insists on a type name that begins
   with "mpiaij"; ours is "mpihybcuda", so the name is lent back for the call. */
PETSC_INTERN PetscErrorCode MatHYBCUDAGetBlocks(Mat A, Mat *Ad, Mat *Ao, const PetscInt **garray)
{
  PetscBool mpi, mpiaij;

  PetscFunctionBegin;
  PetscCall(MatHYBCUDAIsMPI(A, &mpi));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &mpiaij, MATMPIAIJ, "mpiaijcusparse", ""));
  if (mpiaij) {
    PetscCall(MatMPIAIJGetSeqAIJ(A, Ad, Ao, garray));
    PetscFunctionReturn(0);
  }
  if (!mpi) {
    *Ad = A;
    *Ao = NULL;
    if (garray) *garray = NULL;
    PetscFunctionReturn(0);
  }
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATMPIAIJ));
  PetscCall(MatMPIAIJGetSeqAIJ(A, Ad, Ao, garray));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATMPIHYBCUDA));
  PetscFunctionReturn(0);
}

/* The off-process entries of x that the off-diagonal block reads, in its column order */
static PetscErrorCode MatHYBCUDASetUpScatter(Mat A, Mat_HYBCUDA *h, PetscInt nghost, const PetscInt garray[])
{
  IS  from;
  Vec x;

  PetscFunctionBegin;
  PetscCall(VecScatterDestroy(&h->ghost_scatter));
  PetscCall(VecDestroy(&h->ghost_values));
  PetscCall(MatCreateVecs(A, &x, NULL));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nghost, garray, PETSC_COPY_VALUES, &from));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, nghost, &h->ghost_values));
  PetscCall(VecScatterCreate(x, from, h->ghost_values, NULL, &h->ghost_scatter));
  PetscCall(ISDestroy(&from));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(0);
}

#define PetscCallHYBCUDA(call) \
  do { \
    int hyb_err_ = (call); \
    PetscCheck(!hyb_err_, PETSC_COMM_SELF, hyb_err_ == FUSED_CUDA_ERR_MEM ? PETSC_ERR_MEM : PETSC_ERR_LIB, "hybcuda: %s", FusedCUDALastError()); \
  } while (0)

/* Brings the device copy up to the matrix's state: values only where the
   nonzero pattern is the one it was built on, else a new copy. On failure
   (device memory exhausted) the host matrix is untouched and no copy is kept. */
static PetscErrorCode MatHYBCUDARefresh(Mat A, PetscBool force)
{
  Mat_HYBCUDA       *h = (Mat_HYBCUDA *)A->spptr;
  PetscObjectState   state, nzstate;
  Mat                Ad, Ao;
  const PetscInt    *garray, *ia, *ja, *oia = NULL, *oja = NULL;
  const PetscScalar *va, *ova = NULL;
  PetscInt           n, on, nghost = 0, ncols;
  PetscBool          done;
  int                err = FUSED_CUDA_ERR_ARG;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  PetscCall(MatGetNonzeroState(A, &nzstate));
  if (h->dev && state == h->dev_state && !force) PetscFunctionReturn(0);
  PetscCall(MatHYBCUDAGetBlocks(A, &Ad, &Ao, &garray));
  PetscCall(MatGetRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "hybcuda: cannot get the CSR arrays of the matrix");
  PetscCall(MatSeqAIJGetArrayRead(Ad, &va));
  PetscCall(MatGetLocalSize(Ad, NULL, &ncols));
  if (Ao) {
    PetscCall(MatGetSize(Ao, NULL, &nghost));
    PetscCall(MatGetRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &on, &oia, &oja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "hybcuda: cannot get the CSR arrays of the off-diagonal block");
    PetscCall(MatSeqAIJGetArrayRead(Ao, &ova));
  }
  if (h->dev && nzstate == h->dev_nzstate) {
    PetscCall(PetscLogEventBegin(MAT_HYBCUDA_Values, A, 0, 0, 0));
    err = FusedDevMatUpdateValues(h->dev, ia, ja, va, oia, ova);
    PetscCall(PetscLogEventEnd(MAT_HYBCUDA_Values, A, 0, 0, 0));
  }
  if (err) {
    /* a rectangular block has no diagonals to speak of, and ELL pads with the row's own column: CSR */
    const int format = ncols == n ? (int)h->format : FUSED_FORMAT_CSR;

    PetscCall(PetscLogEventBegin(MAT_HYBCUDA_Build, A, 0, 0, 0));
    PetscCallHYBCUDA(FusedDevMatDestroy(&h->dev));
    /* the copy is the solvers' operator too (pcgfused's shortcut where A is symmetric): a square block is checked against its transpose */
    err = FusedDevMatCreate((int)h->device, (int)n, ia, ja, va, (int)nghost, oia, oja, ova, format, ncols == n, &h->dev);
    if (!err) err = FusedDevMatSetColumns(h->dev, (int)ncols);
    if (err) (void)FusedDevMatDestroy(&h->dev);
    PetscCall(PetscLogEventEnd(MAT_HYBCUDA_Build, A, 0, 0, 0));
  }
  PetscCall(MatSeqAIJRestoreArrayRead(Ad, &va));
  PetscCall(MatRestoreRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  if (Ao) {
    PetscCall(MatSeqAIJRestoreArrayRead(Ao, &ova));
    PetscCall(MatRestoreRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &on, &oia, &oja, &done));
  }
  PetscCheck(!err, PETSC_COMM_SELF, err == FUSED_CUDA_ERR_MEM ? PETSC_ERR_MEM : (err == FUSED_CUDA_ERR_ARG ? PETSC_ERR_ARG_WRONG : PETSC_ERR_LIB), "hybcuda: copying the matrix to CUDA device %" PetscInt_FMT ": %s (the host matrix is unchanged)", h->device, FusedCUDALastError());
  if (Ao && (!h->ghost_scatter || nzstate != h->scatter_nzstate)) {
    PetscCall(MatHYBCUDASetUpScatter(A, h, nghost, garray));
    h->scatter_nzstate = nzstate;
  }
  h->dev_state   = state;
  h->dev_nzstate = nzstate;
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode MatHYBCUDASync(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatHYBCUDARefresh(A, PETSC_FALSE));
  PetscFunctionReturn(0);
}

/* y = A x (+ z) on the device with host vectors */
static PetscErrorCode MatHYBCUDAProduct(Mat A, Vec x, const PetscScalar ghost[], Vec z, Vec y)
{
  Mat_HYBCUDA       *h = (Mat_HYBCUDA *)A->spptr;
  const PetscScalar *xa, *za = NULL;
  PetscScalar       *ya;
  MatInfo            info;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(MAT_HYBCUDA_Mult, A, x, y, 0));
  PetscCall(VecGetArrayRead(x, &xa));
  if (z) PetscCall(VecGetArrayRead(z, &za));
  /* y may be z: read z's values first (the device copies them before writing y) */
  PetscCall(z == y ? VecGetArray(y, &ya) : VecGetArrayWrite(y, &ya));
  {
    const int err = FusedDevMatMult(h->dev, xa, ghost, za, ya);
    PetscCall(z == y ? VecRestoreArray(y, &ya) : VecRestoreArrayWrite(y, &ya));
    if (z) PetscCall(VecRestoreArrayRead(z, &za));
    PetscCall(VecRestoreArrayRead(x, &xa));
    PetscCallHYBCUDA(err);
  }
  PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
  PetscCall(PetscLogFlops(2.0 * info.nz_used - (z ? 0.0 : (double)A->rmap->n)));
  PetscCall(PetscLogEventEnd(MAT_HYBCUDA_Mult, A, x, y, 0));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMultAdd_HYBCUDA(Mat A, Vec x, Vec z, Vec y)
{
  Mat_HYBCUDA       *h = (Mat_HYBCUDA *)A->spptr;
  const PetscScalar *ghost = NULL;

  PetscFunctionBegin;
  PetscCall(MatHYBCUDASync(A));
  if (h->ghost_scatter) {
    PetscCall(VecScatterBegin(h->ghost_scatter, x, h->ghost_values, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(h->ghost_scatter, x, h->ghost_values, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecGetArrayRead(h->ghost_values, &ghost));
  }
  PetscCall(MatHYBCUDAProduct(A, x, ghost, z, y));
  if (h->ghost_scatter) PetscCall(VecRestoreArrayRead(h->ghost_values, &ghost));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMult_HYBCUDA(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultAdd_HYBCUDA(A, x, NULL, y));
  PetscFunctionReturn(0);
}

/* A^T kept as a hybcuda matrix of its own, transposed on the host from an
   AIJ copy and rebuilt when A changes: deterministic, no atomics, one more
   device copy. */
static PetscErrorCode MatHYBCUDATranspose(Mat A, Mat *At)
{
  Mat_HYBCUDA     *h = (Mat_HYBCUDA *)A->spptr;
  PetscObjectState state;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (!h->transpose || state != h->transpose_state) {
    Mat aij;

    PetscCall(MatDestroy(&h->transpose));
    PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &aij));
    PetscCall(MatTranspose(aij, MAT_INITIAL_MATRIX, &h->transpose));
    PetscCall(MatDestroy(&aij));
    PetscCall(MatConvert(h->transpose, MATHYBCUDA, MAT_INPLACE_MATRIX, &h->transpose));
    h->transpose_state = state;
  }
  *At = h->transpose;
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMultTranspose_HYBCUDA(Mat A, Vec x, Vec y)
{
  Mat At;

  PetscFunctionBegin;
  PetscCall(MatHYBCUDATranspose(A, &At));
  PetscCall(MatMult(At, x, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMultTransposeAdd_HYBCUDA(Mat A, Vec x, Vec z, Vec y)
{
  Mat At;

  PetscFunctionBegin;
  PetscCall(MatHYBCUDATranspose(A, &At));
  PetscCall(MatMultAdd(At, x, z, y));
  PetscFunctionReturn(0);
}

/* The device copy now holds what the matrix will be once the interface that
   called the type's operation (MatAssemblyEnd(), MatScale(), MatShift())
   has raised the state, which each does exactly once after it (were it
   raised otherwise, the next product would just upload the values again) */
static PetscErrorCode MatHYBCUDAHoldsNextState(Mat A)
{
  Mat_HYBCUDA     *h = (Mat_HYBCUDA *)A->spptr;
  PetscObjectState state;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  h->dev_state = state + 1;
  PetscFunctionReturn(0);
}

static PetscErrorCode MatAssemblyEnd_HYBCUDA(Mat A, MatAssemblyType mode)
{
  Mat_HYBCUDA *h = (Mat_HYBCUDA *)A->spptr;

  PetscFunctionBegin;
  PetscCall((*h->aijops.assemblyend)(A, mode));
  /* the matrix lives on the device from here on. MatSetValues() leaves the
     state as it was, so the refresh is forced */
  if (mode == MAT_FINAL_ASSEMBLY) {
    PetscCall(MatHYBCUDARefresh(A, PETSC_TRUE));
    PetscCall(MatHYBCUDAHoldsNextState(A));
  }
  PetscFunctionReturn(0);
}

/* Whether the device copy holds the matrix as it is now */
static PetscErrorCode MatHYBCUDAIsCurrent(Mat A, PetscBool *current)
{
  Mat_HYBCUDA     *h = (Mat_HYBCUDA *)A->spptr;
  PetscObjectState state, nzstate;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  PetscCall(MatGetNonzeroState(A, &nzstate));
  *current = h->dev && state == h->dev_state && nzstate == h->dev_nzstate ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* The host matrix is scaled as AIJ does it, and a current device copy in place */
static PetscErrorCode MatScale_HYBCUDA(Mat A, PetscScalar a)
{
  Mat_HYBCUDA     *h = (Mat_HYBCUDA *)A->spptr;
  PetscBool        current;
  PetscObjectState held;

  PetscFunctionBegin;
  PetscCall(MatHYBCUDAIsCurrent(A, &current));
  held = h->dev_state;
  PetscCall((*h->aijops.scale)(A, a));
  if (h->dev_state != held) PetscFunctionReturn(0); /* AIJ went through MatAssemblyEnd(), which refreshed the copy */
  h->dev_state = 0;                                 /* stale until the device has it too */
  if (current) {
    PetscCall(PetscLogEventBegin(MAT_HYBCUDA_Values, A, 0, 0, 0));
    PetscCallHYBCUDA(FusedDevMatScale(h->dev, (double)a));
    PetscCall(PetscLogEventEnd(MAT_HYBCUDA_Values, A, 0, 0, 0));
    PetscCall(MatHYBCUDAHoldsNextState(A));
  }
  PetscFunctionReturn(0);
}

/* A + a I on one rank's AIJ arrays, every row having its diagonal entry:
   the same sums as seqaij's shift (MatSetValues() with ADD_VALUES and an
   assembly), without the assembly, which would upload every value again */
static PetscErrorCode MatHYBCUDAShiftHost(Mat A, PetscScalar a)
{
  const PetscInt *ia, *ja;
  PetscScalar    *v;
  PetscInt        n, i, k;
  PetscBool       done;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "hybcuda: cannot get the CSR arrays of the matrix");
  PetscCall(MatSeqAIJGetArray(A, &v));
  for (i = 0; i < n; i++)
    for (k = ia[i]; k < ia[i + 1]; k++)
      if (ja[k] == i) {
        v[k] += a;
        break;
      }
  PetscCall(MatSeqAIJRestoreArray(A, &v));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(0);
}

/* The same for A + a I, where the host shift kept the nonzero pattern and
   every row has its diagonal entry on the device; else the next product
   brings the copy up to date as after any change */
static PetscErrorCode MatShift_HYBCUDA(Mat A, PetscScalar a)
{
  Mat_HYBCUDA     *h = (Mat_HYBCUDA *)A->spptr;
  PetscBool        current, mpi, missing = PETSC_TRUE;
  PetscObjectState nzstate, held;
  int              done = 0;

  PetscFunctionBegin;
  PetscCall(MatHYBCUDAIsCurrent(A, &current));
  PetscCall(MatHYBCUDAIsMPI(A, &mpi));
  if (current && !mpi) PetscCall(MatHYBCUDAMissingDiagonal(A, &missing));
  held = h->dev_state;
  if (current && !mpi && !missing) PetscCall(MatHYBCUDAShiftHost(A, a));
  else PetscCall((*h->aijops.shift)(A, a)); /* mpiaij shifts its diagonal block, seqaij adds entries and assembles */
  if (h->dev_state != held) PetscFunctionReturn(0); /* it went through MatAssemblyEnd(), which refreshed the copy */
  h->dev_state = 0;
  PetscCall(MatGetNonzeroState(A, &nzstate));
  if (current && nzstate == h->dev_nzstate) {
    PetscCall(PetscLogEventBegin(MAT_HYBCUDA_Values, A, 0, 0, 0));
    PetscCallHYBCUDA(FusedDevMatShift(h->dev, (double)a, &done));
    PetscCall(PetscLogEventEnd(MAT_HYBCUDA_Values, A, 0, 0, 0));
    if (done) PetscCall(MatHYBCUDAHoldsNextState(A));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode MatSetFromOptions_HYBCUDA(Mat A, FusedOptionItems PetscOptionsObject)
{
  Mat_HYBCUDA *h = (Mat_HYBCUDA *)A->spptr;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "hybcuda matrix options");
  PetscCall(PetscOptionsEList("-mat_hybcuda_format", "Device storage: auto (DIA where the nonzeros lie on few diagonals, else ELL or HYB within 1.3x the CSR bytes, else CSR), csr, dia, ell, hyb", "", FusedFormatNames, 5, FusedFormatNames[h->format], &h->format, NULL));
  PetscOptionsHeadEnd();
  if (h->aijops.setfromoptions) PetscCall((*h->aijops.setfromoptions)(A, PetscOptionsObject));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatView_HYBCUDA(Mat A, PetscViewer viewer)
{
  Mat_HYBCUDA      *h = (Mat_HYBCUDA *)A->spptr;
  PetscBool         iascii;
  PetscViewerFormat format;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (iascii) PetscCall(PetscViewerGetFormat(viewer, &format));
  if (iascii && (format == PETSC_VIEWER_ASCII_INFO || format == PETSC_VIEWER_ASCII_INFO_DETAIL) && A->assembled) {
    int    fmt, width, nghost;
    size_t bytes;
    char   name[256];

    PetscCall(MatHYBCUDASync(A));
    FusedDevMatGetInfo(h->dev, &fmt, &width, &bytes, &nghost);
    PetscCall(PetscFusedCUDADeviceName(h->device, name, sizeof(name)));
    PetscCall(PetscViewerASCIIPushSynchronized(viewer));
    PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "  [%d] hybcuda on device %" PetscInt_FMT " (%s): %s", PetscGlobalRank, h->device, name, FusedFormatNames[fmt]));
    if (fmt == FUSED_FORMAT_DIA) PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, ", %d diagonals", width));
    if (fmt == FUSED_FORMAT_ELL || fmt == FUSED_FORMAT_HYB) PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, ", ELL width K = %d", width));
    if (fmt == FUSED_FORMAT_HYB) PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, ", %zu entries in the CSR tail", FusedDevMatTailEntries(h->dev)));
    PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "; %zu device bytes (%.2fx CSR)%s; -mat_hybcuda_format %s\n", bytes, (double)bytes / (double)FusedDevMatCSRBytes(h->dev), nghost ? ", with the off-diagonal block and its ghost values" : "", FusedFormatNames[h->format]));
    FusedDevMatDescribeLongRows(h->dev, name, sizeof(name));
    PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "  [%d] %s\n", PetscGlobalRank, name));
    PetscCall(PetscViewerFlush(viewer));
    PetscCall(PetscViewerASCIIPopSynchronized(viewer));
  }
  PetscCall((*h->aijops.view)(A, viewer));
  PetscFunctionReturn(0);
}

/* Everything hybcuda added, gone; the matrix is plain AIJ again */
static PetscErrorCode MatHYBCUDAStrip(Mat A, const char *aijtype)
{
  Mat_HYBCUDA *h = (Mat_HYBCUDA *)A->spptr;
  char         name[64];

  PetscFunctionBegin;
  if (!h) PetscFunctionReturn(0);
  PetscCallHYBCUDA(FusedDevMatDestroy(&h->dev));
  PetscCall(MatDestroy(&h->transpose));
  PetscCall(VecScatterDestroy(&h->ghost_scatter));
  PetscCall(VecDestroy(&h->ghost_values));
  *A->ops = h->aijops;
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%s_%s_C", ((PetscObject)A)->type_name, aijtype));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, name, NULL));
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%s_aij_C", ((PetscObject)A)->type_name));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, name, NULL));
  PetscCall(PetscFree(A->spptr));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, aijtype));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatDestroy_HYBCUDA(Mat A)
{
  PetscBool mpi;

  PetscFunctionBegin;
  PetscCall(MatHYBCUDAIsMPI(A, &mpi));
  PetscCall(MatHYBCUDAStrip(A, mpi ? MATMPIAIJ : MATSEQAIJ));
  PetscCall((*A->ops->destroy)(A)); /* the AIJ destroy, restored by the strip */
  PetscFunctionReturn(0);
}

static PetscErrorCode MatConvert_HYBCUDA_AIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscBool mpi;
  Mat       B = A;

  PetscFunctionBegin;
  (void)type;
  PetscCall(MatHYBCUDAIsMPI(A, &mpi));
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  else if (reuse == MAT_REUSE_MATRIX) PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
  if (reuse != MAT_REUSE_MATRIX) {
    PetscCall(MatHYBCUDAStrip(B, mpi ? MATMPIAIJ : MATSEQAIJ));
    *newmat = B;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode MatConvert_AIJ_HYBCUDA(Mat A, MatType type, MatReuse reuse, Mat *newmat);

/* Makes an assembled-or-not AIJ matrix (seqaij or mpiaij) a hybcuda one, in place */
static PetscErrorCode MatHYBCUDAExtend(Mat A)
{
  Mat_HYBCUDA *h;
  PetscBool    mpi;
  PetscInt     count;
  char         reason[256], name[64];
  const char  *aij, *ours;

  PetscFunctionBegin;
  PetscCall(FusedDeviceCount(&count, reason, sizeof(reason)));
  PetscCheck(count > 0, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP_SYS, "-mat_type hybcuda needs a CUDA device: %s. Use -mat_type aij", reason);
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
  aij  = mpi ? MATMPIAIJ : MATSEQAIJ;
  ours = mpi ? MATMPIHYBCUDA : MATSEQHYBCUDA;
  PetscCall(PetscNew(&h));
  h->aijops = *A->ops;
  h->format = FUSED_FORMAT_AUTO;
  h->device = -1;
  { /* also for matrices that never see MatSetFromOptions() (MatConvert(), MatDuplicate()) */
    PetscInt  format;
    PetscBool set;
    PetscCall(PetscOptionsGetEList(((PetscObject)A)->options, ((PetscObject)A)->prefix, "-mat_hybcuda_format", FusedFormatNames, 5, &format, &set));
    if (set) h->format = format;
  }
  PetscCall(FusedDevicePick((PetscObject)A, &h->device));
  A->spptr                      = h;
  A->ops->mult                  = MatMult_HYBCUDA;
  A->ops->multadd               = MatMultAdd_HYBCUDA;
  A->ops->multtranspose         = MatMultTranspose_HYBCUDA;
  A->ops->multtransposeadd      = MatMultTransposeAdd_HYBCUDA;
  A->ops->assemblyend           = MatAssemblyEnd_HYBCUDA;
  A->ops->setfromoptions        = MatSetFromOptions_HYBCUDA;
  A->ops->view                  = MatView_HYBCUDA;
  A->ops->destroy               = MatDestroy_HYBCUDA;
  if (h->aijops.scale) A->ops->scale = MatScale_HYBCUDA;
  if (h->aijops.shift) A->ops->shift = MatShift_HYBCUDA;
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, ours));
  /* MatConvert() to AIJ looks on the matrix for these */
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%s_%s_C", ours, aij));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, name, MatConvert_HYBCUDA_AIJ));
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%s_aij_C", ours));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, name, MatConvert_HYBCUDA_AIJ));
  /* and MatConvert() from AIJ on a new matrix of the target type */
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%s_%s_C", aij, ours));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, name, MatConvert_AIJ_HYBCUDA));
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%s_hybcuda_C", aij));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, name, MatConvert_AIJ_HYBCUDA));
  if (A->assembled) PetscCall(MatHYBCUDASync(A));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatConvert_AIJ_HYBCUDA(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat B = A;

  PetscFunctionBegin;
  (void)type;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(0);
  }
  if (reuse == MAT_INITIAL_MATRIX) {
    PetscErrorCode ierr;

    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
    ierr = MatHYBCUDAExtend(B);
    if (ierr) { /* no device copy (out of memory, no device): the duplicate goes, A stays as it was */
      PetscCall(MatDestroy(&B));
      PetscCall(ierr);
    }
  } else PetscCall(MatHYBCUDAExtend(B));
  *newmat = B;
  PetscFunctionReturn(0);
}

PETSC_EXTERN PetscErrorCode MatCreate_SeqHYBCUDA(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(A, MATSEQAIJ));
  PetscCall(MatHYBCUDAExtend(A));
  PetscFunctionReturn(0);
}

PETSC_EXTERN PetscErrorCode MatCreate_MPIHYBCUDA(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(A, MATMPIAIJ));
  PetscCall(MatHYBCUDAExtend(A));
  PetscFunctionReturn(0);
}

/* hybcuda: seqhybcuda on one rank, mpihybcuda on several */
PETSC_EXTERN PetscErrorCode MatCreate_HYBCUDA(Mat A)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(MatSetType(A, size == 1 ? MATSEQHYBCUDA : MATMPIHYBCUDA));
  PetscFunctionReturn(0);
}

/* For the fused solvers: the device copy, current, and the device it is on */
PETSC_INTERN PetscErrorCode MatHYBCUDAGetDevMat(Mat A, FusedDevMat *dev, PetscInt *device)
{
  Mat_HYBCUDA *h = (Mat_HYBCUDA *)A->spptr;

  PetscFunctionBegin;
  PetscCall(MatHYBCUDASync(A));
  *dev    = h->dev;
  *device = h->device;
  PetscFunctionReturn(0);
}
