/* The device storage builders (src/mat/fusedformat.c) against AIJ's MatMult,
   on the CPU: every format that applies (CSR, DIA, ELL, HYB, and the
   automatic choice) on the test matrices, the built-in problems and edge
   cases (an empty matrix, an empty row, one dense row among sparse ones,
   explicit zeros, entries given out of order and twice), each product within
   1e-14 of MatMult relative to the largest entry of the result, and the
   automatic choice never above 1.3x the CSR bytes. */
#include "problems.h"
#include "mat/fusedformat.h"

/* n = 60: row 0 dense, row 1 empty, row 2 with an explicit zero, the rest
   tridiagonal, entries inserted from the right and twice (ADD_VALUES) */
static PetscErrorCode EdgeMatrix(PetscInt n, Mat *A)
{
  PetscInt i, j;

  PetscFunctionBegin;
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, n, n, n, NULL, A));
  PetscCall(MatSetOption(*A, MAT_IGNORE_ZERO_ENTRIES, PETSC_FALSE));
  for (j = n - 1; n > 0 && j >= 0; j--) PetscCall(MatSetValue(*A, 0, j, 1.0 + j, ADD_VALUES));
  for (i = 2; i < n; i++) {
    if (i + 1 < n) PetscCall(MatSetValue(*A, i, i + 1, -0.5, ADD_VALUES));
    PetscCall(MatSetValue(*A, i, i, 2.0, ADD_VALUES));
    PetscCall(MatSetValue(*A, i, i, 2.0, ADD_VALUES)); /* twice: 4 */
    PetscCall(MatSetValue(*A, i, i - 1, i == 2 ? 0.0 : -1.0, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckMatrix(Mat A, const char *name, PetscBool *ok)
{
  const PetscInt    *ia, *ja;
  const PetscScalar *va, *xa;
  PetscScalar       *ya;
  PetscInt           n, f, i;
  PetscBool          done;
  Vec                x, y;
  PetscRandom        rnd;
  double            *yf;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCall(MatSeqAIJGetArrayRead(A, &va));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 3));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(MatMult(A, x, y));
  PetscCall(PetscMalloc1(n + 1, &yf));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArray(y, &ya));
  for (f = FUSED_FORMAT_AUTO; f <= FUSED_FORMAT_HYB; f++) {
    FusedFormat F;
    char        msg[256];
    double      err = 0.0, ymax = 0.0;

    if (FusedFormatBuild((int)n, ia, ja, va, (int)f, &F, msg, sizeof(msg))) {
      if (f == FUSED_FORMAT_DIA && strstr(msg, "diagonals")) {
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "  %-14s dia: refused (%s)\n", name, msg));
        continue;
      }
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL: %s %s: %s\n", name, FusedFormatNames[f], msg));
      *ok = PETSC_FALSE;
      continue;
    }
    FusedFormatMult(&F, xa, yf);
    for (i = 0; i < n; i++) {
      err  = PetscMax(err, PetscAbsReal(yf[i] - ya[i]));
      ymax = PetscMax(ymax, PetscAbsReal(ya[i]));
    }
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "  %-14s %-4s -> %-4s K %3d ndiag %2d  %.2fx CSR bytes  rel. error %.1e\n", name, FusedFormatNames[f], FusedFormatNames[F.format], F.K, F.ndiag, F.csr_bytes ? (double)F.bytes / F.csr_bytes : 0.0, ymax > 0 ? err / ymax : err));
    if (err > 1e-14 * PetscMax(ymax, 1e-300)) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL: %s %s: product off by %.3e (largest entry %.3e)\n", name, FusedFormatNames[f], err, ymax));
      *ok = PETSC_FALSE;
    }
    if (f == FUSED_FORMAT_AUTO && (double)F.bytes > FUSED_FORMAT_MAX_GROWTH * F.csr_bytes) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL: %s: the automatic choice %s takes %.2fx the CSR bytes\n", name, FusedFormatNames[F.format], (double)F.bytes / F.csr_bytes));
      *ok = PETSC_FALSE;
    }
    FusedFormatFree(&F);
  }
  PetscCall(VecRestoreArray(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(PetscFree(yf));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatSeqAIJRestoreArrayRead(A, &va));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(0);
}

/* The long rows the automatic layout finds in A's CSR part, against a count
   made here from the row lengths: nlong of them (row 0 of the arrow), with
   their CSR parts' entries */
static PetscErrorCode CheckLongRows(Mat A, const char *name, int nlong, PetscBool *ok)
{
  const PetscInt    *ia, *ja;
  const PetscScalar *va;
  PetscInt           n;
  PetscBool          done;
  FusedFormat        F;
  char               msg[256];
  size_t             rest = 0;
  int                count = 0;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCall(MatSeqAIJGetArrayRead(A, &va));
  PetscCheck(!FusedFormatBuild((int)n, ia, ja, va, FUSED_FORMAT_AUTO, &F, msg, sizeof(msg)), PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", msg);
  for (PetscInt i = 0; i < n; i++) {
    const PetscInt part = F.format == FUSED_FORMAT_HYB ? PetscMax(ia[i + 1] - ia[i] - F.K, 0) : (F.format == FUSED_FORMAT_CSR ? ia[i + 1] - ia[i] : 0);
    if (part > F.long_limit) {
      count++;
      rest += (size_t)part;
    }
  }
  if (count != nlong || F.nlong != nlong || F.long_entries != rest || F.long_limit < FUSED_LONG_ROW_MIN) {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s: the layout (%s) counts %d long rows over %d entries with %zu entries; the rows have %d with %zu (%d expected)\n", name, FusedFormatNames[F.format], F.nlong, F.long_limit, F.long_entries, count, rest, nlong));
    *ok = PETSC_FALSE;
  } else PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok   %s: %s, %d long rows over %d entries, %zu entries in them\n", name, FusedFormatNames[F.format], F.nlong, F.long_limit, F.long_entries));
  FusedFormatFree(&F);
  PetscCall(MatSeqAIJRestoreArrayRead(A, &va));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const char *files[] = {"tests/data/494_bus.mtx", "tests/data/bcsstk13.mtx", "tests/data/olm1000.mtx", "tests/data/west0479.mtx"};
  PetscBool   ok = PETSC_TRUE;
  Mat         A;
  PetscInt    i;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  for (i = 0; i < 4; i++) {
    PetscCall(ProblemLoad(PETSC_COMM_SELF, files[i], &A));
    PetscCall(CheckMatrix(A, strrchr(files[i], '/') + 1, &ok));
    PetscCall(MatDestroy(&A));
  }
  PetscCall(ProblemCreate(PETSC_COMM_SELF, PROBLEM_LAP3D, 12, &A));
  PetscCall(CheckMatrix(A, "lap3d-12", &ok));
  PetscCall(MatDestroy(&A));
  PetscCall(ProblemCreate(PETSC_COMM_SELF, PROBLEM_CONVDIFF, 20, &A));
  PetscCall(CheckMatrix(A, "convdiff-20", &ok));
  PetscCall(MatDestroy(&A));
  PetscCall(EdgeMatrix(60, &A));
  PetscCall(CheckMatrix(A, "edge-60", &ok));
  PetscCall(MatDestroy(&A));
  PetscCall(EdgeMatrix(0, &A));
  PetscCall(CheckMatrix(A, "empty", &ok));
  PetscCall(MatDestroy(&A));
  PetscCall(ProblemCreate(PETSC_COMM_SELF, PROBLEM_ARROW, 2000, &A));
  PetscCall(CheckMatrix(A, "arrow-2000", &ok));
  PetscCall(CheckLongRows(A, "arrow-2000", 1, &ok));
  PetscCall(MatDestroy(&A));
  PetscCall(ProblemCreate(PETSC_COMM_SELF, PROBLEM_LAP3D, 12, &A));
  PetscCall(CheckLongRows(A, "lap3d-12", 0, &ok));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "  formats: %s\n", ok ? "every product matches MatMult" : "MISMATCH"));
  PetscCall(PetscFinalize());
  return ok ? 0 : 1;
}
