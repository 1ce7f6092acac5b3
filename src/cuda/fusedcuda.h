/* The C door into the CUDA code. Nothing here needs PETSc or CUDA headers:
   the C side passes plain arrays and device pointers it never dereferences.
   Every int-returning function returns FUSED_CUDA_OK or an error code, with
   the message in FusedCUDALastError(). */
#ifndef FUSEDCUDA_H
#define FUSEDCUDA_H
#include <math.h>
#include <stddef.h>
#include "mat/fusedformat.h"
#if defined(__CUDACC__)
  #define FUSED_HOST_DEVICE __host__ __device__
#else
  #define FUSED_HOST_DEVICE
#endif
#ifdef __cplusplus
extern "C" {
#endif

enum { FUSED_CUDA_OK = 0, FUSED_CUDA_ERR_MEM = 1, FUSED_CUDA_ERR_LIB = 2, FUSED_CUDA_ERR_ARG = 3 };
const char *FusedCUDALastError(void);

int FusedCUDADeviceCount(int *count, char *reason, size_t reasonlen);
int FusedCUDADeviceName(int device, char *name, size_t namelen, char *errmsg, size_t errlen);
int FusedCUDAMemoryInfo(int device, size_t *free_bytes, size_t *total_bytes, char *errmsg, size_t errlen);

/* Every kernel of the common modules (workspace, operator, halo) or of a
   method's, loaded on device now rather than at its first launch; once a
   process (src/cuda/modules.cu); a method's kernels with compensated sums
   (FusedCUDASetCompensated()) are a module of their own */
int FusedCUDALoadCommonKernels(int device);
int FusedPCGLoadKernels(int device, int compensated);
int FusedPBCGSLoadKernels(int device, int compensated);
int FusedPGMRESLoadKernels(int device, int compensated);

/* measured device-to-device copy bandwidth, bytes read + written per second */
int FusedCUDACopyBandwidth(int device, size_t bytes, int reps, double *bytes_per_s);

/* ---- the operator on the device (formats: mat/fusedformat.h) ------------ */
typedef struct FusedDevMat_s *FusedDevMat;

/* Local rows n; the diagonal block in CSR (columns 0..n-1); the off-process
   block in CSR over nghost compressed ghost columns (growptr NULL when none). */
int    FusedDevMatCreate(int device, int n, const int *rowptr, const int *col, const double *val, int nghost, const int *growptr, const int *gcol, const double *gval, int format, int check_symmetry, FusedDevMat *A);
/* The same from a CUDA PETSc's device CSR arrays (all arguments device
   pointers, only read): the storage is built on the device without a trip
   through the host; Refresh takes new values on the same pattern. */
int    FusedDevMatCreateFromDevice(int device, int n, const int *rowptr, const int *col, const double *val, int nghost, const int *growptr, const int *gcol, const double *gval, int format, int check_symmetry, FusedDevMat *A);
int    FusedDevMatRefreshFromDevice(FusedDevMat A, const int *rowptr, const int *col, const double *val, const double *gval); /* checks the symmetry where the copy was made with check_symmetry */
int    FusedDevMatDestroy(FusedDevMat *A);
/* The compressed halo: the nsend local indices the neighbours read, packed by
   neighbour; returns pinned buffers for the packed values and the ghosts */
int    FusedDevMatSetHalo(FusedDevMat A, int nsend, const int *send_idx, double **send_host, double **ghost_host);
void   FusedDevMatGetInfo(FusedDevMat A, int *format, int *ndiag_or_width, size_t *bytes, int *nghost); /* ndiag for DIA, K for ELL and HYB */
size_t FusedDevMatCSRBytes(FusedDevMat A);
size_t FusedDevMatTailEntries(FusedDevMat A); /* entries kept in CSR: the CSR format, or HYB's tail */
/* how long rows are handled (summed by warps in chunks), in words, for -ksp_view and -mat_view */
void   FusedDevMatDescribeLongRows(FusedDevMat A, char *text, size_t len);
int    FusedDevMatLongRows(FusedDevMat A); /* how many rows of the local block warps sum in chunks */
int    FusedDevMatSymmetric(FusedDevMat A); /* 1: the operator equals its transpose bit by bit (one rank, no ghosts), checked on the device at each build and refill that asked (check_symmetry); 0: not, or not checked */
/* For the hybcuda matrix type: a rectangular block (CSR only), products with
   host vectors, and new values on an unchanged pattern (FUSED_CUDA_ERR_ARG:
   the layout changed, build a new copy) */
int    FusedDevMatSetColumns(FusedDevMat A, int ncols);
int    FusedDevMatMult(FusedDevMat A, const double *x, const double *ghost, const double *z, double *y);
/* y = A x on device vectors, queued on stream (a cudaStream_t, NULL for the default); no off-process block */
int    FusedDevMatMultDevice(FusedDevMat A, const double *x, double *y, void *stream);
int    FusedDevMatUpdateValues(FusedDevMat A, const int *rowptr, const int *col, const double *val, const int *growptr, const double *gval);
/* A = a A, and A = A + a I on the stored diagonal entries (*done 0, nothing
   changed: a row has no diagonal entry in the storage), on the device */
int    FusedDevMatScale(FusedDevMat A, double a);
int    FusedDevMatShift(FusedDevMat A, double a, int *done);

/* ---- per-solver device workspace --------------------------------------- */
typedef struct FusedCUDA_s *FusedCUDA;

int     FusedCUDACreate(int device, int n, int nvecs, int maxsums, const char *what, FusedCUDA *ctx);
int     FusedCUDADestroy(FusedCUDA *ctx);
double *FusedCUDAVec(FusedCUDA ctx, int i); /* device pointer of work vector i */
int     FusedCUDAUpload(FusedCUDA ctx, double *dst, const double *host, int n);
int     FusedCUDADownload(FusedCUDA ctx, double *host, const double *src, int n);
/* A host range registered with the driver in place (cudaHostRegister), for
   copies straight from and to it, and the registration ended: *ok 0 (and
   why) where the driver refuses either, which is no error here. The Split
   copies move an array of n entries whose [lo, hi) are registered (all of
   it staged where hi <= lo), the upload without a wait, the download
   waited for. */
int     FusedCUDAHostRegister(void *host, size_t bytes, int *ok, char *why, size_t whylen);
int     FusedCUDAHostUnregister(void *host, int *ok, char *why, size_t whylen);
int     FusedCUDAUploadSplit(FusedCUDA ctx, double *dst, const double *host, int n, int lo, int hi);
int     FusedCUDADownloadSplit(FusedCUDA ctx, double *host, const double *src, int n, int lo, int hi);
int     FusedCUDAZero(FusedCUDA ctx, double *dst, int n);
/* Strided vectors on the solver's stream: dst[i] = 1 where i % stride ==
   k, else 0 (i < n); and dst[i * stride + k] = src[i] (i < n) */
int     FusedCUDAStrideUnit(FusedCUDA ctx, double *dst, int n, int stride, int k);
int     FusedCUDAStrideScatter(FusedCUDA ctx, double *dst, const double *src, int n, int stride, int k);
/* n values from device memory src (the solver's, or another library's on the
   same device) to dst, queued on the solver's stream: no host wait */
int     FusedCUDACopy(FusedCUDA ctx, double *dst, const double *src, int n);
/* Orders the solver's stream with another (a cudaStream_t; NULL is the
   legacy default stream) without a host wait: WaitFor makes what the
   solver queues next wait for what is queued on other so far; Hand makes
   what other queues next wait for what the solver queued so far. */
int     FusedCUDAStreamWaitFor(FusedCUDA ctx, void *other);
int     FusedCUDAStreamHandTo(FusedCUDA ctx, void *other);

/* ---- the halo on the device (src/cuda/halo.cu) ------------------------- */
/* x's halo entries packed into the device send buffer, then (to_host) into the
   pinned one: queued on the solver's stream, and waited for with
   FusedCUDAHaloWaitPacked(), so that a product can be queued in between */
int FusedCUDAHaloPack(FusedCUDA ctx, FusedDevMat A, const double *x, int to_host);
int FusedCUDAHaloWaitPacked(FusedDevMat A);
/* the pinned ghost buffer to the device, on the halo's stream: what the
   solver's stream queues next waits for it */
int FusedCUDAHaloUnpack(FusedCUDA ctx, FusedDevMat A);
double *FusedDevMatSendBuffer(FusedDevMat A);        /* the device send buffer (packed by neighbour) */
double *FusedDevMatGhostBuffer(FusedDevMat A);       /* the device ghost values (in the ghost block's column order) */
/* Same-host transport: the send buffer is shared with the neighbours through
   CUDA IPC, and each rank copies its ghosts straight from theirs. */
#define FUSED_IPC_HANDLE_BYTES 64
int FusedCUDAIpcExport(FusedDevMat A, unsigned char handle[FUSED_IPC_HANDLE_BYTES]);
int FusedCUDAIpcOpen(int device, const unsigned char handle[FUSED_IPC_HANDLE_BYTES], void **base);
int FusedCUDAIpcClose(void *base);
/* count[i] values from src[i] to the ghost buffer at off[i], i < nsrc, on the
   halo's stream after the pack; returns when they are there */
int FusedCUDAHaloPull(FusedCUDA ctx, FusedDevMat A, int nsrc, const double *const *src, const int *off, const int *count);
/* waits for the device, then copies sums[first..first+count) of the last reductions */
int     FusedCUDAGetSums(FusedCUDA ctx, int first, int count, double *host);
/* sums[first..first+count) as the last device loop left them (they came back with it: no wait) */
int     FusedCUDAGetLoopSums(FusedCUDA ctx, int first, int count, double *host);
/* sums[slot] = the square of b's norm in the norm type (FUSED_NORM_*) of a
   method with the fused PC d (the inverse diagonal, or NULL): <Bb,Bb>,
   <b,b> or <b,Bb>, which KSPConvergedDefault forms at iteration 0 after a
   nonzero guess; queued, not waited for */
int     FusedCUDARhsNorm(FusedCUDA ctx, const double *b, const double *d, int normtype, int slot);
/* the sums the last queued posting kernel writes to pinned memory: waits for them there */
int     FusedCUDAGetPostedSums(FusedCUDA ctx, int count, double *host);
int     FusedCUDASynchronize(FusedCUDA ctx);
/* 1: the methods' steps and loops sum with compensation (Dot2, see
   FusedDD in fusedcuda_impl.cuh), from the next step queued */
int     FusedCUDASetCompensated(FusedCUDA ctx, int on);

/* What the device loop needs of KSPConvergedDefault after iteration 0 */
typedef struct {
  double ttol;    /* max(rtol * rnorm0, abstol) */
  double dtol;    /* divtol * rnorm0 */
  int    chknorm; /* no test at iterations <= chknorm */
  int    max_it;
  /* CG: the signs of <r,Br> and <p,Ap> where the loop starts; the device
     stops where either is zero or changes sign, which PETSc's cg judges
     (a definite operator of either sign is fine). 1 for the other methods. */
  double sign_rz, sign_py;
  /* 1: iteration 0 has not been tested and is the loop's first test (the
     loop starts at it0 = 0 or, where it begins with a product, -1), with
     ttol and dtol set from the reference norm as KSPConvergedDefault sets
     them at iteration 0, from these: */
  int    judge_first;
  int    reference; /* FUSED_REFERENCE_*: the norm rtol is relative to */
  int    rhs_slot;  /* where the square of b's norm is among the sums (FusedCUDARhsNorm()) */
  double rtol, abstol, divtol;
} FusedConvergence;
/* KSPConvergedDefault's reference norm: the initial residual's (a zero
   guess, or -ksp_converged_use_initial_residual_norm), the right-hand
   side's in the norm of the method (a nonzero guess; its square a method
   leaves among its sums), or the smaller of the two
   (-ksp_converged_use_min_initial_residual_norm); a zero right-hand side
   falls back to the residual's */
enum { FUSED_REFERENCE_RESIDUAL, FUSED_REFERENCE_RHS, FUSED_REFERENCE_MIN };
/* KSPConvergedDefault's rnorm0 from iteration 0's norm and the square of the
   right-hand side's norm: the same operations on the host and the device */
static inline FUSED_HOST_DEVICE double FusedReferenceNorm(int reference, double rnorm, double rhs_square)
{
  double snorm = sqrt(fabs(rhs_square));
  if (reference == FUSED_REFERENCE_RESIDUAL) return rnorm;
  if (snorm == 0.0) snorm = rnorm;
  return reference == FUSED_REFERENCE_MIN && rnorm < snorm ? rnorm : snorm;
}

/* The device loop stops where the host must look; it returns the iteration
   it stopped at and the residual norms of the iterations in between. */
int FusedCUDAGetHistory(FusedCUDA ctx, int first, int count, double *host);
/* The longest device loop: its residual history has room for this many
   iterations (device memory and its pinned mirror, 8 MB each) */
#define FUSED_LOOP_MAX_IT (1 << 20)
/* The device loop's buffers, made before the first solve needs them (at
   KSPSetUp): the residual history of max_it iterations, nspare second
   copies of the vectors and the partial sums of a single-kernel loop (0:
   the loop will be a graph). Each is made again later only if it must grow. */
int FusedCUDAPrepareLoop(FusedCUDA ctx, int max_it, int nspare);
/* pgmresfused's loop state for restart, the same way, and where its single
   kernel will run (single_kernel), that kernel's launch facts on A */
int FusedPGMRESPrepareLoop(FusedCUDA ctx, FusedDevMat A, int restart, double adaptive, int single_kernel);
/* Whether pgmresfused's single kernel suits ctx's rows on ctx's device: it
   keeps a basis of restart vectors in shared memory, or a cycle's working
   set takes at most 3/4 of L2 (*suits 1); else its graph is faster */
int FusedPGMRESSingleKernelSuits(FusedCUDA ctx, FusedDevMat A, int restart, double adaptive, int *suits);

/* ---- pcgfused ------------------------------------------------------------ */
enum { FUSED_NORM_PRECONDITIONED, FUSED_NORM_UNPRECONDITIONED, FUSED_NORM_NATURAL, FUSED_NORM_NONE };
#if defined(__CUDA_ARCH__)
  #define FUSED_MUL_RN(a, b) __dmul_rn(a, b) /* no contraction into an FMA: the host's bits */
#else
  #define FUSED_MUL_RN(a, b) ((a) * (b))
#endif
/* The operator's null space, removed from every preconditioned vector as
   PETSc's MatNullSpaceRemove() does (z = B r - sum_k <B r, n_k> n_k): an
   orthonormal basis of m vectors, the first the constant cnst = 1/sqrt(N)
   where has_cnst (never stored), the others stored one after another, ld
   apart. m = 0: none. */
#define FUSED_NULLSPACE_MAX 6
typedef struct {
  int           m, has_cnst, ld;
  double        cnst;
  const double *vecs;
  /* the host-driven update's <B r', n_k> for the r' it makes, from the last
     synchronization point: <B r, n_k> - alpha <B y, n_k> */
  double        coef[FUSED_NULLSPACE_MAX];
} FusedNullSpace;
/* pcgfused's sums with a null space, after its five (<r,z>, the norm, <p,y>,
   <y,w>, <y,z>): <B y, n_k> and <y, n_k> (the product's, so that its sums
   are in one run), then <B r, n_k> (the update's); FUSED_PCG_SUMS in all */
enum { FUSED_PCG_BY_N = 5, FUSED_PCG_Y_N = FUSED_PCG_BY_N + FUSED_NULLSPACE_MAX, FUSED_PCG_BR_N = FUSED_PCG_Y_N + FUSED_NULLSPACE_MAX, FUSED_PCG_SUMS = FUSED_PCG_BR_N + FUSED_NULLSPACE_MAX };
/* and on the device after them: the off-process rows' share of the split
   product's sums (3 + 2 FUSED_NULLSPACE_MAX), the square of b's norm
   (FusedCUDARhsNorm()), then beta <p, y_last> of the graph loop's update
   where A is known symmetric (FusedPCGVecs.symmetric) */
enum { FUSED_PCG_GHOST = FUSED_PCG_SUMS, FUSED_PCG_RHS = FUSED_PCG_GHOST + 3 + 2 * FUSED_NULLSPACE_MAX, FUSED_PCG_SYM_PY_LAST, FUSED_PCG_DEVICE_SUMS };
/* In sums[] the null space's three runs of sums are FUSED_NULLSPACE_MAX
   apart; a method may keep them closer in a compact copy (the single-kernel
   loop: 1 apart). "run" is that distance. */
/* The update's coefficients of z' = B r' - sum_k coef_k n_k for r' = r - alpha y */
static inline FUSED_HOST_DEVICE double FusedPCGNullSpaceCoef(const double *sums, int run, int k, double alpha)
{
  return sums[FUSED_PCG_BY_N + 2 * run + k] - FUSED_MUL_RN(alpha, sums[FUSED_PCG_BY_N + k]);
}
/* The product's raw <y,w> and <y,z> hold B y and B r before the projection:
   with z = B r - sum_k e_k n_k and w = B y - sum_k c_k n_k (orthonormal n_k),
   <y,w> = <y,By> - sum_k c_k <y,n_k> and <y,z> = <y,Br> - sum_k e_k <y,n_k>.
   From global sums, the same operations on the host and the device. */
static inline FUSED_HOST_DEVICE void FusedPCGNullSpaceFold(const double *sums, int run, int m, double *yw, double *yz)
{
  double w = sums[3], z = sums[4];
  for (int k = 0; k < m; k++) {
    w = w - FUSED_MUL_RN(sums[FUSED_PCG_BY_N + k], sums[FUSED_PCG_BY_N + run + k]);
    z = z - FUSED_MUL_RN(sums[FUSED_PCG_BY_N + 2 * run + k], sums[FUSED_PCG_BY_N + run + k]);
  }
  *yw = w;
  *yz = z;
}
/* |w - sum_k c_k n_k|^2 from |w|^2 and c_k = <w, n_k> (orthonormal n_k),
   the same operations on the host and the device */
static inline FUSED_HOST_DEVICE double FusedNullSpaceFoldSquare(double ww, const double *c, int m)
{
  for (int k = 0; k < m; k++) ww = ww - FUSED_MUL_RN(c[k], c[k]);
  return ww;
}
/* On the solver's stream: sums[0..ns->m) = <x, n_k>; and x -= sum_k
   ns->coef[k] n_k with sums[0] = <x,x> (a start's residual made free of
   the null space, once the coefficients are global) */
int FusedCUDANullSpaceSums(FusedCUDA ctx, const double *x, const FusedNullSpace *ns);
int FusedCUDANullSpaceRemove(FusedCUDA ctx, double *x, const FusedNullSpace *ns);
/* Fused point-block Jacobi: the inverse diagonal blocks of bs rows, stored
   row by row (dblock[i * bs + k]: row i's entry in column k of its block;
   blocks start at local row 0). Up to FUSED_PBJACOBI_MAX_BS rows a block. */
#define FUSED_PBJACOBI_MAX_BS 16
typedef struct {
  double       *x, *b, *r, *p, *y;
  const double *d;      /* inverse diagonal, NULL without a PC */
  const double *dblock; /* or point-block Jacobi's inverse blocks of bs rows, else NULL */
  int           bs;
  /* A preconditioner applied between the kernels (PCApply() on the device):
     z = B r and w = B y are stored, and NULL where the PC is fused or none */
  double       *z, *w;
  int           normtype;
  FusedNullSpace ns; /* with the fused PC only */
  /* A is known to be symmetric (MatIsSymmetricKnown()): the graph loop,
     with Jacobi or none, takes <y,z> as <p,y> - beta <p, y_last>, summed in
     the update, so that its product does not read r */
  int           symmetric;
} FusedPCGVecs;
int FusedPCGStart(FusedCUDA ctx, FusedDevMat A, const FusedPCGVecs *v, int guess_zero);
/* With a null space (v->ns.m > 0) the start makes r and sums <B r, n_k>;
   once their global values are in v->ns.coef, this makes p = z and the
   start's sums */
int FusedPCGStartProject(FusedCUDA ctx, const FusedPCGVecs *v);
/* With z and w: after FusedPCGStart() (r made) and z = B r, p = z and the
   start's sums; after FusedPCGProduct() and w = B y, <y,w> in its place */
int FusedPCGStartPreconditioned(FusedCUDA ctx, const FusedPCGVecs *v);
int FusedPCGProductPreconditioned(FusedCUDA ctx, const FusedPCGVecs *v);
int FusedPCGUpdate(FusedCUDA ctx, const FusedPCGVecs *v, double alpha, double beta);
int FusedPCGProduct(FusedCUDA ctx, FusedDevMat A, const FusedPCGVecs *v);
/* the product split around the halo exchange: the local block first (it may
   run while the ghost values travel), then the rows that read them; the sums
   come out as FusedPCGProduct's, and the second step also posts them
   (FusedCUDAGetPostedSums()). Needs 6 sums in the workspace. */
int FusedPCGProductLocal(FusedCUDA ctx, FusedDevMat A, const FusedPCGVecs *v);
int FusedPCGProductGhosts(FusedCUDA ctx, FusedDevMat A, const FusedPCGVecs *v);
/* Where a single-kernel loop begins: after steps of the host's
   (FUSED_LOOP_GOES_ON: their sums are in the workspace), or at the solve's
   start, which the kernel then makes itself (FusedPCGStart() and
   FusedPCGProduct() before its first iteration, b's norm beside them where
   the test needs it) from a zero guess or from x, with judge_first set */
enum { FUSED_LOOP_GOES_ON, FUSED_LOOP_START_ZERO, FUSED_LOOP_START_GUESS };
/* iterations it0+1, ... on the device, until the test or a breakdown check
   asks the host to look; *its is that iteration. From a CUDA graph, or with
   single_kernel from one cooperative kernel with grid barriers, which
   begins as start says (FUSED_LOOP_*; the graph goes on only). */
int FusedPCGLoop(FusedCUDA ctx, FusedDevMat A, const FusedPCGVecs *v, const FusedConvergence *conv, int it0, int single_kernel, int start, int *its);

/* ---- pbcgsfused ---------------------------------------------------------- */
typedef struct {
  double       *x, *b, *r, *rstar, *p, *v, *s, *t;
  const double *d;
  const double *dblock; /* point-block Jacobi's inverse blocks of bs rows (as FusedPCGVecs'), else NULL */
  int           bs;
} FusedPBCGSVecs;
int FusedPBCGSStart(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v, int guess_zero);
int FusedPBCGSProductP(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v);
int FusedPBCGSRestart(FusedCUDA ctx, const FusedPBCGSVecs *v);
/* with the PC applied between kernels: the sums of the products' outputs */
int FusedPBCGSSumsP(FusedCUDA ctx, const FusedPBCGSVecs *v);
int FusedPBCGSSumsS(FusedCUDA ctx, const FusedPBCGSVecs *v);
int FusedPBCGSUpdateS(FusedCUDA ctx, const FusedPBCGSVecs *v, double alpha);
int FusedPBCGSProductS(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v);
int FusedPBCGSUpdateXRP(FusedCUDA ctx, const FusedPBCGSVecs *v, double alpha, double omega, double beta);
int FusedPBCGSLoop(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v, const FusedConvergence *conv, int it0, int single_kernel, int start, int *its);
/* pbcgsfused's device sums: RR, RR0, VR0 (first reduction), TT, TS, TR0,
   SR0, SS (second), omega and beta of the device loop, ||B b||^2; then,
   with a null space, <v, n_k> and <t, n_k> of the two products */
enum { FUSED_PBCGS_RHS = 10, FUSED_PBCGS_V_N, FUSED_PBCGS_T_N = FUSED_PBCGS_V_N + FUSED_NULLSPACE_MAX, FUSED_PBCGS_GHOST = FUSED_PBCGS_T_N + FUSED_NULLSPACE_MAX, FUSED_PBCGS_DEVICE_SUMS = FUSED_PBCGS_GHOST + 3 };
/* The products split around the halo exchange (several ranks; Jacobi or
   none, no null space): the local block first, queued while the ghost
   values travel, then the rows that read them, which add their ghost share
   to v (t) and its changes to the sums (the three after the null space's
   hold them meanwhile). The sums come out as FusedPBCGSProductP()'s and
   FusedPBCGSProductS()'s. */
int FusedPBCGSProductPLocal(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v);
int FusedPBCGSProductPGhosts(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v);
int FusedPBCGSProductSLocal(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v);
int FusedPBCGSProductSGhosts(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v);
/* The operator's null space (left, Jacobi or none) beside the vectors, as
   pgmresfused's: v = B A p and t = B A s are stored as the products make
   them, with <v, n_k> and <t, n_k> in the same reductions; every reader
   subtracts their null space parts (s = r - alpha P v, r = s - omega P t,
   p = r + beta (p - omega P v)), and <t,t> is folded to |P t|^2. r, r0*,
   s and p then have no part in the null space, so no other sum needs a
   correction. The start makes r less its null space part
   (FusedCUDANullSpaceSums() and FusedCUDANullSpaceRemove(), then
   FusedPBCGSRestart()). ns->coef holds <v, n_k>, t_coef <t, n_k>, global. */
int FusedPBCGSProductPNull(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v, const FusedNullSpace *ns);
int FusedPBCGSUpdateSNull(FusedCUDA ctx, const FusedPBCGSVecs *v, double alpha, const FusedNullSpace *ns);
int FusedPBCGSProductSNull(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v, const FusedNullSpace *ns);
int FusedPBCGSUpdateXRPNull(FusedCUDA ctx, const FusedPBCGSVecs *v, double alpha, double omega, double beta, const FusedNullSpace *ns, const double *t_coef);
/* the device loop with a null space (from a CUDA graph: the single kernel removes none) */
int FusedPBCGSLoopNull(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v, const FusedNullSpace *ns, const FusedConvergence *conv, int it0, int *its);

/* ---- pgmresfused --------------------------------------------------------- */
typedef struct {
  double       *x, *b, *r, *z0, *w, *tmp, *V; /* V: restart vectors of length n, one after another */
  double       *w2; /* the device loop's second w: step j writes w (j even) or w2 (j odd) */
  const double *d;
  const double *dblock; /* left point-block Jacobi's inverse blocks of bs rows (as FusedPCGVecs'), else NULL */
  int           bs;
  int           right; /* right preconditioning */
  /* a PC applied between the kernels: the product reads tmp = B z_j (right)
     or writes A z_j to tmp for the caller's w = B tmp (left); d is NULL */
  int           pc_between;
  /* the host-driven steps' input where it is not z_0 or v_{j-1}: an adaptive
     step's z_j = scale r, which FusedPGMRESProductInput() writes there; else NULL */
  double       *zin;
} FusedPGMRESVecs;
/* The operator's null space (ns: NULL or ns->m = 0 for none; left, with
   Jacobi or none) goes beside the vectors, not in them: a larger argument
   changed the other kernels' code (the single kernel of a cycle lost 28 of
   its 230 registers and 8% of its speed on the H100). The start makes r =
   B (b - A x) less its part there (one more synchronization per cycle);
   each orthogonalization sums <w, n_k> beside <w,w>, <w,r>, <r,r>, and the
   normalization subtracts sum_k ns->coef[k] n_k from w. Every other vector
   the steps form is a combination of these, so the products with the
   basis and with r need no correction. */
int FusedPGMRESStart(FusedCUDA ctx, FusedDevMat A, const FusedPGMRESVecs *v, int guess_zero);
/* z_0 = scale r (j = 0); returns in *in the vector the product of step j
   reads (tmp = d .* z_j with right Jacobi), whose ghosts the caller
   exchanges before FusedPGMRESProduct() */
int FusedPGMRESProductInput(FusedCUDA ctx, const FusedPGMRESVecs *v, int j, double scale, const double **in);
int FusedPGMRESProduct(FusedCUDA ctx, FusedDevMat A, const FusedPGMRESVecs *v, int j);
/* the same split around the halo exchange (several ranks, no point-block
   Jacobi): the local block while the ghost values of the product's input
   travel, then the rows that read them */
int FusedPGMRESProductLocal(FusedCUDA ctx, FusedDevMat A, const FusedPGMRESVecs *v, int j);
int FusedPGMRESProductGhosts(FusedCUDA ctx, FusedDevMat A, const FusedPGMRESVecs *v);
int FusedPGMRESMDot(FusedCUDA ctx, const FusedPGMRESVecs *v, int j);
/* pc_between: <r,r> into the first sum, after the caller's r = B (b - A x); and y += x */
int FusedPGMRESNorm(FusedCUDA ctx, const FusedPGMRESVecs *v);
int FusedPGMRESAddTo(FusedCUDA ctx, double *y, const double *x);
int FusedPGMRESOrthog(FusedCUDA ctx, const FusedPGMRESVecs *v, int j, const double *h, const FusedNullSpace *ns);
int FusedPGMRESNormalize(FusedCUDA ctx, const FusedPGMRESVecs *v, int j, double scale, double xi, const FusedNullSpace *ns);
/* y += B^{right} sum_{i<k} t_i z_i, y a device vector */
int FusedPGMRESUpdate(FusedCUDA ctx, const FusedPGMRESVecs *v, int k, const double *t, double *y);
/* Arnoldi steps 0, 1, ... of one cycle on the device, from a CUDA graph of two
   kernels per step or (single_kernel) one cooperative kernel, after FusedPGMRESProductInput(j = 0): the step's
   Hessenberg column, xi and the test of the residual norm (iteration its0 + j,
   history at that index) are made there. It stops after `restart` steps, at
   iteration max_it, or where the host must look at step j: the test stops,
   a sum is not finite, or |w_orth| <= breakdowntol |w|. The single kernel
   (restart <= FUSED_PGMRES_CYCLES_MAX_RESTART) instead ends a full cycle, or the last one at max_it,
   itself (x updated) and starts the next, whose residual norm goes to the
   history at its first iteration; where the test of that start stops, or
   the norm is zero or not finite, it hands the start to the host
   (*start_on_host 1, no steps) with r in place and its norm in
   *start_norm, for the host to test; where the test stops the solve at
   step j > 0 (pending), it ends that cycle with its j steps too (x
   updated, *cycle_ended 1), which the host would do after its replay. In: *its0 the
   first iteration; out: that of the last cycle run. Out: *steps complete
   steps of that cycle; R (restart x restart, column-major) and xi of those; *pending 1 when
   step *steps was stopped after its orthogonalization, with products[0..j]
   (<v_l, w> for l < j, then <w, w>; restart + 1 room) and orth (<w,w>, <w,r>,
   <r,r> after it, with a null space |w|^2 of w less its part there and
   <w, n_k> after the three) of that step. The single kernel removes no
   null space. start (FUSED_LOOP_*, with judge_first): the loop begins with
   the solve's start, which the single kernel that ends cycles makes and
   tests itself, and kernels of their own queued before the loop elsewhere.
   adaptive: nu of adaptive simpler GMRES (0: never), with cycle_rnorm0 the
   norm of the cycle's start where the host made it: a step that cut the
   residual to nu or less makes the next direction r_j / rho_j, rho_j = |r|
   before it, in a pass of its own; rho (restart) gets each step's
   rho_j (0: v_{j-1}), for the host's correction, and *adaptive_steps the
   steps with rho_j > 0 over all the cycles it ran. */
#define FUSED_PGMRES_LOOP_MAX_RESTART 4096 /* its Hessenberg column sits in shared memory */
#define FUSED_PGMRES_CYCLES_MAX_RESTART 64 /* the single kernel ends cycles up to this restart: each block keeps R in shared memory, and a lane of the back solve two entries of t */
int FusedPGMRESLoop(FusedCUDA ctx, FusedDevMat A, const FusedPGMRESVecs *v, const FusedNullSpace *ns, int restart, double breakdowntol, double adaptive, double cycle_rnorm0, const FusedConvergence *conv, int *its0, int single_kernel, int start, double *R, double *xi, double *rho, int *adaptive_steps, double *products, double orth[], int *steps, int *pending, int *start_on_host, double *start_norm, int *cycle_ended);
/* With conv->judge_first (left preconditioning, from iteration 0) the loop
   goes on from the start itself (FusedPGMRESStart(), not waited for): it
   tests iteration 0 and makes z_0, or hands the start to the host
   (*start_on_host at iteration 0, nothing recorded). After a nonzero guess
   FusedCUDARhsNorm() first puts ||B b||^2 in sums[FusedPGMRESRhsSlot()],
   after the orthogonalization's sums. */
int FusedPGMRESRhsSlot(FusedCUDA ctx);

/* ---- a multigrid V-cycle on the device (src/cuda/mgcycle.cu) ------------ */
/* Levels 0 (the coarsest) to nlevels - 1, n[l] rows each. Level l >= 1
   smooths with x = x0 + sum_j coef[j] (BA)^j B (b - A x0), B the Jacobi
   inverse diagonal dinv (host, n[l]), m <= FUSED_MG_MAX_DEGREE terms, the
   same before and after the coarse correction; P (n[l] x n[l-1]) interpolates
   from level l-1 and R (n[l-1] x n[l]) restricts to it. A, P and R stay the
   caller's and must outlive mg. Level 0 is solved by a dense matrix (host,
   n[0] x n[0] row by row). Apply: out = one V-cycle on in from a zero guess,
   device vectors of n[nlevels-1], queued on ctx's stream. */
#define FUSED_MG_MAX_DEGREE 6
typedef struct FusedDevMG_s *FusedDevMG;
int    FusedDevMGCreate(int device, int nlevels, const int *n, FusedDevMG *mg);
int    FusedDevMGSetLevel(FusedDevMG mg, int l, FusedDevMat A, const double *dinv, int m, const double *coef, FusedDevMat P, FusedDevMat R);
int    FusedDevMGSetCoarse(FusedDevMG mg, const double *dense);
int    FusedDevMGApply(FusedDevMG mg, FusedCUDA ctx, const double *in, double *out);
size_t FusedDevMGBytes(FusedDevMG mg); /* device memory of its own (vectors and the dense solve) */
int    FusedDevMGDestroy(FusedDevMG *mg);

/* ---- two triangular solves, level by level (src/cuda/trisolve.cu) ------- */
/* A triangular factor of n rows on the host: positions 0..n-1 hold its rows
   level by level (level l: positions level_start[l] .. level_start[l+1]-1,
   row[p] the row at position p; a row reads only rows of earlier levels).
   The entries off the diagonal of position p: ELL where width > 0
   (col[j n + p], val[j n + p], j < width, col -1 where the row has fewer),
   else CSR by position (ptr[p] .. ptr[p+1]-1 in col and val); col holds
   the position of the row an entry reads, not the row. dinv[p]: the
   inverse diagonal (NULL: a unit diagonal). Apply: out = U^-1 L^-1 in, L
   unit lower, U upper, queued on ctx's stream; in may be out. */
typedef struct {
  int           n, nlevels, width;
  const int    *level_start, *row, *ptr, *col;
  const double *val, *dinv;
} FusedTriHost;
typedef struct FusedDevTri_s *FusedDevTri;
/* a triangle whose levels hold more than wide_level rows on average is
   solved by a cooperative grid, else by one block */
int    FusedDevTriCreate(int device, const FusedTriHost *lower, const FusedTriHost *upper, int wide_level, FusedDevTri *tri); /* on failure *tri may be set: destroy it */
int    FusedDevTriGrids(FusedDevTri tri); /* 1: L's solve by a grid, 2: U's, 3: both */
int    FusedDevTriApply(FusedDevTri tri, FusedCUDA ctx, const double *in, double *out);
size_t FusedDevTriBytes(FusedDevTri tri);
int    FusedDevTriDestroy(FusedDevTri *tri);

#ifdef __cplusplus
}
#endif
#endif
