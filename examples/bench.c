/* The benchmark: time per iteration of the fused methods against the
   bandwidth floor, and of PETSc's own methods, on Laplacians of growing size
   and on matrices from files.

     build/examples/bench [-sizes2d 100,316,1000,2000,4000] [-sizes3d 64,160,252] [-f a.mtx,b.mtx]
                          [-arrow rows,...] [-powerlaw rows,...] (irregular: problems.h)
                          [-methods pcgfused,pbcgsfused,pgmresfused] [-its 200]
                          [-csv out.csv] [-label gpu]

   Each case: one warm-up solve, then timed solves of exactly -its and 2 -its
   iterations (rtol = atol = 0), -reps of each (default 3; the fastest
   counts), Jacobi PC; time per iteration = the difference over -its, and the rest of a solve is shown as its overhead;
   the warm-up, the first KSPSolve after KSPSetUp, is shown whole ("first solve"). The floor (GPU runs) is the bytes each method's fused kernels
   must move per iteration (operator once per product in its device storage,
   each vector once per kernel that touches it) over the measured copy
   bandwidth; it is printed beside every figure. Run with -methods cg,bcgs,gmres
   under mpiexec for PETSc's CPU methods on all cores.

   In a PETSc built with CUDA on a GPU machine the problems are aijcusparse
   (VECCUDA vectors) unless -mat_type says otherwise, and the default methods
   add PETSc's own cg, pipecg, bcgs, gmres and pgmres, which then run on the
   GPU ("GPU (PETSc)"); each fused method's row says how many times faster
   per iteration it is than its fastest PETSc counterpart in the same run. */
#include "problems.h"
#include "mat/fusedformat.h"

#define MAX_ITEMS 16

typedef struct {
  const char *name;
  double      passes;  /* vector passes of length n per iteration */
  double      products; /* operator applications per iteration */
} Traffic;

/* Bytes the fused kernels move per iteration (see src/cuda/<method>.cu), on
   the path the solver takes: with one rank, the device loop runs as one
   cooperative kernel up to -ksp_fused_single_kernel_rows (default 2^20 rows
   for pcgfused, 2^19 for the others; pgmresfused takes its graph sooner
   where its single kernel would stream the basis), else as a CUDA graph;
   with several ranks, the host drives the steps.
   pcgfused: update 8 passes, product 4 (+A: p, the Jacobi diagonal and r
   read for <y,w> and <y,z>, y written), 3 where A is known symmetric (r
   not read: <y,z> comes from the update's sums); in the single kernel, one
   merged step: r, y, p, x, the Jacobi diagonal read, x, r, p, y written: 9.
   pbcgsfused: product with p 4, s = r - alpha v 3, product with s 4,
   update 9 (+2A); the graph makes s in the product with s: 4 + 6 + 9; the
   single kernel also makes v = B A p in the update: 6 + 11.
   pgmresfused(m): step j of the device loop (one rank) moves 2j + 8 passes
   (+A): the product kernel j + 5 (w read, which is also the product's input
   with left or no preconditioning; v_{j-1} written; r read and written; w'
   written; the Jacobi diagonal; v_l for l < j-1), the orthogonalization
   j + 3; the host-driven steps (several ranks) 3j + 12; averaged over j < m.
   The graph (from 2^19 rows, or where the basis leaves shared memory and
   the working set L2) applies the operator in a kernel of its own
   and reads w' and v_{j-1} once more: 2j + 10. The floor keeps 2j + 8, the
   fused steps' minimum, so those two passes count against our time.
   Each cycle also ends and starts once, m + 8 passes (+A), shared by its m
   steps: x += Z t reads the m basis vectors and x and writes x, the start
   r = B (b - A x) reads b, x and the diagonal and writes r, z_0 = r / |r|
   reads r and writes z_0. */
static Traffic MethodTraffic(const char *type, PetscInt restart, PetscMPIInt ranks, PetscInt rows, PetscBool symmetric)
{
  Traffic   t      = {type, 0.0, 0.0};
  PetscInt  single = !strcmp(type, KSPPCGFUSED) ? (1 << 20) : (1 << 19);
  PetscBool in_one;

  PetscCallAbort(PETSC_COMM_WORLD, PetscOptionsGetInt(NULL, NULL, "-ksp_fused_single_kernel_rows", &single, NULL));
  in_one = (PetscBool)(ranks == 1 && rows <= single);
  if (!strcmp(type, KSPPCGFUSED)) t.passes = in_one ? 9.0 : (ranks == 1 && symmetric ? 11.0 : 12.0), t.products = 1.0;
  else if (!strcmp(type, KSPPBCGSFUSED)) t.passes = in_one ? 17.0 : (ranks == 1 ? 19.0 : 20.0), t.products = 2.0;
  else if (!strcmp(type, KSPPGMRESFUSED) && ranks == 1) t.passes = 2.0 * (restart - 1) / 2.0 + 8.0 + (restart + 8.0) / restart, t.products = 1.0 + 1.0 / restart;
  else if (!strcmp(type, KSPPGMRESFUSED)) t.passes = 3.0 * (restart - 1) / 2.0 + 12.0 + (restart + 8.0) / restart, t.products = 1.0 + 1.0 / restart;
  return t;
}

/* PETSc's own methods each fused method is measured against */
static const char *Counterpart(const char *type)
{
  if (!strcmp(type, KSPPCGFUSED)) return "cg,pipecg";
  if (!strcmp(type, KSPPBCGSFUSED)) return "bcgs";
  if (!strcmp(type, KSPPGMRESFUSED)) return "gmres,pgmres";
  return NULL;
}

/* the bytes of one product in the storage the CUDA backend picks (one rank:
   the host builder answers, no device copy needed) */
static PetscErrorCode OperatorBytes(Mat A, double *bytes)
{
  const PetscInt    *ia, *ja;
  const PetscScalar *va;
  PetscInt           n;
  PetscBool          done;
  FusedFormat        F;
  char               msg[256];
  int                failed;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCall(MatSeqAIJGetArrayRead(A, &va));
  failed = FusedFormatBuild((int)n, ia, ja, va, FUSED_FORMAT_AUTO, &F, msg, sizeof(msg));
  PetscCall(MatSeqAIJRestoreArrayRead(A, &va));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(!failed, PETSC_COMM_SELF, PETSC_ERR_MEM, "%s", msg);
  *bytes = (double)F.bytes;
  FusedFormatFree(&F);
  PetscFunctionReturn(0);
}

/* Time per iteration as the difference of two timed solves (its and 2 its
   iterations), so that the per-solve costs (b and x across PCIe, the first
   and last host looks) do not pollute it; those come out as the overhead.
   Each time is the fastest of -reps solves. */
static PetscErrorCode TimeMethod(Mat A, Vec b, const char *type, PetscInt its, PetscInt reps, PetscReal *us_per_it, PetscReal *overhead_ms, PetscReal *first_ms, PetscInt *done_its, PetscInt *restart, char *backend, size_t backendlen, PetscBool *symmetric_found)
{
  KSP            ksp;
  PC             pc;
  Vec            x;
  PetscLogDouble t0, t1, t[2] = {PETSC_MAX_REAL, PETSC_MAX_REAL};
  PetscInt       pass, n[2] = {0, 0};

  PetscFunctionBegin;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp));
  *restart = 30;
  if (!strcmp(type, KSPPGMRESFUSED)) PetscCall(KSPPGMRESFusedGetRestart(ksp, restart));
  /* pass -1 warms up (device copies, graph, caches); then its and 2 its
     alternate, reps times each, and the fastest of each counts: one hiccup
     of the host or the clocks cannot make an iteration look cheaper or
     dearer than it is */
  for (pass = -1; pass < 2 * reps; pass++) {
    const PetscInt which = pass < 0 ? 0 : pass % 2;
    PetscInt       done;

    PetscCall(KSPSetTolerances(ksp, 0.0, 0.0, 1e10, which ? 2 * its : its));
    PetscCall(VecZeroEntries(x));
    PetscCallMPI(MPI_Barrier(PetscObjectComm((PetscObject)A)));
    PetscCall(PetscTime(&t0));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCallMPI(MPI_Barrier(PetscObjectComm((PetscObject)A)));
    PetscCall(PetscTime(&t1));
    PetscCall(KSPGetIterationNumber(ksp, &done));
    if (pass < 0) *first_ms = 1e3 * (t1 - t0); /* the first KSPSolve after KSPSetUp, whole */
    if (pass >= 0) {
      /* a method stopped by a breakdown at round-off may stop at another
         iteration each time: such a figure is marked, not trusted */
      if (pass >= 2 && done != n[which]) {
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "warning: %s made %" PetscInt_FMT " iterations, before %" PetscInt_FMT ": its time per iteration below is uncertain\n", type, done, n[which]));
        if (done < n[which]) continue; /* keep the longer solve's time and count */
      }
      if (done != n[which]) t[which] = t1 - t0;
      else t[which] = PetscMin(t[which], t1 - t0);
      n[which] = done;
    }
  }
  *done_its    = n[0];
  *us_per_it   = n[1] > n[0] ? 1e6 * (t[1] - t[0]) / (n[1] - n[0]) : 1e6 * t[0] / PetscMax(n[0], 1);
  *overhead_ms = 1e3 * (t[0] - 1e-6 * *us_per_it * n[0]);
  PetscCall(ProblemBackendLabel(ksp, backend, backendlen));
  *symmetric_found = PETSC_FALSE;
  {
    PetscBool is_fused;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)ksp, &is_fused, KSPPCGFUSED, KSPPBCGSFUSED, KSPPGMRESFUSED, ""));
    if (is_fused) PetscCall(KSPFusedGetOperatorSymmetric(ksp, symmetric_found));
  }
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt    sizes2d[MAX_ITEMS] = {100, 316, 1000, 2000, 4000}, sizes3d[MAX_ITEMS] = {64, 160, 252}, n2 = 5, n3 = 3, nm = 3, nf = 0, its = 200, reps = 3, i, m;
  PetscInt    arrows[MAX_ITEMS], powerlaws[MAX_ITEMS], na = MAX_ITEMS, np = MAX_ITEMS;
  char       *methods[MAX_ITEMS], *files[MAX_ITEMS], csvpath[PETSC_MAX_PATH_LEN] = "", label[64] = "";
  PetscBool   set, gpu, on_device;
  PetscInt    ndefault;
  PetscReal   bw = 0.0;
  FILE       *csv = NULL;
  PetscInt    ndev;
  char        reason[256], devname[256] = "none";
  PetscMPIInt size;

  if (ProblemPreInitialize()) return 1;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscFusedInitializePackage());
  PetscCall(ProblemIgnoreKSPType("bench", "choose methods with -methods"));
  PetscCall(ProblemPreferDevice(&on_device));
  methods[0] = (char *)KSPPCGFUSED;
  methods[1] = (char *)KSPPBCGSFUSED;
  methods[2] = (char *)KSPPGMRESFUSED;
  ndefault   = 3;
  if (on_device) { /* PETSc's own GPU methods beside ours */
    methods[3] = (char *)KSPCG;
    methods[4] = (char *)KSPPIPECG;
    methods[5] = (char *)KSPBCGS;
    methods[6] = (char *)KSPGMRES;
    methods[7] = (char *)KSPPGMRES;
    ndefault   = 8;
  }
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "petsc-fused benchmark", "");
  n2 = MAX_ITEMS; /* in: room in the array; out: how many were given */
  PetscCall(PetscOptionsIntArray("-sizes2d", "2D Laplacian points per side", "", sizes2d, &n2, &set));
  if (!set) n2 = 5;
  n3 = MAX_ITEMS;
  PetscCall(PetscOptionsIntArray("-sizes3d", "3D Laplacian points per side", "", sizes3d, &n3, &set));
  if (!set) n3 = 3;
  nm = MAX_ITEMS;
  PetscCall(PetscOptionsStringArray("-methods", "Methods to time", "", methods, &nm, &set));
  if (!set) nm = ndefault;
  nf = MAX_ITEMS;
  PetscCall(PetscOptionsStringArray("-f", "Matrix files", "", files, &nf, &set));
  if (!set) nf = 0;
  PetscCall(PetscOptionsIntArray("-arrow", "Rows of arrow matrices (one dense row and column)", "", arrows, &na, &set));
  if (!set) na = 0;
  PetscCall(PetscOptionsIntArray("-powerlaw", "Rows of power-law matrices (hubs' rows of 1/k lengths)", "", powerlaws, &np, &set));
  if (!set) np = 0;
  PetscCall(PetscOptionsInt("-its", "Iterations per timed solve", "", its, &its, NULL));
  PetscCall(PetscOptionsInt("-reps", "Timed solves of each length; the fastest counts", "", reps, &reps, NULL));
  PetscCheck(its >= 1 && reps >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-its %" PetscInt_FMT " and -reps %" PetscInt_FMT " must be at least 1", its, reps);
  PetscCall(PetscOptionsString("-csv", "Append results to this CSV file", "", csvpath, csvpath, sizeof(csvpath), NULL));
  PetscCall(PetscOptionsString("-label", "Label of this run in the CSV", "", label, label, sizeof(label), NULL));
  PetscOptionsEnd();

  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscFusedCUDADeviceCount(&ndev, reason, sizeof(reason)));
  gpu = (PetscBool)(ndev > 0);
  if (gpu) {
    PetscCall(PetscFusedCUDADeviceName(0, devname, sizeof(devname)));
    PetscCall(PetscFusedCUDACopyBandwidth((size_t)1 << 30, &bw));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "device: %s; measured copy bandwidth %.0f GB/s (1 GiB device-to-device, read + write)\n", devname, bw / 1e9));
  } else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "device: none (%s); no floor\n", reason));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%d MPI rank(s); Jacobi PC; %" PetscInt_FMT " iterations per timed solve after a warm-up solve, the fastest of %" PetscInt_FMT "\n\n", size, its, reps));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "us/iter: (time of a 2*its solve - time of an its solve) / its; per solve: the rest of an its solve (transfers, first and last steps); first solve: the whole first KSPSolve after KSPSetUp (its iterations), which pays what is made once\n"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-14s %10s %-12s %-16s %6s %11s %11s %8s %14s %14s\n", "problem", "rows", "method", "backend", "its", "us/iter", "floor us", "x floor", "per solve ms", "first solve ms"));
  if (csvpath[0]) {
    PetscCall(PetscFOpen(PETSC_COMM_WORLD, csvpath, "a", &csv));
    PetscCall(PetscFPrintf(PETSC_COMM_WORLD, csv, "label,device,ranks,problem,rows,method,its,us_per_iter,floor_us,bandwidth_GBs,per_solve_ms,backend,first_solve_ms\n"));
  }

  for (i = 0; i < n2 + n3 + na + np + nf; i++) {
    Mat       A;
    Vec       xstar, b;
    char      pname[PETSC_MAX_PATH_LEN];
    PetscInt  rows, nlocal;
    double    opbytes = 0.0; /* bytes of one product on this rank */

    if ((i < n2 && sizes2d[i] <= 0) || (i >= n2 && i < n2 + n3 && sizes3d[i - n2] <= 0)) continue; /* 0: none of that kind */
    if (i < n2) {
      PetscCall(ProblemCreate(PETSC_COMM_WORLD, PROBLEM_LAP2D, sizes2d[i], &A));
      PetscCall(PetscSNPrintf(pname, sizeof(pname), "lap2d-%" PetscInt_FMT, sizes2d[i]));
    } else if (i < n2 + n3) {
      PetscCall(ProblemCreate(PETSC_COMM_WORLD, PROBLEM_LAP3D, sizes3d[i - n2], &A));
      PetscCall(PetscSNPrintf(pname, sizeof(pname), "lap3d-%" PetscInt_FMT, sizes3d[i - n2]));
    } else if (i < n2 + n3 + na + np) {
      const PetscBool arrow = (PetscBool)(i < n2 + n3 + na);
      const PetscInt  rows  = arrow ? arrows[i - n2 - n3] : powerlaws[i - n2 - n3 - na];
      PetscCall(ProblemCreate(PETSC_COMM_WORLD, arrow ? PROBLEM_ARROW : PROBLEM_POWERLAW, rows, &A));
      PetscCall(PetscSNPrintf(pname, sizeof(pname), "%s-%" PetscInt_FMT, arrow ? "arrow" : "powerlaw", rows));
    } else {
      const char *file = files[i - n2 - n3 - na - np], *base = strrchr(file, '/');
      PetscCall(ProblemLoad(PETSC_COMM_WORLD, file, &A));
      PetscCall(PetscStrncpy(pname, base ? base + 1 : file, sizeof(pname)));
    }
    PetscCall(MatGetSize(A, &rows, NULL));
    PetscCall(ProblemExactSolution(A, &xstar, &b));
    PetscCall(MatGetLocalSize(A, &nlocal, NULL));
    if (gpu && size == 1) PetscCall(OperatorBytes(A, &opbytes));
    if (size > 1) {
      /* the halo of one product: the ghost columns each rank reads, summed and at most */
      Mat             Ad, Ao;
      const PetscInt *garray;
      PetscInt        nghost, sum, most;
      double          dbytes = 0.0, obytes = 0.0;

      PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
      PetscCall(MatGetSize(Ao, NULL, &nghost));
      PetscCallMPI(MPI_Allreduce(&nghost, &sum, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
      PetscCallMPI(MPI_Allreduce(&nghost, &most, 1, MPIU_INT, MPI_MAX, PETSC_COMM_WORLD));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-14s halo per product: %" PetscInt_FMT " values over all ranks (%.1f MB), at most %" PetscInt_FMT " into one rank (%.1f MB), %.1f MB per rank on average\n", pname, sum, 8e-6 * sum, most, 8e-6 * most, 8e-6 * sum / size));
      /* each rank's own product: its diagonal block, its ghost block and the
         ghost values it reads; the floor is the slowest rank's */
      if (gpu) {
        PetscCall(OperatorBytes(Ad, &dbytes));
        PetscCall(OperatorBytes(Ao, &obytes));
        opbytes = dbytes + obytes + 8.0 * nghost;
      }
    }
    PetscReal us_of[MAX_ITEMS];
    for (m = 0; m < nm; m++) {
      PetscReal us = 0.0, overhead = 0.0, first = 0.0;
      PetscInt  done = 0, restart = 30;
      PetscBool found;
      char      backend[32];
      double    floor_us = 0.0;
      Traffic   t;

      PetscCall(TimeMethod(A, b, methods[m], its, reps, &us, &overhead, &first, &done, &restart, backend, sizeof(backend), &found));
      us_of[m] = us;
      {
        PetscBool set, symmetric;

        /* known to PETSc, or found so on the device: pcgfused's graph then reads a vector less */
        PetscCall(MatIsSymmetricKnown(A, &set, &symmetric));
        t = MethodTraffic(methods[m], restart, size, rows, (PetscBool)((set && symmetric) || found));
      }
      if (gpu && t.passes > 0) {
        double mine = 1e6 * (t.passes * 8.0 * nlocal + t.products * opbytes) / bw;
        PetscCallMPI(MPI_Allreduce(&mine, &floor_us, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
      }
      if (floor_us > 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-14s %10" PetscInt_FMT " %-12s %-16s %6" PetscInt_FMT " %11.1f %11.1f %8.2f %14.3f %14.3f\n", pname, rows, methods[m], backend, done, (double)us, floor_us, (double)us / floor_us, (double)overhead, (double)first));
      else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-14s %10" PetscInt_FMT " %-12s %-16s %6" PetscInt_FMT " %11.1f %11s %8s %14.3f %14.3f\n", pname, rows, methods[m], backend, done, (double)us, "-", "-", (double)overhead, (double)first));
      if (csv) PetscCall(PetscFPrintf(PETSC_COMM_WORLD, csv, "%s,%s,%d,%s,%" PetscInt_FMT ",%s,%" PetscInt_FMT ",%.2f,%.2f,%.1f,%.3f,%s,%.3f\n", label, devname, size, pname, rows, methods[m], done, (double)us, floor_us, bw / 1e9, (double)overhead, backend, (double)first));
    }
    /* each fused method against its fastest PETSc counterpart in this run, per iteration */
    for (m = 0; m < nm; m++) {
      const char *mine = Counterpart(methods[m]);
      PetscInt    best = -1, k;

      for (k = 0; mine && k < nm; k++) {
        PetscBool in;
        PetscCall(PetscStrInList(methods[k], mine, ',', &in));
        if (in && (best < 0 || us_of[k] < us_of[best])) best = k;
      }
      if (best >= 0 && us_of[m] > 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-14s %10" PetscInt_FMT " %-12s %.2fx faster per iteration than PETSc's %s (%.1f us)\n", pname, rows, methods[m], (double)(us_of[best] / us_of[m]), methods[best], (double)us_of[best]));
    }
    PetscCall(MatDestroy(&A));
    PetscCall(VecDestroy(&xstar));
    PetscCall(VecDestroy(&b));
  }
  if (csv) PetscCall(PetscFClose(PETSC_COMM_WORLD, csv));
  PetscCall(PetscFinalize());
  return 0;
}
