/* The Matrix Market parser (mmparse.h). */
#include "mat/mmparse.h"
#include <errno.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

/* The next line of buf as [*start, *end), or 0 at the end of the buffer */
static int MMNextLine(const char *buf, size_t len, size_t *pos, const char **start, const char **end)
{
  size_t p = *pos;
  if (p >= len) return 0;
  *start = buf + p;
  while (p < len && buf[p] != '\n') p++;
  *end = buf + p;
  if (*end > *start && (*end)[-1] == '\r') (*end)--;
  *pos = p < len ? p + 1 : p;
  return 1;
}

static int MMBlank(const char *s, const char *e)
{
  for (; s < e; s++)
    if (!isspace((unsigned char)*s)) return 0;
  return 1;
}

/* Copies one whitespace-separated token of [*s, e) into tok (lower case):
   1, or 0 at the end of the line, or -1 where it is longer than
   MM_MAX_FIELD (it is never cut: a cut number reads as another number) */
static int MMToken(const char **s, const char *e, char *tok)
{
  size_t k = 0;
  while (*s < e && isspace((unsigned char)**s)) (*s)++;
  if (*s >= e) return 0;
  while (*s < e && !isspace((unsigned char)**s)) {
    if (k == MM_MAX_FIELD) return -1;
    tok[k++] = (char)tolower((unsigned char)**s);
    (*s)++;
  }
  tok[k] = 0;
  return 1;
}

/* Up to max tokens of a line into tok[]; returns how many, or -1 for one too long */
static int MMTokens(const char *s, const char *e, char tok[][MM_MAX_FIELD + 1], int max)
{
  int k, r;
  for (k = 0; k < max; k++) {
    r = MMToken(&s, e, tok[k]);
    if (r < 0) return -1;
    if (!r) break;
  }
  return k;
}

static int MMParseInt(const char *tok, PetscInt *v)
{
  char     *endp;
  long long x;
  errno = 0;
  x     = strtoll(tok, &endp, 10);
  if (errno || *endp || endp == tok) return 0;
  if ((long long)(PetscInt)x != x) return 0;
  *v = (PetscInt)x;
  return 1;
}

/* 1 and the value; 0: not a number; -1: beyond the largest double; -2: a
   nonzero number below the smallest (it would read as 0). A subnormal value
   is read as the nearest double, as strtod gives it. */
static int MMParseReal(const char *tok, PetscReal *v)
{
  char       *endp;
  double      x;
  const char *c;
  errno = 0;
  x     = strtod(tok, &endp);
  if (*endp || endp == tok) return 0;
  if (errno == ERANGE) {
    if (fabs(x) > 1.0) return -1;
    if (x == 0.0) {
      for (c = tok; *c && *c != 'e'; c++)
        if (*c >= '1' && *c <= '9') return -2; /* a nonzero mantissa */
    }
  }
  *v = (PetscReal)x;
  return 1;
}

/* Room for one more entry (two for a mirrored one): doubles the arrays, up
   to what the size line declared */
static int MMGrow(MMTriplets *t, size_t need, size_t most)
{
  size_t       cap = t->cap ? t->cap : 1024;
  PetscInt    *row, *col;
  PetscScalar *val;

  if (need <= t->cap) return 0;
  while (cap < need) cap *= 2;
  if (cap > most) cap = most;
  if (cap < need) cap = need;
  row = (PetscInt *)realloc(t->row, sizeof(PetscInt) * cap);
  if (row) t->row = row;
  col = (PetscInt *)realloc(t->col, sizeof(PetscInt) * cap);
  if (col) t->col = col;
  val = (PetscScalar *)realloc(t->val, sizeof(PetscScalar) * cap);
  if (val) t->val = val;
  if (!row || !col || !val) return 1;
  t->cap = cap;
  return 0;
}

static int MMParse(const char *buf, size_t len, double max_bytes, MMTriplets *t, char *err, size_t errlen)
{
  const char *s, *e;
  size_t      pos = 0, most;
  long        line = 0;
  char        tok[5][MM_MAX_FIELD + 1];
  MMSymmetry  sym;
  PetscInt    read = 0;

  memset(t, 0, sizeof(*t));
  {
    /* a NUL byte would end a field early and hide what follows it */
    const char *nul = (const char *)memchr(buf, 0, len);
    if (nul) {
      const char *c;
      long        l = 1;
      for (c = buf; c < nul; c++) l += *c == '\n';
      snprintf(err, errlen, "line %ld: a NUL byte: not a text file", l);
      return 1;
    }
  }
  if (!MMNextLine(buf, len, &pos, &s, &e)) {
    snprintf(err, errlen, "empty file: expected the header line '%%%%MatrixMarket matrix coordinate real general'");
    return 1;
  }
  line = 1;
  {
    int k = MMTokens(s, e, tok, 5);
    if (k < 5 || strcmp(tok[0], "%%matrixmarket")) {
      snprintf(err, errlen, "line 1: bad header; expected '%%%%MatrixMarket matrix coordinate <real|integer> <general|symmetric|skew-symmetric>'");
      return 1;
    }
  }
  if (strcmp(tok[1], "matrix")) {
    snprintf(err, errlen, "line 1: object '%s' is not supported; only 'matrix'", tok[1]);
    return 1;
  }
  if (strcmp(tok[2], "coordinate")) {
    snprintf(err, errlen, "line 1: format '%s' is not supported; only sparse 'coordinate' files", tok[2]);
    return 1;
  }
  if (!strcmp(tok[3], "pattern") || !strcmp(tok[3], "complex")) {
    snprintf(err, errlen, "line 1: field '%s' is not supported: a %s matrix has no real values to solve with; convert it to 'real'", tok[3], tok[3]);
    return 1;
  }
  if (strcmp(tok[3], "real") && strcmp(tok[3], "integer") && strcmp(tok[3], "double")) {
    snprintf(err, errlen, "line 1: unknown field '%s'; expected real or integer", tok[3]);
    return 1;
  }
  if (!strcmp(tok[4], "general")) sym = MM_GENERAL;
  else if (!strcmp(tok[4], "symmetric") || !strcmp(tok[4], "hermitian")) sym = MM_SYMMETRIC;
  else if (!strcmp(tok[4], "skew-symmetric")) sym = MM_SKEW;
  else {
    snprintf(err, errlen, "line 1: unknown symmetry '%s'; expected general, symmetric or skew-symmetric", tok[4]);
    return 1;
  }
  /* comments, then the size line */
  for (;;) {
    if (!MMNextLine(buf, len, &pos, &s, &e)) {
      snprintf(err, errlen, "line %ld: end of file before the size line 'rows columns entries'", line + 1);
      return 1;
    }
    line++;
    if (s < e && *s == '%') continue;
    if (MMBlank(s, e)) continue;
    break;
  }
  {
    int k = MMTokens(s, e, tok, 4);
    if (k != 3 || !MMParseInt(tok[0], &t->m) || !MMParseInt(tok[1], &t->n) || !MMParseInt(tok[2], &t->nnz)) {
      char    *endp;
      int      i;
      PetscInt fits;
      for (i = 0; k == 3 && i < 3; i++) {
        (void)strtoll(tok[i], &endp, 10);
        if (!*endp && endp != tok[i] && !MMParseInt(tok[i], &fits)) {
          snprintf(err, errlen, "line %ld: size '%s' does not fit a %d-bit PetscInt", line, tok[i], (int)(8 * sizeof(PetscInt)));
          return 1;
        }
      }
      snprintf(err, errlen, "line %ld: bad size line; expected three integers 'rows columns entries'", line);
      return 1;
    }
  }
  if (t->m < 0 || t->n < 0 || t->nnz < 0) {
    snprintf(err, errlen, "line %ld: negative size %" PetscInt_FMT " x %" PetscInt_FMT " with %" PetscInt_FMT " entries", line, t->m, t->n, t->nnz);
    return 1;
  }
  if (sym != MM_GENERAL && t->m != t->n) {
    snprintf(err, errlen, "line %ld: a symmetric matrix must be square, not %" PetscInt_FMT " x %" PetscInt_FMT, line, t->m, t->n);
    return 1;
  }
  if ((int64_t)t->nnz > (int64_t)t->m * (int64_t)t->n) {
    snprintf(err, errlen, "line %ld: %" PetscInt_FMT " entries cannot fit in %" PetscInt_FMT " x %" PetscInt_FMT, line, t->nnz, t->m, t->n);
    return 1;
  }
  t->symmetry = sym;
  {
    /* the entries once symmetric storage is expanded must be countable, and
       the matrix must fit in memory: its triplets, then its rows as AIJ */
    const int64_t expanded = sym == MM_GENERAL ? (int64_t)t->nnz : 2 * (int64_t)t->nnz;
    /* triplets, then the AIJ copy; per row rank 0's counts, AIJ's row arrays and the five vectors of a solve */
    const double  bytes    = (double)expanded * 2.0 * (2.0 * sizeof(PetscInt) + sizeof(PetscScalar)) + ((double)t->m + 1.0) * 80.0 + (double)t->n * 8.0;

    if (expanded > (int64_t)PETSC_MAX_INT) {
      snprintf(err, errlen, "line %ld: %" PetscInt_FMT " symmetric entries are %lld once both triangles are stored, more than a %d-bit PetscInt counts", line, t->nnz, (long long)expanded, (int)(8 * sizeof(PetscInt)));
      return 1;
    }
    if (bytes > max_bytes) {
      snprintf(err, errlen, "line %ld: a %" PetscInt_FMT " x %" PetscInt_FMT " matrix with %" PetscInt_FMT " entries needs at least about %.3g GB to read and solve with, more than the %.3g GB this machine has", line, t->m, t->n, t->nnz, bytes / 1e9, max_bytes / 1e9);
      return 1;
    }
    most = (size_t)(expanded ? expanded : 1);
  }
  while (MMNextLine(buf, len, &pos, &s, &e)) {
    PetscInt  i, j;
    PetscReal v;
    int       k;

    line++;
    if ((s < e && *s == '%') || MMBlank(s, e)) continue;
    if (read == t->nnz) {
      snprintf(err, errlen, "line %ld: more entries than the %" PetscInt_FMT " the size line declares", line, t->nnz);
      return 1;
    }
    k = MMTokens(s, e, tok, 4);
    if (k < 0) {
      snprintf(err, errlen, "line %ld: a field longer than %d characters", line, MM_MAX_FIELD);
      return 1;
    }
    if (k < 3) {
      snprintf(err, errlen, "line %ld: expected 'row column value', found %d field(s)", line, k);
      return 1;
    }
    if (k > 3) {
      snprintf(err, errlen, "line %ld: unexpected text after 'row column value'", line);
      return 1;
    }
    if (!MMParseInt(tok[0], &i) || !MMParseInt(tok[1], &j)) {
      snprintf(err, errlen, "line %ld: row and column must be integers", line);
      return 1;
    }
    if (i < 1 || i > t->m || j < 1 || j > t->n) {
      snprintf(err, errlen, "line %ld: index (%" PetscInt_FMT ", %" PetscInt_FMT ") out of range 1..%" PetscInt_FMT " x 1..%" PetscInt_FMT, line, i, j, t->m, t->n);
      return 1;
    }
    switch (MMParseReal(tok[2], &v)) {
    case 0:
      snprintf(err, errlen, "line %ld: cannot read the value '%s' as a number", line, tok[2]);
      return 1;
    case -1:
      snprintf(err, errlen, "line %ld: value '%s' overflows a double", line, tok[2]);
      return 1;
    case -2:
      snprintf(err, errlen, "line %ld: value '%s' underflows: it is not zero, and smaller than any double", line, tok[2]);
      return 1;
    }
    if (!isfinite(v)) {
      snprintf(err, errlen, "line %ld: value '%s' is not finite", line, tok[2]);
      return 1;
    }
    /* the format stores one triangle (the lower, by convention; some writers use the upper): mirror either */
    if (sym == MM_SKEW && i == j) {
      snprintf(err, errlen, "line %ld: diagonal entry in a skew-symmetric file", line);
      return 1;
    }
    if (MMGrow(t, (size_t)t->count + 2, most)) {
      snprintf(err, errlen, "line %ld: out of memory after %" PetscInt_FMT " entries", line, t->count);
      return 1;
    }
    t->row[t->count] = i - 1;
    t->col[t->count] = j - 1;
    t->val[t->count] = v;
    t->count++;
    if (sym != MM_GENERAL && i != j) {
      t->row[t->count] = j - 1;
      t->col[t->count] = i - 1;
      t->val[t->count] = sym == MM_SKEW ? -v : v;
      t->count++;
    }
    read++;
  }
  if (read < t->nnz) {
    snprintf(err, errlen, "line %ld: end of file after %" PetscInt_FMT " of the %" PetscInt_FMT " entries the size line declares", line, read, t->nnz);
    return 1;
  }
  return 0;
}

void MMTripletsFree(MMTriplets *t)
{
  free(t->row);
  free(t->col);
  free(t->val);
  memset(t, 0, sizeof(*t));
}

int MMParseBuffer(const char *buf, size_t len, double max_bytes, MMTriplets *t, char *err, size_t errlen)
{
  const int status = MMParse(buf, len, max_bytes, t, err, errlen);
  if (status) MMTripletsFree(t);
  return status;
}
