/* What the CUDA files share: error handling, the workspace, the operator's
   row product, and the two-stage reduction every fused kernel ends with. */
#ifndef FUSEDCUDA_IMPL_CUH
#define FUSEDCUDA_IMPL_CUH
#include <cuda_runtime.h>
#include <type_traits>
#include <utility>
#include "cuda/fusedcuda.h"

/* Records the message of a failed CUDA call; out of memory is its own code
   so that the C side can raise PETSC_ERR_MEM. */
int FusedCUDAFail(cudaError_t err, const char *call, const char *file, int line);
int FusedCUDASetError(int code, const char *fmt, ...);
/* loads every kernel of the module (the .cu file) that holds kernel (src/cuda/modules.cu) */
int FusedCUDALoadModuleOf(int device, const void *kernel);
/* makes the process's first cooperative launch on device, once (src/cuda/modules.cu) */
int FusedCUDAWarmCooperativeLaunch(int device);
/* the same for the operator's module (devmat.cu) and the halo's (halo.cu) */
int FusedDevMatLoadKernels(int device);
int FusedHaloLoadKernels(int device);
/* cudaMalloc that names what and how many bytes when memory runs out */
int FusedMalloc(void **ptr, size_t bytes, const char *what);

#define FUSED_CUDA_CHECK(call) \
  do { \
    cudaError_t fused_err_ = (call); \
    if (fused_err_ != cudaSuccess) return FusedCUDAFail(fused_err_, #call, __FILE__, __LINE__); \
  } while (0)
/* after a kernel launch: launch errors now, execution errors at the next sync */
#define FUSED_CUDA_CHECK_LAUNCH(what) FUSED_CUDA_CHECK(cudaGetLastError())

#define FUSED_BLOCK 256
#define FUSED_WARPS (FUSED_BLOCK / 32)
/* The single-kernel loops (CG, BiCGStab) run one block per multiprocessor:
   of FUSED_BLOCK threads where that covers the rows, else of
   FUSED_WIDE_BLOCK. Half the partials of two blocks of 256 per
   multiprocessor: a barrier and its 5 sums took 2.20-2.22 us against 2.57-2.58
   (H100, examples/grid_sums.cu; see also FusedSingleKernelBlock()).
   FUSED_SINGLE_LOADS partials per lane at once then cover 160
   multiprocessors. */
#define FUSED_WIDE_BLOCK   512
#define FUSED_SINGLE_LOADS 5

/* Diagonal offsets carried in the kernel arguments (constant bank) up to this many */
#define FUSED_DIA_INLINE 16

/* The long rows of a CSR block (fusedformat.h): a thread sums each row of
   at most limit entries, and the nlong longer ones are cut into nchunks
   chunks (fusedformat.h: FusedLongChunks()), which warps sum before the
   product (FusedLongRowsSum()); the product then reads sum[slot[i]].
   Built on the device from the block's row starts (src/cuda/longrows.cu). */
struct FusedLongRows {
  int           limit;       /* INT_MAX where no row is long */
  int           nlong, nchunks;
  const int    *slot;        /* slot[i]: row i's place among the long rows (read for those alone) */
  const int    *row;         /* the row of slot s */
  const int    *first_chunk; /* slot s's chunks: first_chunk[s] .. first_chunk[s + 1] - 1 */
  const int    *chunk_slot;  /* the slot of chunk c */
  double       *sum;         /* slot s's row times x, for the product at hand */
  double       *chunk_sum;   /* chunks of rows of several chunks */
  unsigned int *arrived;     /* chunks of slot s summed so far (the last one adds them up and resets it) */
};

/* The operator as the kernels see it: passed by value. */
struct FusedMatView {
  int           n, format;
  int           off[FUSED_DIA_INLINE]; /* DIA offsets, when ndiag <= FUSED_DIA_INLINE */
  const int    *rowptr, *col; /* CSR */
  const double *val;
  int           ndiag;        /* DIA: dval[d * n + row] is A(row, row + offsets[d]) */
  const int    *offsets;
  const double *dval;
  int           K;            /* ELL part (ELL, HYB): entry k of row i at k * n + i */
  const int    *ecol;
  const double *eval;
  const int    *growptr, *gcol; /* off-process block, NULL when there is none */
  const double *gval, *ghost;
  FusedLongRows lrows;          /* of the CSR part (the CSR format, HYB's tail) */
  int           glimit;         /* of the off-process block: FusedDevMat's glong holds the rest */
  const int    *gslot;
  const double *gsum;
};

/* The operator's local block as stored on the device, built there from
   uploaded CSR arrays (src/cuda/devformat.cu) */
struct FusedDevStorage {
  FusedLayout layout;
  int         ndiag, offsets[FUSED_DIA_MAX]; /* DIA, in the host builder's order */
  int        *d_offsets;
  double     *dval;
  int        *ecol; /* ELL part, K x n column-major */
  double     *eval;
  int        *rowptr, *col; /* CSR, or HYB's tail */
  double     *val;
  int         symmetric; /* the CSR block it was built from equals its transpose, bit by bit */
};
/* check_symmetry: S->symmetric tells whether the CSR block equals its transpose (else 0) */
int  FusedDevStorageBuild(int n, const int *rowptr, const int *col, const double *val, int requested, int on_device, int check_symmetry, FusedDevStorage *S);
/* the values of device CSR arrays of the same pattern into the storage view shows (tail: its CSR entries) */
int  FusedDevStorageRefill(FusedMatView *view, size_t tail, const int *rowptr, const int *col, const double *val, int check_symmetry, int *symmetric);
void FusedDevStorageFree(FusedDevStorage *S);

/* The nlong rows longer than limit of the n-row CSR block with device row
   starts rowptr (src/cuda/longrows.cu): L->limit INT_MAX and nothing
   allocated where nlong is 0; *bytes grows by what it allocates */
int  FusedLongRowsBuild(int n, const int *rowptr, int limit, int nlong, FusedLongRows *L, size_t *bytes);
void FusedLongRowsFree(FusedLongRows *L);
/* The builders' grid of FUSED_BLOCK threads for n items, and an exclusive
   prefix sum of len device ints in place (src/cuda/devformat.cu) */
int  FusedBuildGrid(int n);
int  FusedExclusiveScan(int *a, int len);

struct FusedDevMat_s {
  FusedMatView view;
  int         *rowptr, *col, *offsets, *growptr, *gcol, *ecol;
  double      *val, *dval, *gval, *ghost, *eval;
  size_t       csr_bytes, tail; /* tail: entries in CSR (the CSR format, or HYB's rest) */
  int          nghost;
  int          symmetric; /* the local block equals its transpose bit by bit, and there is no off-process block */
  int          check_symmetry; /* symmetric is found at each build, refill and values update (else 0); one rank */
  size_t       gnnz; /* entries of the off-process block */
  /* the compressed halo: local indices to send, packed on the device, and pinned staging */
  int          nsend;
  int         *send_idx;
  double      *send_dev, *send_host, *ghost_host;
  size_t       bytes;
  /* the rows with off-process entries and where each one's start in gcol/gval:
     their part of a product can wait for the halo while the rest runs */
  int          nbound;
  int         *brow, *bptr;
  /* the long rows of the local block's CSR part and of the off-process block */
  FusedLongRows lrows, glong;
  /* the halo's own stream, and the events that order it with the solver's */
  cudaStream_t halo_stream;
  cudaEvent_t  packed, arrived;
  /* products with host vectors (the hybcuda matrix type): made at the first one */
  int          device, ncols;
  cudaStream_t stream;
  double      *x_dev, *y_dev;
};

/* Sums a kernel writes straight into pinned host memory, then seq: the host
   sees them the moment they land, without a copy and a stream sync */
#define FUSED_POST_SUMS 24
struct FusedPost {
  double                sums[FUSED_POST_SUMS];
  volatile unsigned int seq;
};

/* The last block's thread 0: sums[0..count) to the host, then the sequence number */
__device__ __forceinline__ void FusedPostSums(FusedPost *post, unsigned int seq, const double *sums, int count)
{
  for (int k = 0; k < count; k++) post->sums[k] = sums[k];
  __threadfence_system(); /* the values before the number that says they are there */
  post->seq = seq;
}

struct FusedLoopState;
/* What the host reads after a loop, and where: the pinned host copies
   (mapped, so kernels write them) of the loop's state, every sum, the
   history from first on and a method's own state */
struct FusedLoopMirror {
  FusedLoopState      *state;
  double              *sums, *hist;
  unsigned char       *method;
  const double        *sums_dev, *hist_dev;
  const unsigned char *method_dev;
  int                  nsums, first, hist_len;
  size_t               method_len;
};

/* Device state of the loop that runs without the host */
struct FusedLoopState {
  int              it;     /* the iteration whose sums are in sums[] */
  int              stop;   /* set by the kernel that wants the host to look */
  FusedConvergence conv;   /* per solve, so the graph need not change */
  FusedLoopMirror  mirror; /* set with the rest as the loop starts */
};

/* Thread t of nt: what the host reads after the loop to its pinned copies */
__device__ __forceinline__ void FusedLoopMirrorCopy(const FusedLoopState *state, int t, int nt)
{
  const FusedLoopMirror m    = state->mirror;
  const int             last = state->it < m.hist_len - 1 ? state->it : m.hist_len - 1;
  for (int k = t; k < m.nsums; k += nt) m.sums[k] = m.sums_dev[k];
  for (int k = m.first + t; k <= last; k += nt) m.hist[k] = m.hist_dev[k];
  /* in 8-byte words (both copies come from CUDA's allocators, aligned): a
     byte at a time, each was a transaction of its own over PCIe, and
     pgmresfused's 8 KB of R took 6.5 us of every solve (H100) */
  const size_t words = m.method_len / sizeof(unsigned long long);
  for (size_t k = t; k < words; k += nt) ((unsigned long long *)m.method)[k] = ((const unsigned long long *)m.method_dev)[k];
  for (size_t k = words * sizeof(unsigned long long) + t; k < m.method_len; k += nt) m.method[k] = m.method_dev[k];
  if (t == 0) *m.state = *state;
}

/* Where a single-kernel loop ends (every thread of every block, after
   block 0 has written the state, the sums and the history): block 0 hands
   them to the host itself, which saves the hand-back kernel's launch after
   the loop (FusedCUDARunSingleKernel()) */
__device__ __forceinline__ void FusedLoopHandBackInKernel(const FusedLoopState *state)
{
  if (blockIdx.x != 0) return;
  __syncthreads(); /* thread 0's state and sums, warp 0's history */
  FusedLoopMirrorCopy(state, threadIdx.x, blockDim.x);
}

struct FusedCUDA_s {
  int             device, n, nvecs, maxsums;
  int             nblocks;  /* grid of the reduction kernels */
  int             sms;      /* the device's multiprocessors */
  size_t          l2_bytes; /* the device's L2 cache */
  int             compensated; /* 1: the methods' compensated kernels (FUSED_COMPENSATED), FusedCUDASetCompensated() */
  cudaStream_t    stream;
  cudaEvent_t     joined;   /* orders the stream with another one (a CUDA PETSc's), made at the first need */
  double         *vecs;     /* nvecs vectors of length n */
  double         *partials; /* maxsums x nblocks */
  double         *sums;     /* maxsums */
  unsigned int   *ticket;   /* blocks done with the current reduction */
  double         *sums_host;  /* pinned */
  FusedPost      *post;       /* pinned, written by kernels */
  unsigned int    post_seq;   /* the number of the last post asked for */
  double         *coef_host;  /* pinned staging of coefficients going to the device */
  double         *stage_host; /* pinned staging of host vectors: two halves of stage_len doubles, made at the first copy */
  int             stage_len;
  unsigned int    stage_next; /* the half the next upload starts in: uploads in a row alternate */
  cudaEvent_t     stage_done[2]; /* the copy out of (into) each half has finished */
  FusedLoopState *state;
  FusedLoopState *state_host; /* pinned mirror: the state in, and back at the loop's end */
  double         *hist;     /* residual norm of every device-loop iteration */
  int             hist_len;
  double         *hist_host; /* pinned mirror of hist; entries hist_back_first..hist_back_last came back with the last loop */
  int             hist_back_first, hist_back_last;
  double         *loop_sums_host; /* pinned: every sum as the last loop left them */
  double         *loop_partials; /* the single-kernel loop's partial sums, two iterations' worth */
  size_t          loop_partials_len;
  double         *loop_vecs; /* the single-kernel loops' second copies of the vectors that neighbours read */
  size_t          loop_vecs_len;
  void           *method_state; /* a method's own device-loop state (pgmresfused: R, xi) */
  void           *method_state_host; /* its pinned mirror: one copy each way, no wait on the way in */
  size_t          method_state_len;
  /* the device loop of one method, built once per workspace */
  cudaGraphExec_t loop_exec;
  int             loop_pdl; /* 1: the body's kernels launch with programmatic dependence (sm_90 on) */
  unsigned char   loop_args[512]; /* the kernel arguments the graph was built with */
  int (*loop_build)(FusedCUDA, const void *, cudaGraphConditionalHandle); /* and its builder: the plain and the compensated build's differ */
  size_t          loop_args_len;
};

int FusedCUDAEnsureHistory(FusedCUDA ctx, int len);
/* Work a method queues between the loop's state going in and its launch
   (NULL: none): it may write the state, and a stop it sets ends the loop
   before its first step */
typedef struct {
  int (*queue)(FusedCUDA ctx, const void *arg);
  const void *arg;
} FusedLoopPrologue;
/* method_state (and its pinned mirror) of at least bytes, zeroed when made */
int FusedCUDAEnsureMethodState(FusedCUDA ctx, size_t bytes);
/* What a launch of kernel on ctx's device needs to know, asked of CUDA
   once per process and kept: its static shared memory (may be NULL), the
   most dynamic shared memory a block may opt in to (may be NULL), and
   (per_sm non-NULL) how many blocks of block threads with smem bytes of
   dynamic shared memory a multiprocessor holds. Every solve of a small
   system asked these again, about 5 us of host time (H100). */
int FusedCUDAKernelFacts(FusedCUDA ctx, const void *kernel, size_t *static_smem, size_t *optin, int block, size_t smem, int *per_sm);
/* Lets kernel use smem bytes of dynamic shared memory, asking CUDA only
   where that is more than it allowed it before in this process */
int FusedCUDAAllowSharedMemory(FusedCUDA ctx, const void *kernel, size_t smem);
/* The single-kernel loop: a cooperative kernel that runs the iterations with
   grid barriers instead of kernel boundaries, on as many blocks as are
   resident at once (at most what threads, n or more, need), of block threads. *partials,
   which kargs points at, is set to a buffer of 2 x nsums x grid before the
   launch; smem: dynamic shared memory per block; returns the iteration
   where the kernel stopped. */
int FusedCUDARunSingleKernel(FusedCUDA ctx, const void *kernel, int block, int threads, int nsums, size_t smem, const FusedConvergence *conv, int it0, const FusedLoopPrologue *prologue, void **kargs, double **partials, int *its);

/* The block size of CG's and BiCGStab's single kernels, one block per
   multiprocessor: FUSED_BLOCK where that covers the threads (the n rows
   times the lanes a row, FusedRowLanes()), else
   FUSED_WIDE_BLOCK. H100, us per iteration against two blocks of 256
   (three alternating runs, 2026-11-22): BiCGStab 7.6-7.8 against 11.0-11.1
   at 40,000 rows, 11.3-11.5 against 12.0-12.4 at 100,000; CG 3.9 against
   4.7 and 5.7-5.9 against 6.1-6.3. */
static inline int FusedSingleKernelBlock(FusedCUDA ctx, long long threads)
{
  return (threads + FUSED_BLOCK - 1) / FUSED_BLOCK <= ctx->sms ? FUSED_BLOCK : FUSED_WIDE_BLOCK;
}

/* The lanes of a group that sum a row together in the single-kernel loop.
   One (a thread a row) on DIA storage, and wherever the rows alone nearly
   fill the resident blocks; else as many as fit in them, a power of two, at
   most the mean row length rounded up to one and at most a warp. Measured
   on an H100 (2026-11-25), us per CG iteration with 1 lane against this
   rule: bcsstk13 (2,003 rows, 42 entries a row) 41.5 -> 7.2 at 32 lanes,
   evsl_stiff1 (5,795 rows, 24) 13.2 -> 8.5 at 8, hypre_ams_A 7.0 -> 4.6 at
   8; memplus (17,758 rows, 5.6) was slower at 2 lanes (11.6 against 10.7),
   and the 10^5-row irregular problems too. FusedRowLanesWithin(): the same
   for room threads (the rows times the lanes at most that), and one lane
   where the rows average fewer than min_mean entries. */
static inline int FusedRowLanesWithin(FusedDevMat A, long long room, double min_mean)
{
  const int n = A->view.n;
  if (A->view.format == FUSED_FORMAT_DIA || n == 0) return 1;
  const double mean  = A->view.K + (double)A->tail / n;
  int          lanes = 1;
  while (lanes < 32 && (long long)n * 2 * lanes <= room && lanes < mean) lanes *= 2;
  return lanes >= 4 && mean >= min_mean ? lanes : 1;
}

static inline int FusedRowLanes(FusedCUDA ctx, FusedDevMat A)
{
  return FusedRowLanesWithin(A, (long long)ctx->sms * FUSED_WIDE_BLOCK, 0.0); /* threads of one block of 512 per multiprocessor */
}

/* *vecs: count device vectors of length n after one another, for the
   single-kernel loops' double buffers (made at the first need, kept) */
int FusedCUDAEnsureLoopVectors(FusedCUDA ctx, int count, double **vecs);

/* The grid of a grid-stride kernel in the device loop: the blocks that are
   resident at once (no second, partial wave), at most ctx->nblocks (the
   partials' room) */
int FusedCUDAResidentGrid(FusedCUDA ctx, const void *kernel, size_t smem, int *grid);

/* Iterations per pass of the device loop's graph body: the conditional
   node's turn between passes cost the H100 about 3 us (pcgfused on 10,000
   rows, graph forced: 13.7 us per iteration with one, 11.1 with four).
   Every loop kernel returns at once when a kernel before it stopped. */
#define FUSED_LOOP_UNROLL 4

/* Runs the device loop from iteration it0: launches the cached graph, or
   builds it with build() first when args (its kernels' arguments) differ
   from the last build; returns the iteration where it stopped. build()
   captures one iteration's kernels, launched with FusedLaunchLoopKernel();
   the body holds FUSED_LOOP_UNROLL of them. */
int FusedCUDARunLoop(FusedCUDA ctx, const void *args, size_t args_len, int (*build)(FusedCUDA, const void *, cudaGraphConditionalHandle), const FusedConvergence *conv, int it0, const FusedLoopPrologue *prologue, int *its);

/* Where a loop kernel starts: with programmatic dependent launch (sm_90)
   it may be resident before the kernel ahead of it in the graph is done,
   so it first waits for that kernel's completion and writes; then it lets
   the kernel after it launch early, to wait likewise. That hides the
   launch between the kernels of a graph body (H100, pcgfused on 10,000
   rows, graph forced: 10.1 against 11.1 us per iteration). Without the
   launch attribute both are no-ops. Returns true where a kernel before it
   in the body stopped the loop, and the kernel is to do nothing; state
   NULL (the host-driven steps): false. */
__device__ __forceinline__ bool FusedLoopKernelStopped(const FusedLoopState *state)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  return state && state->stop;
}

/* A kernel of the device loop's body, on the workspace's stream (captured
   into the graph), with programmatic dependence on the kernel before it
   where ctx->loop_pdl says so */
template <typename... Params, typename... Args>
int FusedLaunchLoopKernel(FusedCUDA ctx, void (*kernel)(Params...), int grid, size_t smem, Args &&...args)
{
  cudaLaunchConfig_t  cfg  = {};
  cudaLaunchAttribute attr = {};
  attr.id                                         = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.gridDim                                     = dim3((unsigned)grid);
  cfg.blockDim                                    = dim3(FUSED_BLOCK);
  cfg.dynamicSmemBytes                            = smem;
  cfg.stream                                      = ctx->stream;
  cfg.attrs                                       = &attr;
  cfg.numAttrs                                    = ctx->loop_pdl ? 1 : 0;
  FUSED_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
  return FUSED_CUDA_OK;
}

/* ---- the operator's row product ----------------------------------------
   FusedRowProductOf() reads the vector through x(j): a stored vector
   (FusedStored), or one the single-kernel loops compute entry by entry from
   the last iteration's vectors, so that the update and the product of an
   iteration need no grid barrier between them. */
struct FusedStored {
  static constexpr bool gather = false;
  const double *__restrict__ p;
  __device__ __forceinline__ double operator()(int j) const { return p[j]; }
};

/* A stored vector whose DIA product loads BATCH diagonals' entries before
   it computes (FusedRowProductGathered): fewer waits for memory, more
   registers. The GMRES single kernel, bound by latency, is faster with it
   (H100, BATCH 4, 10,000 rows: 9.8 against 10.3 us per step; 100,000: 17.7
   against 19.4); the graph's product kernel, held to 64 registers, slower
   (1M rows: 173 against 163). */
template <int BATCH>
struct FusedStoredGathered {
  static constexpr bool gather = true;
  static constexpr int  batch  = BATCH; /* 8: the 5 and 7 diagonals of the Laplacians in one wait */
  using Entry                  = double;
  const double *__restrict__ p;
  __device__ __forceinline__ double operator()(int j) const { return p[j]; }
  __device__ __forceinline__ double Load(int j) const { return p[j]; }
  __device__ __forceinline__ double Value(double e) const { return e; }
};

/* A computed vector has gather = true, an Entry of the loads that make x(j),
   Load(j) and Value(entry), with operator()(j) = Value(Load(j)), and a
   batch (4 or 8: FUSED_DIA_INLINE a multiple of it). On DIA storage with
   inline offsets its product loads batch diagonals' entries before it
   computes with any, then adds their terms in the order of
   FusedRowProductOf(): the compiler does not move loads past a branch, so
   computing each entry right after its loads would wait for memory once
   per diagonal. */
template <class X>
__device__ __forceinline__ double FusedRowProductGathered(const FusedMatView &A, const X &x, int i)
{
  constexpr int B = X::batch; /* diagonals whose loads are in flight together */
  double        s = 0.0;
#pragma unroll
  for (int d0 = 0; d0 < FUSED_DIA_INLINE; d0 += B) {
    if (d0 < A.ndiag) {
      typename X::Entry e[B];
      double            a[B] = {};
#pragma unroll
      for (int k = 0; k < B; k++) {
        const int j = i + A.off[d0 + k];
        if (d0 + k < A.ndiag && j >= 0 && j < A.n) {
          a[k] = A.dval[(size_t)(d0 + k) * A.n + i];
          e[k] = x.Load(j);
        }
      }
#pragma unroll
      for (int k = 0; k < B; k++) {
        const int j = i + A.off[d0 + k];
        if (d0 + k < A.ndiag && j >= 0 && j < A.n) s += a[k] * x.Value(e[k]);
      }
    }
  }
  return s;
}

/* Lane `lane` of a group of `lanes` (a power of two, at most 32) that sums
   row i of an ELL, HYB or CSR operator together: entries lane, lane +
   lanes, ... of the ELL part and of the CSR part (a long row's sum comes from
   FusedLongRowsSum, added by lane 0); the caller adds the lanes' sums up.
   One rank only: no off-process block. */
template <class X>
__device__ __forceinline__ double FusedRowProductLanes(const FusedMatView &A, const X &x, int i, int lane, int lanes)
{
  double s = 0.0;
  for (int k = lane; k < A.K; k += lanes) s += A.eval[(size_t)k * A.n + i] * x(A.ecol[(size_t)k * A.n + i]);
  if (A.rowptr) {
    const int b = A.rowptr[i], e = A.rowptr[i + 1];
    if (e - b > A.lrows.limit) {
      if (lane == 0) s += A.lrows.sum[A.lrows.slot[i]];
    } else
      for (int k = b + lane; k < e; k += lanes) s += A.val[k] * x(A.col[k]);
  }
  return s;
}

/* Row i of the off-process block, whose entries are b .. e - 1 */
__device__ __forceinline__ double FusedGhostRowProduct(const FusedMatView &A, int i, int b, int e)
{
  if (e - b > A.glimit) return A.gsum[A.gslot[i]]; /* summed before */
  double s = 0.0;
  for (int k = b; k < e; k++) s += A.gval[k] * A.ghost[A.gcol[k]];
  return s;
}

/* LONG_ROWS false: the operator has no long rows (A.lrows.nchunks 0), and
   the product is compiled without their test: the single-kernel loops,
   held to 128 registers at 512 threads a block, spilled with it (H100,
   pcgfused on 1000^2: 61 against 51 us per iteration) */
template <class X, bool LONG_ROWS = true>
__device__ __forceinline__ double FusedRowProductOf(const FusedMatView &A, const X &x, int i)
{
  double s = 0.0;
  if (A.format == FUSED_FORMAT_DIA && A.ndiag <= FUSED_DIA_INLINE) {
    if constexpr (X::gather) s = FusedRowProductGathered(A, x, i);
    else {
      /* unrolled over the inline offsets; each term is computed right
         after its loads, which then wait for memory once per diagonal
         (the compiler does not move loads past the bounds branch): few
         registers, for kernels with warps enough to hide the waits */
#pragma unroll
      for (int d = 0; d < FUSED_DIA_INLINE; d++) {
        if (d < A.ndiag) {
          const int j = i + A.off[d];
          if (j >= 0 && j < A.n) s += A.dval[(size_t)d * A.n + i] * x(j);
        }
      }
    }
  } else if (A.format == FUSED_FORMAT_DIA) {
    for (int d = 0; d < A.ndiag; d++) {
      const int j = i + __ldg(&A.offsets[d]);
      if (j >= 0 && j < A.n) s += A.dval[(size_t)d * A.n + i] * x(j);
    }
  } else {
    /* ELL part (coalesced: consecutive rows, consecutive addresses), then the CSR rows or HYB's tail */
    for (int k = 0; k < A.K; k++) s += A.eval[(size_t)k * A.n + i] * x(A.ecol[(size_t)k * A.n + i]);
    if (A.rowptr) {
      const int  b = A.rowptr[i], e = A.rowptr[i + 1];
      if (LONG_ROWS && e - b > A.lrows.limit) s += A.lrows.sum[A.lrows.slot[i]]; /* summed before (FusedLongRowsSum) */
      else
        for (int k = b; k < e; k++) s += A.val[k] * x(A.col[k]);
    }
  }
  if (A.growptr) s += FusedGhostRowProduct(A, i, A.growptr[i], A.growptr[i + 1]);
  return s;
}

/* The single-kernel loops' rows in groups of `lanes` lanes (FusedRowLanes()):
   the group sums row i's product with x (FusedRowProductLanes, then a
   shuffle tree), and the group's first lane calls body(i, product). Every
   lane goes through the same rounds, for the shuffles. */
template <int BLOCK, class X, class Body>
__device__ __forceinline__ void FusedRowsInGroups(const FusedMatView &A, const X &x, int lanes, Body body)
{
  const int groups = gridDim.x * (BLOCK / lanes), lane = (int)threadIdx.x & (lanes - 1);
  int       i      = (int)(blockIdx.x * BLOCK + threadIdx.x) / lanes;
  for (int round = (A.n + groups - 1) / groups; round > 0; round--, i += groups) {
    double y = i < A.n ? FusedRowProductLanes(A, x, i, lane, lanes) : 0.0;
    for (int o = lanes >> 1; o > 0; o >>= 1) y += __shfl_xor_sync(0xffffffffu, y, o);
    if (lane == 0 && i < A.n) body(i, y);
  }
}

__device__ __forceinline__ double FusedRowProduct(const FusedMatView &A, const double *__restrict__ x, int i)
{
  return FusedRowProductOf(A, FusedStored{x}, i);
}

/* ---- reductions ----------------------------------------------------------
   Each block sums its threads' values and writes one partial per sum; the
   last block to finish adds the partials in block order (deterministic, no
   atomics on doubles) and writes sums[]. */
/* ---- compensated sums (-ksp_fused_compensated) ---------------------------
   A method's .cu file is compiled twice: FUSED_COMPENSATED 0, where FusedSum
   is a double, and 1, where it is a FusedDD that carries the rounding error
   of each addition beside the sum (TwoSum, Knuth: exact, whatever the
   magnitudes) and each product's (TwoProduct by an FMA): Ogita, Rump and
   Oishi's Dot2 and Sum2, so that a sum is as accurate as in twice the
   working precision, then rounded once. The reductions below are templates
   of the type; the plain build's code is the same as before. */
struct FusedDD {
  double s, c; /* the sum is s + c */
};
#ifndef FUSED_COMPENSATED
  #define FUSED_COMPENSATED 0
#endif
#if FUSED_COMPENSATED
typedef FusedDD FusedSum;
#else
typedef double FusedSum;
#endif

/* The compensated build of a method's file puts its kernels in a namespace
   of their own and names each entry point NAME_Compensated; the plain
   build's NAME hands its call to that one where the workspace asks for
   compensated sums (FusedCUDASetCompensated()). */
#if FUSED_COMPENSATED
  #define FUSED_METHOD_NAMESPACE_BEGIN namespace fused_compensated {
  #define FUSED_METHOD_NAMESPACE_END   }
  #define FUSED_METHOD_ENTRY(name)     name##_Compensated
  #define FUSED_COMPENSATED_TWIN(name, ctx, ...)
#else
  #define FUSED_METHOD_NAMESPACE_BEGIN
  #define FUSED_METHOD_NAMESPACE_END
  #define FUSED_METHOD_ENTRY(name) name
  #define FUSED_COMPENSATED_TWIN(name, ctx, ...) \
    do { \
      if ((ctx)->compensated) return name##_Compensated(ctx, __VA_ARGS__); \
    } while (0)
#endif
#define FUSED_TWIN_DECL(name) extern "C" decltype(name) name##_Compensated

/* a + b = s + e exactly; __d*_rn: never contracted into an FMA */
__device__ __forceinline__ FusedDD FusedTwoSum(double a, double b)
{
  const double s = __dadd_rn(a, b), bb = __dsub_rn(s, a);
  return FusedDD{s, __dadd_rn(__dsub_rn(a, __dsub_rn(s, bb)), __dsub_rn(b, bb))};
}
__device__ __forceinline__ FusedDD &operator+=(FusedDD &a, double x)
{
  const FusedDD t = FusedTwoSum(a.s, x);
  a.s             = t.s;
  a.c             = __dadd_rn(a.c, t.c);
  return a;
}
__device__ __forceinline__ FusedDD operator+(const FusedDD &a, const FusedDD &b)
{
  const FusedDD t = FusedTwoSum(a.s, b.s);
  return FusedDD{t.s, __dadd_rn(__dadd_rn(a.c, b.c), t.c)};
}
__device__ __forceinline__ FusedDD &operator+=(FusedDD &a, const FusedDD &b)
{
  return a = a + b;
}
/* acc += x y: the plain build's FMA; compensated, the product's rounding
   error joins the carried error (TwoProduct) */
__device__ __forceinline__ void FusedAddProduct(double &acc, double x, double y)
{
  acc += x * y;
}
__device__ __forceinline__ void FusedAddProduct(FusedDD &acc, double x, double y)
{
  const double p = __dmul_rn(x, y);
  acc += p;
  acc.c = __dadd_rn(acc.c, __fma_rn(x, y, -p));
}
__device__ __forceinline__ double FusedSumValue(double v)
{
  return v;
}
__device__ __forceinline__ double FusedSumValue(const FusedDD &v)
{
  return __dadd_rn(v.s, v.c);
}
__device__ __forceinline__ double FusedShuffleDown(double v, int o)
{
  return __shfl_down_sync(0xffffffffu, v, o);
}
__device__ __forceinline__ FusedDD FusedShuffleDown(const FusedDD &v, int o)
{
  return FusedDD{__shfl_down_sync(0xffffffffu, v.s, o), __shfl_down_sync(0xffffffffu, v.c, o)};
}
__device__ __forceinline__ double FusedShuffleXor(double v, int o)
{
  return __shfl_xor_sync(0xffffffffu, v, o);
}
__device__ __forceinline__ FusedDD FusedShuffleXor(const FusedDD &v, int o)
{
  return FusedDD{__shfl_xor_sync(0xffffffffu, v.s, o), __shfl_xor_sync(0xffffffffu, v.c, o)};
}
/* Partial sums in global memory: a FusedDD takes two doubles (the
   workspace's partials have room for that) */
__device__ __forceinline__ void FusedPartialPut(double *part, size_t i, double v)
{
  part[i] = v;
}
__device__ __forceinline__ void FusedPartialPut(double *part, size_t i, const FusedDD &v)
{
  part[2 * i]     = v.s;
  part[2 * i + 1] = v.c;
}
template <class T, class I>
__device__ __forceinline__ T FusedPartialGet(const double *part, I i)
{
  if constexpr (std::is_same<T, FusedDD>::value) return FusedDD{__ldcg(&part[2 * i]), __ldcg(&part[2 * i + 1])};
  else return __ldcg(&part[i]);
}
/* doubles per partial sum of type T */
template <class T>
__host__ __device__ constexpr int FusedPartialWidth()
{
  return (int)(sizeof(T) / sizeof(double));
}
/* doubles per partial sum of this build's FusedSum: the single-kernel
   loops' offsets into their partials count in these */
#define FUSED_SUM_WIDTH FusedPartialWidth<FusedSum>()

template <class T>
__device__ __forceinline__ T FusedWarpSum(T v)
{
  for (int o = 16; o > 0; o >>= 1) v += FusedShuffleDown(v, o);
  return v;
}

/* The long rows times x: warp w of the grid sums
   chunks w, w + warps, ... (8 entries a lane or more, then a shuffle tree), and a
   row of one chunk has its sum at once; of a row of several, the warp of
   its last chunk to finish adds the chunks' sums in order. The sums are
   the same from run to run, whichever warp makes them. The product that
   reads them (FusedRowProductOf) comes after a kernel boundary or a grid
   barrier. BATCH > 1: each lane's entries BATCH at a time (below). */
template <int BATCH, class X>
__device__ __forceinline__ void FusedLongRowsSum(const FusedLongRows &L, const int *rowptr, const int *col, const double *val, const X &x)
{
  const int lane = threadIdx.x & 31, warps = gridDim.x * (blockDim.x >> 5);
  for (int c = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); c < L.nchunks; c += warps) {
    const int s = L.chunk_slot[c], i = L.row[s], c0 = L.first_chunk[s], nch = L.first_chunk[s + 1] - c0;
    const int start = rowptr[i], end = rowptr[i + 1], size = (end - start + nch - 1) / nch; /* FUSED_LONG_CHUNK at most, or more where the chunks are capped */
    const int b = start + (c - c0) * size, e = min(b + size, end);
    double    v = 0.0;
    if constexpr (BATCH > 1) {
      /* BATCH entries a lane at a time, their loads issued before any is
         used: as the plain loop below (unroll 8) each entry waited for its
         column and then for x, and the arrow of 10^6 rows took 25.7 us a
         product in a kernel of its own (ncu, H100). Each lane adds its
         entries in the same order as that loop. */
      for (int k0 = b + lane; k0 < e; k0 += 32 * BATCH) {
        int    cols[BATCH];
        double vals[BATCH];
#pragma unroll
        for (int u = 0; u < BATCH; u++) {
          const int k = k0 + 32 * u;
          cols[u]     = k < e ? col[k] : -1;
          vals[u]     = k < e ? val[k] : 0.0;
        }
#pragma unroll
        for (int u = 0; u < BATCH; u++)
          if (cols[u] >= 0) v += vals[u] * x(cols[u]);
      }
    } else {
#pragma unroll 8
      for (int k = b + lane; k < e; k += 32) v += val[k] * x(col[k]);
    }
    v = FusedWarpSum(v);
    if (nch == 1) {
      if (lane == 0) L.sum[s] = v;
      continue;
    }
    bool last = false;
    if (lane == 0) {
      L.chunk_sum[c] = v;
      __threadfence(); /* the sum before the count that says it is there */
      last = atomicAdd(&L.arrived[s], 1u) == (unsigned)nch - 1;
    }
    if (!__shfl_sync(0xffffffffu, last, 0)) continue;
    __threadfence();
    double t = 0.0;
    if constexpr (BATCH > 1) {
      for (int q0 = lane; q0 < nch; q0 += 32 * BATCH) {
        double part[BATCH];
#pragma unroll
        for (int u = 0; u < BATCH; u++) part[u] = q0 + 32 * u < nch ? __ldcg(&L.chunk_sum[c0 + q0 + 32 * u]) : 0.0;
#pragma unroll
        for (int u = 0; u < BATCH; u++)
          if (q0 + 32 * u < nch) t += part[u];
      }
    } else {
      for (int q = lane; q < nch; q += 32) t += __ldcg(&L.chunk_sum[c0 + q]);
    }
    t = FusedWarpSum(t);
    if (lane == 0) {
      L.sum[s]       = t;
      L.arrived[s]   = 0; /* for the next product */
    }
  }
}

/* the batch of the long rows' kernels of their own */
#define FUSED_LONG_BATCH 8

/* The local block's long rows times x: nothing where there are none.
   BiCGStab's and GMRES's single-kernel loops keep the plain loop (BATCH 1):
   batches of 4 made BiCGStab's 512-thread kernel spill 8 bytes more and the
   arrow of 10^5 rows 5-9% slower per iteration; CG's batches them (no
   spill more; H100, 2026-11-25) */
template <int BATCH = 1, class X>
__device__ __forceinline__ void FusedLongRowsOf(const FusedMatView &A, const X &x)
{
  if (A.lrows.nchunks) FusedLongRowsSum<BATCH>(A.lrows, A.rowptr, A.col, A.val, x);
}

/* FusedLongRowsSum() as a kernel of its own, before a product of stored
   vectors (or one of a graph body: state) */
template <class X>
__global__ void FusedLongRowsKernel(FusedLongRows L, const int *rowptr, const int *col, const double *val, X x, const FusedLoopState *state)
{
  if (FusedLoopKernelStopped(state)) return;
  FusedLongRowsSum<FUSED_LONG_BATCH>(L, rowptr, col, val, x);
}

/* Blocks of FUSED_BLOCK threads for L's chunks: a warp each */
static inline int FusedLongRowsGrid(const FusedLongRows &L)
{
  return FusedBuildGrid(L.nchunks * 32);
}

/* The local block's long rows times the stored vector x, queued on stream
   before the product that reads them (none: nothing queued) */
static inline int FusedLongRowsLaunch(const FusedMatView &A, const double *x, cudaStream_t stream)
{
  if (!A.lrows.nchunks) return FUSED_CUDA_OK;
  FusedLongRowsKernel<FusedStored><<<FusedLongRowsGrid(A.lrows), FUSED_BLOCK, 0, stream>>>(A.lrows, A.rowptr, A.col, A.val, FusedStored{x}, NULL);
  FUSED_CUDA_CHECK_LAUNCH("FusedLongRowsKernel");
  return FUSED_CUDA_OK;
}

/* The same for the off-process block's long rows, once the ghost values are there */
int FusedLongGhostRowsLaunch(FusedDevMat A, cudaStream_t stream);

/* Both, before a product of the whole operator with x */
int FusedLongRowsBefore(FusedDevMat A, const double *x, cudaStream_t stream);

/* Each warp's sums of v[k] go to warp_sums[k][warp], then a block barrier:
   the first stage of every block sum below */
template <int K, int BLOCK = FUSED_BLOCK, class T>
__device__ __forceinline__ void FusedWarpSumsToShared(const T (&v)[K], T (&warp_sums)[K][BLOCK / 32])
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int k = 0; k < K; k++) {
    const T s = FusedWarpSum(v[k]);
    if (lane == 0) warp_sums[k][warp] = s;
  }
  __syncthreads();
}

/* the block's sum of v[k] lands in thread 0 */
template <int K, class T>
__device__ __forceinline__ void FusedBlockSum(T (&v)[K])
{
  __shared__ T warp_sums[K][FUSED_WARPS];
  const int    lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  FusedWarpSumsToShared<K>(v, warp_sums);
  if (warp == 0) {
#pragma unroll
    for (int k = 0; k < K; k++) v[k] = FusedWarpSum(lane < FUSED_WARPS ? warp_sums[k][lane] : T{});
  }
  __syncthreads(); /* warp_sums may be reused by the caller */
}

/* Called by every thread after thread 0 has written the block's partials:
   true in the last block to get here, which then sees every block's
   partials (the caller resets *ticket when done with them) */
__device__ __forceinline__ bool FusedIsLastBlock(unsigned int *ticket)
{
  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    __threadfence();
    is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return false;
  __threadfence();
  return true;
}

/* v[k] = sum over b = threadIdx.x, + stride, ... < G of part[k * G + b], in
   that order. The K sums' loads of FUSED_PARTIAL_STRIDES strides are issued
   together (the strides past G add exact zeros): one wait for memory per
   four strides rather than per stride or per sum. */
#define FUSED_PARTIAL_STRIDES 4
template <int K, class T>
__device__ __forceinline__ void FusedAddPartials(const double *part, int G, int stride, T (&v)[K])
{
#pragma unroll
  for (int k = 0; k < K; k++) v[k] = T{};
  for (int b0 = threadIdx.x; b0 < G; b0 += FUSED_PARTIAL_STRIDES * stride) {
    T t[FUSED_PARTIAL_STRIDES][K];
#pragma unroll
    for (int s = 0; s < FUSED_PARTIAL_STRIDES; s++)
#pragma unroll
      for (int k = 0; k < K; k++) t[s][k] = b0 + s * stride < G ? FusedPartialGet<T>(part, (size_t)k * G + b0 + s * stride) : T{};
#pragma unroll
    for (int s = 0; s < FUSED_PARTIAL_STRIDES; s++)
#pragma unroll
      for (int k = 0; k < K; k++) v[k] += t[s][k];
  }
}

/* Returns true in the last block, whose thread 0 then holds sums[first..first+K) (also in v).
   With split < K, sums split.. go to sums[second..] instead (the partials stay
   at first..first+K). */
template <int K, class T>
__device__ __forceinline__ bool FusedReduce(T (&v)[K], double *partials, double *sums, unsigned int *ticket, int first, int split = K, int second = 0)
{
  FusedBlockSum<K>(v);
  if (threadIdx.x == 0) {
#pragma unroll
    for (int k = 0; k < K; k++) FusedPartialPut(partials, (size_t)(first + k) * gridDim.x + blockIdx.x, v[k]);
  }
  if (!FusedIsLastBlock(ticket)) return false;
  FusedAddPartials<K>(partials + (size_t)first * gridDim.x * FusedPartialWidth<T>(), (int)gridDim.x, (int)blockDim.x, v);
  FusedBlockSum<K>(v);
  if (threadIdx.x == 0) {
#pragma unroll
    for (int k = 0; k < K; k++) sums[k < split ? first + k : second + k - split] = FusedSumValue(v[k]);
    *ticket = 0; /* ready for the next reduction */
  }
  return true;
}

/* The sum of a block's W warp sums w[], halving: w[i] + w[i + W/2], and so
   on. For 8 warps these are the additions of FusedBlockSum's warp-0 step
   (the shuffle tree over lanes 0..7, the lanes above adding exact zeros). */
template <int W = FUSED_WARPS, class T>
__device__ __forceinline__ T FusedSumOfWarps(const T *w)
{
  static_assert(W == 8 || W == 16, "the trees below are written for 8 and 16 warps");
  if constexpr (W == 16) {
    T h[8];
#pragma unroll
    for (int i = 0; i < 8; i++) h[i] = w[i] + w[i + 8];
    return FusedSumOfWarps<8>(h);
  } else {
    const T a0 = w[0] + w[4], a1 = w[1] + w[5], a2 = w[2] + w[6], a3 = w[3] + w[7];
    return (a0 + a2) + (a1 + a3);
  }
}

/* The block's sums of v[] go to part[k * gridDim.x + blockIdx.x], with one
   block barrier; for blocks of FUSED_BLOCK threads as FusedBlockSum adds
   them. Two calls with the same K need a barrier between them (the loops'
   grid barriers): warp_sums[] is rewritten. */
template <int K, int BLOCK = FUSED_BLOCK, class T>
__device__ __forceinline__ void FusedStorePartials(T (&v)[K], double *part)
{
  static_assert(K <= BLOCK, "one thread per sum");
  __shared__ T warp_sums[K][BLOCK / 32];
  FusedWarpSumsToShared<K, BLOCK>(v, warp_sums);
  if ((int)threadIdx.x < K) FusedPartialPut(part, (size_t)threadIdx.x * gridDim.x + blockIdx.x, FusedSumOfWarps<BLOCK / 32>(warp_sums[threadIdx.x]));
}

/* The single-kernel loops' sums after a grid barrier: every thread of
   every block gets sum_b part[k * G + b], the same sums in every block.
   Warp k adds sum k: each lane loads its partials b = lane, lane + 32, ...
   (LOADS of them at once) and adds them in that order, then one shuffle
   tree; one block barrier. (Keeping FusedBlockSum's order, as the graphs'
   kernels add, took eight shuffle trees per sum and, above 256 partials, a
   second stage: on 264 blocks a barrier and its 5 sums took 3.00-3.02 us
   against 2.57-2.58; H100, examples/grid_sums.cu.) K warps. Two calls
   with the same K need a barrier between them: result[] is rewritten. */
template <int K, class T = double, int LOADS = FUSED_SINGLE_LOADS>
__device__ __forceinline__ void FusedSumPartialsByWarp(const double *part, int G, double (&out)[K])
{
  __shared__ double result[K];
  const int         lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (warp < K) {
    const double *mine = part + (size_t)warp * G * FusedPartialWidth<T>();
    T             loaded[LOADS], v = T{};
#pragma unroll
    for (int j = 0; j < LOADS; j++) loaded[j] = lane + 32 * j < G ? FusedPartialGet<T>(mine, lane + 32 * j) : T{};
#pragma unroll
    for (int j = 0; j < LOADS; j++) v += loaded[j];
    for (int b = lane + 32 * LOADS; b < G; b += 32) v += FusedPartialGet<T>(mine, b); /* more blocks than the caller planned for */
    v = FusedWarpSum(v);
    if (lane == 0) result[warp] = FusedSumValue(v);
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; k++) out[k] = result[k];
}

/* n_k at row i of a null space's basis (FusedNullSpace) */
__device__ __forceinline__ double FusedNullSpaceBasis(const FusedNullSpace &ns, int k, int i)
{
  return ns.has_cnst && k == 0 ? ns.cnst : ns.vecs[(size_t)(k - ns.has_cnst) * ns.ld + i];
}

/* Row i of w less its part in the null space, w_i - sum_k c_k n_k(i), for
   NS basis vectors at most (ns.m of them) */
template <int NS>
__device__ __forceinline__ double FusedLessNullSpace(const FusedNullSpace &ns, const double *c, double w, int i)
{
#pragma unroll
  for (int k = 0; k < NS; k++)
    if (k < ns.m) w -= c[k] * FusedNullSpaceBasis(ns, k, i);
  return w;
}

__device__ __forceinline__ void FusedSwap(double *&a, double *&b)
{
  double *t = a;
  a         = b;
  b         = t;
}

/* ---- the residual history of the single-kernel loops --------------------
   Block 0 keeps the norms of the last 32 iterations in shared memory, and
   its first warp writes them out 32 at a time and where the loop stops:
   entries first + 1 .. it of hist. Storing each norm as it came held block 0
   up by about 6 us per iteration on the H100 (pcgfused on 10,000 rows: 9.0
   against 3.8 us per iteration). Called by every thread, with the same it. */
__device__ __forceinline__ double *FusedHistoryRing()
{
  __shared__ double ring[32];
  return ring;
}

__device__ __forceinline__ void FusedHistoryFlush(double *hist, int first, int it)
{
  if (blockIdx.x != 0 || threadIdx.x >= 32) return;
  __syncwarp();
  const int k = (it & ~31) + (int)threadIdx.x;
  if (k > first && k <= it) hist[k] = FusedHistoryRing()[threadIdx.x];
  __syncwarp(); /* the ring is rewritten from the next iteration on */
}

__device__ __forceinline__ void FusedHistoryPut(double *hist, int first, int it, double rnorm)
{
  if (blockIdx.x != 0 || threadIdx.x >= 32) return;
  if (threadIdx.x == 0) FusedHistoryRing()[it & 31] = rnorm;
  if ((it & 31) == 31) FusedHistoryFlush(hist, first, it);
}

#define FUSED_GRID_LOOP(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += gridDim.x * blockDim.x)

/* ---- point-block Jacobi (dblock: the inverse blocks of bs rows, row by row)
   z = B r couples the rows of a block, so a thread block takes whole
   blocks: tiles of bs (FUSED_BLOCK / bs) consecutive rows (255 of 256
   threads for bs 3), whose values its threads share through shared
   memory. The rows stay one per thread, consecutive, as in the other
   kernels. FUSED_TILE_LOOP: every thread of the block runs each turn (the
   barriers); those past the tile's rows or the vector's end idle through it.
   Thread t's row is base + t, and t - t % bs is its block's first in the tile. */
__device__ __forceinline__ int FusedTileRows(int bs)
{
  return (FUSED_BLOCK / bs) * bs;
}
#define FUSED_TILE_LOOP(base, n, bs) for (int base = blockIdx.x * FusedTileRows(bs); base < (n); base += gridDim.x * FusedTileRows(bs))

/* (B s)_i for the thread's row i, s its tile's values and t0 the tile
   index of its block's first row */
__device__ __forceinline__ double FusedBlockRow(const double *dblock, int bs, int i, const double *s, int t0)
{
  const double *row = dblock + (size_t)i * bs;
  double        z   = 0.0;
  for (int k = 0; k < bs; k++) z = __fma_rn(row[k], s[t0 + k], z);
  return z;
}

/* A point-block Jacobi kernel's pass over its tiles: for each row i of a
   tile, first(i) returns the value the blocks apply to (and does the row's
   own work); after the block barrier then(i, tile, t0) reads the tile's
   values (thread t's at tile[t]). Every thread of the block calls it: the
   barriers are inside. Kernels pass lambdas that take their parameters by
   value: captured by reference, BiCGStab's product took 40 registers
   against 32 (ptxas) and ran 7% slower on the H100 (1M rows). */
template <class First, class Then>
__device__ __forceinline__ void FusedBlockTiles(int n, int bs, const First &first, const Then &then)
{
  __shared__ double tile[FUSED_BLOCK];
  const int         t = threadIdx.x, t0 = t - t % bs;
  FUSED_TILE_LOOP(base, n, bs)
  {
    const int  i      = base + t;
    const bool active = t < FusedTileRows(bs) && i < n;
    tile[t]           = active ? first(i) : 0.0;
    __syncthreads();
    if (active) then(i, (const double *)tile, t0);
    __syncthreads(); /* the tile is rewritten next turn */
  }
}

/* the blocks must tile the workspace's rows, and a tile hold one */
/* a null space of 1 to FUSED_NULLSPACE_MAX vectors, and room for the sums
   the caller's reductions place (nsums) */
static inline int FusedCheckNullSpace(FusedCUDA ctx, const FusedNullSpace *ns, int nsums)
{
  if (!ns || ns->m < 1 || ns->m > FUSED_NULLSPACE_MAX) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "a null space of %d vectors (1 to %d)", ns ? ns->m : 0, FUSED_NULLSPACE_MAX);
  if (ctx->maxsums < nsums) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "%d sums in the workspace, a null space's reductions need %d", ctx->maxsums, nsums);
  return FUSED_CUDA_OK;
}

static inline int FusedCheckBlocks(FusedCUDA ctx, int bs)
{
  if (bs < 1 || bs > FUSED_PBJACOBI_MAX_BS || ctx->n % bs) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "point-block Jacobi with blocks of %d rows on %d rows (at most %d a block, a whole number of blocks)", bs, ctx->n, FUSED_PBJACOBI_MAX_BS);
  return FUSED_CUDA_OK;
}

/* (B^T s)_i, c = i's place in its block: so that <y, B r> = <B^T y, r>
   needs the tile of y alone */
__device__ __forceinline__ double FusedBlockColumn(const double *dblock, int bs, int i, const double *s, int t0, int c)
{
  const double *first = dblock + (size_t)(i - c) * bs; /* the block's first row */
  double        z     = 0.0;
  for (int k = 0; k < bs; k++) z = __fma_rn(first[(size_t)k * bs + c], s[t0 + k], z);
  return z;
}

/* Row i's term of the square of b's norm in the method's norm type
   (FusedCUDARhsNorm()): <Bb,Bb>, <b,b> or <b,Bb>, zi = (B b)_i */
template <class T>
__device__ __forceinline__ void FusedAddRhsNormTerm(T &acc, int normtype, double bi, double zi)
{
  if (normtype == FUSED_NORM_PRECONDITIONED) FusedAddProduct(acc, zi, zi);
  else FusedAddProduct(acc, bi, normtype == FUSED_NORM_UNPRECONDITIONED ? bi : zi);
}

/* KSPConvergedDefault at iteration 0 (FusedConvergence.judge_first), from
   that iteration's norm and, for a reference of b's norm, its square in
   sums[c.rhs_slot]: the same operations, so the same bits, as the host's
   PetscMax(rtol * rnorm0, abstol) and divtol * rnorm0 */
__device__ __forceinline__ void FusedSetTolerancesFrom(FusedConvergence &c, double rnorm, double rhs_square)
{
  const double rnorm0 = FusedReferenceNorm(c.reference, rnorm, rhs_square);
  const double rel    = c.rtol * rnorm0;
  c.ttol           = rel < c.abstol ? c.abstol : rel;
  c.dtol           = c.divtol * rnorm0;
}

__device__ __forceinline__ void FusedSetTolerances(FusedConvergence &c, double rnorm, const double *sums)
{
  FusedSetTolerancesFrom(c, rnorm, c.reference == FUSED_REFERENCE_RESIDUAL ? 0.0 : sums[c.rhs_slot]);
}

/* the device loop's test of KSPConvergedDefault: true where the host must look */
__device__ __forceinline__ bool FusedMustStop(const FusedConvergence &c, int it, double rnorm)
{
  if (it >= c.max_it || !isfinite(rnorm)) return true;
  if (it <= c.chknorm) return false;
  return rnorm <= c.ttol || rnorm >= c.dtol;
}
#endif
