/* Reads a Matrix Market file with MatLoadMatrixMarket and compares it with
   the dense matrix given as -expect "a11,a12,...,ann" (row-major), entry by
   entry. Used on the valid edge cases in tests/mm/ok_*.mtx. */
#include <petscfused.h>

int main(int argc, char **argv)
{
  char        file[PETSC_MAX_PATH_LEN] = "";
  PetscScalar expect[64];
  PetscInt    nexp = 64, m, n, i, j, rstart, rend;
  Mat         A;
  PetscBool   ok = PETSC_TRUE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), NULL));
  PetscCall(PetscOptionsGetScalarArray(NULL, NULL, "-expect", expect, &nexp, NULL));
  PetscCall(MatLoadMatrixMarket(PETSC_COMM_WORLD, file, &A));
  PetscCall(MatGetSize(A, &m, &n));
  PetscCheck(m * n == nexp, PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ, "matrix is %" PetscInt_FMT " x %" PetscInt_FMT ", -expect has %" PetscInt_FMT " values", m, n, nexp);
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (i = rstart; i < rend; i++) {
    for (j = 0; j < n; j++) {
      PetscScalar v;
      PetscCall(MatGetValues(A, 1, &i, 1, &j, &v));
      if (v != expect[i * n + j]) {
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL: A(%" PetscInt_FMT ",%" PetscInt_FMT ") = %g, expected %g\n", i, j, (double)v, (double)expect[i * n + j]));
        ok = PETSC_FALSE;
      }
    }
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: %" PetscInt_FMT " x %" PetscInt_FMT " read as expected: %s\n", file, m, n, ok ? "yes" : "no"));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return ok ? 0 : 1;
}
