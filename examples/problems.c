#include "problems.h"
#if defined(OPEN_MPI) && OPEN_MPI
  #include <mpi-ext.h> /* MPIX_CUDA_AWARE_SUPPORT */
#endif

const char *const ProblemTypes[] = {"lap2d", "lap3d", "convdiff", "neumann2d", "kept3d", "jump2d", "aniso2d", "arrow", "powerlaw", "veclap3d", "ProblemType", "PROBLEM_", NULL};

/* An N x N matrix of the -mat_type asked for, preallocated for rows of at
   most diag entries in the diagonal block and offdiag outside it (other
   types get their default preallocation) */
PetscErrorCode ProblemMatCreate(MPI_Comm comm, PetscInt N, PetscInt diag, PetscInt offdiag, Mat *A)
{
  PetscFunctionBegin;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, diag, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, diag, NULL, offdiag, NULL));
  PetscCall(MatSetUp(*A));
  PetscFunctionReturn(0);
}

static PetscErrorCode ProblemCreateStencil2D(MPI_Comm comm, PetscInt n, PetscBool convect, PetscBool neumann, Mat *A)
{
  PetscInt  N = n * n, rstart, rend, row;
  PetscReal cell = 0.5, peclet, cx, cy;
  PetscBool set;

  PetscFunctionBegin;
  /* convection-diffusion: -lap u + c . grad u on the unit square, upwinded,
     with cell Peclet number 0.5 in x and 0.25 in y, or Pe h and Pe h / 2 for
     the global -problem_peclet Pe (h = 1/(n+1)) */
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-problem_peclet", &peclet, &set));
  PetscCheck(!set || peclet >= 0.0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-problem_peclet %g must be at least 0", (double)peclet);
  if (set) cell = peclet / (n + 1);
  cx = convect ? 2.0 * cell : 0.0;
  cy = convect ? cell : 0.0;
  PetscCall(ProblemMatCreate(comm, N, 5, 2, A));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (row = rstart; row < rend; row++) {
    PetscInt    i = row % n, j = row / n, cols[5], nc = 0;
    PetscScalar vals[5], diag = 4.0 + cx + cy;

    if (j > 0) { cols[nc] = row - n; vals[nc++] = -1.0 - cy; }
    else if (neumann) diag -= 1.0;
    if (i > 0) { cols[nc] = row - 1; vals[nc++] = -1.0 - cx; }
    else if (neumann) diag -= 1.0;
    if (i < n - 1) { cols[nc] = row + 1; vals[nc++] = -1.0; }
    else if (neumann) diag -= 1.0;
    if (j < n - 1) { cols[nc] = row + n; vals[nc++] = -1.0; }
    else if (neumann) diag -= 1.0;
    cols[nc] = row; vals[nc++] = diag;
    PetscCall(MatSetValues(*A, 1, &row, nc, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode ProblemCreateLap3D(MPI_Comm comm, PetscInt n, Mat *A)
{
  PetscInt N = n * n * n, rstart, rend, row;

  PetscFunctionBegin;
  PetscCall(ProblemMatCreate(comm, N, 7, 4, A));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (row = rstart; row < rend; row++) {
    PetscInt    i = row % n, j = (row / n) % n, k = row / (n * n), cols[7], nc = 0;
    PetscScalar vals[7];

    if (k > 0) { cols[nc] = row - n * n; vals[nc++] = -1.0; }
    if (j > 0) { cols[nc] = row - n; vals[nc++] = -1.0; }
    if (i > 0) { cols[nc] = row - 1; vals[nc++] = -1.0; }
    cols[nc] = row; vals[nc++] = 6.0;
    if (i < n - 1) { cols[nc] = row + 1; vals[nc++] = -1.0; }
    if (j < n - 1) { cols[nc] = row + n; vals[nc++] = -1.0; }
    if (k < n - 1) { cols[nc] = row + n * n; vals[nc++] = -1.0; }
    PetscCall(MatSetValues(*A, 1, &row, nc, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode ProblemCreateVecLap3D(MPI_Comm comm, PetscInt n, Mat *A)
{
  const PetscScalar K[3][3] = {{1.0, 0.5, 0.25}, {0.5, 1.0, 0.5}, {0.25, 0.5, 1.0}};
  PetscInt          nodes = n * n * n, local = PETSC_DECIDE, rstart, rend, row;
  PetscReal         skew  = 0.0;

  PetscFunctionBegin;
  /* -problem_block_skew s adds s (d - c) to the coupling of component c to
     d: nonsymmetric point blocks (B != B^T), which a fused point-block
     Jacobi must apply the right way round */
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-problem_block_skew", &skew, NULL));
  PetscCall(PetscSplitOwnership(comm, &local, &nodes)); /* whole points on each rank */
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, 3 * local, 3 * local, 3 * nodes, 3 * nodes));
  PetscCall(MatSetBlockSize(*A, 3));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 9, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 9, NULL, 6, NULL));
  PetscCall(MatSetUp(*A));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (row = rstart; row < rend; row++) {
    PetscInt    c = row % 3, node = row / 3, i = node % n, j = (node / n) % n, k = node / (n * n), cols[9], nc = 0;
    PetscScalar vals[9];

    if (k > 0) { cols[nc] = row - 3 * n * n; vals[nc++] = -1.0; }
    if (j > 0) { cols[nc] = row - 3 * n; vals[nc++] = -1.0; }
    if (i > 0) { cols[nc] = row - 3; vals[nc++] = -1.0; }
    for (PetscInt d = 0; d < 3; d++) { cols[nc] = 3 * node + d; vals[nc++] = K[c][d] + (d == c ? 6.0 : 0.0) + skew * (PetscReal)(d - c); }
    if (i < n - 1) { cols[nc] = row + 3; vals[nc++] = -1.0; }
    if (j < n - 1) { cols[nc] = row + 3 * n; vals[nc++] = -1.0; }
    if (k < n - 1) { cols[nc] = row + 3 * n * n; vals[nc++] = -1.0; }
    PetscCall(MatSetValues(*A, 1, &row, nc, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* Kept Dirichlet rows: the boundary points of an n^3 grid keep their rows as
   scale times the identity; the interior rows keep their boundary columns */
static PetscErrorCode ProblemCreateKept3D(MPI_Comm comm, PetscInt n, Mat *A)
{
  PetscInt  N = n * n * n, rstart, rend, row;
  PetscReal scale = 6.0;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-problem_dirichlet_scale", &scale, NULL));
  PetscCheck(scale > 0.0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-problem_dirichlet_scale %g must be positive", (double)scale);
  PetscCall(ProblemMatCreate(comm, N, 7, 4, A));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (row = rstart; row < rend; row++) {
    PetscInt    i = row % n, j = (row / n) % n, k = row / (n * n), cols[7], nc = 0;
    PetscScalar vals[7];

    if (i == 0 || j == 0 || k == 0 || i == n - 1 || j == n - 1 || k == n - 1) {
      cols[nc] = row; vals[nc++] = scale;
    } else {
      cols[nc] = row - n * n; vals[nc++] = -1.0;
      cols[nc] = row - n; vals[nc++] = -1.0;
      cols[nc] = row - 1; vals[nc++] = -1.0;
      cols[nc] = row; vals[nc++] = 6.0;
      cols[nc] = row + 1; vals[nc++] = -1.0;
      cols[nc] = row + n; vals[nc++] = -1.0;
      cols[nc] = row + n * n; vals[nc++] = -1.0;
    }
    PetscCall(MatSetValues(*A, 1, &row, nc, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* -div(k grad u) on the unit square, Dirichlet, 5 points: k per cell (point)
   of a checkerboard of 4 x 4 squares (jump) or k_y = anisotropy */
static PetscErrorCode ProblemCreateCoefficient2D(MPI_Comm comm, PetscInt n, PetscReal jump, PetscReal anisotropy, Mat *A)
{
  PetscInt N = n * n, rstart, rend, row, side = n / 4 > 0 ? n / 4 : 1;

  PetscFunctionBegin;
  PetscCall(ProblemMatCreate(comm, N, 5, 2, A));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (row = rstart; row < rend; row++) {
    const PetscInt i = row % n, j = row / n;
    PetscInt       cols[5], nc = 0, d, ni[4] = {i, i - 1, i + 1, i}, nj[4] = {j - 1, j, j, j + 1};
    PetscScalar    vals[5], diag = 0.0;
#define COEFF(a, b) ((((a) / side + (b) / side) % 2) ? jump : 1.0)
    const PetscReal k = COEFF(i, j);

    for (d = 0; d < 4; d++) {
      /* the face's coefficient: harmonic mean of the two points' (a boundary face: the point's own) */
      const PetscBool inside = (PetscBool)(ni[d] >= 0 && ni[d] < n && nj[d] >= 0 && nj[d] < n);
      const PetscReal kn = inside ? COEFF(ni[d], nj[d]) : k, face = 2.0 * k * kn / (k + kn) * ((d == 0 || d == 3) ? anisotropy : 1.0);

      diag += face;
      if (inside) { cols[nc] = nj[d] * n + ni[d]; vals[nc++] = -face; }
    }
#undef COEFF
    cols[nc] = row; vals[nc++] = diag;
    PetscCall(MatSetValues(*A, 1, &row, nc, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* Rows with hubs (arrow, powerlaw): row r couples to r - 1 and r + 1 and,
   for each hub k at row hub(k), hub k couples to the rows j != hub(k) with
   j = k mod stride(k), both ways. Every coupling is -1 (a pair found twice
   adds up, on both sides alike), the diagonal is 1 plus the row's
   couplings: symmetric and strictly diagonally dominant. */
typedef struct {
  PetscInt n, hubs, s0;
} Hubs;

static PetscInt HubRow(const Hubs *h, PetscInt k)
{
  return k * (h->n / h->hubs);
}

static PetscInt HubStride(const Hubs *h, PetscInt k)
{
  return (k + 1) * h->s0;
}

static PetscBool HubCouples(const Hubs *h, PetscInt k, PetscInt j)
{
  return (PetscBool)(j != HubRow(h, k) && j % HubStride(h, k) == k % HubStride(h, k));
}

/* row's columns (with repeats) into cols, or only their count where cols is NULL */
static PetscInt HubRowColumns(const Hubs *h, PetscInt row, PetscInt *cols)
{
  PetscInt nc = 0;
  if (row > 0) { if (cols) cols[nc] = row - 1; nc++; }
  if (row < h->n - 1) { if (cols) cols[nc] = row + 1; nc++; }
  for (PetscInt k = 0; k < h->hubs; k++) {
    if (HubCouples(h, k, row)) { if (cols) cols[nc] = HubRow(h, k); nc++; }
    if (row == HubRow(h, k))
      for (PetscInt j = k % HubStride(h, k); j < h->n; j += HubStride(h, k))
        if (j != row) { if (cols) cols[nc] = j; nc++; }
  }
  return nc;
}

static PetscErrorCode ProblemCreateHubs(MPI_Comm comm, PetscInt n, PetscInt hubs, PetscInt longest, Mat *A)
{
  Hubs         h;
  PetscInt     rstart, rend, room = 0, *cols = NULL, *dnz, *onz;
  PetscScalar *vals = NULL;

  PetscFunctionBegin;
  PetscCheck(n >= 2, comm, PETSC_ERR_ARG_OUTOFRANGE, "-n %" PetscInt_FMT ": a matrix with hubs needs at least 2 rows", n);
  PetscCheck(hubs >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-problem_hubs %" PetscInt_FMT " must be at least 1", hubs);
  PetscCheck(longest >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-problem_longest %" PetscInt_FMT " must be at least 1", longest);
  h.n    = n;
  h.hubs = PetscMin(hubs, n);
  h.s0   = PetscMax(1, n / longest);
  {
    PetscInt m = PETSC_DECIDE, N = n; /* the rows each rank owns, as PETSC_DECIDE splits them */
    PetscCall(PetscSplitOwnership(comm, &m, &N));
    PetscCallMPI(MPI_Scan(&m, &rend, 1, MPIU_INT, MPI_SUM, comm));
    rstart = rend - m;
    PetscCall(MatCreate(comm, A));
    PetscCall(MatSetSizes(*A, m, m, n, n));
    PetscCall(MatSetFromOptions(*A));
  }
  PetscCall(PetscCalloc2(rend - rstart + 1, &dnz, rend - rstart + 1, &onz));
  /* two passes over the rows: the distinct columns for the preallocation, then the values */
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      PetscCall(MatSeqAIJSetPreallocation(*A, 0, dnz));
      PetscCall(MatMPIAIJSetPreallocation(*A, 0, dnz, 0, onz));
      PetscCall(MatSetUp(*A));
    }
    for (PetscInt row = rstart; row < rend; row++) {
      PetscInt nc = HubRowColumns(&h, row, NULL);
      if (nc + 1 > room) {
        PetscCall(PetscFree2(cols, vals));
        room = PetscMax(2 * room, nc + 1);
        PetscCall(PetscMalloc2(room, &cols, room, &vals));
      }
      (void)HubRowColumns(&h, row, cols);
      if (pass == 0) {
        PetscCall(PetscSortRemoveDupsInt(&nc, cols));
        dnz[row - rstart] = 1; /* the diagonal */
        for (PetscInt c = 0; c < nc; c++) {
          if (cols[c] >= rstart && cols[c] < rend) dnz[row - rstart]++;
          else onz[row - rstart]++;
        }
      } else {
        for (PetscInt c = 0; c < nc; c++) vals[c] = -1.0;
        PetscCall(MatSetValues(*A, 1, &row, nc, cols, vals, ADD_VALUES));
        PetscCall(MatSetValue(*A, row, row, 1.0 + (PetscScalar)nc, ADD_VALUES));
      }
    }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree2(cols, vals));
  PetscCall(PetscFree2(dnz, onz));
  PetscFunctionReturn(0);
}

/* -problem_variable_blocks: point blocks of 1, 2 and 3 rows in turn over
   each rank's rows (the last cut to fit), for PCVPBJACOBI */
static PetscErrorCode ProblemSetVariableBlocks(Mat A)
{
  PetscInt m, nblocks = 0, covered = 0, *sizes;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(A, &m, NULL));
  PetscCall(PetscMalloc1(m, &sizes));
  while (covered < m) {
    sizes[nblocks] = PetscMin(1 + nblocks % 3, m - covered);
    covered += sizes[nblocks++];
  }
  PetscCall(MatSetVariableBlockSizes(A, nblocks, sizes));
  PetscCall(PetscFree(sizes));
  PetscFunctionReturn(0);
}

/* -problem_scale S (at least 1): A becomes D A D with d_i = S^u_i, u_i in
   [-1, 1] spread over the rows by a hash of the global row index (the same
   on any number of ranks): a badly scaled operator, entries over S^4 orders
   apart, whose Jacobi-preconditioned form is that of A itself */
static PetscErrorCode ProblemScaleBadly(Mat A)
{
  PetscReal scale = 1.0;
  PetscBool set;
  Vec       d;
  PetscInt  lo, hi;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-problem_scale", &scale, &set));
  if (!set) PetscFunctionReturn(0);
  PetscCheck(scale >= 1.0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-problem_scale %g must be at least 1", (double)scale);
  PetscCall(MatCreateVecs(A, &d, NULL));
  PetscCall(VecGetOwnershipRange(d, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) {
    /* Knuth's multiplicative hash of the row, to [-1, 1] */
    const unsigned int h = (unsigned int)i * 2654435761u;
    const PetscReal    u = 2.0 * ((PetscReal)h / 4294967295.0) - 1.0;
    PetscCall(VecSetValue(d, i, PetscPowReal(scale, u), INSERT_VALUES));
  }
  PetscCall(VecAssemblyBegin(d));
  PetscCall(VecAssemblyEnd(d));
  PetscCall(MatDiagonalScale(A, d, d));
  /* a type whose device copy is made at assembly (hybcuda) takes the new values there */
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(VecDestroy(&d));
  PetscFunctionReturn(0);
}

PetscErrorCode ProblemCreate(MPI_Comm comm, ProblemType type, PetscInt n, Mat *A)
{
  PetscBool negate = PETSC_FALSE, vblocks = PETSC_FALSE, symmetric = PETSC_FALSE;
  PetscReal jump = 1e6, anisotropy = 1e-3;

  PetscFunctionBegin;
  PetscCheck(n >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "Problem size -n %" PetscInt_FMT " must be at least 1", n);
  {
    /* the rows, n^2 or n^3, must be a PetscInt */
    const int      dim  = (type == PROBLEM_LAP3D || type == PROBLEM_KEPT3D || type == PROBLEM_VECLAP3D) ? 3 : (type == PROBLEM_ARROW || type == PROBLEM_POWERLAW ? 1 : 2);
    const double   rows = (type == PROBLEM_VECLAP3D ? 3.0 : 1.0) * (dim == 3 ? (double)n * n * n : (dim == 2 ? (double)n * n : (double)n));
    const PetscInt most = type == PROBLEM_VECLAP3D ? 894 : (dim == 3 ? 1290 : (dim == 2 ? 46340 : PETSC_MAX_INT));

    PetscCheck(rows <= (double)PETSC_MAX_INT, comm, PETSC_ERR_ARG_OUTOFRANGE, "Problem size -n %" PetscInt_FMT ": the %dD problem would have %.0f rows, more than a %d-bit PetscInt counts; at most -n %" PetscInt_FMT, n, dim, rows, (int)(8 * sizeof(PetscInt)), most);
  }
  switch (type) {
  case PROBLEM_LAP2D:
    PetscCall(ProblemCreateStencil2D(comm, n, PETSC_FALSE, PETSC_FALSE, A));
    break;
  case PROBLEM_LAP3D:
    PetscCall(ProblemCreateLap3D(comm, n, A));
    break;
  case PROBLEM_CONVDIFF:
    PetscCall(ProblemCreateStencil2D(comm, n, PETSC_TRUE, PETSC_FALSE, A));
    break;
  case PROBLEM_NEUMANN2D:
    PetscCall(ProblemCreateStencil2D(comm, n, PETSC_FALSE, PETSC_TRUE, A));
    break;
  case PROBLEM_KEPT3D:
    PetscCall(ProblemCreateKept3D(comm, n, A));
    break;
  case PROBLEM_JUMP2D:
    PetscCall(PetscOptionsGetReal(NULL, NULL, "-problem_jump", &jump, NULL));
    PetscCheck(jump > 0.0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-problem_jump %g must be positive", (double)jump);
    PetscCall(ProblemCreateCoefficient2D(comm, n, jump, 1.0, A));
    break;
  case PROBLEM_ANISO2D:
    PetscCall(PetscOptionsGetReal(NULL, NULL, "-problem_anisotropy", &anisotropy, NULL));
    PetscCheck(anisotropy > 0.0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-problem_anisotropy %g must be positive", (double)anisotropy);
    PetscCall(ProblemCreateCoefficient2D(comm, n, 1.0, anisotropy, A));
    break;
  case PROBLEM_ARROW:
    PetscCall(ProblemCreateHubs(comm, n, 1, n, A));
    break;
  case PROBLEM_VECLAP3D:
    PetscCall(ProblemCreateVecLap3D(comm, n, A));
    break;
  case PROBLEM_POWERLAW: {
    PetscInt hubs = 64, longest = 5000;
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-problem_hubs", &hubs, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-problem_longest", &longest, NULL));
    PetscCall(ProblemCreateHubs(comm, n, hubs, longest, A));
  } break;
  }
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-problem_negate", &negate, NULL));
  if (negate) PetscCall(MatScale(*A, -1.0));
  PetscCall(ProblemScaleBadly(*A));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-problem_variable_blocks", &vblocks, NULL));
  if (vblocks) PetscCall(ProblemSetVariableBlocks(*A));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-problem_symmetric", &symmetric, NULL));
  if (symmetric) {
    PetscBool is_symmetric;

    /* as a user who knows would say it: checked first, exactly */
    PetscCall(MatIsSymmetric(*A, 0.0, &is_symmetric));
    PetscCheck(is_symmetric, comm, PETSC_ERR_ARG_WRONG, "-problem_symmetric: the matrix of -problem %s is not symmetric", ProblemTypes[type]);
    PetscCall(MatSetOption(*A, MAT_SYMMETRIC, PETSC_TRUE));
  }
  PetscFunctionReturn(0);
}

const char *const BandKinds[] = {"none", "band", "fiveband", "BandKind", "BAND_", NULL};

PetscErrorCode ProblemCreateBanded(MPI_Comm comm, Mat A, BandKind kind, PetscInt m, Mat *B)
{
  const PetscReal coupling = 0.15; /* times a block row's 6 neighbours at most: 0.9, below 1 */
  PetscInt        n, N, rstart, rend, row, offsets[5], noff = 0, maxlen = 0, k;
  PetscInt       *cols;
  PetscScalar    *vals;

  PetscFunctionBegin;
  PetscCheck(kind != BAND_NONE, comm, PETSC_ERR_ARG_WRONG, "no band kind given");
  PetscCheck(m >= (kind == BAND_FIVEBAND ? 8 : 4), comm, PETSC_ERR_ARG_OUTOFRANGE, "-band_copies %" PetscInt_FMT ": a %s matrix needs at least %d copies (its far bands lie m/2%s block rows away)", m, BandKinds[kind], kind == BAND_FIVEBAND ? 8 : 4, kind == BAND_FIVEBAND ? " and m/4" : "");
  PetscCall(MatGetSize(A, &n, &k));
  PetscCheck(n == k && n > 0, comm, PETSC_ERR_ARG_SIZ, "the band's copies need a square, nonempty matrix, not %" PetscInt_FMT " x %" PetscInt_FMT, n, k);
  PetscCheck((PetscReal)m * n < (PetscReal)PETSC_MAX_INT, comm, PETSC_ERR_ARG_OUTOFRANGE, "%" PetscInt_FMT " copies of %" PetscInt_FMT " rows overflow PetscInt", m, n);
  N            = m * n;
  offsets[noff++] = 0;
  offsets[noff++] = 1;
  offsets[noff++] = m / 2;
  if (kind == BAND_FIVEBAND) offsets[noff++] = m / 4;
  for (row = 0; row < n; row++) {
    PetscInt len;
    PetscCall(MatGetRow(A, row, &len, NULL, NULL));
    maxlen = PetscMax(maxlen, len);
    PetscCall(MatRestoreRow(A, row, &len, NULL, NULL));
  }
  PetscCall(MatCreate(comm, B));
  PetscCall(MatSetSizes(*B, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetFromOptions(*B));
  /* each row: its A row in at most 2 noff - 1 block columns */
  PetscCall(MatSeqAIJSetPreallocation(*B, (2 * noff - 1) * maxlen, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*B, (2 * noff - 1) * maxlen, NULL, (2 * noff - 2) * maxlen, NULL));
  PetscCall(MatSetUp(*B));
  PetscCall(MatGetOwnershipRange(*B, &rstart, &rend));
  PetscCall(PetscMalloc2(maxlen, &cols, maxlen, &vals));
  for (row = rstart; row < rend; row++) {
    const PetscInt     blk = row / n, r = row % n;
    const PetscInt    *acols;
    const PetscScalar *avals;
    PetscInt           len;

    PetscCall(MatGetRow(A, r, &len, &acols, &avals));
    for (PetscInt o = 0; o < noff; o++) {
      for (PetscInt sign = (offsets[o] ? -1 : 1); sign <= 1; sign += 2) {
        const PetscInt bj = blk + sign * offsets[o];
        if (bj < 0 || bj >= m) continue;
        for (k = 0; k < len; k++) {
          cols[k] = bj * n + acols[k];
          vals[k] = offsets[o] ? coupling * avals[k] : avals[k];
        }
        PetscCall(MatSetValues(*B, 1, &row, len, cols, vals, INSERT_VALUES));
      }
    }
    PetscCall(MatRestoreRow(A, r, &len, &acols, &avals));
  }
  PetscCall(PetscFree2(cols, vals));
  PetscCall(MatAssemblyBegin(*B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*B, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

PetscErrorCode ProblemLoad(MPI_Comm comm, const char path[], Mat *A)
{
  PetscBool mtx;

  PetscFunctionBegin;
  PetscCall(PetscStrendswith(path, ".mtx", &mtx));
  if (mtx) PetscCall(MatLoadMatrixMarket(comm, path, A));
  else {
    PetscViewer viewer;

    PetscCall(PetscViewerBinaryOpen(comm, path, FILE_MODE_READ, &viewer));
    PetscCall(MatCreate(comm, A));
    PetscCall(MatSetFromOptions(*A));
    PetscCall(MatLoad(*A, viewer));
    PetscCall(PetscViewerDestroy(&viewer));
  }
  PetscCall(ProblemScaleBadly(*A));
  PetscFunctionReturn(0);
}

PetscErrorCode ProblemExactSolution(Mat A, Vec *xstar, Vec *b)
{
  PetscInt     rstart, rend, i, N;
  PetscScalar *x;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(A, xstar, b));
  PetscCall(VecGetSize(*xstar, &N));
  PetscCall(VecGetOwnershipRange(*xstar, &rstart, &rend));
  PetscCall(VecGetArrayWrite(*xstar, &x));
  for (i = rstart; i < rend; i++) x[i - rstart] = 1.0 + 0.5 * PetscSinReal(6.283185307179586 * (PetscReal)i / (PetscReal)N * 3.0);
  PetscCall(VecRestoreArrayWrite(*xstar, &x));
  PetscCall(MatMult(A, *xstar, *b));
  PetscFunctionReturn(0);
}

PetscErrorCode ProblemTrueResidual(Mat A, Vec b, Vec x, PetscReal *rel)
{
  Vec       r;
  PetscReal rn, bn;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(b, &r));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rn));
  PetscCall(VecNorm(b, NORM_2, &bn));
  *rel = bn > 0 ? rn / bn : rn;
  PetscCall(VecDestroy(&r));
  PetscFunctionReturn(0);
}

PetscErrorCode ProblemRelativeError(Vec x, Vec xstar, PetscReal *err)
{
  Vec       e;
  PetscReal en, xn;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(x, &e));
  PetscCall(VecWAXPY(e, -1.0, xstar, x));
  PetscCall(VecNorm(e, NORM_2, &en));
  PetscCall(VecNorm(xstar, NORM_2, &xn));
  *err = en / xn;
  PetscCall(VecDestroy(&e));
  PetscFunctionReturn(0);
}

PetscErrorCode ProblemIgnoreKSPType(const char *program, const char *instead)
{
  char      type[64];
  PetscBool set;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-ksp_type", type, sizeof(type), &set));
  if (!set) PetscFunctionReturn(0);
  PetscCall(PetscFPrintf(PETSC_COMM_WORLD, PETSC_STDERR, "%s: warning: -ksp_type %s is ignored: each row runs its own method with the other options; %s\n", program, type, instead));
  PetscCall(PetscOptionsClearValue(NULL, "-ksp_type"));
  PetscFunctionReturn(0);
}

PetscBool ProblemIsFusedType(const char *type)
{
  return (PetscBool)(!strcmp(type, KSPPCGFUSED) || !strcmp(type, KSPPBCGSFUSED) || !strcmp(type, KSPPGMRESFUSED));
}

PetscErrorCode ProblemBackendLabel(KSP ksp, char *label, size_t len)
{
  KSPType            type;
  Mat                A;
  Vec                x;
  const PetscScalar *a;
  PetscMemType       mtype;
  PetscBool          devmat;

  PetscFunctionBegin;
  PetscCall(KSPGetType(ksp, &type));
  if (ProblemIsFusedType(type)) {
    KSPFusedBackend used;

    PetscCall(KSPFusedGetBackendUsed(ksp, &used));
    PetscCall(PetscStrncpy(label, used == KSP_FUSED_BACKEND_CUDA ? "GPU (CUDA)" : "CPU (reference)", len));
    PetscFunctionReturn(0);
  }
  PetscCall(KSPGetSolution(ksp, &x));
  PetscCall(VecGetArrayReadAndMemType(x, &a, &mtype));
  PetscCall(VecRestoreArrayReadAndMemType(x, &a));
  PetscCall(KSPGetOperators(ksp, &A, NULL));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &devmat, MATSEQHYBCUDA, MATMPIHYBCUDA, "seqaijcusparse", "mpiaijcusparse", ""));
  if (PetscMemTypeDevice(mtype)) PetscCall(PetscStrncpy(label, "GPU (PETSc)", len));
  else PetscCall(PetscStrncpy(label, devmat ? "CPU + GPU Mat" : "CPU (PETSc)", len));
  PetscFunctionReturn(0);
}

PetscErrorCode ProblemPreInitialize(void)
{
#if defined(PETSC_HAVE_CUDA) && !(defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT)
  /* set first, so that the command line and PETSC_OPTIONS, read by PetscInitialize(), override it */
  return PetscOptionsSetValue(NULL, "-use_gpu_aware_mpi", "0");
#else
  return 0;
#endif
}

PetscErrorCode ProblemPreferDevice(PetscBool *device)
{
  PetscFunctionBegin;
  *device = PETSC_FALSE;
#if defined(PETSC_HAVE_CUDA)
  {
    PetscInt  ndev;
    char      type[64] = "";
    PetscBool set;

    PetscCall(PetscFusedCUDADeviceCount(&ndev, NULL, 0));
    PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_type", type, sizeof(type), &set));
    if (ndev > 0 && !set) {
      PetscCall(PetscOptionsSetValue(NULL, "-mat_type", "aijcusparse"));
      PetscCall(PetscStrcpy(type, "aijcusparse"));
    }
    *device = (PetscBool)(ndev > 0 && strstr(type, "cusparse") != NULL);
  }
#endif
  PetscFunctionReturn(0);
}
