/* The hybcuda matrix type against AIJ, on a GPU host: for each storage
   (auto, csr, ell, hyb, and dia on the stencil problems) and each matrix,
   MatMult, MatMultAdd, MatMultTranspose and MatMultTransposeAdd of the
   device copy against AIJ's, within 1e-14 of the largest entry of the result
   or of ||A|| ||x||, whichever is larger;
   then re-assembly with the same pattern (values only) and with a new
   entry, MatScale, MatShift, MatDuplicate and MatConvert back to AIJ. Runs on
   any number of ranks (mpihybcuda on several). Besides the files: three
   stencils, an arrow and a power-law matrix (long rows).
     hybcuda [-f a.mtx,b.mtx]
   With -oom_rows n (one rank), only the device-memory-exhausted check. */
#include "problems.h"
#include <petscfused.h>
#include "fusedcompat.h"

static PetscInt failures = 0;

/* the four products of H against those of A on the same random vectors */
static PetscErrorCode Compare(Mat A, Mat H, const char *what)
{
  Vec         x, z, ya, yh, xt, zt, yta, yth;
  PetscRandom rnd;
  PetscReal   worst = 0.0;
  PetscInt    k;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(A, &x, &ya));
  PetscCall(VecDuplicate(ya, &yh));
  PetscCall(VecDuplicate(ya, &z));
  PetscCall(MatCreateVecs(A, &yta, &xt));
  PetscCall(VecDuplicate(yta, &yth));
  PetscCall(VecDuplicate(yta, &zt));
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)A), &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 7));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSetRandom(z, rnd));
  PetscCall(VecSetRandom(xt, rnd));
  PetscCall(VecSetRandom(zt, rnd));
  PetscCall(PetscRandomDestroy(&rnd));
  for (k = 0; k < 4; k++) {
    Vec       ra = k < 2 ? ya : yta, rh = k < 2 ? yh : yth;
    PetscReal diff, scale;

    if (k == 0) {
      PetscCall(MatMult(A, x, ya));
      PetscCall(MatMult(H, x, yh));
    }
    if (k == 1) {
      PetscCall(MatMultAdd(A, x, z, ya));
      PetscCall(MatMultAdd(H, x, z, yh));
    }
    if (k == 2) {
      PetscCall(MatMultTranspose(A, xt, yta));
      PetscCall(MatMultTranspose(H, xt, yth));
    }
    if (k == 3) {
      PetscCall(MatMultTransposeAdd(A, xt, zt, yta));
      PetscCall(MatMultTransposeAdd(H, xt, zt, yth));
    }
    {
      /* the size of the terms a row adds up, ||A|| ||x|| (of the transpose
         for k >= 2), bounds what rounding in another order may change:
         rows of thousands of terms that cancel make max |y| far smaller */
      PetscReal anorm, xnorm;
      PetscCall(MatNorm(A, k < 2 ? NORM_INFINITY : NORM_1, &anorm));
      PetscCall(VecNorm(k < 2 ? x : xt, NORM_INFINITY, &xnorm));
      PetscCall(VecNorm(ra, NORM_INFINITY, &scale));
      scale = PetscMax(scale, anorm * xnorm);
    }
    PetscCall(VecAXPY(rh, -1.0, ra));
    PetscCall(VecNorm(rh, NORM_INFINITY, &diff));
    worst = PetscMax(worst, scale > 0 ? diff / scale : diff);
  }
  if (worst < 1e-14) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok   %-44s relative error %.1e\n", what, (double)worst));
  else {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %-44s relative error %.1e (limit 1e-14)\n", what, (double)worst));
    failures++;
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&yh));
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&zt));
  PetscCall(VecDestroy(&yta));
  PetscCall(VecDestroy(&yth));
  PetscFunctionReturn(0);
}

/* the same change to both matrices, then both compared */
static PetscErrorCode Changes(Mat A, Mat H, const char *name)
{
  char        what[256];
  PetscInt    rstart, rend, N, i;
  Mat         D, B;
  PetscBool   isaij;
  MatType     btype;

  PetscFunctionBegin;
  /* MatShift() on a matrix with a missing diagonal entry (west0479) inserts it, on both */
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(H, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatScale(A, 2.5));
  PetscCall(MatScale(H, 2.5));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s after MatScale", name));
  PetscCall(Compare(A, H, what));
  PetscCall(MatShift(A, 1.0));
  PetscCall(MatShift(H, 1.0));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s after MatShift", name));
  PetscCall(Compare(A, H, what));
  /* re-assembly on the same pattern: new values on the diagonal */
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (i = rstart; i < rend; i++) {
    PetscCall(MatSetValue(A, i, i, 3.0 + (i % 7), INSERT_VALUES));
    PetscCall(MatSetValue(H, i, i, 3.0 + (i % 7), INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(H, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(H, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s re-assembled, same pattern", name));
  PetscCall(Compare(A, H, what));
  /* a new entry in the last row, far from the diagonal: a new pattern */
  PetscCall(MatGetSize(A, &N, NULL));
  /* again: MatShift() may have preallocated anew, which resets the option */
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(H, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  if (rend == N && N > 1) {
    PetscCall(MatSetValue(A, N - 1, 0, 0.25, ADD_VALUES));
    PetscCall(MatSetValue(H, N - 1, 0, 0.25, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(H, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(H, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s re-assembled, new entry", name));
  PetscCall(Compare(A, H, what));
  PetscCall(MatDuplicate(H, MAT_COPY_VALUES, &D));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatDuplicate", name));
  PetscCall(Compare(A, D, what));
  PetscCall(MatDestroy(&D));
  PetscCall(MatConvert(H, MATAIJ, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatGetType(B, &btype));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)B, &isaij, MATSEQAIJ, MATMPIAIJ, ""));
  if (!isaij) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s MatConvert to aij gave type %s\n", name, btype));
    failures++;
  }
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatConvert back to %s", name, btype));
  PetscCall(Compare(A, B, what));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckMatrix(Mat A, const char *name, PetscBool stencil)
{
  const char *formats[] = {"auto", "csr", "ell", "hyb", "dia"};
  PetscInt    f;

  PetscFunctionBegin;
  for (f = 0; f < (stencil ? 5 : 4); f++) {
    Mat  A2, H;
    char what[256];

    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &A2));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_hybcuda_format", formats[f]));
    PetscCall(MatConvert(A2, MATHYBCUDA, MAT_INITIAL_MATRIX, &H));
    if (f == 0) PetscCall(MatViewFromOptions(H, NULL, "-hyb_view"));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s %s", name, formats[f]));
    PetscCall(Compare(A2, H, what));
    PetscCall(Changes(A2, H, what));
    PetscCall(MatDestroy(&H));
    PetscCall(MatDestroy(&A2));
  }
  PetscCall(PetscOptionsClearValue(NULL, "-mat_hybcuda_format"));
  PetscFunctionReturn(0);
}

/* A: n rows, 2 on the diagonal, and a first row of ones, dense */
static PetscErrorCode DenseRowMatrix(PetscInt n, Mat *A)
{
  PetscInt *nnz, *cols, i;
  PetscReal *vals;

  PetscFunctionBegin;
  PetscCall(PetscMalloc3(n, &nnz, n, &cols, n, &vals));
  for (i = 0; i < n; i++) {
    nnz[i]  = i ? 1 : n;
    cols[i] = i;
    vals[i] = i ? 1.0 : 2.0;
  }
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, n, n, 0, nnz, A));
  PetscCall(MatSetValues(*A, 1, cols, n, cols, vals, INSERT_VALUES));
  for (i = 1; i < n; i++) PetscCall(MatSetValue(*A, i, i, 2.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree3(nnz, cols, vals));
  PetscFunctionReturn(0);
}

/* Device memory exhausted: ELL storage of a matrix with one dense row needs
   n^2 cells (12 n^2 bytes: 270 GB at n = 150,000). MatConvert() must fail
   with PETSC_ERR_MEM naming the bytes, leave the AIJ matrix as it was, keep
   no device memory, and a CSR copy of the same matrix must then work. */
static PetscErrorCode CheckOutOfMemory(PetscInt n)
{
  Mat                A, H = NULL;
  Vec                x, y;
  size_t             free0, free1, total;
  PetscErrorCode     ierr;
  const char        *text = NULL;
  const char        *specific = NULL;
  const PetscScalar *ya;
  PetscReal          worst = 0.0;
  PetscInt           i;

  PetscFunctionBegin;
  /* the kernels of the failing path, loaded once on a small matrix, so that their code is not counted as lost */
  PetscCall(PetscOptionsSetValue(NULL, "-mat_hybcuda_format", "ell"));
  PetscCall(DenseRowMatrix(100, &A));
  PetscCall(MatConvert(A, MATHYBCUDA, MAT_INITIAL_MATRIX, &H));
  PetscCall(MatDestroy(&H));
  PetscCall(MatDestroy(&A));

  PetscCall(DenseRowMatrix(n, &A));
  PetscCall(PetscFusedCUDAMemoryInfo(0, &free0, &total));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = MatConvert(A, MATHYBCUDA, MAT_INITIAL_MATRIX, &H);
  PetscCall(PetscPopErrorHandler());
  if (ierr) PetscCall(FusedErrorMessage(ierr, &text, &specific));
  PetscCall(PetscFusedCUDAMemoryInfo(0, &free1, &total));
  if (ierr == PETSC_ERR_MEM && specific && strstr(specific, "out of memory") && strstr(specific, "bytes")) PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok   ELL of a dense row, n = %" PetscInt_FMT ": PETSC_ERR_MEM, \"%s\"\n", n, specific));
  else {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL ELL of a dense row, n = %" PetscInt_FMT ": error %d (want PETSC_ERR_MEM = %d), \"%s\"\n", n, (int)ierr, (int)PETSC_ERR_MEM, specific ? specific : ""));
    failures++;
  }
  if (!ierr) PetscCall(MatDestroy(&H));
  /* nothing kept: within the allocation granularity (the CSR arrays alone are 3.6 MB here) */
  if (free1 + (1 << 20) >= free0) PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok   device memory after the failure: %zu bytes free, %zu before\n", free1, free0));
  else {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL device memory after the failure: %zu bytes free, %zu before (%zu lost)\n", free1, free0, free0 - free1));
    failures++;
  }
  /* the AIJ matrix as it was: A 1 is n + 1 in the first row and 2 elsewhere */
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(A, x, y));
  PetscCall(VecGetArrayRead(y, &ya));
  for (i = 0; i < n; i++) worst = PetscMax(worst, PetscAbsScalar(ya[i] - (i ? 2.0 : (PetscReal)n + 1.0)));
  PetscCall(VecRestoreArrayRead(y, &ya));
  if (worst == 0.0) PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok   the AIJ matrix is intact after the failure\n"));
  else {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL the AIJ matrix changed: A 1 off by %g\n", (double)worst));
    failures++;
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  /* and the same matrix fits in CSR */
  PetscCall(PetscOptionsSetValue(NULL, "-mat_hybcuda_format", "csr"));
  PetscCall(MatConvert(A, MATHYBCUDA, MAT_INITIAL_MATRIX, &H));
  PetscCall(Compare(A, H, "dense-row csr after the failure"));
  PetscCall(MatDestroy(&H));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_hybcuda_format"));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char     *files[8];
  PetscInt  nf = 8, i;
  PetscBool set;
  Mat       A;
  PetscInt  oom_rows = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscFusedInitializePackage());
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-f", files, &nf, &set));
  if (!set) nf = 0;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-oom_rows", &oom_rows, NULL));
  if (oom_rows > 0) { /* only that */
    PetscCall(CheckOutOfMemory(oom_rows));
    goto done;
  }
  PetscCall(ProblemCreate(PETSC_COMM_WORLD, PROBLEM_LAP2D, 40, &A));
  PetscCall(CheckMatrix(A, "lap2d-40", PETSC_TRUE));
  PetscCall(MatDestroy(&A));
  PetscCall(ProblemCreate(PETSC_COMM_WORLD, PROBLEM_LAP3D, 12, &A));
  PetscCall(CheckMatrix(A, "lap3d-12", PETSC_TRUE));
  PetscCall(MatDestroy(&A));
  PetscCall(ProblemCreate(PETSC_COMM_WORLD, PROBLEM_CONVDIFF, 30, &A));
  PetscCall(CheckMatrix(A, "convdiff-30", PETSC_TRUE));
  PetscCall(MatDestroy(&A));
  /* long rows (their rest summed by warps in chunks), and their transposes' long columns */
  PetscCall(ProblemCreate(PETSC_COMM_WORLD, PROBLEM_ARROW, 2000, &A));
  PetscCall(CheckMatrix(A, "arrow-2000", PETSC_FALSE));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscOptionsSetValue(NULL, "-problem_longest", "1500"));
  PetscCall(ProblemCreate(PETSC_COMM_WORLD, PROBLEM_POWERLAW, 6000, &A));
  PetscCall(PetscOptionsClearValue(NULL, "-problem_longest"));
  PetscCall(CheckMatrix(A, "powerlaw-6000", PETSC_FALSE));
  PetscCall(MatDestroy(&A));
  for (i = 0; i < nf; i++) {
    const char *base = strrchr(files[i], '/');
    PetscCall(ProblemLoad(PETSC_COMM_WORLD, files[i], &A));
    PetscCall(CheckMatrix(A, base ? base + 1 : files[i], PETSC_FALSE));
    PetscCall(MatDestroy(&A));
    PetscCall(PetscFree(files[i]));
  }
done:
  if (failures) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: %" PetscInt_FMT " comparisons out of bounds\n", failures));
  else if (oom_rows > 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  hybcuda: device memory exhausted, PETSC_ERR_MEM, nothing lost\n"));
  else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  hybcuda: every product matches AIJ within 1e-14\n"));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
