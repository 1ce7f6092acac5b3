/* Matrix Market reader: rank 0 reads and parses the file, then the rows are
   distributed as an AIJ matrix. The parser works on a byte buffer and never
   trusts it: every failure is a message with the line number, given on
   every rank. */
#include <petsc/private/petscimpl.h>
#include <petscmat.h>
#include <petscfused.h>
#include "fusedcompat.h"
#include "mat/mmparse.h"
#include <sys/stat.h>
#include <unistd.h>
#include <errno.h>
#include <ctype.h>

/* Rank 0 reads the whole file; returns nonzero with a message on failure */
static int MMReadFile(const char path[], char **buf, size_t *len, char *err, size_t errlen)
{
  struct stat st;
  FILE       *f;

  *buf = NULL;
  *len = 0;
  if (stat(path, &st)) {
    snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
    return 1;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(err, errlen, "cannot read '%s': %s, not a regular file", path, S_ISDIR(st.st_mode) ? "a directory" : "a special file");
    return 1;
  }
  f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
    return 1;
  }
  *buf = (char *)malloc((size_t)st.st_size + 1);
  if (!*buf) {
    snprintf(err, errlen, "out of memory reading '%s' (%lld bytes)", path, (long long)st.st_size);
    fclose(f);
    return 1;
  }
  if (fread(*buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
    snprintf(err, errlen, "short read on '%s'", path);
    fclose(f);
    return 1;
  }
  fclose(f);
  (*buf)[st.st_size] = 0;
  *len               = (size_t)st.st_size;
  return 0;
}

/* What a matrix being read may need: this machine's physical memory */
static double MMMemoryBound(void)
{
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? (double)pages * (double)page : 1e18;
}

/* The matrix is assembled as AIJ (the only type whose preallocation the
   reader knows); a -mat_type in the options converts it, so that every type
   PETSc can make from AIJ works and any other is refused by MatConvert(). */
static PetscErrorCode MatMatrixMarketConvert(const char path[], Mat *A)
{
  char      type[256];
  PetscBool set, isaij, issbaij, symmetric = PETSC_FALSE;
  PetscInt  m, n;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_type", type, sizeof(type), &set));
  if (!set) PetscFunctionReturn(0);
  PetscCall(PetscStrInList(type, "aij,seqaij,mpiaij", ',', &isaij));
  if (isaij) PetscFunctionReturn(0);
  PetscCall(PetscStrInList(type, "sbaij,seqsbaij,mpisbaij", ',', &issbaij));
  PetscCall(MatGetSize(*A, &m, &n));
  if (issbaij) {
    /* SBAIJ keeps one triangle: a nonsymmetric matrix would lose the other silently */
    if (m == n) PetscCall(MatIsSymmetric(*A, 0.0, &symmetric));
    PetscCheck(symmetric, PetscObjectComm((PetscObject)*A), PETSC_ERR_ARG_WRONG, "Matrix Market file %s: -mat_type %s stores one triangle of a symmetric matrix, and this %" PetscInt_FMT " x %" PetscInt_FMT " matrix is not symmetric; use aij or baij", path, type, m, n);
    PetscCall(MatSetOption(*A, MAT_SYMMETRIC, PETSC_TRUE));
  }
  PetscCall(MatConvert(*A, type, MAT_INPLACE_MATRIX, A));
  PetscFunctionReturn(0);
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
.  A - the matrix, `MATAIJ`; with -mat_type it is converted to that type after assembly (any type PETSc
        converts AIJ to: baij, sbaij for a symmetric matrix, dense, is, hybcuda, aijcusparse, ...)

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
    if (!status) status = MMParseBuffer(buf, len, MMMemoryBound(), &t, err, sizeof(err));
    free(buf);
    dims[0] = t.m;
    dims[1] = t.n;
  }
  PetscCallMPI(MPI_Bcast(&status, 1, MPI_INT, 0, comm));
  if (status) {
    MMTripletsFree(&t);
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
  PetscCall(MatSetType(*A, MATAIJ)); /* the type we preallocate and insert into; -mat_type comes after */
  PetscCall(MatSeqAIJSetPreallocation(*A, 0, d_nnz));
  PetscCall(MatMPIAIJSetPreallocation(*A, 0, d_nnz, 0, o_nnz));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  for (k = 0; k < t.count; k++) PetscCall(MatSetValues(*A, 1, &t.row[k], 1, &t.col[k], &t.val[k], ADD_VALUES));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree2(d_nnz, o_nnz));
  PetscCall(PetscLayoutDestroy(&rmap));
  PetscCall(PetscLayoutDestroy(&cmap));
  {
    PetscMPIInt symmetric = t.symmetry != MM_GENERAL ? 1 : 0;

    PetscCallMPI(MPI_Bcast(&symmetric, 1, MPI_INT, 0, comm));
    MMTripletsFree(&t);
    if (symmetric && dims[0] == dims[1]) {
      /* declared by the file: sbaij and the symmetric solvers may rely on it (skew-symmetric is not symmetric) */
      PetscCall(MatSetOption(*A, MAT_SYMMETRIC, PETSC_TRUE));
    }
    PetscCall(MatMatrixMarketConvert(path, A));
  }
  PetscFunctionReturn(0);
}
