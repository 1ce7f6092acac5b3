/* pbcgsfused: the pipelined BiCGStab iteration over the steps of
   pbcgsfusedimpl.h. */
#include "ksp/pbcgsfusedimpl.h"

static PetscErrorCode KSPSetUp_PBCGSFused(KSP ksp)
{
  KSP_PBCGSFused *bcgs = (KSP_PBCGSFused *)ksp->data;

  PetscFunctionBegin;
  PetscCall(KSPFusedSetUp(ksp, &bcgs->fused));
  PetscCall(KSPSetWorkVecs(ksp, 7));
  bcgs->r     = ksp->work[0];
  bcgs->rstar = ksp->work[1];
  bcgs->p     = ksp->work[2];
  bcgs->v     = ksp->work[3];
  bcgs->s     = ksp->work[4];
  bcgs->t     = ksp->work[5];
  bcgs->tmp   = ksp->work[6];
  bcgs->steps = &KSPPBCGSFusedSteps_Reference;
  PetscFunctionReturn(0);
}

#define PBCGSStep(event, call) \
  do { \
    PetscCall(PetscLogEventBegin(event, ksp, 0, 0, 0)); \
    PetscCall(call); \
    PetscCall(PetscLogEventEnd(event, ksp, 0, 0, 0)); \
  } while (0)

static PetscErrorCode PBCGSFusedBreakdown(KSP ksp, const char *what)
{
  PetscFunctionBegin;
  ksp->reason = KSP_DIVERGED_BREAKDOWN;
  PetscCall(PetscInfo(ksp, "Breakdown: %s\n", what));
  PetscFunctionReturn(0);
}

/* The iteration; KSPCheckNorm() and KSPCheckDot() may return from it early */
static PetscErrorCode PBCGSFusedIterate(KSP ksp, PetscBool device_loop)
{
  KSP_PBCGSFused *bcgs = (KSP_PBCGSFused *)ksp->data;
  PetscScalar     sums1[BCGS_NSUMS1 + FUSED_NULLSPACE_MAX], sums2[BCGS_NSUMS2 + FUSED_NULLSPACE_MAX];
  FusedNullSpace *ns = &bcgs->fused.ns; /* removed on the device where ns->m > 0: its sums follow each reduction's own */
  PetscScalar     rho, alpha, omega, beta;
  PetscInt        i;
  PetscBool       restarted = PETSC_FALSE; /* the last step was a restart of r0* */
  PetscBool       product_done = PETSC_FALSE; /* the device loop made product_p of the iteration it stopped at */
  int             reference;

  PetscFunctionBegin;
  bcgs->restarts = 0;
  /* the device forms b's norm for the first test with Jacobi or none, not
     point-block Jacobi; a null space's start is the host's (it waits for <r, n_k>) */
  if (device_loop && bcgs->steps->start_loop && !bcgs->fused.nullsp && KSPFusedCUDAFirstTestOnDevice(ksp, (PetscBool)(bcgs->fused.pcplace != KSP_FUSED_PC_PBJACOBI), &reference)) {
    /* the device goes on from the start and tests iteration 0 as well */
    PetscCall(bcgs->steps->start_loop(ksp, bcgs, reference, &i, sums1, &product_done));
  } else {
    PBCGSStep(KSP_PBCGSFused_UpdateXRP, bcgs->steps->start(ksp, bcgs, sums1));
    i = 0;
  }

  for (;; i++) {
    PetscReal rnorm;

    if (product_done) product_done = PETSC_FALSE; /* the device loop left this iteration's v and sums */
    else PBCGSStep(KSP_PBCGSFused_ProductP, bcgs->steps->product_p(ksp, bcgs, sums1));
    PetscCall(KSPFusedAllreduce(ksp, &bcgs->fused, BCGS_NSUMS1 + ns->m, sums1));
    for (int k = 0; k < ns->m; k++) ns->coef[k] = sums1[BCGS_NSUMS1 + k]; /* <v, n_k> */
    rnorm = ksp->normtype == KSP_NORM_NONE ? 0.0 : PetscSqrtReal(PetscAbsScalar(sums1[BCGS_RR]));
    KSPCheckNorm(ksp, rnorm);
    if (ksp->reason) break;
    if (!restarted) { /* after a restart the same iteration goes on, tested already */
      PetscCall(KSPFusedConverged(ksp, i, rnorm));
      if (ksp->reason) break;
      if (i >= ksp->max_it) {
        ksp->reason = KSP_DIVERGED_ITS;
        break;
      }
    }
    rho = sums1[BCGS_RR0];
    KSPCheckDot(ksp, rho);
    KSPCheckDot(ksp, sums1[BCGS_VR0]);
    if (rho == 0.0) {
      /* r has become orthogonal to the shadow residual, where bcgs stops
         with a breakdown: start again from r0* = r and p = r, which costs
         one more synchronization, and go on from the same x and r */
      if (restarted) {
        PetscCall(PBCGSFusedBreakdown(ksp, "<r,r> = 0 with a residual that has not converged"));
        break;
      }
      PetscCall(PetscInfo(ksp, "<r,r0*> = 0 at iteration %" PetscInt_FMT ", residual norm %g: restart with r0* = r\n", i, (double)rnorm));
      PBCGSStep(KSP_PBCGSFused_UpdateXRP, bcgs->steps->restart(ksp, bcgs, sums1));
      bcgs->restarts++;
      restarted = PETSC_TRUE;
      i--;
      continue;
    }
    restarted = PETSC_FALSE;
    if (sums1[BCGS_VR0] == 0.0) {
      PetscCall(PBCGSFusedBreakdown(ksp, "<BAp,r0*> = 0"));
      break;
    }
    alpha = rho / sums1[BCGS_VR0];

    PBCGSStep(KSP_PBCGSFused_UpdateS, bcgs->steps->update_s(ksp, bcgs, alpha));
    PBCGSStep(KSP_PBCGSFused_ProductS, bcgs->steps->product_s(ksp, bcgs, sums2));
    PetscCall(KSPFusedAllreduce(ksp, &bcgs->fused, BCGS_NSUMS2 + ns->m, sums2));
    /* <t,t> of t less its null space part (<t,s> and <t,r0*> need nothing: s and r0* have none) */
    for (int k = 0; k < ns->m; k++) bcgs->t_coef[k] = sums2[BCGS_NSUMS2 + k];
    if (ns->m) sums2[BCGS_TT] = FusedNullSpaceFoldSquare(sums2[BCGS_TT], bcgs->t_coef, ns->m);
    KSPCheckDot(ksp, sums2[BCGS_TT]);
    KSPCheckDot(ksp, sums2[BCGS_TS]);
    KSPCheckDot(ksp, sums2[BCGS_TR0]);
    KSPCheckDot(ksp, sums2[BCGS_SR0]);
    if (sums2[BCGS_TT] == 0.0) {
      if (sums2[BCGS_SS] != 0.0) {
        PetscCall(PBCGSFusedBreakdown(ksp, "B A s = 0 with s != 0"));
        break;
      }
      /* s = 0: x + alpha p solves the system; the next norm says so */
      omega = 0.0;
      beta  = 0.0;
    } else {
      omega = sums2[BCGS_TS] / sums2[BCGS_TT];
      if (omega == 0.0) {
        PetscCall(PBCGSFusedBreakdown(ksp, "omega = <t,s>/<t,t> = 0"));
        break;
      }
      /* <r',r0*> = <s,r0*> - omega <t,r0*>, known before r' is formed */
      beta = (sums2[BCGS_SR0] - omega * sums2[BCGS_TR0]) / rho * (alpha / omega);
    }
    PBCGSStep(KSP_PBCGSFused_UpdateXRP, bcgs->steps->update_xrp(ksp, bcgs, alpha, omega, beta, sums1));
    if (device_loop) {
      /* the host goes on from product_p of the iteration where the device stopped, or after it */
      PetscCall(bcgs->steps->loop(ksp, bcgs, i, &i, sums1, &product_done));
      i--;
    }
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPView_PBCGSFused(KSP ksp, PetscViewer viewer)
{
  KSP_PBCGSFused *bcgs = (KSP_PBCGSFused *)ksp->data;
  PetscBool       iascii;

  PetscFunctionBegin;
  PetscCall(KSPView_Fused(ksp, viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (iascii) PetscCall(PetscViewerASCIIPrintf(viewer, "  restarts of the shadow residual r0* (where <r,r0*> vanished) in the last solve: %" PetscInt_FMT "\n", bcgs->restarts));
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPSolve_PBCGSFused(KSP ksp)
{
  KSP_PBCGSFused *bcgs        = (KSP_PBCGSFused *)ksp->data;
  PetscBool       device_loop = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(KSPFusedPrepareSolve(ksp, &bcgs->fused));
  bcgs->steps = bcgs->fused.backend == KSP_FUSED_BACKEND_CUDA ? &KSPPBCGSFusedSteps_CUDA : &KSPPBCGSFusedSteps_Reference;
  if (bcgs->steps->loop) PetscCall(KSPFusedCUDALoopAllowed(ksp, &bcgs->fused, &device_loop));
  PetscCall(PBCGSFusedIterate(ksp, device_loop));
  PetscCall(KSPFusedFinishSolve(ksp, &bcgs->fused));
  PetscFunctionReturn(0);
}

/*MC
   KSPPBCGSFUSED - Pipelined BiCGStab with the vector work fused into four steps per iteration.

   Options Database Keys:
.  -ksp_fused_backend <auto,cuda,reference> - where the fused steps run

   Notes:
   The iteration of Rupp, Weinbub, Juengel and Grasser (2015), Algorithm 4: v = B A p with <v,r0*>; s = r - alpha v;
   t = B A s with <t,t>, <t,s>, <t,r0*>, <s,r0*>; then x, r and p in one pass with the residual norm and <r,r0*> of
   the next iteration. beta comes from <s,r0*> - omega <t,r0*>, so p is updated in the same pass as r.

   Where <r,r0*> vanishes before convergence, where `KSPBCGS` stops with `KSP_DIVERGED_BREAKDOWN`, the iteration
   starts again from r0* = r and p = r with the same x and r (one more synchronization); `KSPView()` counts
   these restarts.

   Left preconditioning with the preconditioned norm (the default of `KSPBCGS`) or no norm. `PCNONE`, `PCJACOBI` and
   `PCPBJACOBI` (blocks of up to 16 rows) are fused; any other `PC` runs through `PCApply()`: in a PETSc with CUDA on the device, between the fused steps.
   With `PCNONE` or `PCJACOBI` the CUDA backend removes the operator's null space (`MatSetNullSpace()`, up to 6 vectors) in the fused
   steps, its dot products in the two reductions (one more synchronization at the start), from a CUDA graph at every size.

   Level: intermediate

.seealso: `KSPBCGS`, `KSPPCGFUSED`, `KSPPGMRESFUSED`, `KSPFusedSetBackend()`
M*/
PETSC_EXTERN PetscErrorCode KSPCreate_PBCGSFused(KSP ksp)
{
  KSP_PBCGSFused *bcgs;

  PetscFunctionBegin;
  PetscCall(PetscNew(&bcgs));
  ksp->data = (void *)bcgs;
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_PRECONDITIONED, PC_LEFT, 3));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_NONE, PC_LEFT, 1));
  PetscCall(KSPFusedComposeBackend(ksp, &bcgs->fused, "pipelined BiCGStab (Rupp et al. 2015): 4 fused steps and 2 packed reductions per iteration"));
  bcgs->fused.device_pc        = PETSC_TRUE;
  bcgs->fused.device_nullspace = PETSC_TRUE;
  bcgs->fused.device_pbjacobi  = PETSC_TRUE;
  bcgs->fused.load_kernels     = FusedPBCGSLoadKernels;
  bcgs->fused.cuda_prepare     = KSPPBCGSFusedPrepare_CUDA;
  /* measured on an H100: the cooperative kernel is faster up to 262,144 rows
     (29.7 against 42.1 us), the graph at 1M rows (116 against 147 us) */
  bcgs->fused.single_kernel_rows = 1 << 19;
  bcgs->fused.loop_spare_vecs    = 2;

  ksp->ops->setup          = KSPSetUp_PBCGSFused;
  ksp->ops->solve          = KSPSolve_PBCGSFused;
  ksp->ops->reset          = KSPReset_Fused;
  ksp->ops->destroy        = KSPDestroy_Fused;
  ksp->ops->view           = KSPView_PBCGSFused;
  ksp->ops->setfromoptions = KSPSetFromOptions_Fused;
  ksp->ops->buildsolution  = KSPBuildSolution_Fused;
  ksp->ops->buildresidual  = KSPBuildResidualDefault;
  PetscFunctionReturn(0);
}
