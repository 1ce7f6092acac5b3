/* The compressed halo plan (src/ksp/fusedhalo.c) against PETSc's own scatter:
   on a 2D Laplacian with uneven row counts (rank 1 owns no rows on 3 or more
   ranks), the packed point-to-point exchange must deliver exactly the ghost
   values MatMult's off-diagonal block reads, and each rank must send only
   what its neighbours read (the volume equals the ghost count summed). */
#include <petscmat.h>
#include "device/fusedhalo.h"

int main(int argc, char **argv)
{
  Mat                A, Ad, Ao;
  PetscLayout        cmap;
  Vec                x;
  const PetscInt    *garray;
  PetscInt           n = 12, N, nlocal, rstart, rend, row, nghost, k, mine, total, ghosts_total;
  PetscMPIInt        rank, size;
  FusedHalo          halo;
  PetscScalar       *sendbuf, *ghost;
  const PetscScalar *xa;
  PetscBool          ok = PETSC_TRUE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  N = n * n;
  /* uneven: rank r gets a share growing with r; rank 1 none when size >= 3 */
  {
    PetscInt weight = (size >= 3 && rank == 1) ? 0 : rank + 1, wsum = 0, r, before = 0;
    for (r = 0; r < size; r++) {
      PetscInt w = (size >= 3 && r == 1) ? 0 : r + 1;
      if (r < rank) before += w;
      wsum += w;
    }
    rstart = N * before / wsum;
    rend   = N * (before + weight) / wsum;
    nlocal = rend - rstart;
  }
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, nlocal, nlocal, N, N, 5, NULL, 4, NULL, &A));
  for (row = rstart; row < rend; row++) {
    PetscInt i = row % n, j = row / n;
    if (j > 0) PetscCall(MatSetValue(A, row, row - n, -1.0, INSERT_VALUES));
    if (i > 0) PetscCall(MatSetValue(A, row, row - 1, -1.0, INSERT_VALUES));
    PetscCall(MatSetValue(A, row, row, 4.0, INSERT_VALUES));
    if (i < n - 1) PetscCall(MatSetValue(A, row, row + 1, -1.0, INSERT_VALUES));
    if (j < n - 1) PetscCall(MatSetValue(A, row, row + n, -1.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
  PetscCall(MatGetSize(Ao, NULL, &nghost));
  PetscCall(MatGetLayouts(A, NULL, &cmap));
  PetscCall(FusedHaloCreate(cmap, nghost, garray, &halo));

  /* x_i = i + 1 globally: every ghost value says where it came from */
  PetscCall(MatCreateVecs(A, &x, NULL));
  for (row = rstart; row < rend; row++) PetscCall(VecSetValue(x, row, (PetscScalar)(row + 1), INSERT_VALUES));
  PetscCall(VecAssemblyBegin(x));
  PetscCall(VecAssemblyEnd(x));
  PetscCall(FusedHaloVolume(halo, &mine, &total));
  PetscCall(PetscMalloc2(mine + 1, &sendbuf, nghost + 1, &ghost));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(FusedHaloPack(halo, xa, sendbuf));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(FusedHaloExchange(halo, sendbuf, ghost));
  for (k = 0; k < nghost; k++) {
    if (ghost[k] != (PetscScalar)(garray[k] + 1)) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL: rank %d ghost %" PetscInt_FMT " (column %" PetscInt_FMT ") got %g\n", rank, k, garray[k], (double)PetscRealPart(ghost[k])));
      ok = PETSC_FALSE;
      break;
    }
  }
  PetscCallMPI(MPI_Allreduce(&nghost, &ghosts_total, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  if (total != ghosts_total) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: %" PetscInt_FMT " entries sent, %" PetscInt_FMT " ghosts read\n", total, ghosts_total));
    ok = PETSC_FALSE;
  }
  {
    int mine = ok ? 1 : 0, all; /* PetscBool's width differs between PETSc versions */

    PetscCallMPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, PETSC_COMM_WORLD));
    ok = all ? PETSC_TRUE : PETSC_FALSE;
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  halo: %d ranks, %" PetscInt_FMT " rows, %" PetscInt_FMT " entries exchanged per product (%s)\n", size, N, total, ok ? "all ghost values right" : "WRONG"));
  PetscCall(PetscFree2(sendbuf, ghost));
  PetscCall(FusedHaloDestroy(&halo));
  PetscCall(VecDestroy(&x));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return ok ? 0 : 1;
}
