/* pcgfused: the pipelined CG iteration, written once over the steps of
   pcgfusedimpl.h; the backend supplies the steps. */
#include "ksp/pcgfusedimpl.h"

static PetscErrorCode KSPSetUp_PCGFused(KSP ksp)
{
  KSP_PCGFused *cg = (KSP_PCGFused *)ksp->data;

  PetscFunctionBegin;
  PetscCall(KSPFusedSetUp(ksp, &cg->fused));
  PetscCall(KSPSetWorkVecs(ksp, 5));
  cg->r     = ksp->work[0];
  cg->p     = ksp->work[1];
  cg->y     = ksp->work[2];
  cg->z     = ksp->work[3];
  cg->w     = ksp->work[4];
  cg->steps = &KSPPCGFusedSteps_Reference;
  PetscFunctionReturn(0);
}

/* The residual norm of iteration i from its synchronization point */
static PetscReal PCGFusedNorm(KSP ksp, const PetscScalar sums[])
{
  switch (ksp->normtype) {
  case KSP_NORM_PRECONDITIONED:
  case KSP_NORM_UNPRECONDITIONED:
    return PetscSqrtReal(PetscAbsScalar(sums[PCG_NORM]));
  case KSP_NORM_NATURAL:
    return PetscSqrtReal(PetscAbsScalar(sums[PCG_RZ]));
  default:
    return 0.0;
  }
}

/* The iteration; KSPCheckNorm() and KSPCheckDot() may return from it early */
static PetscErrorCode PCGFusedIterate(KSP ksp, PetscBool device_loop)
{
  KSP_PCGFused  *cg = (KSP_PCGFused *)ksp->data;
  PetscScalar    sums[FUSED_PCG_SUMS] = {0}, alpha, beta; /* PCG_NSUMS, and a null space's (FusedPCGVecs) */
  const PetscInt nsums = cg->fused.nullsp ? FUSED_PCG_SUMS : PCG_NSUMS;
  PetscInt       i;
  PetscReal      rz_sign = 0.0, py_sign = 0.0; /* of the last <r,Br> and <p,Ap> judged (0: none yet) */
  int            reference;

  PetscFunctionBegin;
  /* the device forms b's norm for the first test with Jacobi or none, not point-block Jacobi */
  if (device_loop && cg->steps->start_loop && !cg->fused.nullsp && KSPFusedCUDAFirstTestOnDevice(ksp, (PetscBool)(cg->fused.pcplace != KSP_FUSED_PC_PBJACOBI), &reference)) {
    /* no wait for the first sums: the device tests iteration 0 as well, and
       judges the signs against positive ones (it stops at a negative) */
    PetscCall(cg->steps->start_loop(ksp, cg, reference, &i, sums));
    if (i > 0) rz_sign = py_sign = 1.0;
  } else {
    PetscCall(PetscLogEventBegin(KSP_PCGFused_Update, ksp, 0, 0, 0));
    PetscCall(cg->steps->start(ksp, cg, sums));
    PetscCall(PetscLogEventEnd(KSP_PCGFused_Update, ksp, 0, 0, 0));
    PetscCall(PetscLogEventBegin(KSP_PCGFused_Product, ksp, 0, 0, 0));
    PetscCall(cg->steps->product(ksp, cg, sums));
    PetscCall(PetscLogEventEnd(KSP_PCGFused_Product, ksp, 0, 0, 0));
    PetscCall(KSPFusedAllreduce(ksp, &cg->fused, nsums, sums));
    i = 0;
  }

  for (;; i++) {
    const PetscReal rnorm = PCGFusedNorm(ksp, sums);
    PetscScalar     rz, py, yw, yz;

    KSPCheckNorm(ksp, rnorm);
    if (ksp->reason) break;
    PetscCall(KSPFusedConverged(ksp, i, rnorm));
    if (ksp->reason) break;
    if (i >= ksp->max_it) {
      ksp->reason = KSP_DIVERGED_ITS;
      break;
    }
    rz = sums[PCG_RZ];
    py = sums[PCG_PY];
    yw = sums[PCG_YW];
    yz = sums[PCG_YZ];
    if (cg->fused.nullsp) FusedPCGNullSpaceFold(sums, FUSED_NULLSPACE_MAX, cg->fused.ns.m, &yw, &yz);
    KSPCheckDot(ksp, rz);
    KSPCheckDot(ksp, py);
    KSPCheckDot(ksp, yw);
    KSPCheckDot(ksp, yz);
    /* PETSc's cg's verdicts: a zero <r,Br> has converged; a change of sign
       of <r,Br> is an indefinite PC, and a zero <p,Ap> or a change of its
       sign an indefinite matrix. A definite operator or PC of either sign
       goes on. (The device loop stops at any change, so the signs of the
       iterations it ran are the ones the host saw before it.) PETSc's cg
       gives them in the iteration it has begun, so they count it (i + 1). */
    if (rz == 0.0) {
      ksp->its    = i + 1;
      ksp->reason = KSP_CONVERGED_ATOL;
      PetscCall(PetscInfo(ksp, "Converged due to <r,Br> = 0\n"));
      break;
    }
    if (rz_sign * PetscRealPart(rz) < 0.0) {
      ksp->its    = i + 1;
      ksp->reason = KSP_DIVERGED_INDEFINITE_PC;
      PetscCall(PetscInfo(ksp, "Diverged due to indefinite preconditioner, <r,Br> = %g\n", (double)PetscRealPart(rz)));
      break;
    }
    if (py == 0.0 || py_sign * PetscRealPart(py) < 0.0) {
      ksp->its    = i + 1;
      ksp->reason = KSP_DIVERGED_INDEFINITE_MAT;
      PetscCall(PetscInfo(ksp, "Diverged due to indefinite or singular matrix, <p,Ap> = %g\n", (double)PetscRealPart(py)));
      break;
    }
    rz_sign = PetscRealPart(rz) < 0.0 ? -1.0 : 1.0;
    py_sign = PetscRealPart(py) < 0.0 ? -1.0 : 1.0;
    alpha = rz / py;
    beta  = PCGFusedBeta(rz, alpha, yw, yz); /* = <r',z'>/<r,z> without a second reduction */

    if (device_loop) {
      /* the device takes alpha and beta from the same sums, and stops where this loop must look */
      PetscCall(cg->steps->loop(ksp, cg, i, &i, sums));
      i--;
      continue;
    }

    PetscCall(PetscLogEventBegin(KSP_PCGFused_Update, ksp, 0, 0, 0));
    PetscCall(cg->steps->update(ksp, cg, alpha, beta, sums));
    PetscCall(PetscLogEventEnd(KSP_PCGFused_Update, ksp, 0, 0, 0));
    PetscCall(PetscLogEventBegin(KSP_PCGFused_Product, ksp, 0, 0, 0));
    PetscCall(cg->steps->product(ksp, cg, sums));
    PetscCall(PetscLogEventEnd(KSP_PCGFused_Product, ksp, 0, 0, 0));
    PetscCall(KSPFusedAllreduce(ksp, &cg->fused, nsums, sums));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPSolve_PCGFused(KSP ksp)
{
  KSP_PCGFused *cg          = (KSP_PCGFused *)ksp->data;
  PetscBool     device_loop = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(KSPFusedPrepareSolve(ksp, &cg->fused));
  cg->steps = cg->fused.backend == KSP_FUSED_BACKEND_CUDA ? &KSPPCGFusedSteps_CUDA : &KSPPCGFusedSteps_Reference;
  if (cg->steps->loop) PetscCall(KSPFusedCUDALoopAllowed(ksp, &cg->fused, &device_loop));
  PetscCall(PCGFusedIterate(ksp, device_loop));
  PetscCall(KSPFusedFinishSolve(ksp, &cg->fused));
  PetscFunctionReturn(0);
}

/*MC
   KSPPCGFUSED - Pipelined conjugate gradients with the vector work fused into two steps per iteration
   and one global reduction per iteration, for symmetric positive definite operators and preconditioners.

   Options Database Keys:
.  -ksp_fused_backend <auto,cuda,reference> - where the fused steps run

   Notes:
   The iteration is that of Rupp, Weinbub, Juengel and Grasser, "Pipelined iterative solvers with kernel fusion
   for GPUs" (2015), Algorithm 2, with a preconditioner: one step updates x, r, z and p and reduces <r,z> and the
   norm; the other forms y = A p and w = B y and reduces <p,y> and <y,w>. The next <r,z> is taken from
   <r,z> - 2 alpha <y,z> + alpha^2 <y,w> (<y,z> rides in the same reduction), which lets p be updated in the
   same pass as r, for symmetric and nonsymmetric A alike. Where A is known to be symmetric (`MAT_SYMMETRIC` or
   `MAT_SPD`, `MatIsSymmetricKnown()`), the CUDA graph loop (large systems, `PCNONE` or `PCJACOBI`) takes
   <y,z> = <p,y> - beta <p,y_last> instead, the last term summed in the update, so that the product need not read r.

   `PCNONE`, `PCJACOBI` and `PCPBJACOBI` (blocks of up to 16 rows) are applied inside the fused steps; any other
   `PC` runs through `PCApply()` and `KSPView()` says so. With `PCNONE` or `PCJACOBI` the CUDA backend removes the
   operator's null space (`MatSetNullSpace()`, up to 6 vectors) in the fused steps, its dot products in the same
   reduction (one more synchronization at the start). Supports left preconditioning with the preconditioned (default),
   unpreconditioned, natural and no norm, as `KSPCG` does.

   Level: intermediate

.seealso: `KSPCG`, `KSPPIPECG`, `KSPPBCGSFUSED`, `KSPPGMRESFUSED`, `KSPFusedSetBackend()`
M*/
PETSC_EXTERN PetscErrorCode KSPCreate_PCGFused(KSP ksp)
{
  KSP_PCGFused *cg;

  PetscFunctionBegin;
  PetscCall(PetscNew(&cg));
  ksp->data = (void *)cg;
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_PRECONDITIONED, PC_LEFT, 3));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_UNPRECONDITIONED, PC_LEFT, 2));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_NATURAL, PC_LEFT, 2));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_NONE, PC_LEFT, 1));
  PetscCall(KSPFusedComposeBackend(ksp, &cg->fused, "pipelined CG (Rupp et al. 2015): 2 fused steps and 1 synchronization point per iteration"));
  cg->fused.device_pc        = PETSC_TRUE;
  cg->fused.device_nullspace = PETSC_TRUE;
  cg->fused.check_symmetry   = PETSC_TRUE; /* the graph loop's <y,z> (PCGFusedKnownSymmetric()) */
  cg->fused.single_kernel_ns = 1;
  cg->fused.loop_spare_vecs  = 3; /* r, p and y */
  /* measured on an H100 (2026-11-25): with long rows the graph is faster at
     10^6 rows (power law 84.5 against 70.5 us, arrow 94 against 85) */
  cg->fused.single_kernel_rows_long = 1 << 19;
  cg->fused.device_pbjacobi  = PETSC_TRUE;
  cg->fused.load_kernels     = FusedPCGLoadKernels;
  cg->fused.cuda_prepare     = KSPPCGFusedPrepare_CUDA;

  ksp->ops->setup          = KSPSetUp_PCGFused;
  ksp->ops->solve          = KSPSolve_PCGFused;
  ksp->ops->reset          = KSPReset_Fused;
  ksp->ops->destroy        = KSPDestroy_Fused;
  ksp->ops->view           = KSPView_Fused;
  ksp->ops->setfromoptions = KSPSetFromOptions_Fused;
  ksp->ops->buildsolution  = KSPBuildSolution_Fused;
  ksp->ops->buildresidual  = KSPBuildResidualDefault;
  PetscFunctionReturn(0);
}
