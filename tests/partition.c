/* Row partitioning of the example driver (examples/partition.c): on a 2D
   Laplacian whose numbering has been scrambled, or with -band band|fiveband
   -f A.mtx on a large-bandwidth matrix made of copies of A (row blocks then
   exchange almost everything), graph and hypergraph partitioning must cut the
   halo volume at least -min_cut times (default 5), keep the rows balanced
   within -max_imbalance (default 1.2), and leave a matrix that is the same
   operator (same norm and nonzeros) and that pcgfused solves to its tolerance. */
#include "problems.h"
#include "partition.h"

/* the same pseudo-random permutation of 0..N-1 on every rank */
static PetscErrorCode ScramblePermutation(PetscInt N, PetscInt **perm)
{
  unsigned long state = 12345;
  PetscInt      i;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(N, perm));
  for (i = 0; i < N; i++) (*perm)[i] = i;
  for (i = N - 1; i > 0; i--) {
    PetscInt j, t;
    state = state * 6364136223846793005UL + 1442695040888963407UL;
    j     = (PetscInt)((state >> 33) % (unsigned long)(i + 1));
    t = (*perm)[i], (*perm)[i] = (*perm)[j], (*perm)[j] = t;
  }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat            A, S;
  Vec            xstar, b, x;
  KSP            ksp;
  IS             is;
  PetscInt       n = 40, N, rstart, rend, *perm, copies = 64;
  BandKind       band = BAND_NONE;
  char           file[PETSC_MAX_PATH_LEN] = "";
  PetscReal      min_cut = 5.0, max_imbalance = 1.2, normA, normS, rel;
  PartitionMode  mode = PARTITION_GRAPH;
  PartitionStats before, after;
  MatInfo        ia, is_;
  PetscBool      ok = PETSC_TRUE;
  KSPConvergedReason reason;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscFusedInitializePackage());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetEnum(NULL, NULL, "-partition", PartitionModes, (PetscEnum *)&mode, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-min_cut", &min_cut, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-max_imbalance", &max_imbalance, NULL));
  PetscCall(PetscOptionsGetEnum(NULL, NULL, "-band", BandKinds, (PetscEnum *)&band, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-band_copies", &copies, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), NULL));

  if (band != BAND_NONE) {
    Mat seed;

    PetscCall(ProblemLoad(PETSC_COMM_SELF, file, &seed));
    PetscCall(ProblemCreateBanded(PETSC_COMM_WORLD, seed, band, copies, &S));
    PetscCall(MatDestroy(&seed));
  } else {
    PetscCall(ProblemCreate(PETSC_COMM_WORLD, PROBLEM_LAP2D, n, &A));
    PetscCall(MatGetSize(A, &N, NULL));
    PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
    PetscCall(ScramblePermutation(N, &perm));
    PetscCall(ISCreateGeneral(PETSC_COMM_WORLD, rend - rstart, perm + rstart, PETSC_COPY_VALUES, &is));
    PetscCall(MatPermute(A, is, is, &S));
    PetscCall(ISDestroy(&is));
    PetscCall(PetscFree(perm));
    PetscCall(MatDestroy(&A));
  }

  PetscCall(PartitionStatsGet(S, &before));
  PetscCall(MatNorm(S, NORM_FROBENIUS, &normS));
  PetscCall(MatGetInfo(S, MAT_GLOBAL_SUM, &is_));
  A = S;
  PetscCall(PetscObjectReference((PetscObject)S));
  PetscCall(PartitionApply(mode, &A));
  PetscCall(PartitionStatsGet(A, &after));
  PetscCall(MatNorm(A, NORM_FROBENIUS, &normA));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &ia));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  partition %s: halo per product %" PetscInt_FMT " -> %" PetscInt_FMT " values (%.1fx less), imbalance %.3f -> %.3f\n", PartitionModes[mode], before.volume, after.volume, after.volume ? (double)before.volume / after.volume : 0.0, (double)before.imbalance, (double)after.imbalance));
  if (PetscAbsReal(normA - normS) > 1e-10 * normS || ia.nz_used != is_.nz_used) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: not the same operator: norm %.15g vs %.15g, nonzeros %g vs %g\n", (double)normA, (double)normS, ia.nz_used, is_.nz_used));
    ok = PETSC_FALSE;
  }
  if (mode != PARTITION_NONE && (PetscReal)before.volume < min_cut * after.volume) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: the halo shrank less than %gx\n", (double)min_cut));
    ok = PETSC_FALSE;
  }
  if (after.imbalance > max_imbalance) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: imbalance %.3f above %.3f\n", (double)after.imbalance, (double)max_imbalance));
    ok = PETSC_FALSE;
  }
  /* the redistributed system still solves */
  PetscCall(ProblemExactSolution(A, &xstar, &b));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPPCGFUSED));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 5000));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(ProblemTrueResidual(A, b, x, &rel));
  if (reason <= 0 || rel > 1e-7) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: pcgfused on the partitioned system: %s, true residual %.3e\n", KSPConvergedReasons[reason], (double)rel));
    ok = PETSC_FALSE;
  }
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xstar));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&S));
  PetscCall(PetscFinalize());
  return ok ? 0 : 1;
}
