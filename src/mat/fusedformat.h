/* Storage formats of the operator on the device, built on the host from CSR
   in plain C (no PETSc, no CUDA: the CUDA code and the CPU tests both use
   it). Bell and Garland (2008) for ELL and HYB, Jost et al. for DIA.

     CSR  as given.
     DIA  values along at most FUSED_DIA_MAX diagonals: no column indices.
     ELL  K entries per row, column-major (entry k of row i at k * n + i),
          padded with zeros that point at the row itself.
     HYB  ELL of width K plus the rest of each row in CSR. (Bell and Garland
          keep the rest in COO; a CSR tail keeps each row's sum in one thread,
          which the fused kernels need for their reductions.)

   Long rows: one thread sums a row's CSR part (CSR, or HYB's tail) of at
   most long_limit entries. That of a longer row is cut into chunks of
   FUSED_LONG_CHUNK entries that warps sum side by side before the product,
   so that no kernel waits for one thread to sum a row of thousands
   (src/cuda/longrows.cu). The limit follows the distribution: a few times
   the mean length of the CSR part, and at least FUSED_LONG_ROW_MIN (which
   it is on matrices of up to FUSED_LATENCY_ROWS rows).

   The automatic choice never takes more than 1.3x the CSR bytes. */
#ifndef FUSEDFORMAT_H
#define FUSEDFORMAT_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility where PETSc's flags ask for it
   (PETSc >= 3.2x); the benchmarks and tests that call the builder directly
   need these few symbols exported. */
#if defined(__GNUC__)
  #define FUSED_VISIBLE __attribute__((visibility("default")))
#else
  #define FUSED_VISIBLE
#endif

enum { FUSED_FORMAT_AUTO, FUSED_FORMAT_CSR, FUSED_FORMAT_DIA, FUSED_FORMAT_ELL, FUSED_FORMAT_HYB };
#define FUSED_DIA_MAX 64
/* most storage the automatic choice accepts, relative to CSR */
#define FUSED_FORMAT_MAX_GROWTH 1.3
/* a row's CSR part of more than this many entries is long (one thread's
   loads of a part of 32 held the H100's CG on a power-law matrix of 10^5
   rows at 28 us per iteration), and so is one over FUSED_LONG_ROW_MEANS
   times the mean */
#define FUSED_LONG_ROW_MIN   16
#define FUSED_LONG_ROW_MEANS 8
/* up to this many rows a product waits on the latency of its loads, not on
   bandwidth, and one thread's row of 56 entries set the pace of circuit_1's
   (2,624 rows): the limit there is FUSED_LONG_ROW_MIN, whatever the mean */
#define FUSED_LATENCY_ROWS (1 << 17)
/* entries of a long row's rest that one warp sums: 8 a lane; a row's rest
   of more than FUSED_LONG_MAX_CHUNKS chunks is cut into that many larger
   ones, of equal size: every chunk of a row ends in one counter that
   orders them, and thousands of warps on one counter waited for each
   other (H100, arrow of 10^7 rows) */
#define FUSED_LONG_CHUNK      256
#define FUSED_LONG_MAX_CHUNKS 1024
/* the chunks of a rest of rest entries (on the host and in CUDA kernels) */
#if defined(__CUDACC__)
  #define FUSED_HOST_DEVICE __host__ __device__
#else
  #define FUSED_HOST_DEVICE
#endif
static inline FUSED_HOST_DEVICE size_t FusedLongChunks(size_t rest)
{
  const size_t c = (rest + FUSED_LONG_CHUNK - 1) / FUSED_LONG_CHUNK;
  return c < FUSED_LONG_MAX_CHUNKS ? c : FUSED_LONG_MAX_CHUNKS;
}

typedef struct {
  int     format, n;
  int     ndiag, offsets[FUSED_DIA_MAX]; /* DIA */
  double *dval;                          /* DIA: ndiag x n, diagonal-major */
  int     K;                             /* ELL width (ELL, HYB) */
  int    *ecol;                          /* K x n, column-major */
  double *eval;
  int    *rowptr, *col;                  /* CSR, or HYB's tail */
  double *val;
  size_t  bytes;                         /* what the device will hold */
  size_t  csr_bytes;                     /* the same matrix in CSR */
  int     long_limit, nlong;             /* the long rows of the CSR part (FusedLayout) */
  size_t  long_entries;
} FusedFormat;

/* What the choice of format reads from the pattern: the host builder and the
   device builder (src/cuda/devformat.cu) gather it, and both decide with
   FusedFormatChoose(), so they store a matrix the same way. */
typedef struct {
  int                 n;
  size_t              nnz;
  int                 ndiag;        /* distinct diagonals, -1 when more than FUSED_DIA_MAX */
  int                 maxrow;       /* longest row */
  const unsigned int *rowlen_count; /* rows of each length 0..maxrow */
} FusedPattern;

typedef struct {
  int    format, K; /* K: ELL width (ELL, HYB) */
  size_t tail;      /* entries kept in CSR (the CSR format, or HYB's rest) */
  size_t bytes, csr_bytes;
  /* rows whose CSR part is longer than long_limit: how many, their CSR
     parts' entries, in how many chunks */
  int    long_limit, nlong;
  size_t long_entries, long_chunks;
} FusedLayout;

/* The long-row limit of a CSR block of n rows and entries entries */
int FusedLongRowLimit(size_t n, size_t entries);

/* The storage for requested (FUSED_FORMAT_AUTO: the smallest that is fast,
   never above FUSED_FORMAT_MAX_GROWTH x CSR); 1 with a message when it cannot be (DIA with too many diagonals) */
int FusedFormatChoose(const FusedPattern *, int requested, FusedLayout *, char *msg, size_t msglen);

/* Returns 0, or 1 with a message (out of memory, DIA asked for with too many diagonals) */
FUSED_VISIBLE int FusedFormatBuild(int n, const int *rowptr, const int *col, const double *val, int requested, FusedFormat *out, char *msg, size_t msglen);
FUSED_VISIBLE void FusedFormatFree(FusedFormat *);
/* y = A x on the host: the reference the device kernels are tested against */
FUSED_VISIBLE void FusedFormatMult(const FusedFormat *, const double *x, double *y);
FUSED_VISIBLE extern const char *const FusedFormatNames[];

#ifdef __cplusplus
}
#endif
#endif
