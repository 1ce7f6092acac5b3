/* The hybcuda matrix type against AIJ, on a GPU host: for each storage
   (auto, csr, ell, hyb, and dia on the stencil problems) and each matrix,
   MatMult, MatMultAdd, MatMultTranspose and MatMultTransposeAdd of the
   device copy against AIJ's, within 1e-14 of the largest entry of the result;
   then re-assembly with the same pattern (values only) and with a new
   entry, MatScale, MatShift, MatDuplicate and MatConvert back to AIJ. Runs on
   any number of ranks (mpihybcuda on several).
     hybcuda [-f a.mtx,b.mtx] */
#include "problems.h"
#include <petscfused.h>

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
    PetscCall(VecNorm(ra, NORM_INFINITY, &scale));
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

int main(int argc, char **argv)
{
  char     *files[8];
  PetscInt  nf = 8, i;
  PetscBool set;
  Mat       A;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscFusedInitializePackage());
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-f", files, &nf, &set));
  if (!set) nf = 0;
  PetscCall(ProblemCreate(PETSC_COMM_WORLD, PROBLEM_LAP2D, 40, &A));
  PetscCall(CheckMatrix(A, "lap2d-40", PETSC_TRUE));
  PetscCall(MatDestroy(&A));
  PetscCall(ProblemCreate(PETSC_COMM_WORLD, PROBLEM_LAP3D, 12, &A));
  PetscCall(CheckMatrix(A, "lap3d-12", PETSC_TRUE));
  PetscCall(MatDestroy(&A));
  PetscCall(ProblemCreate(PETSC_COMM_WORLD, PROBLEM_CONVDIFF, 30, &A));
  PetscCall(CheckMatrix(A, "convdiff-30", PETSC_TRUE));
  PetscCall(MatDestroy(&A));
  for (i = 0; i < nf; i++) {
    const char *base = strrchr(files[i], '/');
    PetscCall(ProblemLoad(PETSC_COMM_WORLD, files[i], &A));
    PetscCall(CheckMatrix(A, base ? base + 1 : files[i], PETSC_FALSE));
    PetscCall(MatDestroy(&A));
    PetscCall(PetscFree(files[i]));
  }
  if (failures) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: %" PetscInt_FMT " comparisons out of bounds\n", failures));
  else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  hybcuda: every product matches AIJ within 1e-14\n"));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
