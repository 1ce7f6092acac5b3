/* Many small solves: the backward-Euler heat equation, one solve per time
   step with the matrix set up once and a new right-hand side each step.

     build/examples/transient [-dim 2|3] [-n N] [-steps 1000] [-dt h]
                              [-methods pcgfused,pbcgsfused,pgmresfused,cg,bcgs,gmres]
                              [-pc_type jacobi] [-ksp_rtol 1e-8] [-csv file -label name]

   u_t = lap u on the unit square (cube), zero Dirichlet boundary, n interior
   points per side, h = 1/(n+1): each step solves (I + dt/h^2 S) u' = u with S
   the 5- (7-) point stencil and the last u as initial guess. The start
   u0 = prod sin(pi x_k) is an eigenvector of S, so after k steps the exact
   discrete solution is u0 / (1 + dt/h^2 mu)^k; the table gives each method's
   error against it. Every method solves one step untimed first (set-up,
   device buffers), then all the steps from u0 are timed: total seconds,
   milliseconds per step, iterations per step and microseconds per iteration.
   In a PETSc built with CUDA on a GPU machine the matrix is aijcusparse and
   PETSc's own methods run on the GPU too (-mat_type aij for the host). */
#include "problems.h"

#define MAX_METHODS 8

/* I + c S on n^dim interior points, c = dt/h^2 */
static PetscErrorCode HeatMatrix(PetscInt dim, PetscInt n, PetscReal c, Mat *A)
{
  PetscInt N = dim == 2 ? n * n : n * n * n, rstart, rend, row;

  PetscFunctionBegin;
  PetscCall(ProblemMatCreate(PETSC_COMM_WORLD, N, 2 * dim + 1, 2 * dim, A));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (row = rstart; row < rend; row++) {
    PetscInt    idx[3] = {row % n, (row / n) % n, dim == 3 ? row / (n * n) : 0}, stride[3] = {1, n, n * n}, cols[7], nc = 0, d;
    PetscScalar vals[7];

    for (d = 0; d < dim; d++) {
      if (idx[d] > 0) { cols[nc] = row - stride[d]; vals[nc++] = -c; }
      if (idx[d] < n - 1) { cols[nc] = row + stride[d]; vals[nc++] = -c; }
    }
    cols[nc] = row; vals[nc++] = 1.0 + 2.0 * dim * c;
    PetscCall(MatSetValues(*A, 1, &row, nc, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* u0 = prod_k sin(pi x_k), x_k = (i_k + 1) h */
static PetscErrorCode HeatStart(PetscInt dim, PetscInt n, Vec u)
{
  PetscInt     rstart, rend, row;
  PetscScalar *a;
  PetscReal    h = 1.0 / (n + 1);

  PetscFunctionBegin;
  PetscCall(VecGetOwnershipRange(u, &rstart, &rend));
  PetscCall(VecGetArrayWrite(u, &a));
  for (row = rstart; row < rend; row++) {
    PetscInt idx[3] = {row % n, (row / n) % n, dim == 3 ? row / (n * n) : 0}, d;
    a[row - rstart] = 1.0;
    for (d = 0; d < dim; d++) a[row - rstart] *= PetscSinReal(PETSC_PI * (idx[d] + 1) * h);
  }
  PetscCall(VecRestoreArrayWrite(u, &a));
  PetscFunctionReturn(0);
}

typedef struct {
  char           type[32], backend[32];
  PetscInt       its;     /* over all timed steps */
  PetscLogDouble seconds; /* of all timed steps */
  PetscReal      error;   /* against the exact discrete solution after the last step */
  PetscBool      failed;  /* a step did not converge */
} TransientRun;

static PetscErrorCode RunMethod(Mat A, Vec u0, PetscInt steps, PetscReal decay, TransientRun *run)
{
  KSP                ksp;
  Vec                u, b, exact;
  PetscInt           s, its;
  PetscLogDouble     t0, t1;
  KSPConvergedReason reason;
  PetscReal          en, xn;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(u0, &u));
  PetscCall(VecDuplicate(u0, &b));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, run->type));
  /* no absolute tolerance: u decays (by 1e-78 over 1000 steps of the 10^4
     case), and PETSc's default of 1e-50 would end the late solves unsolved */
  PetscCall(KSPSetTolerances(ksp, 1e-8, 0.0, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_TRUE));
  PetscCall(KSPSetUp(ksp));
  /* one untimed step: first-use costs out of the timing */
  PetscCall(VecCopy(u0, u));
  PetscCall(VecCopy(u, b));
  PetscCall(KSPSolve(ksp, b, u));
  PetscCall(VecCopy(u0, u));
  run->its    = 0;
  run->failed = PETSC_FALSE;
  PetscCall(PetscBarrier((PetscObject)ksp));
  PetscCall(PetscTime(&t0));
  for (s = 0; s < steps; s++) {
    PetscCall(VecCopy(u, b));
    PetscCall(KSPSolve(ksp, b, u));
    PetscCall(KSPGetIterationNumber(ksp, &its));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    run->its += its;
    if (reason < 0) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: step %" PetscInt_FMT " did not converge (%s)\n", run->type, s, KSPConvergedReasons[reason]));
      run->failed = PETSC_TRUE;
      break;
    }
  }
  PetscCall(VecNorm(u, NORM_2, &en)); /* a norm: the device work is done when it returns */
  PetscCall(PetscTime(&t1));
  run->seconds = t1 - t0;
  PetscCall(ProblemBackendLabel(ksp, run->backend, sizeof(run->backend)));
  PetscCall(VecDuplicate(u0, &exact));
  PetscCall(VecCopy(u0, exact));
  PetscCall(VecScale(exact, PetscPowReal(decay, (PetscReal)steps)));
  PetscCall(VecNorm(exact, NORM_2, &xn));
  PetscCall(VecAXPY(u, -1.0, exact));
  PetscCall(VecNorm(u, NORM_2, &en));
  run->error = en / xn;
  PetscCall(VecDestroy(&exact));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt       dim = 2, n = 100, steps = 1000, nm = MAX_METHODS + 1, m, N;
  char          *methods[MAX_METHODS + 1], csvpath[PETSC_MAX_PATH_LEN] = "", label[64] = "run";
  PetscReal      dt = -1.0, h, c, mu, decay, max_error = -1.0;
  PetscBool      set, on_device, ok = PETSC_TRUE;
  Mat            A;
  Vec            u0;
  TransientRun   runs[MAX_METHODS];
  PetscMPIInt    size;
  FILE          *csv = NULL;
  const char    *defaults[] = {KSPPCGFUSED, KSPPBCGSFUSED, KSPPGMRESFUSED, KSPCG, KSPBCGS, KSPGMRES};

  if (ProblemPreInitialize()) return 1;
  PetscCall(PetscInitialize(&argc, &argv, NULL, "petsc-fused: backward-Euler heat equation, one solve per time step\n"));
  PetscCall(PetscFusedInitializePackage());
  PetscCall(ProblemIgnoreKSPType("transient", "choose methods with -methods"));
  PetscCall(ProblemPreferDevice(&on_device));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "petsc-fused transient benchmark", "");
  PetscCall(PetscOptionsInt("-dim", "2 or 3", "", dim, &dim, NULL));
  PetscCall(PetscOptionsInt("-n", "Interior points per side", "", n, &n, NULL));
  PetscCall(PetscOptionsInt("-steps", "Time steps (timed)", "", steps, &steps, NULL));
  PetscCall(PetscOptionsReal("-dt", "Time step (default h)", "", dt, &dt, NULL));
  PetscCall(PetscOptionsStringArray("-methods", "Methods, fused or PETSc's", "", methods, &nm, &set));
  PetscCall(PetscOptionsReal("-max_error", "Fail (exit 1) where a method's error against the exact discrete solution is above this", "", max_error, &max_error, NULL));
  PetscCall(PetscOptionsString("-csv", "Append the results to this CSV file", "", csvpath, csvpath, sizeof(csvpath), NULL));
  PetscCall(PetscOptionsString("-label", "Label of this run in the CSV", "", label, label, sizeof(label), NULL));
  PetscOptionsEnd();
  PetscCheck(dim == 2 || dim == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dim %" PetscInt_FMT ": 2 or 3", dim);
  PetscCheck(n >= 1 && (dim == 2 ? n <= 46340 : n <= 1290), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-n %" PetscInt_FMT ": from 1 to %d in %" PetscInt_FMT "D", n, dim == 2 ? 46340 : 1290, dim);
  PetscCheck(steps >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-steps %" PetscInt_FMT " must be at least 1", steps);
  PetscCheck(!set || nm <= MAX_METHODS, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-methods: at most %d methods", MAX_METHODS);
  if (!set) {
    for (nm = 0; nm < 6; nm++) PetscCall(PetscStrallocpy(defaults[nm], &methods[nm]));
  }
  h = 1.0 / (n + 1);
  if (dt < 0) dt = h;
  PetscCheck(dt > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dt %g must be positive", (double)dt);
  c     = dt / (h * h);
  mu    = dim * 4.0 * PetscSqr(PetscSinReal(0.5 * PETSC_PI * h));
  decay = 1.0 / (1.0 + c * mu);

  PetscCall(HeatMatrix(dim, n, c, &A));
  PetscCall(MatCreateVecs(A, &u0, NULL));
  PetscCall(HeatStart(dim, n, u0));
  PetscCall(MatGetSize(A, &N, NULL));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "petsc-fused transient: %" PetscInt_FMT "D heat equation, %" PetscInt_FMT " unknowns, dt = %g (dt/h^2 = %g), %" PetscInt_FMT " steps, %d MPI rank(s)%s\n", dim, N, (double)dt, (double)c, steps, size, on_device ? "; aijcusparse and VECCUDA" : ""));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-12s %-16s %10s %8s %10s %9s %10s %10s\n", "method", "backend", "its/step", "total s", "ms/step", "us/iter", "error", "x ours"));
  if (csvpath[0]) {
    PetscBool exists;
    PetscCall(PetscTestFile(csvpath, 'r', &exists));
    PetscCall(PetscFOpen(PETSC_COMM_WORLD, csvpath, "a", &csv));
    if (!exists) PetscCall(PetscFPrintf(PETSC_COMM_WORLD, csv, "label,dim,unknowns,steps,ranks,method,backend,its_per_step,total_s,ms_per_step,us_per_iter,error\n"));
  }
  for (m = 0; m < nm; m++) {
    TransientRun *run = &runs[m];
    PetscLogDouble best = 0.0;
    PetscInt       k;

    PetscCall(PetscStrncpy(run->type, methods[m], sizeof(run->type)));
    PetscCall(RunMethod(A, u0, steps, decay, run));
    /* PETSc's methods: how many times the fastest fused method beat them */
    for (k = 0; k <= m; k++)
      if (ProblemIsFusedType(runs[k].type) && !runs[k].failed && (best == 0.0 || runs[k].seconds < best)) best = runs[k].seconds;
    {
      char ratio[32] = "-";
      if (!ProblemIsFusedType(run->type) && best > 0.0 && !run->failed) PetscCall(PetscSNPrintf(ratio, sizeof(ratio), "%.2fx", run->seconds / best));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-12s %-16s %10.1f %8.3f %10.3f %9.2f %10.2e %10s%s\n", run->type, run->backend, (double)run->its / steps, run->seconds, 1e3 * run->seconds / steps, run->its ? 1e6 * run->seconds / run->its : 0.0, (double)run->error, ratio, run->failed ? "  (a step did not converge)" : ""));
    }
    if (csv) PetscCall(PetscFPrintf(PETSC_COMM_WORLD, csv, "%s,%" PetscInt_FMT ",%" PetscInt_FMT ",%" PetscInt_FMT ",%d,%s,%s,%.2f,%.6f,%.4f,%.3f,%.3e\n", label, dim, N, steps, size, run->type, run->backend, (double)run->its / steps, run->seconds, 1e3 * run->seconds / steps, run->its ? 1e6 * run->seconds / run->its : 0.0, (double)run->error));
    if (run->failed || (max_error > 0 && !(run->error <= max_error))) ok = PETSC_FALSE;
    PetscCall(PetscFree(methods[m]));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "x ours: a PETSc method's total time over the fastest fused method's in this run (methods listed before it)\n"));
  if (csv) PetscCall(PetscFClose(PETSC_COMM_WORLD, csv));
  PetscCall(VecDestroy(&u0));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return ok ? 0 : 1;
}
