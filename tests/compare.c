/* Solves one problem with a fused method and with its PETSc baseline, same
   options, same PC, and asserts: both converge; iteration counts within
   -its_slack (default 2) or, where rounding drives them apart, the fused
   true residual within 10x the baseline's; error against the known
   solution within 10x the baseline's.

   -method cg|bcgs|gmres  picks pcgfused/cg, pbcgsfused/bcgs, pgmresfused/gmres
   -against reference     the baseline is the fused method on the reference
                          backend and the fused one runs on CUDA: iterations
                          within -its_slack (default 1) and true residual
                          within 10x, both (needs a GPU); where CUDA stops
                          first, its true residual within 10x rtol
   -expect_device_loop true|false  the fused solve ran iterations in the
                          device loop (or none there)
   -expect_device_loop_starts_max N  the host started the device loop at
                          most N times
   -expect_single_kernel true|false  the fused solve's device loop was one
                          cooperative kernel, or a CUDA graph
                          (KSPFusedGetDeviceLoopSingleKernel())
   -expect_inplace true|false  the fused solve read b and wrote x in their
                          own device arrays (VECCUDA), or copied them
   -expect_event NAME -expect_event_max N  the fused KSPSolve logged the
                          event NAME (say PGMRESFusedUpd, the host's
                          update of x and cycle starts) at most N times;
                          with -expect_event_min M also at least M times
   -expect_operator_symmetric true|false  the fused solve's device copy
                          of the operator was found equal to its transpose
                          (KSPFusedGetOperatorSymmetric())
   -expect_backend cuda   the fused solve ran on the CUDA backend
   -expect_no_copies      (a CUDA PETSc) the fused KSPSolve made no copy
                          between host and device that PETSc's own method
                          with the same PC did not make too (PETSc's
                          counters; b and x, VECCUDA, stay on the device:
                          with PBJACOBI both count none)
   -expect_copies_max N   (a CUDA PETSc) the fused KSPSolve, and its re-solve
                          with -resolve_scaled, made at most N such copies
                          whatever PETSc's own made (0: the operator's new
                          values came from PETSc's device arrays, on every
                          rank)
   -robust                the robustness suite's bounds instead: the
                          baseline converges (else the case is not one of
                          the suite's); the fused method converges in at
                          most the baseline's iterations plus max(2, 5%)
                          (cg, gmres) or max(2, 15%) (bcgs), with a true
                          residual at most 10x rtol or 10x the baseline's
   -rhs FILE              b from a Matrix Market n x 1 file instead of A x*
                          (the error is then not judged)
   -baseline_breaks_down  the baseline stops with DIVERGED_BREAKDOWN and the
                          fused method converges, true residual at most
                          10x rtol
   -attainable            both run to -ksp_rtol (say 1e-14) whether or not
                          they reach it: the fused final true residual at
                          most 10x the baseline's
   -nullspace constant|vector|two  a MatNullSpace on the operator (say of
                          -problem neumann2d): the constants; the same as
                          one stored vector; or the constants and a second
                          vector of alternating signs, which PETSc's
                          methods project out just the same
   -resolve_scaled        (then) the operator and b are scaled by 2 on
                          PETSc's side and both KSPs solve again: the same
                          x, and with -expect_no_copies no more copies in
                          the fused re-solve than in PETSc's own (whose PC
                          set-up for the new values may copy) */
#include "problems.h"

typedef struct {
  PetscInt           backend;       /* of a fused method: the backend used (KSPFusedBackend), else -1 */
  PetscLogDouble     copies;        /* host-device copies PETSc counted in the first solve */
  PetscLogDouble     recopies;      /* and in the re-solve after the scaling */
  PetscInt           its;
  KSPConvergedReason reason;
  PetscReal          truerel, err;
  PetscInt           device_its;    /* of a fused method: iterations in the device loop */
  PetscInt           device_starts; /* and how often the host started it */
  PetscBool          single_kernel; /* it was one cooperative kernel */
  PetscBool          inplace;       /* b and x in their own device arrays */
  PetscBool          symmetric;     /* the device copy of A equals its transpose */
  int                events;        /* times the solve logged the event of -expect_event */
} SolveResult;

/* -expect_event: the event counted in each solve (-1: none) */
static PetscLogEvent counted_event = -1;

/* Times the counted event has been logged so far in the main stage */
static PetscErrorCode CountedEvents(int *count)
{
  PetscEventPerfInfo info;

  PetscFunctionBegin;
  *count = 0;
  if (counted_event < 0) PetscFunctionReturn(0);
  PetscCall(PetscLogEventGetPerfInfo(0, counted_event, &info));
  *count = info.count;
  PetscFunctionReturn(0);
}

/* Host-device copies PETSc has counted so far (a CUDA PETSc) */
static PetscLogDouble PETScCopies(void)
{
#if defined(PETSC_HAVE_CUDA)
  return petsc_gtoc_ct + petsc_ctog_ct;
#else
  return 0.0;
#endif
}

/* -nullspace: attaches the null space named to A */
static PetscErrorCode AttachNullSpace(Mat A, const char *kind)
{
  MatNullSpace nsp;
  Vec          v[1];
  PetscInt     N, lo, hi;
  PetscBool    constant, vector, two;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(kind, "constant", &constant));
  PetscCall(PetscStrcmp(kind, "vector", &vector));
  PetscCall(PetscStrcmp(kind, "two", &two));
  PetscCheck(constant || vector || two, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-nullspace %s: use constant, vector or two", kind);
  if (constant) PetscCall(MatNullSpaceCreate(PetscObjectComm((PetscObject)A), PETSC_TRUE, 0, NULL, &nsp));
  else { /* v[0] = (1, 1, ...) or (1, -1, 1, ...), normalized */
    PetscCall(MatCreateVecs(A, &v[0], NULL));
    PetscCall(MatGetSize(A, &N, NULL));
    PetscCall(VecGetOwnershipRange(v[0], &lo, &hi));
    for (PetscInt i = lo; i < hi; i++) PetscCall(VecSetValue(v[0], i, (two && i % 2) ? -1.0 : 1.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(v[0]));
    PetscCall(VecAssemblyEnd(v[0]));
    PetscCall(VecNormalize(v[0], NULL));
    PetscCall(MatNullSpaceCreate(PetscObjectComm((PetscObject)A), two ? PETSC_TRUE : PETSC_FALSE, 1, v, &nsp));
    PetscCall(VecDestroy(&v[0]));
  }
  PetscCall(MatSetNullSpace(A, nsp));
  PetscCall(MatNullSpaceDestroy(&nsp));
  PetscFunctionReturn(0);
}

/* backend < 0: whatever the options say. resolve: solve again after A and b
   are scaled by 2 (same pattern), from the first solution; x must not change. */
static PetscErrorCode SolveWith(Mat A, Vec b, Vec xstar, const char *type, PetscInt backend, PetscBool nonzero_guess, PetscBool resolve, SolveResult *res)
{
  KSP            ksp;
  Vec            x;
  PetscLogDouble copies;
  int            events;

  PetscFunctionBegin;
  res->device_its    = 0;
  res->device_starts = 0;
  res->single_kernel = PETSC_FALSE;
  res->inplace       = PETSC_FALSE;
  res->symmetric     = PETSC_FALSE;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 5000));
  PetscCall(KSPSetFromOptions(ksp));
  if (backend >= 0) PetscCall(KSPFusedSetBackend(ksp, (KSPFusedBackend)backend));
  if (nonzero_guess) {
    PetscRandom rnd;
    PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)A), &rnd));
    PetscCall(PetscRandomSetSeed(rnd, 7));
    PetscCall(PetscRandomSeed(rnd));
    PetscCall(VecSetRandom(x, rnd));
    PetscCall(PetscRandomDestroy(&rnd));
    PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_TRUE));
  }
  PetscCall(KSPSetUp(ksp)); /* set up before the solve knows its vectors, as applications do */
  copies = PETScCopies();
  PetscCall(CountedEvents(&events));
  PetscCall(KSPSolve(ksp, b, x));
  res->copies = PETScCopies() - copies;
  res->events = -events;
  PetscCall(CountedEvents(&events));
  res->events += events;
  res->recopies = 0.0;
  if (resolve) {
    PetscReal diff, norm;
    Vec       x1;

    /* on PETSc's side, on its stream, with no sync of ours: our solve must be ordered after it */
    PetscCall(MatScale(A, 2.0));
    PetscCall(VecScale(b, 2.0));
    PetscCall(VecDuplicate(x, &x1));
    PetscCall(VecCopy(x, x1));
    copies = PETScCopies();
    PetscCall(KSPSolve(ksp, b, x));
    res->recopies = PETScCopies() - copies;
    PetscCall(MatScale(A, 0.5));
    PetscCall(VecScale(b, 0.5));
    PetscCall(VecAXPY(x1, -1.0, x)); /* likewise after the solve */
    PetscCall(VecNorm(x1, NORM_2, &diff));
    PetscCall(VecNorm(x, NORM_2, &norm));
    PetscCall(VecDestroy(&x1));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: after A and b were scaled by 2 the solution moved by %.2e (relative)\n", type, (double)(diff / norm)));
    PetscCheck(diff <= 1e-6 * norm, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the solution of the scaled system differs by %g (relative)", (double)(diff / norm));
  }
  PetscCall(KSPGetIterationNumber(ksp, &res->its));
  PetscCall(KSPGetConvergedReason(ksp, &res->reason));
  res->backend = -1;
  res->device_its = 0;
  {
    PetscBool is_fused;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)ksp, &is_fused, KSPPCGFUSED, KSPPBCGSFUSED, KSPPGMRESFUSED, ""));
    if (is_fused) PetscCall(KSPFusedGetDeviceIterations(ksp, &res->device_its));
    if (is_fused) PetscCall(KSPFusedGetDeviceLoopStarts(ksp, &res->device_starts));
    if (is_fused) PetscCall(KSPFusedGetDeviceLoopSingleKernel(ksp, &res->single_kernel));
    if (is_fused) PetscCall(KSPFusedGetSystemInPlace(ksp, &res->inplace));
    if (is_fused) PetscCall(KSPFusedGetOperatorSymmetric(ksp, &res->symmetric));
    if (is_fused) {
      KSPFusedBackend used;
      PetscCall(KSPFusedGetBackendUsed(ksp, &used));
      res->backend = (PetscInt)used;
    }
  }
  PetscCall(ProblemTrueResidual(A, b, x, &res->truerel));
  PetscCall(ProblemRelativeError(x, xstar, &res->err));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char        method[16] = "cg", file[PETSC_MAX_PATH_LEN] = "", fused[32], base[32], event_name[64] = "";
  ProblemType problem    = PROBLEM_LAP2D;
  PetscInt    n = 32, slack = 2, starts_max = -1, copies_max = -1, events_max = -1, events_min = 0;
  PetscReal   rtol = 1e-8; /* as SolveWith() sets it, unless -ksp_rtol */
  char        against[16] = "petsc";
  PetscBool   hasfile, nonzero_guess = PETSC_FALSE, ok = PETSC_TRUE, oracle, expect_loop = PETSC_FALSE, expect_loop_set, expect_inplace = PETSC_FALSE, expect_inplace_set, expect_event = PETSC_FALSE, expect_symmetric = PETSC_FALSE, expect_symmetric_set, expect_single = PETSC_FALSE, expect_single_set;
  PetscBool   expect_no_copies = PETSC_FALSE, resolve = PETSC_FALSE, expect_backend_set, robust = PETSC_FALSE, attainable = PETSC_FALSE;
  PetscBool   breaks_down = PETSC_FALSE, hasrhs;
  char        rhsfile[PETSC_MAX_PATH_LEN] = "", nullspace[16] = "";
  char        expect_backend[16] = "";
  PetscInt    base_backend = -1, fused_backend = -1;
  Mat         A;
  Vec         xstar, b;
  SolveResult rf, rb;
  PetscMPIInt size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscFusedInitializePackage());
  PetscCall(ProblemIgnoreKSPType("compare", "the methods are -method and its counterpart"));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-method", method, sizeof(method), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), &hasfile));
  PetscCall(PetscOptionsGetEnum(NULL, NULL, "-problem", ProblemTypes, (PetscEnum *)&problem, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-its_slack", &slack, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-nonzero_guess", &nonzero_guess, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-against", against, sizeof(against), NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_device_loop", &expect_loop, &expect_loop_set));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_device_loop_starts_max", &starts_max, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_single_kernel", &expect_single, &expect_single_set));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_inplace", &expect_inplace, &expect_inplace_set));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_operator_symmetric", &expect_symmetric, &expect_symmetric_set));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_no_copies", &expect_no_copies, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_copies_max", &copies_max, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-resolve_scaled", &resolve, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-robust", &robust, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-attainable", &attainable, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-baseline_breaks_down", &breaks_down, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-rhs", rhsfile, sizeof(rhsfile), &hasrhs));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-expect_backend", expect_backend, sizeof(expect_backend), &expect_backend_set));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-expect_event", event_name, sizeof(event_name), &expect_event));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_event_max", &events_max, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_event_min", &events_min, NULL));
  PetscCheck(!expect_event == (events_max < 0), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-expect_event NAME and -expect_event_max N go together");
  if (expect_event) {
    PetscCall(PetscLogDefaultBegin());
    PetscCall(PetscLogEventGetId(event_name, &counted_event));
    PetscCheck(counted_event >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-expect_event %s: no event of that name is registered", event_name);
  }
#if !defined(PETSC_HAVE_CUDA)
  PetscCheck(!expect_no_copies && copies_max < 0, PETSC_COMM_WORLD, PETSC_ERR_SUP, "-expect_no_copies and -expect_copies_max need a PETSc with CUDA");
#endif
  PetscCall(PetscStrcmp(against, "reference", &oracle));
  PetscCall(PetscSNPrintf(fused, sizeof(fused), "p%sfused", method));
  if (oracle) {
    PetscCall(PetscStrcpy(base, fused));
    base_backend  = KSP_FUSED_BACKEND_REFERENCE;
    fused_backend = KSP_FUSED_BACKEND_CUDA;
    slack         = 1;
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-its_slack", &slack, NULL));
  } else PetscCall(PetscStrcpy(base, method));

  if (hasfile) PetscCall(ProblemLoad(PETSC_COMM_WORLD, file, &A));
  else PetscCall(ProblemCreate(PETSC_COMM_WORLD, problem, n, &A));
  if (hasrhs) {
    Mat      B;
    PetscInt N, bm, bn;

    PetscCall(MatGetSize(A, &N, NULL));
    PetscCall(MatLoadMatrixMarket(PETSC_COMM_WORLD, rhsfile, &B));
    PetscCall(MatGetSize(B, &bm, &bn));
    PetscCheck(bm == N && bn == 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ, "-rhs %s is %" PetscInt_FMT " x %" PetscInt_FMT "; the matrix needs %" PetscInt_FMT " x 1", rhsfile, bm, bn, N);
    PetscCall(MatCreateVecs(A, &xstar, &b));
    PetscCall(MatGetColumnVector(B, b, 0));
    PetscCall(MatDestroy(&B));
    PetscCall(VecSet(xstar, 0.0)); /* unknown: the error is not judged */
  } else PetscCall(ProblemExactSolution(A, &xstar, &b));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-nullspace", nullspace, sizeof(nullspace), NULL));
  if (nullspace[0]) PetscCall(AttachNullSpace(A, nullspace));

  PetscCall(SolveWith(A, b, xstar, base, base_backend, nonzero_guess, resolve, &rb));
  PetscCall(SolveWith(A, b, xstar, fused, fused_backend, nonzero_guess, resolve, &rf));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-12s its %5" PetscInt_FMT "  reason %-24s true rel. residual %.3e  error %.3e%s\n", base, rb.its, KSPConvergedReasons[rb.reason], (double)rb.truerel, (double)rb.err, oracle ? "  (reference backend)" : ""));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-12s its %5" PetscInt_FMT "  reason %-24s true rel. residual %.3e  error %.3e  (%d ranks)\n", fused, rf.its, KSPConvergedReasons[rf.reason], (double)rf.truerel, (double)rf.err, size));
  if (expect_loop_set) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: %" PetscInt_FMT " of %" PetscInt_FMT " iterations in the device loop, started %" PetscInt_FMT " times\n", fused, rf.device_its, rf.its, rf.device_starts));
    if (expect_loop != (PetscBool)(rf.device_its > 0)) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: expected %s\n", expect_loop ? "iterations in the device loop" : "no iteration in the device loop"));
      ok = PETSC_FALSE;
    }
  }
  if (expect_single_set) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: the device loop %s\n", fused, rf.single_kernel ? "was one cooperative kernel" : "was not one cooperative kernel"));
    if (expect_single != rf.single_kernel) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: expected %s\n", expect_single ? "the single-kernel device loop" : "no single-kernel device loop"));
      ok = PETSC_FALSE;
    }
  }
  if (expect_symmetric_set) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: the operator's device copy %s its transpose\n", fused, rf.symmetric ? "equals" : "does not equal"));
    if (expect_symmetric != rf.symmetric) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: expected the device copy %s\n", expect_symmetric ? "found symmetric" : "not found symmetric"));
      ok = PETSC_FALSE;
    }
  }
  if (expect_event) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: %s logged %d times in the solve (%" PetscInt_FMT " to %" PetscInt_FMT ")\n", fused, event_name, rf.events, events_min, events_max));
    if (rf.events > events_max) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: %s logged more often than expected\n", event_name));
      ok = PETSC_FALSE;
    }
    if (rf.events < events_min) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: %s logged less often than expected\n", event_name));
      ok = PETSC_FALSE;
    }
  }
  if (expect_inplace_set) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: b and x %s\n", fused, rf.inplace ? "in their own device arrays" : "copied"));
    if (expect_inplace != rf.inplace) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: expected b and x %s\n", expect_inplace ? "in place" : "copied"));
      ok = PETSC_FALSE;
    }
  }
  if (expect_backend_set) {
    PetscBool want_cuda;

    PetscCall(PetscStrcmp(expect_backend, "cuda", &want_cuda));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s ran on the %s backend\n", fused, rf.backend == KSP_FUSED_BACKEND_CUDA ? "CUDA" : "reference"));
    if (want_cuda != (PetscBool)(rf.backend == KSP_FUSED_BACKEND_CUDA)) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: expected the %s backend\n", expect_backend));
      ok = PETSC_FALSE;
    }
  }
  if (expect_no_copies) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  host-device copies PETSc counted during the solve: %s %g, %s %g\n", fused, (double)rf.copies, base, (double)rb.copies));
    if (rf.copies > rb.copies) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: the fused solve copied between host and device more than PETSc's own\n"));
      ok = PETSC_FALSE;
    }
    if (resolve) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  and during the re-solve after the scaling: %s %g, %s %g\n", fused, (double)rf.recopies, base, (double)rb.recopies));
      if (rf.recopies > rb.recopies) {
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: the fused re-solve copied more than PETSc's own\n"));
        ok = PETSC_FALSE;
      }
    }
  }
  if (copies_max >= 0) {
    if (resolve) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  host-device copies PETSc counted in the fused solve and its re-solve: %g, %g (at most %" PetscInt_FMT ")\n", (double)rf.copies, (double)rf.recopies, copies_max));
    else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  host-device copies PETSc counted in the fused solve: %g (at most %" PetscInt_FMT ")\n", (double)rf.copies, copies_max));
    if (rf.copies > copies_max || rf.recopies > copies_max) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: the fused solve copied between host and device more than %" PetscInt_FMT " times\n", copies_max));
      ok = PETSC_FALSE;
    }
  }
  if (starts_max >= 0 && (rf.device_starts > starts_max || rf.device_starts < 1)) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: the host started the device loop %" PetscInt_FMT " times, expected 1 to %" PetscInt_FMT "\n", rf.device_starts, starts_max));
    ok = PETSC_FALSE;
  }
  if (oracle && PetscAbsInt(rf.its - rb.its) > slack) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: CUDA backend took %" PetscInt_FMT " iterations, the reference %" PetscInt_FMT " (slack %" PetscInt_FMT ")\n", rf.its, rb.its, slack));
    ok = PETSC_FALSE;
  }
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-ksp_rtol", &rtol, NULL)); /* SolveWith()'s 1e-8 unless given */
  /* a CUDA solve that converged an iteration or more before the reference
     (within the slack: its sums round differently) lacks the reference's
     last steps, each of which may cut the residual by more than 10: it is
     held to 10x rtol instead */
  if (oracle && rf.truerel > 10.0 * rb.truerel && rf.truerel > 1e-14 && !(rf.reason > 0 && rf.its < rb.its && rf.truerel <= 10.0 * rtol)) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: CUDA backend true residual %.3e > 10x the reference's %.3e\n", (double)rf.truerel, (double)rb.truerel));
    ok = PETSC_FALSE;
  }

  if (breaks_down) {
    if (rb.reason != KSP_DIVERGED_BREAKDOWN) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: the baseline %s was to break down\n", base));
      ok = PETSC_FALSE;
    }
    if (rf.reason <= 0 || !(rf.truerel <= 10.0 * rtol)) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: %s did not converge to 10x rtol where %s broke down\n", fused, base));
      ok = PETSC_FALSE;
    }
  } else if (attainable) {
    /* neither need reach the tolerance: what each attains is compared */
    if (!(rf.truerel <= 10.0 * rb.truerel)) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: attainable accuracy: true residual %.3e > 10x the baseline's %.3e\n", (double)rf.truerel, (double)rb.truerel));
      ok = PETSC_FALSE;
    }
  } else if (robust) {
    PetscInt  extra;
    PetscBool is_bcgs;

    PetscCall(PetscStrcmp(method, "bcgs", &is_bcgs));
    extra = (PetscInt)PetscCeilReal((is_bcgs ? 0.15 : 0.05) * rb.its);
    extra = PetscMax(2, extra);
    if (rb.reason <= 0) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: the baseline %s did not converge: not a case of the suite\n", base));
      ok = PETSC_FALSE;
    } else if (rf.reason <= 0) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: %s did not converge where %s did\n", fused, base));
      ok = PETSC_FALSE;
    } else {
      if (rf.its > rb.its + extra) {
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: %" PetscInt_FMT " iterations, more than %s's %" PetscInt_FMT " + %" PetscInt_FMT "\n", rf.its, base, rb.its, extra));
        ok = PETSC_FALSE;
      }
      if (!(rf.truerel <= PetscMax(10.0 * rtol, 10.0 * rb.truerel))) {
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: true residual %.3e above 10x rtol and 10x the baseline's %.3e\n", (double)rf.truerel, (double)rb.truerel));
        ok = PETSC_FALSE;
      }
    }
  } else {
    if (rb.reason <= 0) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: the baseline %s did not converge; this case cannot judge %s\n", base, fused));
      ok = PETSC_FALSE;
    }
    if (rf.reason <= 0) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: %s did not converge\n", fused));
      ok = PETSC_FALSE;
    }
    if (PetscAbsInt(rf.its - rb.its) > slack && rf.truerel > 10.0 * rb.truerel) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: %" PetscInt_FMT " iterations against %" PetscInt_FMT " (slack %" PetscInt_FMT ") and true residual %.3e > 10x %.3e\n", rf.its, rb.its, slack, (double)rf.truerel, (double)rb.truerel));
      ok = PETSC_FALSE;
    }
    if (rf.err > 10.0 * rb.err && rf.err > 1e-12) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: error %.3e more than 10x the baseline's %.3e\n", (double)rf.err, (double)rb.err));
      ok = PETSC_FALSE;
    }
  }
  PetscCall(MatDestroy(&A));
  PetscCall(VecDestroy(&xstar));
  PetscCall(VecDestroy(&b));
  PetscCall(PetscFinalize());
  return ok ? 0 : 1;
}
