/* Matrix Market reader: rank 0 reads and parses the file, then the rows are
   distributed as an AIJ matrix. The parser works on a byte buffer and never
   trusts it: every failure is a message with the line number, given on
   every rank. */
#include <petsc/private/petscimpl.h>
#include <petscmat.h>
#include <petscfused.h>
#include "fusedcompat.h"
#include <errno.h>
#include <ctype.h>

typedef enum { MM_GENERAL, MM_SYMMETRIC, MM_SKEW } MMSymmetry;

typedef struct {
  PetscInt     m, n, nnz;   /* from the size line */
  PetscInt     count;       /* entries stored (symmetric ones expanded) */
  PetscInt    *row, *col;   /* 0-based */
  PetscScalar *val;
} MMTriplets;

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

/* Copies one whitespace-separated token of [*s, e) into tok (lower case) */
static int MMToken(const char **s, const char *e, char *tok, size_t toklen)
{
  size_t k = 0;
  while (*s < e && isspace((unsigned char)**s)) (*s)++;
  if (*s >= e) return 0;
  while (*s < e && !isspace((unsigned char)**s)) {
    if (k + 1 < toklen) tok[k++] = (char)tolower((unsigned char)**s);
    (*s)++;
  }
  tok[k] = 0;
  return 1;
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

static int MMParseReal(const char *tok, PetscReal *v)
{
  char  *endp;
  double x;
  errno = 0;
  x     = strtod(tok, &endp);
  if (*endp || endp == tok) return 0;
  if (errno == ERANGE && x != 0.0) return -1; /* overflow */
  *v = (PetscReal)x;
  return 1;
}

/* Returns 0 and fills t, or nonzero with a message in err. Caller frees t. */
static int MMParse(const char *buf, size_t len, MMTriplets *t, char *err, size_t errlen)
{
  const char *s, *e;
  size_t      pos = 0;
  long        line = 0;
  char        tok[5][64];
  MMSymmetry  sym;
  PetscInt    read = 0, cap;

  memset(t, 0, sizeof(*t));
  if (!MMNextLine(buf, len, &pos, &s, &e)) {
    snprintf(err, errlen, "empty file: expected the header line '%%%%MatrixMarket matrix coordinate real general'");
    return 1;
  }
  line = 1;
  {
    int k;
    for (k = 0; k < 5; k++)
      if (!MMToken(&s, e, tok[k], sizeof(tok[k]))) break;
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
    int k;
    for (k = 0; k < 4; k++)
      if (!MMToken(&s, e, tok[k], sizeof(tok[k]))) break;
    if (k != 3 || !MMParseInt(tok[0], &t->m) || !MMParseInt(tok[1], &t->n) || !MMParseInt(tok[2], &t->nnz)) {
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
  if (t->m && t->n && t->nnz / t->m > t->n) {
    snprintf(err, errlen, "line %ld: %" PetscInt_FMT " entries cannot fit in %" PetscInt_FMT " x %" PetscInt_FMT, line, t->nnz, t->m, t->n);
    return 1;
  }
  cap = sym == MM_GENERAL ? t->nnz : 2 * t->nnz;
  t->row = (PetscInt *)malloc(sizeof(PetscInt) * (size_t)(cap ? cap : 1));
  t->col = (PetscInt *)malloc(sizeof(PetscInt) * (size_t)(cap ? cap : 1));
  t->val = (PetscScalar *)malloc(sizeof(PetscScalar) * (size_t)(cap ? cap : 1));
  if (!t->row || !t->col || !t->val) {
    snprintf(err, errlen, "out of memory for %" PetscInt_FMT " entries", cap);
    return 1;
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
    for (k = 0; k < 4; k++)
      if (!MMToken(&s, e, tok[k], sizeof(tok[k]))) break;
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
    }
    if (PetscIsInfOrNanReal(v)) {
      snprintf(err, errlen, "line %ld: value '%s' is not finite", line, tok[2]);
      return 1;
    }
    /* the format stores one triangle (the lower, by convention; some writers use the upper): mirror either */
    if (sym == MM_SKEW && i == j) {
      snprintf(err, errlen, "line %ld: diagonal entry in a skew-symmetric file", line);
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

static void MMFree(MMTriplets *t)
{
  free(t->row);
  free(t->col);
  free(t->val);
  memset(t, 0, sizeof(*t));
}

/* Rank 0 reads the whole file; returns nonzero with a message on failure */
static int MMReadFile(const char path[], char **buf, size_t *len, char *err, size_t errlen)
{
  FILE *f = fopen(path, "rb");
  long  size;

  *buf = NULL;
  *len = 0;
  if (!f) {
    snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
    return 1;
  }
  if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
    snprintf(err, errlen, "cannot read '%s': not a regular file", path);
    fclose(f);
    return 1;
  }
  *buf = (char *)malloc((size_t)size + 1);
  if (!*buf) {
    snprintf(err, errlen, "out of memory reading '%s' (%ld bytes)", path, size);
    fclose(f);
    return 1;
  }
  if (fread(*buf, 1, (size_t)size, f) != (size_t)size) {
    snprintf(err, errlen, "short read on '%s'", path);
    fclose(f);
    return 1;
  }
  fclose(f);
  (*buf)[size] = 0;
  *len         = (size_t)size;
  return 0;
}

/*@C
   MatLoadMatrixMarket - Reads a Matrix Market file (coordinate, real or integer, general, symmetric or
   skew-symmetric) into a new `MATAIJ` matrix distributed over comm by rows. Duplicate entries are summed and
   symmetric storage is expanded.

   Collective

   Input Parameters:
+  comm - the communicator
-  path - the file

   Output Parameter:
.  A - the matrix; its type can be changed with -mat_type (`MatSetFromOptions()` is called)

   Notes:
   Rank 0 reads and parses the file. A malformed file gives an error of class `PETSC_ERR_FILE_UNEXPECTED`
   on every rank, with the line number and what was wrong. Pattern and complex matrices are refused.

   Level: beginner
@*/
PetscErrorCode MatLoadMatrixMarket(MPI_Comm comm, const char path[], Mat *A)
{
  PetscMPIInt rank, size;
  MMTriplets  t;
  char        err[512] = "";
  int         status   = 0;
  PetscInt    dims[2]  = {0, 0}, rstart, rend, ncols_local, *d_nnz = NULL, *o_nnz = NULL, k;
  PetscLayout rmap, cmap;

  PetscFunctionBegin;
  PetscAssertPointer(path, 2);
  PetscAssertPointer(A, 3);
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  memset(&t, 0, sizeof(t));
  if (rank == 0) {
    char  *buf;
    size_t len;

    status = MMReadFile(path, &buf, &len, err, sizeof(err));
    if (!status) status = MMParse(buf, len, &t, err, sizeof(err));
    free(buf);
    dims[0] = t.m;
    dims[1] = t.n;
  }
  PetscCallMPI(MPI_Bcast(&status, 1, MPI_INT, 0, comm));
  if (status) {
    MMFree(&t);
    PetscCallMPI(MPI_Bcast(err, sizeof(err), MPI_CHAR, 0, comm));
    SETERRQ(comm, PETSC_ERR_FILE_UNEXPECTED, "Matrix Market file %s: %s", path, err);
  }
  PetscCallMPI(MPI_Bcast(dims, 2, MPIU_INT, 0, comm));

  PetscCall(PetscLayoutCreateFromSizes(comm, PETSC_DECIDE, dims[0], 1, &rmap));
  PetscCall(PetscLayoutCreateFromSizes(comm, PETSC_DECIDE, dims[1], 1, &cmap));
  PetscCall(PetscLayoutGetRange(rmap, &rstart, &rend));
  PetscCall(PetscLayoutGetLocalSize(cmap, &ncols_local));

  /* rank 0 counts each row's entries in the diagonal and off-diagonal blocks (an upper bound: duplicates count twice) */
  {
    const PetscInt *rranges, *cranges;
    PetscInt       *dcount = NULL, *ocount = NULL;
    PetscMPIInt    *sendcounts = NULL, *displs = NULL, nlocal;

    PetscCall(PetscLayoutGetRanges(rmap, &rranges));
    PetscCall(PetscLayoutGetRanges(cmap, &cranges));
    if (rank == 0) {
      PetscMPIInt p, owner;
      PetscCall(PetscCalloc2(dims[0], &dcount, dims[0], &ocount));
      PetscCall(PetscMalloc2(size, &sendcounts, size, &displs));
      for (k = 0; k < t.count; k++) {
        PetscCall(PetscLayoutFindOwner(rmap, t.row[k], &owner));
        if (t.col[k] >= cranges[owner] && t.col[k] < cranges[owner + 1]) dcount[t.row[k]]++;
        else ocount[t.row[k]]++;
      }
      for (p = 0; p < size; p++) {
        PetscCall(PetscMPIIntCast(rranges[p + 1] - rranges[p], &sendcounts[p]));
        PetscCall(PetscMPIIntCast(rranges[p], &displs[p]));
      }
    }
    PetscCall(PetscMPIIntCast(rend - rstart, &nlocal));
    PetscCall(PetscMalloc2(rend - rstart, &d_nnz, rend - rstart, &o_nnz));
    PetscCallMPI(MPI_Scatterv(dcount, sendcounts, displs, MPIU_INT, d_nnz, nlocal, MPIU_INT, 0, comm));
    PetscCallMPI(MPI_Scatterv(ocount, sendcounts, displs, MPIU_INT, o_nnz, nlocal, MPIU_INT, 0, comm));
    for (k = 0; k < rend - rstart; k++) {
      d_nnz[k] = PetscMin(d_nnz[k], cranges[rank + 1] - cranges[rank]);
      o_nnz[k] = PetscMin(o_nnz[k], dims[1] - (cranges[rank + 1] - cranges[rank]));
    }
    if (rank == 0) {
      PetscCall(PetscFree2(dcount, ocount));
      PetscCall(PetscFree2(sendcounts, displs));
    }
  }

  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, rend - rstart, ncols_local, dims[0], dims[1]));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 0, d_nnz));
  PetscCall(MatMPIAIJSetPreallocation(*A, 0, d_nnz, 0, o_nnz));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  for (k = 0; k < t.count; k++) PetscCall(MatSetValues(*A, 1, &t.row[k], 1, &t.col[k], &t.val[k], ADD_VALUES));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree2(d_nnz, o_nnz));
  PetscCall(PetscLayoutDestroy(&rmap));
  PetscCall(PetscLayoutDestroy(&cmap));
  MMFree(&t);
  PetscFunctionReturn(0);
}
