/* Soak: many solves with one KSP while the operator is re-assembled, and
   host and device memory printed every -every solves; they must stay flat.

     soak -method cg|bcgs|gmres [-solves 1000] [-every 100] [-n 64]

   Each solve first re-assembles the operator with new values on the same
   pattern (a 2D Laplacian whose diagonal moves with the solve number); every
   -every solves the pattern changes instead (a new matrix, alternately the
   5-point and the 9-point stencil). Memory is compared between the second
   checkpoint and the last, which hold the same stencil: the host's resident
   size may grow by at most -host_slack_mb, the device's used memory by at
   most -device_slack_mb. */
#include "problems.h"

static PetscErrorCode BuildStencil(MPI_Comm comm, PetscInt n, PetscBool nine, PetscReal shift, Mat *A)
{
  PetscInt rstart, rend, row;

  PetscFunctionBegin;
  PetscCall(MatCreateAIJ(comm, PETSC_DECIDE, PETSC_DECIDE, n * n, n * n, 9, NULL, 4, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (row = rstart; row < rend; row++) PetscCall(MatSetValue(*A, row, row, 0.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(*A, MAT_FLUSH_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FLUSH_ASSEMBLY));
  for (row = rstart; row < rend; row++) {
    const PetscInt i = row % n, j = row / n;
    PetscInt       di, dj;

    for (dj = -1; dj <= 1; dj++)
      for (di = -1; di <= 1; di++) {
        const PetscInt ii = i + di, jj = j + dj;
        if ((di && dj && !nine) || ii < 0 || ii >= n || jj < 0 || jj >= n || (!di && !dj)) continue;
        PetscCall(MatSetValue(*A, row, jj * n + ii, -1.0, INSERT_VALUES));
      }
    PetscCall(MatSetValue(*A, row, row, (nine ? 8.0 : 4.0) + shift, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* New values on the same pattern: the diagonal alone moves */
static PetscErrorCode Revalue(Mat A, PetscBool nine, PetscReal shift)
{
  PetscInt rstart, rend, row;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (row = rstart; row < rend; row++) PetscCall(MatSetValue(A, row, row, (nine ? 8.0 : 4.0) + shift, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char           method[32] = "cg";
  const char    *type;
  PetscInt       solves = 1000, every = 100, n = 64, s, ndev = 0, checkpoint = 0, its;
  PetscReal      host_slack_mb = 8.0, device_slack_mb = 2.0, rnorm;
  PetscLogDouble host, host_ref = 0.0;
  size_t         free_b = 0, total_b = 0, used_ref = 0;
  PetscBool      nine = PETSC_FALSE, ok = PETSC_TRUE;
  char           reason[256];
  Mat            A = NULL;
  Vec            x, b;
  KSP            ksp;
  KSPConvergedReason why;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscFusedInitializePackage());
  PetscCall(ProblemIgnoreKSPType("soak", "the method is -method"));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-method", method, sizeof(method), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-solves", &solves, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-every", &every, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-host_slack_mb", &host_slack_mb, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-device_slack_mb", &device_slack_mb, NULL));
  /* the last checkpoint is compared with the second: both hold the same stencil */
  PetscCheck(every >= 1 && solves % every == 0 && solves / every >= 4 && (solves / every) % 2 == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-solves %" PetscInt_FMT " must be an even multiple, at least 4, of -every %" PetscInt_FMT, solves, every);
  type = !strcmp(method, "cg") ? KSPPCGFUSED : !strcmp(method, "bcgs") ? KSPPBCGSFUSED : KSPPGMRESFUSED;
  PetscCall(PetscFusedCUDADeviceCount(&ndev, reason, sizeof(reason)));

  PetscCall(BuildStencil(PETSC_COMM_WORLD, n, nine, 0.0, &A));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "soak: %s, %" PetscInt_FMT " solves on %" PetscInt_FMT " rows, values new each solve, pattern new every %" PetscInt_FMT "; %s\n", type, solves, n * n, every, ndev > 0 ? "GPU" : "no GPU"));
  for (s = 1; s <= solves; s++) {
    const PetscReal shift = 0.01 * (PetscReal)(s % 7);

    if (s > 1 && (s - 1) % every == 0) {
      /* a new pattern: a new matrix of the other stencil */
      nine = (PetscBool)!nine;
      PetscCall(MatDestroy(&A));
      PetscCall(BuildStencil(PETSC_COMM_WORLD, n, nine, shift, &A));
    } else PetscCall(Revalue(A, nine, shift));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(KSPGetConvergedReason(ksp, &why));
    PetscCall(KSPGetIterationNumber(ksp, &its));
    if (why <= 0) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: solve %" PetscInt_FMT " did not converge (%s)\n", s, KSPConvergedReasons[why]));
      ok = PETSC_FALSE;
      break;
    }
    if (s % every == 0) {
      size_t used;

      PetscCall(PetscMemoryGetCurrentUsage(&host));
      if (ndev > 0) PetscCall(PetscFusedCUDAMemoryInfo(0, &free_b, &total_b));
      used = total_b - free_b;
      PetscCall(KSPGetResidualNorm(ksp, &rnorm));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  solve %5" PetscInt_FMT ": %4" PetscInt_FMT " iterations, host resident %.1f MB, device used %.1f MB (rank 0)\n", s, its, host / 1048576.0, used / 1048576.0));
      checkpoint++;
      if (checkpoint == 2) {
        host_ref = host;
        used_ref = used;
      } else if (s == solves) {
        const double dh = (host - host_ref) / 1048576.0, dd = ((double)used - (double)used_ref) / 1048576.0;
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  growth from solve %" PetscInt_FMT " to %" PetscInt_FMT ": host %+.2f MB (at most %.1f), device %+.2f MB (at most %.1f)\n", 2 * every, s, dh, (double)host_slack_mb, dd, (double)device_slack_mb));
        if (dh > host_slack_mb || dd > device_slack_mb) {
          /* the device figure is the whole device's use (cudaMemGetInfo): another process on the GPU moves it too */
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: memory grows over the solves%s\n", dd > device_slack_mb ? " (the device's figure counts every process on the GPU: run this test alone)" : ""));
          ok = PETSC_FALSE;
        }
      }
    }
  }
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return ok ? 0 : 1;
}
