/* The main job: solve one system with the fused methods and, with -compare,
   with PETSc's own counterparts in the same run, and print them side by side.

     build/examples/solve [-f A.mtx|A.petsc [-rhs b.mtx]] [-problem lap2d|lap3d|convdiff|neumann2d [-nullspace 0]|kept3d|jump2d|aniso2d|veclap3d -n N]
                          [-methods pcgfused,pbcgsfused,pgmresfused] [-compare 1]
                          [-pc_type jacobi] [-ksp_rtol 1e-8] ...

   Every KSP and PC option applies to every method, except -ksp_type (each
   row is its own method: choose them with -methods). Without -rhs, b = A x*
   for a known x*, and the error against x* is shown. The backend column says
   where each solve ran, as read from the solver and its vectors. In a PETSc
   built with CUDA on a GPU machine the matrix is aijcusparse unless
   -mat_type says otherwise, so that PETSc's methods run on the GPU too.
   -warm_up (default on): each method solves once untimed first, as an
   application that solves many times would see it (device work buffers,
   CUDA graphs and PETSc's own first-use costs out of the timed solve). */
#include "problems.h"
#include "partition.h"

#define MAX_RUNS 16

typedef struct {
  char               type[32];
  PetscBool          ours;
  PetscInt           its;
  KSPConvergedReason reason;
  PetscReal          truerel, err, tsetup, tsolve;
  char               backend[48];
  const char        *skipped; /* why the method did not run, or NULL */
} Run;

/* The built-in methods each fused method is measured against */
static const char *Counterparts(const char *fused)
{
  if (!strcmp(fused, KSPPCGFUSED)) return "cg,pipecg";
  if (!strcmp(fused, KSPPBCGSFUSED)) return "bcgs";
  if (!strcmp(fused, KSPPGMRESFUSED)) return "gmres,pgmres";
  return "";
}

static PetscErrorCode RunMethod(Mat A, Vec b, Vec xstar, PetscBool warm_up, Run *run)
{
  KSP            ksp;
  Vec            x;
  PetscLogDouble t0, t1, t2;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 10000));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetType(ksp, run->type)); /* after the options: each run is its own method */
  PetscCall(KSPSetFromOptions(ksp));
  {
    PetscInt  max_it;
    PetscBool ispgmres;

    /* PETSc's own pgmres (3.18 to 3.26 at least) dereferences a basis vector it never made when asked for no iteration */
    PetscCall(KSPGetTolerances(ksp, NULL, NULL, NULL, &max_it));
    PetscCall(PetscObjectTypeCompare((PetscObject)ksp, KSPPGMRES, &ispgmres));
    if (ispgmres && max_it == 0) {
      run->skipped = "not run: PETSc's pgmres fails with -ksp_max_it 0";
      PetscCall(KSPDestroy(&ksp));
      PetscCall(VecDestroy(&x));
      PetscFunctionReturn(0);
    }
  }
  PetscCall(PetscTime(&t0));
  PetscCall(KSPSetUp(ksp));
  PetscCall(PetscTime(&t1));
  if (warm_up) {
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(VecZeroEntries(x));
    PetscCall(PetscTime(&t1));
  }
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(PetscTime(&t2));
  PetscCall(KSPGetIterationNumber(ksp, &run->its));
  PetscCall(ProblemBackendLabel(ksp, run->backend, sizeof(run->backend)));
  PetscCall(KSPGetConvergedReason(ksp, &run->reason));
  run->tsetup = t1 - t0;
  run->tsolve = t2 - t1;
  PetscCall(ProblemTrueResidual(A, b, x, &run->truerel));
  run->err = -1.0; /* unknown without x* */
  if (xstar) PetscCall(ProblemRelativeError(x, xstar, &run->err));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(0);
}

static PetscErrorCode AddRun(Run runs[], PetscInt *nruns, const char *type, PetscBool ours)
{
  PetscInt i;
  PetscFunctionBegin;
  for (i = 0; i < *nruns; i++) {
    PetscBool same;
    PetscCall(PetscStrcmp(runs[i].type, type, &same));
    if (same) PetscFunctionReturn(0);
  }
  PetscCheck(*nruns < MAX_RUNS, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "at most %d methods in one run", MAX_RUNS);
  PetscCall(PetscMemzero(&runs[*nruns], sizeof(Run)));
  PetscCall(PetscStrncpy(runs[*nruns].type, type, sizeof(runs[*nruns].type)));
  runs[*nruns].ours = ours;
  (*nruns)++;
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscBool      nset = PETSC_FALSE;
  PartitionMode  partition = PARTITION_NONE;
  BandKind       band      = BAND_NONE;
  PetscInt       band_copies = 64;
  char           file[PETSC_MAX_PATH_LEN] = "", rhsfile[PETSC_MAX_PATH_LEN] = "", *methods[MAX_RUNS + 1], desc[256], devinfo[512];
  PetscInt       nmethods = MAX_RUNS + 1, n = 40, nruns = 0, i, j, N, nnz_local;
  ProblemType    problem  = PROBLEM_LAP3D;
  PetscBool      hasfile, hasrhs, compare = PETSC_TRUE, hasmethods, symmetric = PETSC_TRUE, warm_up = PETSC_TRUE, on_device, nullspace = PETSC_TRUE;
  Mat            A;
  Vec            xstar = NULL, b;
  Run            runs[MAX_RUNS];
  PetscInt       ndev;
  char           reason[256];
  PetscLogDouble tstart, tnow;
  MatInfo        info;
  PetscMPIInt    size;

  if (ProblemPreInitialize()) return 1;
  PetscCall(PetscInitialize(&argc, &argv, NULL, "petsc-fused: solve with the fused methods and PETSc's own\n"));
  PetscCall(PetscFusedInitializePackage());
  PetscCall(ProblemIgnoreKSPType("solve", "choose methods with -methods (ours or PETSc's, e.g. -methods pcgfused,cg) and -compare"));
  PetscCall(ProblemPreferDevice(&on_device));
  PetscCall(PetscTime(&tstart));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "petsc-fused solve", "");
  PetscCall(PetscOptionsString("-f", "Matrix: Matrix Market (.mtx) or PETSc binary", "", file, file, sizeof(file), &hasfile));
  PetscCall(PetscOptionsString("-rhs", "Right-hand side: Matrix Market n x 1 (default b = A x*)", "", rhsfile, rhsfile, sizeof(rhsfile), &hasrhs));
  PetscCall(PetscOptionsEnum("-problem", "Built-in problem when no -f is given", "", ProblemTypes, (PetscEnum)problem, (PetscEnum *)&problem, NULL));
  PetscCall(PetscOptionsInt("-n", "Points per side of the built-in problem", "", n, &n, &nset));
  PetscCall(PetscOptionsStringArray("-methods", "Methods to run: fused ones (each with its PETSc counterparts under -compare) or PETSc's own", "", methods, &nmethods, &hasmethods));
  PetscCall(PetscOptionsBool("-compare", "Also run PETSc's own counterparts", "", compare, &compare, NULL));
  PetscCall(PetscOptionsBool("-nullspace", "-problem neumann2d: attach the constants as the operator's null space", "", nullspace, &nullspace, NULL));
  PetscCall(PetscOptionsBool("-warm_up", "Solve once untimed before the timed solve of each method", "", warm_up, &warm_up, NULL));
  PetscCall(PetscOptionsEnum("-band", "With -f: solve on a large-bandwidth matrix made of copies of it: none, band, fiveband", "", BandKinds, (PetscEnum)band, (PetscEnum *)&band, NULL));
  PetscCall(PetscOptionsInt("-band_copies", "Copies of the -f matrix in the -band matrix", "", band_copies, &band_copies, NULL));
  PetscCall(PetscOptionsEnum("-partition", "Redistribute the rows first: none, graph (PT-Scotch), hypergraph (Zoltan PHG)", "", PartitionModes, (PetscEnum)partition, (PetscEnum *)&partition, NULL));
  PetscOptionsEnd();
  /* one more room than allowed, so that a list that is too long is seen, not cut */
  PetscCheck(!hasmethods || nmethods <= MAX_RUNS, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-methods: at most %d methods in one run", MAX_RUNS);

  PetscCall(PetscFusedCUDADeviceCount(&ndev, reason, sizeof(reason)));
  if (ndev > 0) {
    char name[256];
    PetscCall(PetscFusedCUDADeviceName(0, name, sizeof(name)));
    PetscCall(PetscSNPrintf(devinfo, sizeof(devinfo), "GPU: %s (each row's backend says where it ran)%s", name, on_device ? "; the matrix is aijcusparse and the vectors VECCUDA (-mat_type aij for host ones)" : ""));
    /* large enough for the GPU to matter, small enough that PETSc's own GMRES
       on one core keeps the whole comparison under a minute */
    if (!hasfile && !nset) n = problem == PROBLEM_LAP3D ? 64 : 512;
  } else PetscCall(PetscSNPrintf(devinfo, sizeof(devinfo), "GPU: none found (%s); the fused methods run on the reference (CPU) backend", reason));

  PetscCheck(band == BAND_NONE || hasfile, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-band %s makes its matrix from the one given with -f; there is no -f", BandKinds[band]);
  PetscCheck(band == BAND_NONE || !hasrhs, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-band %s with -rhs: the right-hand side is for the -f matrix, not the band made of it", BandKinds[band]);
  if (hasfile && band != BAND_NONE) {
    Mat seed;

    PetscCall(ProblemLoad(PETSC_COMM_SELF, file, &seed));
    PetscCall(ProblemCreateBanded(PETSC_COMM_WORLD, seed, band, band_copies, &A));
    PetscCall(MatIsSymmetric(seed, 1e-12, &symmetric));
    PetscCall(MatDestroy(&seed));
    PetscCall(PetscSNPrintf(desc, sizeof(desc), "%s matrix of %" PetscInt_FMT " copies of %s", BandKinds[band], band_copies, file));
  } else if (hasfile) {
    PetscCall(ProblemLoad(PETSC_COMM_WORLD, file, &A));
    PetscCall(PetscSNPrintf(desc, sizeof(desc), "%s", file));
    PetscCall(MatIsSymmetric(A, 1e-12, &symmetric));
  } else {
    PetscCall(ProblemCreate(PETSC_COMM_WORLD, problem, n, &A));
    PetscCall(PetscSNPrintf(desc, sizeof(desc), "built-in %s, n = %" PetscInt_FMT " per side", ProblemTypes[problem], n));
    symmetric = (PetscBool)(problem != PROBLEM_CONVDIFF);
    if (problem == PROBLEM_NEUMANN2D && nullspace) {
      /* singular: the constants are its null space, as an application says so */
      MatNullSpace nsp;

      PetscCall(MatNullSpaceCreate(PETSC_COMM_WORLD, PETSC_TRUE, 0, NULL, &nsp));
      PetscCall(MatSetNullSpace(A, nsp));
      PetscCall(MatNullSpaceDestroy(&nsp));
      PetscCall(PetscStrlcat(desc, ", the constants its null space (MatSetNullSpace)", sizeof(desc)));
    }
  }
  if (partition != PARTITION_NONE) {
    PartitionStats before, after;

    PetscCheck(!hasrhs, PETSC_COMM_WORLD, PETSC_ERR_SUP, "-partition %s with -rhs: a right-hand side from a file is not redistributed; use b = A x* (no -rhs) or -partition none", PartitionModes[partition]);
    PetscCall(PartitionStatsGet(A, &before));
    PetscCall(PartitionApply(partition, &A));
    PetscCall(PartitionStatsGet(A, &after));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "partition %s: halo per product %" PetscInt_FMT " -> %" PetscInt_FMT " values (at most %" PetscInt_FMT " -> %" PetscInt_FMT " into one rank), row imbalance %.3f -> %.3f\n", PartitionModes[partition], before.volume, after.volume, before.most, after.most, (double)before.imbalance, (double)after.imbalance));
  }
  {
    PetscInt ncols;

    PetscCall(MatGetSize(A, &N, &ncols));
    PetscCheck(N == ncols, PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ, "%s is %" PetscInt_FMT " x %" PetscInt_FMT ": the Krylov solvers need a square matrix", desc, N, ncols);
  }
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  nnz_local = (PetscInt)info.nz_used;
  if (hasrhs) {
    Mat B;
    PetscCall(MatLoadMatrixMarket(PETSC_COMM_WORLD, rhsfile, &B));
    PetscCall(MatCreateVecs(A, NULL, &b));
    {
      PetscInt bm, bn;
      PetscCall(MatGetSize(B, &bm, &bn));
      PetscCheck(bm == N && bn == 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ, "-rhs %s is %" PetscInt_FMT " x %" PetscInt_FMT "; the matrix needs a %" PetscInt_FMT " x 1 right-hand side", rhsfile, bm, bn, N);
    }
    PetscCall(MatGetColumnVector(B, b, 0));
    PetscCall(MatDestroy(&B));
  } else PetscCall(ProblemExactSolution(A, &xstar, &b));

  if (!hasmethods) {
    nmethods = 0;
    if (symmetric) PetscCall(PetscStrallocpy(KSPPCGFUSED, &methods[nmethods++]));
    PetscCall(PetscStrallocpy(KSPPBCGSFUSED, &methods[nmethods++]));
    PetscCall(PetscStrallocpy(KSPPGMRESFUSED, &methods[nmethods++]));
  }
  for (i = 0; i < nmethods; i++) {
    PetscCall(AddRun(runs, &nruns, methods[i], ProblemIsFusedType(methods[i])));
    if (compare) {
      char  list[64], *tok, *save = NULL;
      PetscCall(PetscStrncpy(list, Counterparts(methods[i]), sizeof(list)));
      for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) PetscCall(AddRun(runs, &nruns, tok, PETSC_FALSE));
    }
  }

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "petsc-fused solve: %s: %" PetscInt_FMT " rows, %" PetscInt_FMT " nonzeros, %d MPI rank(s)\n", desc, N, nnz_local, size));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", devinfo));
  for (i = 0; i < nruns; i++) {
    PetscCall(RunMethod(A, b, xstar, warm_up, &runs[i]));
    PetscCall(PetscTime(&tnow));
    if (runs[i].skipped) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  [%6.1f s] %-12s %s\n", (double)(tnow - tstart), runs[i].type, runs[i].skipped));
    else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  [%6.1f s] %-12s %5" PetscInt_FMT " iterations, %s\n", (double)(tnow - tstart), runs[i].type, runs[i].its, KSPConvergedReasons[runs[i].reason]));
  }

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n%-12s %-16s %6s %-22s %10s %10s %9s %9s %10s %8s\n", "method", "backend", "its", "reason", "|b-Ax|/|b|", "|x-x*|/|x*|", "setup s", "solve s", "us/iter", "speed-up"));
  for (i = 0; i < nruns; i++) {
    char      err[32], speed[32] = "-";
    PetscReal best = -1.0;

    if (runs[i].skipped) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-12s %s\n", runs[i].type, runs[i].skipped));
      continue;
    }
    if (runs[i].err >= 0) PetscCall(PetscSNPrintf(err, sizeof(err), "%.2e", (double)runs[i].err));
    else PetscCall(PetscStrcpy(err, "-"));
    if (runs[i].ours) {
      /* against the fastest converged built-in counterpart of this method */
      for (j = 0; j < nruns; j++) {
        PetscBool mine;
        if (runs[j].ours || runs[j].skipped || runs[j].reason <= 0) continue;
        PetscCall(PetscStrInList(runs[j].type, Counterparts(runs[i].type), ',', &mine));
        if (mine && (best < 0 || runs[j].tsolve < best)) best = runs[j].tsolve;
      }
      if (runs[i].reason > 0 && best > 0 && runs[i].tsolve > 0) PetscCall(PetscSNPrintf(speed, sizeof(speed), "%.2fx", (double)(best / runs[i].tsolve)));
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-12s %-16s %6" PetscInt_FMT " %-22s %10.2e %10s %9.3f %9.3f %10.1f %8s\n", runs[i].type, runs[i].backend, runs[i].its, KSPConvergedReasons[runs[i].reason], (double)runs[i].truerel, err, (double)runs[i].tsetup,
                          (double)runs[i].tsolve, runs[i].its ? 1e6 * (double)runs[i].tsolve / (double)runs[i].its : 0.0, speed));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "speed-up: solve time of the fastest converged PETSc counterpart over ours (cg/pipecg, bcgs, gmres/pgmres)\n"));

  for (i = 0; i < nmethods; i++) PetscCall(PetscFree(methods[i]));
  PetscCall(MatDestroy(&A));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xstar));
  PetscCall(PetscFinalize());
  return 0;
}
