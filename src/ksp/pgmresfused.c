/* pgmresfused: the restarted simpler-GMRES cycle over the steps of
   pgmresfusedimpl.h. */
#include "ksp/pgmresfusedimpl.h"

/* the largest m with m * m below 2^31 */
#define PGMRES_MAX_RESTART 46340

#define PGMRESStep(event, call) \
  do { \
    PetscCall(PetscLogEventBegin(event, ksp, 0, 0, 0)); \
    PetscCall(call); \
    PetscCall(PetscLogEventEnd(event, ksp, 0, 0, 0)); \
  } while (0)

static PetscErrorCode KSPSetUp_PGMRESFused(KSP ksp)
{
  KSP_PGMRESFused *gm = (KSP_PGMRESFused *)ksp->data;
  const PetscInt   m  = gm->restart;

  PetscFunctionBegin;
  PetscCall(KSPFusedSetUp(ksp, &gm->fused));
  PetscCall(KSPSetWorkVecs(ksp, 5));
  gm->r    = ksp->work[0];
  gm->z0   = ksp->work[1];
  gm->w    = ksp->work[2];
  gm->tmp  = ksp->work[3];
  gm->tmp2 = ksp->work[4];
  /* the host basis (gm->V) is made at the first solve that runs on the
     reference backend: a GPU solve keeps its basis on the device only */
  if (!gm->R) PetscCall(PetscCalloc7(m * m, &gm->R, m, &gm->xi, m, &gm->t, m + 1, &gm->h, m + 1, &gm->sums, m, &gm->rho, m, &gm->coef));
  gm->steps = &KSPPGMRESFusedSteps_Reference;
  PetscFunctionReturn(0);
}

/* t = R(0:k,0:k)^{-1} xi(0:k) */
static PetscErrorCode PGMRESFusedBackSolve(KSP_PGMRESFused *gm, PetscInt k)
{
  PetscInt i, l;

  PetscFunctionBegin;
  for (i = k - 1; i >= 0; i--) {
    PetscScalar s = gm->xi[i];
    /* from the last column, as the device's back solve (pgmresfused.cu) */
    for (l = k - 1; l > i; l--) s -= PGMRES_R(gm, i, l) * gm->t[l];
    gm->t[i] = s / PGMRES_R(gm, i, i);
  }
  PetscFunctionReturn(0);
}

/* t = the coefficients of the cycle's correction over z_0, v_0, ..., v_{k-2}
   (what the update steps take), from t = R^{-1} xi over z_0, ..., z_{k-1}:
   an adaptive step's z_j = r_j / rho_j = (|r_0| z_0 - sum_{l<j} xi_l v_l) /
   rho_j spreads its t_j over them; a plain step's z_j is v_{j-1} itself */
static PetscErrorCode PGMRESFusedBasisCoefficients(KSP_PGMRESFused *gm, PetscInt k)
{
  PetscScalar *a = gm->coef;
  PetscInt     j, l;

  PetscFunctionBegin;
  for (j = 0; j < k; j++) a[j] = 0.0;
  for (j = 0; j < k; j++) {
    const PetscReal rho = gm->rho[j];

    if (j == 0 || rho == 0.0) a[j] += gm->t[j];
    else {
      a[0] += gm->t[j] * (gm->cycle_rnorm0 / rho);
      for (l = 0; l < j; l++) a[l + 1] -= gm->t[j] * (gm->xi[l] / rho);
    }
  }
  for (j = 0; j < k; j++) gm->t[j] = a[j];
  PetscFunctionReturn(0);
}

/* The correction's coefficients of the cycle's first k steps, in gm->t */
static PetscErrorCode PGMRESFusedCorrection(KSP_PGMRESFused *gm, PetscInt k)
{
  PetscFunctionBegin;
  PetscCall(PGMRESFusedBackSolve(gm, k));
  if (gm->adaptive > 0.0) PetscCall(PGMRESFusedBasisCoefficients(gm, k));
  PetscFunctionReturn(0);
}

/* The products <v_i, w> of a pass (in gm->sums) added to h; |h| of the pass */
static PetscErrorCode PGMRESFusedTakeProducts(KSP ksp, KSP_PGMRESFused *gm, PetscInt j, PetscReal *hnorm)
{
  PetscInt  i;
  PetscReal hh = 0.0;

  PetscFunctionBegin;
  for (i = 0; i < j; i++) {
    KSPCheckDot(ksp, gm->sums[i]);
    gm->h[i] += gm->sums[i];
    hh += PetscRealPart(gm->sums[i] * gm->sums[i]);
  }
  *hnorm = PetscSqrtReal(hh);
  PetscFunctionReturn(0);
}

/* The orthogonalization's sums made global. With a null space removed on
   the device its <w, n_k> follow them: the normalization subtracts
   sum_k <w, n_k> n_k from w, so |w|^2 becomes that of the vector it makes
   (<w,r> needs nothing: r has no part in the null space). */
static PetscErrorCode PGMRESFusedOrthogSums(KSP ksp, KSP_PGMRESFused *gm, PetscScalar sums[])
{
  FusedNullSpace *ns = &gm->fused.ns;

  PetscFunctionBegin;
  PetscCall(KSPFusedAllreduce(ksp, &gm->fused, GMRES_NSUMS + ns->m, sums));
  for (int k = 0; k < ns->m; k++) ns->coef[k] = sums[GMRES_NSUMS + k];
  if (ns->m) sums[GMRES_WW] = FusedNullSpaceFoldSquare(sums[GMRES_WW], ns->coef, ns->m);
  PetscFunctionReturn(0);
}

/* One Gram-Schmidt pass against v_0..v_{j-1}: the coefficients are added to
   h, |w|^2 and <w,r> after the pass come back in sums. */
static PetscErrorCode PGMRESFusedGramSchmidtPass(KSP ksp, KSP_PGMRESFused *gm, PetscInt j, PetscReal *hnorm, PetscScalar sums[])
{
  PetscFunctionBegin;
  PGMRESStep(KSP_PGMRESFused_MDot, gm->steps->mdot(ksp, gm, j, gm->sums));
  PetscCall(KSPFusedAllreduce(ksp, &gm->fused, j + 1, gm->sums));
  PetscCall(PGMRESFusedTakeProducts(ksp, gm, j, hnorm));
  if (ksp->reason) PetscFunctionReturn(0);
  PGMRESStep(KSP_PGMRESFused_Orthog, gm->steps->orthog(ksp, gm, j, gm->sums, sums));
  PetscCall(PGMRESFusedOrthogSums(ksp, gm, sums));
  PetscFunctionReturn(0);
}

/* One restart cycle; ksp->its counts Arnoldi steps over all cycles.

   The residual after step k, r_k = r_{k-1} - xi_{k-1} v_{k-1}, is kept as a
   vector and its norm is reduced together with <w,w> and <w,r> of step k:
   exact, and no extra synchronization, at the price of one step of latency.
   (|r_k|^2 = |r_{k-1}|^2 - xi^2 loses all digits once |r_k| falls below about
   1e-8 |r_0| within a cycle, and then declares convergence falsely.) The
   residual after the last step of a cycle is tested at the next cycle start,
   where it is recomputed from b - A x anyway.

   With device_loop the steps run on the device until the host must look; a
   step stopped there after its orthogonalization (pending) is decided here
   as any other, and that decision ends the cycle. */
static PetscErrorCode PGMRESFusedCycle(KSP ksp, PetscBool device_loop)
{
  KSP_PGMRESFused *gm = (KSP_PGMRESFused *)ksp->data;
  PetscScalar      sums[GMRES_NSUMS + FUSED_NULLSPACE_MAX];
  PetscReal        rnorm0, rprev;
  PetscInt         i, its0;
  PetscBool        breakdown = PETSC_FALSE, pending = PETSC_FALSE;
  int              reference;

  PetscFunctionBegin;
  gm->k = 0;
  /* the device forms b's norm for the first test with Jacobi or none, not
     point-block Jacobi; a null space's start is the host's (it waits for <r, n_k>) */
  if (device_loop && !gm->start_made && gm->steps->start_loop && !gm->fused.x_device && ksp->pc_side == PC_LEFT && !gm->fused.nullsp && KSPFusedCUDAFirstTestOnDevice(ksp, (PetscBool)(gm->fused.pcplace != KSP_FUSED_PC_PBJACOBI), &reference)) {
    PetscBool tested, start_on_host;

    /* the solve's first start, tested on the device; where the device hands
       it over untested, the host starts again below */
    PetscCall(gm->steps->start_loop(ksp, gm, reference, &tested, &its0, &rnorm0, &pending, &start_on_host, sums));
    if (tested && start_on_host) { /* the device ended the last cycle: x holds its update */
      ksp->its = its0;
      gm->k    = 0;
      PetscFunctionReturn(0);
    }
    if (tested) goto steps;
  }
  if (gm->start_made) {
    /* the device ended the last cycle and made this start (r in place): its
       norm is tested here as the host's own start would be */
    gm->start_made = PETSC_FALSE;
    rnorm0         = gm->start_norm;
  } else {
    PGMRESStep(KSP_PGMRESFused_Update, gm->steps->start(ksp, gm, sums));
    PetscCall(KSPFusedAllreduce(ksp, &gm->fused, 1, sums));
    rnorm0 = PetscSqrtReal(PetscAbsScalar(sums[0]));
  }
  KSPCheckNorm(ksp, rnorm0);
  if (ksp->reason) PetscFunctionReturn(0);
  /* as PETSc's gmres: the true residual of each cycle start is monitored and tested */
  PetscCall(KSPFusedConverged(ksp, ksp->its, rnorm0));
  if (rnorm0 == 0.0 && !ksp->reason) ksp->reason = KSP_CONVERGED_ATOL;
  if (!ksp->reason && ksp->its >= ksp->max_it) ksp->reason = KSP_DIVERGED_ITS;
  if (ksp->reason) PetscFunctionReturn(0);

  its0 = ksp->its;
  if (device_loop) {
    PetscBool start_on_host;

    PetscCall(gm->steps->loop(ksp, gm, &its0, rnorm0, &pending, &start_on_host, sums));
    if (start_on_host) { /* the device ended the last cycle: x holds its update */
      ksp->its = its0;
      gm->k    = 0;
      PetscFunctionReturn(0);
    }
  }
steps:
  gm->cycle_rnorm0 = rnorm0;
  rprev            = rnorm0;
  while (pending || (gm->k < gm->restart && its0 + gm->k < ksp->max_it)) {
    const PetscInt j = gm->k;
    PetscReal      wnorm_before, hnorm = 0.0, rjj;
    PetscScalar    xi;

    /* adaptive simpler GMRES (Jiranek and Rozloznik 2010): where the last
       step cut the residual to nu of what it was or less (|r_j|^2 = |r_{j-1}|^2
       - xi_{j-1}^2, before |r_j| is reduced), z_j = r_j / |r_{j-1}|: the
       basis v_{j-1} would take is ill-conditioned after a steep drop and the
       residual stalls inside the cycle */
    gm->rho[j] = 0.0;
    if (!pending && j > 0 && gm->adaptive > 0.0 && rprev > 0.0 && PetscRealPart(gm->xi[j - 1] * gm->xi[j - 1]) >= (1.0 - gm->adaptive * gm->adaptive) * rprev * rprev) gm->rho[j] = rprev;
    if (!pending) PGMRESStep(KSP_PGMRESFused_Product, gm->steps->product(ksp, gm, j, gm->rho[j] > 0.0 ? 1.0 / gm->rho[j] : 1.0 / rnorm0, (PetscBool)(gm->rho[j] > 0.0)));
    for (i = 0; i < j; i++) gm->h[i] = 0.0;
    if (j == 0) {
      if (!pending) {
        PGMRESStep(KSP_PGMRESFused_Orthog, gm->steps->orthog(ksp, gm, 0, NULL, sums));
        PetscCall(PGMRESFusedOrthogSums(ksp, gm, sums));
      }
      wnorm_before = PetscSqrtReal(PetscAbsScalar(sums[GMRES_WW]));
    } else {
      if (pending) PetscCall(PGMRESFusedTakeProducts(ksp, gm, j, &hnorm));
      else PetscCall(PGMRESFusedGramSchmidtPass(ksp, gm, j, &hnorm, sums));
      if (ksp->reason) PetscFunctionReturn(0);
      wnorm_before = PetscSqrtReal(PetscAbsScalar(gm->sums[j]));
      /* the residual after step j-1 */
      {
        const PetscReal rnorm = PetscSqrtReal(PetscAbsScalar(sums[GMRES_RR]));
        KSPCheckNorm(ksp, rnorm);
        if (ksp->reason) break;
        PetscCall(KSPFusedConverged(ksp, its0 + j, rnorm));
        if (ksp->reason) break;
        rprev = rnorm;
      }
      if (!pending && (FusedCGSRefinement(ksp, gm->cgstype) == FUSED_CGS_REFINE_ALWAYS || (FusedCGSRefinement(ksp, gm->cgstype) == FUSED_CGS_REFINE_IFNEEDED && PetscSqrtReal(PetscAbsScalar(sums[GMRES_WW])) < hnorm))) {
        PetscCall(PetscInfo(ksp, "Second Gram-Schmidt pass at step %" PetscInt_FMT ": |w| %g, |h| %g\n", j, (double)PetscSqrtReal(PetscAbsScalar(sums[GMRES_WW])), (double)hnorm));
        PetscCall(PGMRESFusedGramSchmidtPass(ksp, gm, j, &hnorm, sums));
        if (ksp->reason) PetscFunctionReturn(0);
      }
    }
    KSPCheckDot(ksp, sums[GMRES_WW]);
    KSPCheckDot(ksp, sums[GMRES_WR]);
    rjj = PetscSqrtReal(PetscAbsScalar(sums[GMRES_WW]));
    if (rjj <= gm->breakdowntol * wnorm_before) {
      /* B A z_j lies in the span of the basis: the space is invariant */
      PetscCall(PetscInfo(ksp, "Breakdown at step %" PetscInt_FMT " of the cycle: |w_orth| %g, |w| %g\n", j, (double)rjj, (double)wnorm_before));
      breakdown = PETSC_TRUE;
      break;
    }
    PetscCheck(!pending, PetscObjectComm((PetscObject)ksp), PETSC_ERR_PLIB, "The device loop stopped at step %" PetscInt_FMT " of the cycle, where the host goes on; please report this", j);
    for (i = 0; i < j; i++) PGMRES_R(gm, i, j) = gm->h[i];
    PGMRES_R(gm, j, j) = rjj;
    xi                 = sums[GMRES_WR] / rjj;
    gm->xi[j]          = xi;
    PGMRESStep(KSP_PGMRESFused_Normalize, gm->steps->normalize(ksp, gm, j, 1.0 / rjj, xi));
    if (gm->rho[j] > 0.0) gm->adaptive_steps++;
    gm->k = j + 1;
  }
  /* the residual after the last step is tested at the next cycle start */
  if (!ksp->reason) ksp->its = its0 + gm->k;

  if (gm->cycle_ended) {
    /* the device loop, stopped by the test, ended the cycle itself: x holds its update */
    gm->cycle_ended = PETSC_FALSE;
    PetscCall(PetscInfo(ksp, "The device loop ended the cycle after %" PetscInt_FMT " steps, where the test stopped it: x updated there\n", gm->k));
    PetscCheck(ksp->reason, PetscObjectComm((PetscObject)ksp), PETSC_ERR_PLIB, "The device loop ended the cycle after %" PetscInt_FMT " steps, where the host's test goes on; please report this", gm->k);
  } else {
    PetscCall(PGMRESFusedCorrection(gm, gm->k));
    PGMRESStep(KSP_PGMRESFused_Update, gm->steps->update(ksp, gm, gm->k, gm->t, NULL));
  }
  if (breakdown && !ksp->reason && gm->k == 0) {
    ksp->reason = KSP_DIVERGED_BREAKDOWN;
    PetscCall(PetscInfo(ksp, "Breakdown on the first step of a cycle: B A r = 0 with r != 0 (singular operator?)\n"));
  }
  gm->k = 0;
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPSolve_PGMRESFused(KSP ksp)
{
  KSP_PGMRESFused *gm         = (KSP_PGMRESFused *)ksp->data;
  const PetscBool  guess_zero  = ksp->guess_zero;
  PetscBool        device_loop = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(KSPFusedPrepareSolve(ksp, &gm->fused));
  gm->steps = gm->fused.backend == KSP_FUSED_BACKEND_CUDA ? &KSPPGMRESFusedSteps_CUDA : &KSPPGMRESFusedSteps_Reference;
  if (gm->fused.backend == KSP_FUSED_BACKEND_REFERENCE && !gm->V) PetscCall(KSPCreateVecs(ksp, gm->restart, &gm->V, 0, NULL));
  if (gm->steps->loop) {
    PetscCall(KSPFusedCUDALoopAllowed(ksp, &gm->fused, &device_loop));
    if (device_loop && FusedCGSRefinement(ksp, gm->cgstype) != FUSED_CGS_REFINE_NEVER) {
      device_loop        = PETSC_FALSE;
      gm->fused.loop_why = "one host look per step: a second Gram-Schmidt pass is decided on the host (-ksp_pgmresfused_cgs_refinement_type)";
    } else if (device_loop && gm->restart > FUSED_PGMRES_LOOP_MAX_RESTART) {
      device_loop        = PETSC_FALSE;
      gm->fused.loop_why = "one host look per step: the restart exceeds the device loop's " PetscStringize(FUSED_PGMRES_LOOP_MAX_RESTART);
    } else if (device_loop) {
      if (gm->fused.pcplace == KSP_FUSED_PC_PBJACOBI) gm->fused.loop_why = "on the device, from a CUDA graph of three kernels per Arnoldi step (the single kernel has no point-block Jacobi); the host looks at each cycle's start and end and where the test stops it";
      else if (gm->fused.nullsp) gm->fused.loop_why = "on the device, from a CUDA graph of three kernels per Arnoldi step (the single kernel removes no null space); the host looks at each cycle's start and end and where the test stops it";
      else if (gm->fused.single_kernel_unsuited) gm->fused.loop_why = "on the device, from a CUDA graph of three kernels per Arnoldi step (neither the basis fits in the single kernel's shared memory nor a cycle's working set stays in L2 on this device: the graph is faster; -ksp_fused_single_kernel_rows sets one limit for all); the host looks at each cycle's start and end and where the test stops it";
      else if (!gm->fused.single_kernel) gm->fused.loop_why = "on the device, from a CUDA graph of three kernels per Arnoldi step (-ksp_fused_single_kernel_rows); the host looks at each cycle's start and end and where the test stops it";
      else gm->fused.loop_why = "on the device, in one cooperative kernel with two grid barriers per Arnoldi step (-ksp_fused_single_kernel_rows), its basis in shared memory where it fits (about 100,000 rows at restart 30 on an H100 or H200); with restart at most " PetscStringize(FUSED_PGMRES_CYCLES_MAX_RESTART) " the kernel also ends each cycle and starts the next, else the host does; the host looks where the test stops it";
    }
    gm->fused.loop_solve = device_loop; /* b and x in place only with the device loop (KSPFusedCUDASystemToDevice()) */
  }
  ksp->its           = 0;
  gm->adaptive_steps = 0;
  gm->start_made     = PETSC_FALSE;
  gm->cycle_ended    = PETSC_FALSE;
  while (!ksp->reason) {
    PetscCall(PGMRESFusedCycle(ksp, device_loop));
    /* x is no longer zero after a cycle; the user's setting is restored below */
    ksp->guess_zero = PETSC_FALSE;
  }
  ksp->guess_zero = guess_zero;
  if (gm->adaptive > 0.0) PetscCall(PetscInfo(ksp, "Adaptive simpler GMRES: %" PetscInt_FMT " of %" PetscInt_FMT " steps took the residual as their direction\n", gm->adaptive_steps, ksp->its));
  PetscCall(KSPFusedFinishSolve(ksp, &gm->fused));
  PetscFunctionReturn(0);
}

/* The solution of the current step, also in the middle of a cycle (for
   monitors such as -ksp_monitor_true_residual). */
static PetscErrorCode KSPBuildSolution_PGMRESFused(KSP ksp, Vec ptr, Vec *result)
{
  KSP_PGMRESFused *gm = (KSP_PGMRESFused *)ksp->data;

  PetscFunctionBegin;
  if (!ptr) {
    if (!gm->solution) PetscCall(VecDuplicate(ksp->vec_sol, &gm->solution));
    ptr = gm->solution;
  }
  PetscCall(KSPFusedCUDASolutionToHost(ksp, &gm->fused));
  PetscCall(VecCopy(ksp->vec_sol, ptr));
  if (gm->k > 0) {
    PetscCall(PGMRESFusedCorrection(gm, gm->k));
    PetscCall(gm->steps->update(ksp, gm, gm->k, gm->t, ptr));
  }
  if (result) *result = ptr;
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPReset_PGMRESFused(KSP ksp)
{
  KSP_PGMRESFused *gm = (KSP_PGMRESFused *)ksp->data;

  PetscFunctionBegin;
  if (gm->V) PetscCall(VecDestroyVecs(gm->restart, &gm->V));
  gm->V = NULL;
  PetscCall(VecDestroy(&gm->solution));
  PetscCall(PetscFree7(gm->R, gm->xi, gm->t, gm->h, gm->sums, gm->rho, gm->coef));
  PetscCall(KSPFusedReset(&gm->fused));
  PetscFunctionReturn(0);
}

/*@
   KSPPGMRESFusedSetRestart - Sets the restart length m of `KSPPGMRESFUSED` (also reached through `KSPGMRESSetRestart()`).

   Logically Collective

   Input Parameters:
+  ksp     - the `KSP`
-  restart - the number of basis vectors, at least 1

   Options Database Key:
.  -ksp_pgmresfused_restart <m> - the restart length (default 30)

   Level: intermediate
@*/
PetscErrorCode KSPPGMRESFusedSetRestart(KSP ksp, PetscInt restart)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveInt(ksp, restart, 2);
  PetscTryMethod(ksp, "KSPGMRESSetRestart_C", (KSP, PetscInt), (ksp, restart));
  PetscFunctionReturn(0);
}

/*@
   KSPPGMRESFusedGetRestart - Gets the restart length of `KSPPGMRESFUSED`.

   Not Collective

   Level: intermediate
@*/
PetscErrorCode KSPPGMRESFusedGetRestart(KSP ksp, PetscInt *restart)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscUseMethod(ksp, "KSPGMRESGetRestart_C", (KSP, PetscInt *), (ksp, restart));
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPGMRESSetRestart_PGMRESFused(KSP ksp, PetscInt restart)
{
  KSP_PGMRESFused *gm = (KSP_PGMRESFused *)ksp->data;

  PetscFunctionBegin;
  PetscCheck(restart >= 1, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "Restart of %s must be at least 1, not %" PetscInt_FMT, KSPPGMRESFUSED, restart);
  /* the restart x restart triangular factor is indexed with PetscInt */
  PetscCheck(restart <= PGMRES_MAX_RESTART, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "Restart of %s must be at most %d (its %" PetscInt_FMT " x %" PetscInt_FMT " Hessenberg factor must be indexable), not %" PetscInt_FMT, KSPPGMRESFUSED, PGMRES_MAX_RESTART, restart, restart, restart);
  if (restart != gm->restart && gm->R) {
    /* the basis was sized for the old restart: build it anew at the next solve */
    PetscCall(KSPReset_PGMRESFused(ksp));
    ksp->setupstage = KSP_SETUP_NEW;
  }
  gm->restart = restart;
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPGMRESGetRestart_PGMRESFused(KSP ksp, PetscInt *restart)
{
  KSP_PGMRESFused *gm = (KSP_PGMRESFused *)ksp->data;

  PetscFunctionBegin;
  *restart = gm->restart;
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPGMRESSetCGSRefinementType_PGMRESFused(KSP ksp, FusedCGSRefinementType type)
{
  KSP_PGMRESFused *gm = (KSP_PGMRESFused *)ksp->data;

  PetscFunctionBegin;
  FusedCGSRefinement(ksp, gm->cgstype) = type;
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPGMRESGetCGSRefinementType_PGMRESFused(KSP ksp, FusedCGSRefinementType *type)
{
  KSP_PGMRESFused *gm = (KSP_PGMRESFused *)ksp->data;

  PetscFunctionBegin;
  *type = FusedCGSRefinement(ksp, gm->cgstype);
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPDestroy_PGMRESFused(KSP ksp)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPGMRESSetRestart_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPGMRESGetRestart_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPGMRESSetCGSRefinementType_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPGMRESGetCGSRefinementType_C", NULL));
  PetscCall(KSPDestroy_Fused(ksp));
  PetscFunctionReturn(0);
}

/* PETSc's gmres spells these refine_never|refine_ifneeded|refine_always; the
   short forms none|ifneeded|always are accepted too. */
static const char *const PGMRESRefineNames[] = {"none", "ifneeded", "always", "never", "refine_never", "refine_ifneeded", "refine_always"};
static const FusedCGSRefinementType PGMRESRefineValues[] = {FUSED_CGS_REFINE_NEVER, FUSED_CGS_REFINE_IFNEEDED, FUSED_CGS_REFINE_ALWAYS, FUSED_CGS_REFINE_NEVER, FUSED_CGS_REFINE_NEVER, FUSED_CGS_REFINE_IFNEEDED, FUSED_CGS_REFINE_ALWAYS};

static PetscErrorCode KSPSetFromOptions_PGMRESFused(KSP ksp, FusedOptionItems PetscOptionsObject)
{
  KSP_PGMRESFused *gm = (KSP_PGMRESFused *)ksp->data;
  PetscInt         restart = gm->restart;
  char             refine[64];
  PetscBool        set;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "KSP pipelined fused GMRES options");
  PetscCall(PetscOptionsInt("-ksp_pgmresfused_restart", "Number of Krylov basis vectors before a restart", "KSPPGMRESFusedSetRestart", restart, &restart, &set));
  if (set) PetscCall(KSPPGMRESFusedSetRestart(ksp, restart));
  PetscCall(PetscOptionsString("-ksp_pgmresfused_cgs_refinement_type", "Second classical Gram-Schmidt pass: none, ifneeded or always", "KSPGMRESSetCGSRefinementType", PGMRESRefineNames[FusedCGSRefinement(ksp, gm->cgstype) == FUSED_CGS_REFINE_NEVER ? 0 : FusedCGSRefinement(ksp, gm->cgstype) == FUSED_CGS_REFINE_IFNEEDED ? 1 : 2], refine, sizeof(refine), &set));
  if (set) {
    PetscInt  i;
    PetscBool match = PETSC_FALSE;

    for (i = 0; i < (PetscInt)PETSC_STATIC_ARRAY_LENGTH(PGMRESRefineNames) && !match; i++) {
      PetscCall(PetscStrcasecmp(refine, PGMRESRefineNames[i], &match));
      if (match) FusedCGSRefinement(ksp, gm->cgstype) = PGMRESRefineValues[i];
    }
    PetscCheck(match, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-ksp_pgmresfused_cgs_refinement_type %s: unknown value; use none, ifneeded or always", refine);
  }
  PetscCall(PetscOptionsReal("-ksp_pgmresfused_adaptive", "Adaptive simpler GMRES: a step that cuts the residual to this fraction or less takes the residual as the next basis direction (0: never; 0.9 as Jiranek and Rozloznik)", "", gm->adaptive, &gm->adaptive, NULL));
  PetscCheck(gm->adaptive >= 0.0 && gm->adaptive < 1.0, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-ksp_pgmresfused_adaptive %g must be in [0, 1): 0 is plain simpler GMRES, 0.9 Jiranek and Rozloznik's choice", (double)gm->adaptive);
  PetscCall(PetscOptionsReal("-ksp_pgmresfused_breakdown_tolerance", "Relative size of the orthogonalized vector below which the Krylov space counts as invariant", "", gm->breakdowntol, &gm->breakdowntol, &set));
  PetscCheck(gm->breakdowntol >= 0.0 && gm->breakdowntol < 1.0, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-ksp_pgmresfused_breakdown_tolerance %g must be in [0, 1)", (double)gm->breakdowntol);
  PetscOptionsHeadEnd();
  PetscCall(KSPFusedSetFromOptions(ksp, &gm->fused, PetscOptionsObject));
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPView_PGMRESFused(KSP ksp, PetscViewer viewer)
{
  KSP_PGMRESFused *gm = (KSP_PGMRESFused *)ksp->data;
  PetscBool        iascii;

  PetscFunctionBegin;
  PetscCall(KSPFusedView(&gm->fused, viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (iascii) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  restart=%" PetscInt_FMT "\n", gm->restart));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  classical Gram-Schmidt, second pass: %s\n", FusedCGSRefinement(ksp, gm->cgstype) == FUSED_CGS_REFINE_NEVER ? "never" : FusedCGSRefinement(ksp, gm->cgstype) == FUSED_CGS_REFINE_IFNEEDED ? "if needed" : "always"));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  4 fused steps and 2 packed reductions per Arnoldi step (2 kernels in the CUDA device loop); breakdown tolerance %g\n", (double)gm->breakdowntol));
    if (gm->adaptive > 0.0) PetscCall(PetscViewerASCIIPrintf(viewer, "  adaptive simpler GMRES: a step that cuts the residual to %g of it or less takes the residual as the next direction (last solve: %" PetscInt_FMT " of %" PetscInt_FMT " steps)\n", (double)gm->adaptive, gm->adaptive_steps, ksp->its));
    else PetscCall(PetscViewerASCIIPrintf(viewer, "  simpler GMRES, the next direction always the last basis vector (-ksp_pgmresfused_adaptive 0)\n"));
  }
  PetscFunctionReturn(0);
}

/*MC
   KSPPGMRESFUSED - Restarted GMRES(m) in the pipelined "simpler GMRES" form, with classical Gram-Schmidt
   and the inner products of each step fused into packed reductions.

   Options Database Keys:
+  -ksp_pgmresfused_restart <30> - basis vectors per cycle
.  -ksp_pgmresfused_cgs_refinement_type <none,ifneeded,always> - second Gram-Schmidt pass (as -ksp_gmres_cgs_refinement_type)
.  -ksp_pgmresfused_adaptive <0.9> - adaptive simpler GMRES (Jiranek and Rozloznik 2010): a step that cuts the residual to nu of it or less takes the residual as the next basis direction, at the cost of a pass over the vectors more on the device (0: never, plain simpler GMRES, which can stall inside a cycle after a steep drop of the residual)
.  -ksp_pgmresfused_breakdown_tolerance <tol> - relative size of the orthogonalized vector that counts as breakdown
-  -ksp_fused_backend <auto,cuda,reference> - where the fused steps run

   Notes:
   Rupp, Weinbub, Juengel and Grasser (2015), Algorithm 6, after Walker and Zhou's simpler GMRES. The residual norm of
   each step comes from the xi values, so the monitor shows the same norm as `KSPGMRES` (preconditioned with left,
   unpreconditioned with right preconditioning) and convergence inside a cycle needs no extra work. `KSPGMRESSetRestart()`
   and `KSPGMRESSetCGSRefinementType()` work on this type too.

   `PCNONE` and `PCJACOBI` are fused, and `PCPBJACOBI` (blocks of up to 16 rows) as a left preconditioner; any other
   `PC` runs through `PCApply()`, and `KSPView()` says where. With `PCNONE` or `PCJACOBI` on the left the CUDA backend
   removes the operator's null space (`MatSetNullSpace()`, up to 6 vectors) in the fused steps, its dot products in
   the orthogonalization's reduction (one more synchronization at each cycle start), from a CUDA graph at every size.

   Level: intermediate

.seealso: `KSPGMRES`, `KSPPGMRES`, `KSPPCGFUSED`, `KSPPBCGSFUSED`, `KSPPGMRESFusedSetRestart()`
M*/
PETSC_EXTERN PetscErrorCode KSPCreate_PGMRESFused(KSP ksp)
{
  KSP_PGMRESFused *gm;

  PetscFunctionBegin;
  PetscCall(PetscNew(&gm));
  ksp->data        = (void *)gm;
  gm->restart      = 30;
  gm->cgstype      = FUSED_CGS_REFINE_NEVER;
  gm->breakdowntol = 10.0 * PETSC_MACHINE_EPSILON;
  gm->adaptive     = 0.9; /* Jiranek and Rozloznik's: plain simpler GMRES stalls after a steep drop (docs/convergence.md) */
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_PRECONDITIONED, PC_LEFT, 3));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_UNPRECONDITIONED, PC_RIGHT, 2));
  PetscCall(KSPFusedComposeBackend(ksp, &gm->fused, "pipelined simpler GMRES (Walker-Zhou, Rupp et al. 2015), classical Gram-Schmidt"));
  gm->fused.device_pc          = PETSC_TRUE;
  gm->fused.device_nullspace   = PETSC_TRUE;
  gm->fused.device_pbjacobi    = PETSC_TRUE;
  gm->fused.pbjacobi_left_only = PETSC_TRUE;
  gm->fused.load_kernels       = FusedPGMRESLoadKernels;
  gm->fused.cuda_prepare       = KSPPGMRESFusedPrepare_CUDA;
  /* the single kernel up to 2^19 rows, where it keeps its basis in shared
     memory (about 100,000 rows at restart 30 on an H100 or H200) or a
     cycle's working set stays in L2; else the graph
     (FusedPGMRESSingleKernelSuits()) */
  gm->fused.single_kernel_rows  = 1 << 19;
  gm->fused.single_kernel_suits = KSPPGMRESFusedSingleKernelSuits_CUDA;
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPGMRESSetRestart_C", KSPGMRESSetRestart_PGMRESFused));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPGMRESGetRestart_C", KSPGMRESGetRestart_PGMRESFused));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPGMRESSetCGSRefinementType_C", KSPGMRESSetCGSRefinementType_PGMRESFused));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPGMRESGetCGSRefinementType_C", KSPGMRESGetCGSRefinementType_PGMRESFused));

  ksp->ops->setup          = KSPSetUp_PGMRESFused;
  ksp->ops->solve          = KSPSolve_PGMRESFused;
  ksp->ops->reset          = KSPReset_PGMRESFused;
  ksp->ops->destroy        = KSPDestroy_PGMRESFused;
  ksp->ops->view           = KSPView_PGMRESFused;
  ksp->ops->setfromoptions = KSPSetFromOptions_PGMRESFused;
  ksp->ops->buildsolution  = KSPBuildSolution_PGMRESFused;
  ksp->ops->buildresidual  = KSPBuildResidualDefault;
  PetscFunctionReturn(0);
}
