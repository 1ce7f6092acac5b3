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
static int HybWidth(int n, const int *rowptr)
{
  int  maxlen = 0, K = 0;
  int *count;
  for (int i = 0; i < n; i++)
    if (rowptr[i + 1] - rowptr[i] > maxlen) maxlen = rowptr[i + 1] - rowptr[i];
  count = (int *)calloc((size_t)maxlen + 2, sizeof(int));
  if (!count) return -1;
  for (int i = 0; i < n; i++) count[rowptr[i + 1] - rowptr[i]]++;
  /* rows with at least k entries, from the longest down */
  for (int k = maxlen, atleast = 0; k >= 1; k--) {
    atleast += count[k];
    if (3 * (long long)atleast >= n) {
      K = k;
      break;
    }
  }
  free(count);
  return K;
}

static int MaxRow(int n, const int *rowptr)
{
  int m = 0;
  for (int i = 0; i < n; i++)
    if (rowptr[i + 1] - rowptr[i] > m) m = rowptr[i + 1] - rowptr[i];
  return m;
}

#define FAIL(...) \
  do { \
    if (msg && msglen) snprintf(msg, msglen, __VA_ARGS__); \
    FusedFormatFree(out); \
    return 1; \
  } while (0)

int FusedFormatBuild(int n, const int *rowptr, const int *col, const double *val, int requested, FusedFormat *out, char *msg, size_t msglen)
{
  const size_t nnz = (size_t)rowptr[n], csr = nnz * (sizeof(double) + sizeof(int)) + (size_t)(n + 1) * sizeof(int);
  int          format = requested, ndiag = -1, K = 0;

  memset(out, 0, sizeof(*out));
  out->n         = n;
  out->csr_bytes = csr;
  if (format == FUSED_FORMAT_AUTO || format == FUSED_FORMAT_DIA) ndiag = FindDiagonals(n, rowptr, col, out->offsets);
  if (format == FUSED_FORMAT_DIA && ndiag < 0) FAIL("DIA storage asked for, but the matrix has more than %d diagonals", FUSED_DIA_MAX);
  if (format == FUSED_FORMAT_AUTO) {
    const int    maxrow = MaxRow(n, rowptr), Kh = HybWidth(n, rowptr);
    const size_t ell = (size_t)maxrow * n * (sizeof(double) + sizeof(int));
    size_t       tail = 0, hyb;
    for (int i = 0; i < n; i++) {
      const int len = rowptr[i + 1] - rowptr[i];
      if (len > Kh) tail += (size_t)(len - Kh);
    }
    hyb = (size_t)Kh * n * (sizeof(double) + sizeof(int)) + tail * (sizeof(double) + sizeof(int)) + (size_t)(n + 1) * sizeof(int);
    if (ndiag >= 0 && (size_t)ndiag * n * sizeof(double) <= csr) format = FUSED_FORMAT_DIA;
    else if (maxrow > 0 && ell <= csr) format = FUSED_FORMAT_ELL; /* no more padding than CSR's row pointers cost */
    else if (Kh >= 2 && hyb <= FUSED_FORMAT_MAX_GROWTH * csr) format = FUSED_FORMAT_HYB;
    else format = FUSED_FORMAT_CSR;
  }
  out->format = format;
  if (format == FUSED_FORMAT_DIA) {
    out->ndiag = ndiag;
    out->dval  = (double *)calloc((size_t)ndiag * n + 1, sizeof(double));
    if (!out->dval) FAIL("host out of memory building DIA storage (%zu bytes)", (size_t)ndiag * n * sizeof(double));
    for (int i = 0; i < n; i++)
      for (int k = rowptr[i]; k < rowptr[i + 1]; k++) {
        int d;
        for (d = 0; out->offsets[d] != col[k] - i; d++) {}
        out->dval[(size_t)d * n + i] += val[k]; /* duplicates add up, as in CSR */
      }
    out->bytes = (size_t)ndiag * n * sizeof(double);
    return 0;
  }
  if (format == FUSED_FORMAT_CSR) K = 0;
  else if (format == FUSED_FORMAT_ELL) K = MaxRow(n, rowptr);
  else {
    K = HybWidth(n, rowptr);
    if (K < 0) FAIL("host out of memory choosing the HYB width");
  }
  out->K = K;
  if (K > 0) {
    out->ecol = (int *)malloc(((size_t)K * n + 1) * sizeof(int));
    out->eval = (double *)calloc((size_t)K * n + 1, sizeof(double));
    if (!out->ecol || !out->eval) FAIL("host out of memory building ELL storage (%zu bytes)", (size_t)K * n * (sizeof(double) + sizeof(int)));
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
    out->bytes += (size_t)K * n * (sizeof(double) + sizeof(int));
  }
  if (format != FUSED_FORMAT_ELL) {
    /* CSR, or the entries of each row beyond K */
    size_t tail = 0, t = 0;
    for (int i = 0; i < n; i++) {
      const int len = rowptr[i + 1] - rowptr[i];
      if (len > K) tail += (size_t)(len - K);
    }
    out->rowptr = (int *)malloc((size_t)(n + 1) * sizeof(int));
    out->col    = (int *)malloc((tail + 1) * sizeof(int));
    out->val    = (double *)malloc((tail + 1) * sizeof(double));
    if (!out->rowptr || !out->col || !out->val) FAIL("host out of memory building CSR storage (%zu bytes)", tail * (sizeof(double) + sizeof(int)));
    out->rowptr[0] = 0;
    for (int i = 0; i < n; i++) {
      for (int k = rowptr[i] + K; k < rowptr[i + 1]; k++, t++) {
        out->col[t] = col[k];
        out->val[t] = val[k];
      }
      out->rowptr[i + 1] = (int)t;
    }
    out->bytes += tail * (sizeof(double) + sizeof(int)) + (size_t)(n + 1) * sizeof(int);
  }
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
