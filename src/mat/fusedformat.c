/* Building the device storage formats from CSR (fusedformat.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mat/fusedformat.h"

const char *const FusedFormatNames[] = {"auto", "csr", "dia", "ell", "hyb", "FusedFormat", "FUSED_FORMAT_", NULL};

/* the distinct diagonals, or -1 when there are more than FUSED_DIA_MAX */
static int FindDiagonals(int n, const int *rowptr, const int *col, int offsets[])
{
  int ndiag = 0, last = 0;
  for (int i = 0; i < n; i++) {
    for (int k = rowptr[i]; k < rowptr[i + 1]; k++) {
      const int off = col[k] - i;
      int       d;
      if (ndiag && offsets[last] == off) continue;
      for (d = 0; d < ndiag && offsets[d] != off; d++) {}
      if (d == ndiag) {
        if (ndiag == FUSED_DIA_MAX) return -1;
        offsets[ndiag++] = off;
      }
      last = d;
    }
  }
  return ndiag;
}

/* Bell and Garland's width: the largest K that at least a third of the rows fill */
static int HybWidth(const FusedPattern *p)
{
  for (long long k = p->maxrow, atleast = 0; k >= 1; k--) {
    atleast += p->rowlen_count[k];
    if (3 * atleast >= p->n) return (int)k;
  }
  return 0;
}

#define ENTRY_BYTES (sizeof(double) + sizeof(int))

int FusedLongRowLimit(size_t n, size_t entries)
{
  const size_t mean = n ? (entries + n - 1) / n : 0;
  size_t       limit = n <= FUSED_LATENCY_ROWS ? 0 : FUSED_LONG_ROW_MEANS * mean;
  if (limit < FUSED_LONG_ROW_MIN) limit = FUSED_LONG_ROW_MIN;
  return limit > (size_t)(1 << 30) ? 1 << 30 : (int)limit;
}

/* The rows of the layout's CSR part longer than its limit */
static void LongRows(const FusedPattern *p, FusedLayout *L)
{
  const int K = L->format == FUSED_FORMAT_HYB ? L->K : 0;
  L->long_limit = FusedLongRowLimit((size_t)p->n, L->tail);
  if (L->format != FUSED_FORMAT_CSR && L->format != FUSED_FORMAT_HYB) return;
  for (int len = K + L->long_limit + 1; len <= p->maxrow; len++) {
    const size_t rest = (size_t)(len - K);
    L->nlong += (int)p->rowlen_count[len];
    L->long_entries += (size_t)p->rowlen_count[len] * rest;
    L->long_chunks += (size_t)p->rowlen_count[len] * FusedLongChunks(rest);
  }
}

int FusedFormatChoose(const FusedPattern *p, int requested, FusedLayout *L, char *msg, size_t msglen)
{
  const size_t n = (size_t)p->n, csr = p->nnz * ENTRY_BYTES + (n + 1) * sizeof(int);
  const int    Kh = HybWidth(p);
  size_t       tail_h = 0;

  memset(L, 0, sizeof(*L));
  L->csr_bytes = csr;
  if (requested == FUSED_FORMAT_DIA && p->ndiag < 0) {
    if (msg && msglen) snprintf(msg, msglen, "DIA storage asked for, but the matrix has more than %d diagonals", FUSED_DIA_MAX);
    return 1;
  }
  for (int len = Kh + 1; len <= p->maxrow; len++) tail_h += (size_t)p->rowlen_count[len] * (size_t)(len - Kh);
  L->format = requested;
  if (requested == FUSED_FORMAT_AUTO) {
    const size_t ell = (size_t)p->maxrow * n * ENTRY_BYTES;
    const size_t hyb = (size_t)Kh * n * ENTRY_BYTES + tail_h * ENTRY_BYTES + (n + 1) * sizeof(int);
    if (p->ndiag >= 0 && (size_t)p->ndiag * n * sizeof(double) <= csr) L->format = FUSED_FORMAT_DIA;
    else if (p->maxrow > 0 && ell <= csr) L->format = FUSED_FORMAT_ELL; /* no more padding than CSR's row pointers cost */
    else if (Kh >= 2 && hyb <= FUSED_FORMAT_MAX_GROWTH * csr) L->format = FUSED_FORMAT_HYB;
    else L->format = FUSED_FORMAT_CSR;
  }
  switch (L->format) {
  case FUSED_FORMAT_DIA:
    L->bytes = (size_t)p->ndiag * n * sizeof(double);
    break;
  case FUSED_FORMAT_ELL:
    L->K     = p->maxrow;
    L->bytes = (size_t)L->K * n * ENTRY_BYTES;
    break;
  case FUSED_FORMAT_HYB:
    L->K     = Kh;
    L->tail  = tail_h;
    L->bytes = (size_t)Kh * n * ENTRY_BYTES + tail_h * ENTRY_BYTES + (n + 1) * sizeof(int);
    break;
  default:
    L->format = FUSED_FORMAT_CSR;
    L->tail   = p->nnz;
    L->bytes  = csr;
  }
  LongRows(p, L);
  return 0;
}

#define FAIL(...) \
  do { \
    if (msg && msglen) snprintf(msg, msglen, __VA_ARGS__); \
    FusedFormatFree(out); \
    return 1; \
  } while (0)

int FusedFormatBuild(int n, const int *rowptr, const int *col, const double *val, int requested, FusedFormat *out, char *msg, size_t msglen)
{
  FusedPattern  pat;
  FusedLayout   L;
  unsigned int *count;
  int           format, K, failed;

  memset(out, 0, sizeof(*out));
  out->n      = n;
  pat.n       = n;
  pat.nnz     = (size_t)rowptr[n];
  pat.ndiag   = requested == FUSED_FORMAT_AUTO || requested == FUSED_FORMAT_DIA ? FindDiagonals(n, rowptr, col, out->offsets) : -1;
  pat.maxrow  = 0;
  for (int i = 0; i < n; i++)
    if (rowptr[i + 1] - rowptr[i] > pat.maxrow) pat.maxrow = rowptr[i + 1] - rowptr[i];
  count = (unsigned int *)calloc((size_t)pat.maxrow + 1, sizeof(unsigned int));
  if (!count) FAIL("host out of memory counting row lengths");
  for (int i = 0; i < n; i++) count[rowptr[i + 1] - rowptr[i]]++;
  pat.rowlen_count = count;
  failed           = FusedFormatChoose(&pat, requested, &L, msg, msglen);
  free(count);
  if (failed) {
    FusedFormatFree(out);
    return 1;
  }
  format            = L.format;
  K                 = L.K;
  out->format       = format;
  out->csr_bytes    = L.csr_bytes;
  out->long_limit   = L.long_limit;
  out->nlong        = L.nlong;
  out->long_entries = L.long_entries;
  if (format == FUSED_FORMAT_DIA) {
    const int ndiag = pat.ndiag;
    out->ndiag      = ndiag;
    out->dval       = (double *)calloc((size_t)ndiag * n + 1, sizeof(double));
    if (!out->dval) FAIL("host out of memory building DIA storage (%zu bytes)", (size_t)ndiag * n * sizeof(double));
    for (int i = 0; i < n; i++)
      for (int k = rowptr[i]; k < rowptr[i + 1]; k++) {
        int d;
        for (d = 0; out->offsets[d] != col[k] - i; d++) {}
        out->dval[(size_t)d * n + i] += val[k]; /* duplicates add up, as in CSR */
      }
    out->bytes = L.bytes;
    return 0;
  }
  out->K = K;
  if (K > 0) {
    out->ecol = (int *)malloc(((size_t)K * n + 1) * sizeof(int));
    out->eval = (double *)calloc((size_t)K * n + 1, sizeof(double));
    if (!out->ecol || !out->eval) FAIL("host out of memory building ELL storage (%zu bytes)", (size_t)K * n * ENTRY_BYTES);
    for (int i = 0; i < n; i++) {
      const int len = rowptr[i + 1] - rowptr[i];
      for (int k = 0; k < K; k++) {
        const size_t at = (size_t)k * n + i;
        if (k < len) {
          out->ecol[at] = col[rowptr[i] + k];
          out->eval[at] = val[rowptr[i] + k];
        } else out->ecol[at] = len ? col[rowptr[i + 1] - 1] : i; /* zero padding at a column the row reads anyway (no 0 * Inf from elsewhere) */
      }
    }
  }
  if (format != FUSED_FORMAT_ELL) {
    /* CSR, or the entries of each row beyond K */
    size_t t = 0;
    out->rowptr = (int *)malloc((size_t)(n + 1) * sizeof(int));
    out->col    = (int *)malloc((L.tail + 1) * sizeof(int));
    out->val    = (double *)malloc((L.tail + 1) * sizeof(double));
    if (!out->rowptr || !out->col || !out->val) FAIL("host out of memory building CSR storage (%zu bytes)", L.tail * ENTRY_BYTES);
    out->rowptr[0] = 0;
    for (int i = 0; i < n; i++) {
      for (int k = rowptr[i] + K; k < rowptr[i + 1]; k++, t++) {
        out->col[t] = col[k];
        out->val[t] = val[k];
      }
      out->rowptr[i + 1] = (int)t;
    }
  }
  out->bytes = L.bytes;
  return 0;
}

void FusedFormatFree(FusedFormat *f)
{
  free(f->dval);
  free(f->ecol);
  free(f->eval);
  free(f->rowptr);
  free(f->col);
  free(f->val);
  f->dval = f->eval = f->val = NULL;
  f->ecol = f->rowptr = f->col = NULL;
}

void FusedFormatMult(const FusedFormat *f, const double *x, double *y)
{
  const int n = f->n;
  for (int i = 0; i < n; i++) {
    double s = 0.0;
    if (f->format == FUSED_FORMAT_DIA) {
      for (int d = 0; d < f->ndiag; d++) {
        const int j = i + f->offsets[d];
        if (j >= 0 && j < n) s += f->dval[(size_t)d * n + i] * x[j];
      }
    } else {
      for (int k = 0; k < f->K; k++) s += f->eval[(size_t)k * n + i] * x[f->ecol[(size_t)k * n + i]];
      if (f->rowptr)
        for (int k = f->rowptr[i]; k < f->rowptr[i + 1]; k++) s += f->val[k] * x[f->col[k]];
    }
    y[i] = s;
  }
}
