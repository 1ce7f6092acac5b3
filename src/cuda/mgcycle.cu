/* A multigrid V-cycle on the device: per level an operator, the inverse
   diagonal of Jacobi and a smoothing polynomial in the Jacobi-preconditioned
   operator, an interpolation and a restriction, and a dense coarsest solve.
   The C side finds these in a PETSc hierarchy (src/ksp/fusedmg.c); here
   nothing is known of PETSc. Each smoothing step is one kernel: the product
   with the level's operator and the vector updates around it together. */
#include <stdlib.h>
#include <string.h>
#include "cuda/fusedcuda_impl.cuh"

struct FusedDevMGLevel {
  int         n;
  FusedDevMat A, P, R;   /* borrowed: P is n x n_below, R n_below x n */
  double     *dinv;      /* Jacobi's inverse diagonal */
  double      coef[FUSED_MG_MAX_DEGREE];
  int         m;         /* coefficients of the smoother: x = x0 + sum_j coef[j] (BA)^j B (b - A x0) */
  int         lanes, planes; /* threads a row in products with A and with P (1: a thread) */
  double     *b, *x;     /* the level's right-hand side and iterate (the finest level's are the caller's) */
  double     *u, *w[2];  /* B (b - A x), and the polynomial's partial sums */
};

struct FusedDevMG_s {
  int              device, nlevels;
  FusedDevMGLevel *lev;
  double          *coarse; /* n[0] x n[0], row by row */
  size_t           bytes;
};

/* u(i) = dinv[i] b[i], computed where it is read (the pre-smoother's start: x0 = 0) */
struct FusedMGScaled {
  static constexpr bool gather = false;
  const double *__restrict__ b, *__restrict__ dinv;
  __device__ __forceinline__ double operator()(int j) const { return dinv[j] * b[j]; }
};

/* out = (add ? add : 0) + c u + s B (A w): one step of the smoother's
   polynomial by Horner's rule. add may be out (x += ...): each thread reads
   and writes only its own row of both. */
template <class U, class W>
__global__ static void FusedMGStepKernel(FusedMatView A, U u, W w, double s, const double *__restrict__ dinv, double c, const double *add, double *out)
{
  FUSED_GRID_LOOP(i, A.n)
  {
    const double t = (add ? add[i] : 0.0) + c * u(i) + s * dinv[i] * FusedRowProductOf(A, w, i);
    out[i]         = t;
  }
}

/* out = (dinv ? dinv : 1) (b - A x) */
__global__ static void FusedMGResidualKernel(FusedMatView A, const double *__restrict__ x, const double *__restrict__ b, const double *__restrict__ dinv, double *__restrict__ out)
{
  FUSED_GRID_LOOP(i, A.n)
  {
    const double r = b[i] - FusedRowProduct(A, x, i);
    out[i]         = dinv ? dinv[i] * r : r;
  }
}

/* x += P xc */
__global__ static void FusedMGInterpolateAddKernel(FusedMatView P, const double *__restrict__ xc, double *x)
{
  FUSED_GRID_LOOP(i, P.n) x[i] += FusedRowProduct(P, xc, i);
}

/* The same three with `lanes` threads a row: for ELL, HYB and CSR levels
   whose rows are long on average (GAMG's coarse operators: 30 to 150
   entries), which one thread a row leaves to few threads each with a long
   walk (a level of 847 rows took as long as the finest of 4 x 10^6) */
template <class U, class W>
__global__ static void FusedMGStepLanesKernel(FusedMatView A, int lanes, U u, W w, double s, const double *__restrict__ dinv, double c, const double *add, double *out)
{
  FusedRowsInGroups<FUSED_BLOCK>(A, w, lanes, [&](int i, double y) { out[i] = (add ? add[i] : 0.0) + c * u(i) + s * dinv[i] * y; });
}

__global__ static void FusedMGResidualLanesKernel(FusedMatView A, int lanes, const double *__restrict__ x, const double *__restrict__ b, const double *__restrict__ dinv, double *__restrict__ out)
{
  FusedRowsInGroups<FUSED_BLOCK>(A, FusedStored{x}, lanes, [&](int i, double y) {
    const double r = b[i] - y;
    out[i]         = dinv ? dinv[i] * r : r;
  });
}

__global__ static void FusedMGInterpolateAddLanesKernel(FusedMatView P, int lanes, const double *__restrict__ xc, double *x)
{
  FusedRowsInGroups<FUSED_BLOCK>(P, FusedStored{xc}, lanes, [&](int i, double y) { x[i] += y; });
}

/* x = c dinv b */
__global__ static void FusedMGScaleKernel(int n, double c, const double *__restrict__ dinv, const double *__restrict__ b, double *__restrict__ x)
{
  FUSED_GRID_LOOP(i, n) x[i] = c * dinv[i] * b[i];
}

/* x += c u */
__global__ static void FusedMGAxpyKernel(int n, double c, const double *__restrict__ u, double *x)
{
  FUSED_GRID_LOOP(i, n) x[i] += c * u[i];
}

/* y = C b, C dense n x n row by row: a warp a row, its loads side by side */
__global__ static void FusedMGDenseKernel(int n, const double *__restrict__ C, const double *__restrict__ b, double *__restrict__ y)
{
  const int lane = threadIdx.x & 31, warps = gridDim.x * (blockDim.x / 32);
  for (int i = (int)(blockIdx.x * blockDim.x + threadIdx.x) / 32; i < n; i += warps) {
    double s = 0.0;
    for (int j = lane; j < n; j += 32) s += C[(size_t)i * n + j] * b[j];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0) y[i] = s;
  }
}

static int Grid(int n)
{
  const int blocks = (n + FUSED_BLOCK - 1) / FUSED_BLOCK;
  return blocks < 1 ? 1 : (blocks < 65535 ? blocks : 65535);
}

/* Threads a row for A's products: a power of two below the mean row
   length, at most a warp, where rows hold FUSED_MG_LANES_MEAN entries or
   more on average; else 1. On an H200 at 160^3 (GAMG) a group a row took
   8 and 33 us against 85 on levels of 155 and 127 entries a row, but 179
   against 56 on one of 33 and 201 against 78 for the interpolation's 4: a
   group reads an ELL part's columns in pieces, and short rows leave its
   lanes idle. */
#define FUSED_MG_LANES_MEAN 48.0
static int Lanes(FusedDevMat A)
{
  const int n = A->view.n;
  if (A->view.format == FUSED_FORMAT_DIA || n == 0) return 1;
  const double mean  = A->view.K + (double)A->tail / n;
  int          lanes = 1;
  if (mean < FUSED_MG_LANES_MEAN) return 1;
  while (lanes < 32 && lanes < mean) lanes *= 2;
  return lanes;
}

static int GroupGrid(int n, int lanes)
{
  const long long blocks = ((long long)n * lanes + FUSED_BLOCK - 1) / FUSED_BLOCK;
  return blocks < 1 ? 1 : (blocks < 65535 ? (int)blocks : 65535);
}

/* out = (add ? add : 0) + c u + s B (A w) on A's rows, a thread or a group a row */
template <class U, class W>
static int LaunchStep(FusedDevMat A, int lanes, U u, W w, double s, const double *dinv, double c, const double *add, double *out, cudaStream_t stream)
{
  if (lanes > 1) FusedMGStepLanesKernel<<<GroupGrid(A->view.n, lanes), FUSED_BLOCK, 0, stream>>>(A->view, lanes, u, w, s, dinv, c, add, out);
  else FusedMGStepKernel<<<Grid(A->view.n), FUSED_BLOCK, 0, stream>>>(A->view, u, w, s, dinv, c, add, out);
  FUSED_CUDA_CHECK_LAUNCH("FusedMGStepKernel");
  return FUSED_CUDA_OK;
}

/* out = (dinv ? dinv : 1) (b - A x), the long rows summed first */
static int LaunchResidual(FusedDevMat A, int lanes, const double *x, const double *b, const double *dinv, double *out, cudaStream_t stream)
{
  if (int err = FusedLongRowsBefore(A, x, stream)) return err;
  if (lanes > 1) FusedMGResidualLanesKernel<<<GroupGrid(A->view.n, lanes), FUSED_BLOCK, 0, stream>>>(A->view, lanes, x, b, dinv, out);
  else FusedMGResidualKernel<<<Grid(A->view.n), FUSED_BLOCK, 0, stream>>>(A->view, x, b, dinv, out);
  FUSED_CUDA_CHECK_LAUNCH("FusedMGResidualKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FusedDevMGCreate(int device, int nlevels, const int *n, FusedDevMG *out)
{
  FusedDevMG mg;
  int        err = FUSED_CUDA_OK;

  *out = NULL;
  if (nlevels < 1) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "a multigrid hierarchy of %d levels", nlevels);
  FUSED_CUDA_CHECK(cudaSetDevice(device));
  mg = (FusedDevMG)calloc(1, sizeof(*mg));
  if (!mg) return FusedCUDASetError(FUSED_CUDA_ERR_MEM, "host out of memory for the multigrid hierarchy");
  mg->lev = (FusedDevMGLevel *)calloc((size_t)nlevels, sizeof(*mg->lev));
  if (!mg->lev) {
    free(mg);
    return FusedCUDASetError(FUSED_CUDA_ERR_MEM, "host out of memory for the multigrid hierarchy");
  }
  mg->device  = device;
  mg->nlevels = nlevels;
  for (int l = 0; l < nlevels && !err; l++) {
    FusedDevMGLevel *L     = &mg->lev[l];
    const size_t     bytes = sizeof(double) * (size_t)(n[l] > 0 ? n[l] : 1);
    L->n                   = n[l];
    if (l < nlevels - 1) { /* the finest level's b and x are the caller's */
      if ((err = FusedMalloc((void **)&L->b, bytes, "a multigrid level's right-hand side"))) break;
      if ((err = FusedMalloc((void **)&L->x, bytes, "a multigrid level's iterate"))) break;
      mg->bytes += 2 * bytes;
    }
    if (l == 0) continue;
    if ((err = FusedMalloc((void **)&L->dinv, bytes, "a multigrid level's inverse diagonal"))) break;
    if ((err = FusedMalloc((void **)&L->u, bytes, "a multigrid level's scaled residual"))) break;
    if ((err = FusedMalloc((void **)&L->w[0], bytes, "a multigrid level's smoothing vector"))) break;
    if ((err = FusedMalloc((void **)&L->w[1], bytes, "a multigrid level's smoothing vector"))) break;
    mg->bytes += 4 * bytes;
  }
  if (err) {
    (void)FusedDevMGDestroy(&mg);
    return err;
  }
  *out = mg;
  return FUSED_CUDA_OK;
}

extern "C" int FusedDevMGSetLevel(FusedDevMG mg, int l, FusedDevMat A, const double *dinv, int m, const double *coef, FusedDevMat P, FusedDevMat R)
{
  FusedDevMGLevel *L;

  if (l < 1 || l >= mg->nlevels) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "multigrid level %d of %d: the smoothed levels are 1 and up", l, mg->nlevels);
  if (m < 0 || m > FUSED_MG_MAX_DEGREE) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "a smoother of %d steps (at most %d)", m, FUSED_MG_MAX_DEGREE);
  L = &mg->lev[l];
  if (A->view.n != L->n || A->ncols != L->n || A->nghost) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "multigrid level %d: a %d x %d operator with %d ghost values for %d rows", l, A->view.n, A->ncols, A->nghost, L->n);
  if (P->view.n != L->n || P->ncols != mg->lev[l - 1].n) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "multigrid level %d: a %d x %d interpolation between %d and %d rows", l, P->view.n, P->ncols, mg->lev[l - 1].n, L->n);
  if (R->view.n != mg->lev[l - 1].n || R->ncols != L->n) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "multigrid level %d: a %d x %d restriction between %d and %d rows", l, R->view.n, R->ncols, L->n, mg->lev[l - 1].n);
  L->A      = A;
  L->P      = P;
  L->R      = R;
  L->lanes  = Lanes(A);
  L->planes = Lanes(P);
  L->m = m;
  for (int j = 0; j < m; j++) L->coef[j] = coef[j];
  FUSED_CUDA_CHECK(cudaSetDevice(mg->device));
  FUSED_CUDA_CHECK(cudaMemcpy(L->dinv, dinv, sizeof(double) * (size_t)L->n, cudaMemcpyHostToDevice));
  return FUSED_CUDA_OK;
}

extern "C" int FusedDevMGSetCoarse(FusedDevMG mg, const double *dense)
{
  const size_t n = (size_t)mg->lev[0].n, bytes = sizeof(double) * (n * n > 0 ? n * n : 1);

  FUSED_CUDA_CHECK(cudaSetDevice(mg->device));
  if (!mg->coarse) {
    if (int err = FusedMalloc((void **)&mg->coarse, bytes, "the coarsest level's dense solve")) return err;
    mg->bytes += bytes;
  }
  FUSED_CUDA_CHECK(cudaMemcpy(mg->coarse, dense, sizeof(double) * n * n, cudaMemcpyHostToDevice));
  return FUSED_CUDA_OK;
}

extern "C" size_t FusedDevMGBytes(FusedDevMG mg)
{
  return mg ? mg->bytes : 0;
}

/* x = x0 + sum_j c_j (BA)^j u with u = B (b - A x0), by Horner's rule from
   the highest coefficient: w = c_{m-1} u, then w = c_j u + B A w, the last
   step adding x0. With x0 = 0 (pre-smoothing) u = B b is computed where it
   is read, and the first product reads it so. */
static int Smooth(FusedDevMGLevel *L, const double *b, double *x, int zero_guess, cudaStream_t stream)
{
  const int     grid = Grid(L->n), m = L->m;
  const double *u    = NULL;
  const double *w    = NULL;
  int           next = 0;

  if (m == 0) {
    if (zero_guess) FUSED_CUDA_CHECK(cudaMemsetAsync(x, 0, sizeof(double) * (size_t)L->n, stream));
    return FUSED_CUDA_OK;
  }
  if (zero_guess && m == 1) {
    FusedMGScaleKernel<<<grid, FUSED_BLOCK, 0, stream>>>(L->n, L->coef[0], L->dinv, b, x);
    FUSED_CUDA_CHECK_LAUNCH("FusedMGScaleKernel");
    return FUSED_CUDA_OK;
  }
  if (!zero_guess || L->A->view.lrows.nchunks) {
    /* u stored: the long rows are summed from a stored vector before the product */
    if (zero_guess) {
      FusedMGScaleKernel<<<grid, FUSED_BLOCK, 0, stream>>>(L->n, 1.0, L->dinv, b, L->u);
      FUSED_CUDA_CHECK_LAUNCH("FusedMGScaleKernel");
    } else if (int err = LaunchResidual(L->A, L->lanes, x, b, L->dinv, L->u, stream)) return err;
    u = L->u;
    if (m == 1) { /* x += c_0 u */
      FusedMGAxpyKernel<<<grid, FUSED_BLOCK, 0, stream>>>(L->n, L->coef[0], u, x);
      FUSED_CUDA_CHECK_LAUNCH("FusedMGAxpyKernel");
      return FUSED_CUDA_OK;
    }
  }
  for (int j = m - 2; j >= 0; j--) {
    const int     last = j == 0;
    double       *out  = last ? x : L->w[next];
    const double *add  = last && !zero_guess ? x : NULL;
    const double  s    = j == m - 2 ? L->coef[m - 1] : 1.0; /* the first step's w is c_{m-1} u */
    int           err;

    if (j == m - 2) {
      if (u) {
        if ((err = FusedLongRowsBefore(L->A, u, stream))) return err;
        err = LaunchStep(L->A, L->lanes, FusedStored{u}, FusedStored{u}, s, L->dinv, L->coef[j], add, out, stream);
      } else {
        const FusedMGScaled us = {b, L->dinv};
        err                    = LaunchStep(L->A, L->lanes, us, us, s, L->dinv, L->coef[j], add, out, stream);
      }
    } else {
      if ((err = FusedLongRowsBefore(L->A, w, stream))) return err;
      if (u) err = LaunchStep(L->A, L->lanes, FusedStored{u}, FusedStored{w}, s, L->dinv, L->coef[j], add, out, stream);
      else err = LaunchStep(L->A, L->lanes, FusedMGScaled{b, L->dinv}, FusedStored{w}, s, L->dinv, L->coef[j], add, out, stream);
    }
    if (err) return err;
    w    = out;
    next = 1 - next;
  }
  return FUSED_CUDA_OK;
}

/* One V-cycle of the hierarchy from a zero guess, as PETSc's PCMG applies
   one: pre-smoothing down to the coarsest level, its dense solve, and the
   interpolated corrections with post-smoothing up */
extern "C" int FusedDevMGApply(FusedDevMG mg, FusedCUDA ctx, const double *in, double *out)
{
  const cudaStream_t stream = ctx->stream;
  const int          top    = mg->nlevels - 1;

  if (!mg->coarse) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the multigrid hierarchy has no coarse solve");
  FUSED_CUDA_CHECK(cudaSetDevice(mg->device));
  for (int l = top; l >= 1; l--) {
    FusedDevMGLevel *L = &mg->lev[l];
    const double    *b = l == top ? in : L->b;
    double          *x = l == top ? out : L->x;

    if (int err = Smooth(L, b, x, 1, stream)) return err;
    if (int err = LaunchResidual(L->A, L->lanes, x, b, NULL, L->u, stream)) return err;
    if (int err = FusedDevMatMultDevice(L->R, L->u, mg->lev[l - 1].b, stream)) return err;
  }
  {
    const int n0 = mg->lev[0].n, blocks = (n0 * 32 + FUSED_BLOCK - 1) / FUSED_BLOCK;
    FusedMGDenseKernel<<<blocks < 1 ? 1 : (blocks < 65535 ? blocks : 65535), FUSED_BLOCK, 0, stream>>>(n0, mg->coarse, top ? mg->lev[0].b : in, top ? mg->lev[0].x : out);
    FUSED_CUDA_CHECK_LAUNCH("FusedMGDenseKernel");
  }
  for (int l = 1; l <= top; l++) {
    FusedDevMGLevel *L = &mg->lev[l];
    const double    *b = l == top ? in : L->b;
    double          *x = l == top ? out : L->x;

    if (int err = FusedLongRowsBefore(L->P, mg->lev[l - 1].x, stream)) return err;
    if (L->planes > 1) FusedMGInterpolateAddLanesKernel<<<GroupGrid(L->n, L->planes), FUSED_BLOCK, 0, stream>>>(L->P->view, L->planes, mg->lev[l - 1].x, x);
    else FusedMGInterpolateAddKernel<<<Grid(L->n), FUSED_BLOCK, 0, stream>>>(L->P->view, mg->lev[l - 1].x, x);
    FUSED_CUDA_CHECK_LAUNCH("FusedMGInterpolateAddKernel");
    if (int err = Smooth(L, b, x, 0, stream)) return err;
  }
  return FUSED_CUDA_OK;
}

extern "C" int FusedDevMGDestroy(FusedDevMG *mg)
{
  int err = FUSED_CUDA_OK;

  if (!*mg) return FUSED_CUDA_OK;
  if (cudaSetDevice((*mg)->device) != cudaSuccess) err = FusedCUDASetError(FUSED_CUDA_ERR_LIB, "cudaSetDevice(%d) while freeing the multigrid hierarchy", (*mg)->device);
  for (int l = 0; l < (*mg)->nlevels; l++) {
    FusedDevMGLevel *L     = &(*mg)->lev[l];
    double          *p[]   = {L->b, L->x, L->dinv, L->u, L->w[0], L->w[1]};
    for (double *q : p) {
      const cudaError_t e = q ? cudaFree(q) : cudaSuccess;
      if (e != cudaSuccess && !err) err = FusedCUDAFail(e, "cudaFree (a multigrid level's vector)", __FILE__, __LINE__);
    }
  }
  if ((*mg)->coarse) {
    const cudaError_t e = cudaFree((*mg)->coarse);
    if (e != cudaSuccess && !err) err = FusedCUDAFail(e, "cudaFree (the coarsest level's dense solve)", __FILE__, __LINE__);
  }
  free((*mg)->lev);
  free(*mg);
  *mg = NULL;
  return err;
}
