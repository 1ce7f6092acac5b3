/* pbcgsfused, CUDA backend: the steps of pbcgsfusedimpl.h as kernels on
   vectors that stay on the device for the whole solve (src/cuda/pbcgsfused.cu). */
#include <string.h>
#include "ksp/pbcgsfusedimpl.h"

/* workspace vectors after the Jacobi diagonal; device sums: the two
   reductions one after the other, then omega and beta of the device loop */
enum { BCGS_VEC_X = 1, BCGS_VEC_B, BCGS_VEC_R, BCGS_VEC_RSTAR, BCGS_VEC_P, BCGS_VEC_V, BCGS_VEC_S, BCGS_VEC_T, BCGS_NVECS };
/* with the PC applied between kernels: the products' output before the PC
   (point-block Jacobi's blocks or a null space's vectors follow the
   method's: KSPFusedCUDAPrepare()) */
enum { BCGS_VEC_W = BCGS_NVECS, BCGS_NVECS_STORED };
/* reductions one after the other, omega and beta of the device loop,
   ||B b||^2 (KSPFusedCUDAFirstTest()), a null space's sums (fusedcuda.h) */
#define BCGS_DEVICE_SUMS FUSED_PBCGS_DEVICE_SUMS
#define BCGS_DEVICE_RHS  FUSED_PBCGS_RHS

static FusedPBCGSVecs PBCGSFusedDeviceVecs(KSP_PBCGSFused *bcgs)
{
  FusedCUDA      ctx = bcgs->fused.work.cuda;
  FusedPBCGSVecs v;

  /* the padding too: the device loop compares its kernels' arguments bytewise */
  memset(&v, 0, sizeof(v));
  v.x     = KSPFusedCUDASystemVec(&bcgs->fused, FUSED_SYSTEM_X, BCGS_VEC_X);
  v.b     = KSPFusedCUDASystemVec(&bcgs->fused, FUSED_SYSTEM_B, BCGS_VEC_B);
  v.r     = FusedCUDAVec(ctx, BCGS_VEC_R);
  v.rstar = FusedCUDAVec(ctx, BCGS_VEC_RSTAR);
  v.p     = FusedCUDAVec(ctx, BCGS_VEC_P);
  v.v     = FusedCUDAVec(ctx, BCGS_VEC_V);
  v.s     = FusedCUDAVec(ctx, BCGS_VEC_S);
  v.t     = FusedCUDAVec(ctx, BCGS_VEC_T);
  v.d      = bcgs->fused.pcplace == KSP_FUSED_PC_JACOBI ? FusedCUDAVec(ctx, FUSED_VEC_DINV) : NULL;
  v.dblock = bcgs->fused.pcplace == KSP_FUSED_PC_PBJACOBI ? FusedCUDAVec(ctx, (int)bcgs->fused.aux_vecs) : NULL;
  v.bs     = v.dblock ? (int)bcgs->fused.dblock_bs : 1;
  return v;
}

/* The PC between kernels writes into the solver's own device vectors */
static PetscBool PBCGSFusedDevicePC(KSP_PBCGSFused *bcgs)
{
  return (PetscBool)(bcgs->fused.pcplace == KSP_FUSED_PC_DEVICE);
}

/* The device workspace and what goes up once, for the solve to come (also
   from KSPSetUp()) */
PETSC_INTERN PetscErrorCode KSPPBCGSFusedPrepare_CUDA(KSP ksp)
{
  KSP_PBCGSFused *bcgs = (KSP_PBCGSFused *)ksp->data;

  PetscFunctionBegin;
  PetscCall(KSPFusedCUDAPrepare(ksp, &bcgs->fused, PBCGSFusedDevicePC(bcgs) ? BCGS_NVECS_STORED : BCGS_NVECS, BCGS_DEVICE_SUMS, "pbcgsfused"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PBCGSFusedStart_CUDA(KSP ksp, KSP_PBCGSFused *bcgs, PetscScalar partial1[])
{
  KSPFused      *fused = &bcgs->fused;
  FusedPBCGSVecs v;

  PetscFunctionBegin;
  (void)partial1; /* delivered by product_p */
  PetscCall(KSPPBCGSFusedPrepare_CUDA(ksp));
  v = PBCGSFusedDeviceVecs(bcgs);
  PetscCall(KSPFusedCUDASystemToDevice(ksp, fused, v.b, v.x, PETSC_TRUE));
  v = PBCGSFusedDeviceVecs(bcgs); /* b and x may be the user's now */
  if (!ksp->guess_zero) PetscCall(FusedDeviceGhosts(&fused->op, &fused->work, v.x));
  if (PBCGSFusedDevicePC(bcgs)) {
    /* w = b - A x (the start without d), r = B w, then r0* = p = r with RR and RR0 */
    FusedPBCGSVecs vw = v;

    vw.r = FusedCUDAVec(fused->work.cuda, BCGS_VEC_W);
    PetscCallFusedCUDA(FusedPBCGSStart(fused->work.cuda, fused->op.mat, &vw, ksp->guess_zero ? 1 : 0));
    PetscCall(KSPFusedCUDAApplyPC(ksp, fused, vw.r, v.r));
    PetscCallFusedCUDA(FusedPBCGSRestart(fused->work.cuda, &v));
  } else PetscCallFusedCUDA(FusedPBCGSStart(fused->work.cuda, fused->op.mat, &v, ksp->guess_zero ? 1 : 0));
  if (fused->ns.m) {
    /* r less its null space part (one more synchronization, at the start only), then r0* = p = r */
    PetscCall(KSPFusedCUDANullSpaceRemove(ksp, fused, v.r));
    PetscCallFusedCUDA(FusedPBCGSRestart(fused->work.cuda, &v));
  }
  PetscCall(PetscLogFlops(3.0 * fused->work.n + (ksp->guess_zero ? 0.0 : 2.0 * fused->op.nnz)));
  PetscFunctionReturn(0);
}

/* out = B A in and the sums of the product's step: fused where B is Jacobi
   or none; with a PC on the device the product writes A in to the work
   vector w (*out is pointed there meanwhile), the PC makes out from w, and
   a kernel of its own forms the sums */
static PetscErrorCode PBCGSFusedProductPC_CUDA(KSP ksp, KSP_PBCGSFused *bcgs, FusedPBCGSVecs *v, double **out, int (*product)(FusedCUDA, FusedDevMat, const FusedPBCGSVecs *), int (*sums)(FusedCUDA, const FusedPBCGSVecs *))
{
  double *const target = *out;

  PetscFunctionBegin;
  if (!PBCGSFusedDevicePC(bcgs)) {
    PetscCallFusedCUDA(product(bcgs->fused.work.cuda, bcgs->fused.op.mat, v));
    PetscFunctionReturn(0);
  }
  *out = FusedCUDAVec(bcgs->fused.work.cuda, BCGS_VEC_W);
  PetscCallFusedCUDA(product(bcgs->fused.work.cuda, bcgs->fused.op.mat, v));
  *out = target;
  PetscCall(KSPFusedCUDAApplyPC(ksp, &bcgs->fused, FusedCUDAVec(bcgs->fused.work.cuda, BCGS_VEC_W), target));
  PetscCallFusedCUDA(sums(bcgs->fused.work.cuda, v));
  PetscFunctionReturn(0);
}

/* Several ranks, Jacobi or none, no null space: the product splits around
   the halo exchange, the local block's share running while the ghosts travel */
static PetscBool PBCGSFusedSplitProduct(KSP_PBCGSFused *bcgs)
{
  return (PetscBool)(bcgs->fused.op.halo && !bcgs->fused.ns.m && (bcgs->fused.pcplace == KSP_FUSED_PC_NONE || bcgs->fused.pcplace == KSP_FUSED_PC_JACOBI));
}

static PetscErrorCode PBCGSFusedProductP_CUDA(KSP ksp, KSP_PBCGSFused *bcgs, PetscScalar partial1[])
{
  FusedPBCGSVecs v = PBCGSFusedDeviceVecs(bcgs);

  PetscFunctionBegin;
  if (PBCGSFusedSplitProduct(bcgs)) {
    PetscCall(FusedDeviceGhostsBegin(&bcgs->fused.op, &bcgs->fused.work, v.p));
    PetscCallFusedCUDA(FusedPBCGSProductPLocal(bcgs->fused.work.cuda, bcgs->fused.op.mat, &v));
    PetscCall(FusedDeviceGhostsEnd(&bcgs->fused.op, &bcgs->fused.work));
    PetscCallFusedCUDA(FusedPBCGSProductPGhosts(bcgs->fused.work.cuda, bcgs->fused.op.mat, &v));
    PetscCallFusedCUDA(FusedCUDAGetSums(bcgs->fused.work.cuda, 0, BCGS_NSUMS1, partial1));
    PetscCall(PetscLogFlops(3.0 * bcgs->fused.work.n + 2.0 * bcgs->fused.op.nnz));
    PetscFunctionReturn(0);
  }
  PetscCall(FusedDeviceGhosts(&bcgs->fused.op, &bcgs->fused.work, v.p));
  if (bcgs->fused.ns.m) {
    /* and <v, n_k> after the first reduction's own */
    PetscCallFusedCUDA(FusedPBCGSProductPNull(bcgs->fused.work.cuda, bcgs->fused.op.mat, &v, &bcgs->fused.ns));
    PetscCallFusedCUDA(FusedCUDAGetSums(bcgs->fused.work.cuda, FUSED_PBCGS_V_N, bcgs->fused.ns.m, partial1 + BCGS_NSUMS1));
  } else PetscCall(PBCGSFusedProductPC_CUDA(ksp, bcgs, &v, &v.v, FusedPBCGSProductP, FusedPBCGSSumsP)); /* v = B A p, <v,r0*> */
  PetscCallFusedCUDA(FusedCUDAGetSums(bcgs->fused.work.cuda, 0, BCGS_NSUMS1, partial1));
  PetscCall(PetscLogFlops(3.0 * bcgs->fused.work.n + 2.0 * bcgs->fused.op.nnz));
  PetscFunctionReturn(0);
}

static PetscErrorCode PBCGSFusedUpdateS_CUDA(KSP ksp, KSP_PBCGSFused *bcgs, PetscScalar alpha)
{
  FusedPBCGSVecs v = PBCGSFusedDeviceVecs(bcgs);

  PetscFunctionBegin;
  (void)ksp;
  if (bcgs->fused.ns.m) PetscCallFusedCUDA(FusedPBCGSUpdateSNull(bcgs->fused.work.cuda, &v, alpha, &bcgs->fused.ns)); /* s = r - alpha P v */
  else PetscCallFusedCUDA(FusedPBCGSUpdateS(bcgs->fused.work.cuda, &v, alpha));
  PetscCall(PetscLogFlops(2.0 * bcgs->fused.work.n));
  PetscFunctionReturn(0);
}

static PetscErrorCode PBCGSFusedProductS_CUDA(KSP ksp, KSP_PBCGSFused *bcgs, PetscScalar partial2[])
{
  FusedPBCGSVecs v = PBCGSFusedDeviceVecs(bcgs);

  PetscFunctionBegin;
  if (PBCGSFusedSplitProduct(bcgs)) {
    PetscCall(FusedDeviceGhostsBegin(&bcgs->fused.op, &bcgs->fused.work, v.s));
    PetscCallFusedCUDA(FusedPBCGSProductSLocal(bcgs->fused.work.cuda, bcgs->fused.op.mat, &v));
    PetscCall(FusedDeviceGhostsEnd(&bcgs->fused.op, &bcgs->fused.work));
    PetscCallFusedCUDA(FusedPBCGSProductSGhosts(bcgs->fused.work.cuda, bcgs->fused.op.mat, &v));
    PetscCallFusedCUDA(FusedCUDAGetSums(bcgs->fused.work.cuda, BCGS_NSUMS1, BCGS_NSUMS2, partial2));
    PetscCall(PetscLogFlops(11.0 * bcgs->fused.work.n + 2.0 * bcgs->fused.op.nnz));
    PetscFunctionReturn(0);
  }
  PetscCall(FusedDeviceGhosts(&bcgs->fused.op, &bcgs->fused.work, v.s));
  if (bcgs->fused.ns.m) {
    /* and <t, n_k> after the five */
    PetscCallFusedCUDA(FusedPBCGSProductSNull(bcgs->fused.work.cuda, bcgs->fused.op.mat, &v, &bcgs->fused.ns));
    PetscCallFusedCUDA(FusedCUDAGetSums(bcgs->fused.work.cuda, FUSED_PBCGS_T_N, bcgs->fused.ns.m, partial2 + BCGS_NSUMS2));
  } else PetscCall(PBCGSFusedProductPC_CUDA(ksp, bcgs, &v, &v.t, FusedPBCGSProductS, FusedPBCGSSumsS)); /* t = B A s, the five sums */
  PetscCallFusedCUDA(FusedCUDAGetSums(bcgs->fused.work.cuda, BCGS_NSUMS1, BCGS_NSUMS2, partial2));
  PetscCall(PetscLogFlops(11.0 * bcgs->fused.work.n + 2.0 * bcgs->fused.op.nnz));
  PetscFunctionReturn(0);
}

static PetscErrorCode PBCGSFusedUpdateXRP_CUDA(KSP ksp, KSP_PBCGSFused *bcgs, PetscScalar alpha, PetscScalar omega, PetscScalar beta, PetscScalar partial1[])
{
  FusedPBCGSVecs v = PBCGSFusedDeviceVecs(bcgs);

  PetscFunctionBegin;
  (void)ksp;
  (void)partial1; /* delivered by product_p */
  if (bcgs->fused.ns.m) PetscCallFusedCUDA(FusedPBCGSUpdateXRPNull(bcgs->fused.work.cuda, &v, alpha, omega, beta, &bcgs->fused.ns, bcgs->t_coef));
  else PetscCallFusedCUDA(FusedPBCGSUpdateXRP(bcgs->fused.work.cuda, &v, alpha, omega, beta));
  PetscCall(PetscLogFlops(14.0 * bcgs->fused.work.n));
  PetscFunctionReturn(0);
}

static PetscErrorCode PBCGSFusedRestart_CUDA(KSP ksp, KSP_PBCGSFused *bcgs, PetscScalar partial1[])
{
  FusedPBCGSVecs v = PBCGSFusedDeviceVecs(bcgs);

  PetscFunctionBegin;
  (void)ksp;
  (void)partial1; /* delivered by product_p */
  PetscCallFusedCUDA(FusedPBCGSRestart(bcgs->fused.work.cuda, &v));
  PetscCall(PetscLogFlops(2.0 * bcgs->fused.work.n));
  PetscFunctionReturn(0);
}

/* After a loop: the single kernel stops with v = B A p made and its sums
   left (sums[VR0] beside RR and RR0), so the host goes on after product_p,
   without a launch and a wait for it; the graph's loop stops before it */
static PetscErrorCode PBCGSFusedLoopProductP(KSP_PBCGSFused *bcgs, PetscScalar partial1[], PetscBool *product_done)
{
  PetscFunctionBegin;
  *product_done = (PetscBool)(bcgs->fused.single_kernel && !bcgs->fused.ns.m);
  if (*product_done) PetscCallFusedCUDA(FusedCUDAGetLoopSums(bcgs->fused.work.cuda, 0, BCGS_NSUMS1, partial1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PBCGSFusedLoop_CUDA(KSP ksp, KSP_PBCGSFused *bcgs, PetscInt it0, PetscInt *its, PetscScalar partial1[], PetscBool *product_done)
{
  KSPFused        *fused = &bcgs->fused;
  FusedPBCGSVecs   v     = PBCGSFusedDeviceVecs(bcgs);
  FusedConvergence conv;
  int              stopped;

  PetscFunctionBegin;
  PetscCall(KSPFusedCUDAConvergence(ksp, &conv));
  PetscCall(PetscLogEventBegin(KSP_Fused_DeviceLoop, ksp, 0, 0, 0));
  if (fused->ns.m) PetscCallFusedCUDA(FusedPBCGSLoopNull(fused->work.cuda, fused->op.mat, &v, &fused->ns, &conv, (int)it0, &stopped));
  else PetscCallFusedCUDA(FusedPBCGSLoop(fused->work.cuda, fused->op.mat, &v, &conv, (int)it0, fused->single_kernel, FUSED_LOOP_GOES_ON, &stopped));
  PetscCall(PetscLogFlops((stopped - it0) * (30.0 * fused->work.n + 4.0 * fused->op.nnz)));
  PetscCall(PetscLogEventEnd(KSP_Fused_DeviceLoop, ksp, 0, 0, 0));
  /* iteration 'stopped' is tested by the host itself */
  PetscCall(KSPFusedCUDAReplay(ksp, fused, it0 + 1, stopped));
  PetscCall(PBCGSFusedLoopProductP(bcgs, partial1, product_done));
  fused->loop_its += stopped - it0 - 1;
  fused->loop_starts++;
  *its = stopped;
  PetscFunctionReturn(0);
}

/* The start with the loop queued behind it, which begins with the first
   product and tests iteration 0 itself (after a nonzero guess against
   ||B b||, formed beside the start): the host-driven first iteration's two
   waits leave the solve. The single kernel makes the start and b's norm
   itself: one launch a solve where kernels of their own took two or three
   more, each waiting for the host to queue it. Only the single-rank device
   loop with a fused PC comes here. */
static PetscErrorCode PBCGSFusedStartLoop_CUDA(KSP ksp, KSP_PBCGSFused *bcgs, int reference, PetscInt *its, PetscScalar partial1[], PetscBool *product_done)
{
  KSPFused        *fused = &bcgs->fused;
  FusedPBCGSVecs   v;
  FusedConvergence conv;
  int              stopped, start = FUSED_LOOP_GOES_ON;

  PetscFunctionBegin;
  if (fused->single_kernel) {
    PetscCall(PetscLogEventBegin(KSP_Fused_DeviceLoop, ksp, 0, 0, 0));
    PetscCall(KSPPBCGSFusedPrepare_CUDA(ksp));
    v = PBCGSFusedDeviceVecs(bcgs);
    PetscCall(KSPFusedCUDAStartInKernel(ksp, fused, v.b, v.x, reference, BCGS_DEVICE_RHS, 3.0 * fused->work.n + (ksp->guess_zero ? 0.0 : 2.0 * fused->op.nnz), &start, &conv)); /* the start's flops as PBCGSFusedStart_CUDA() logs them */
    v = PBCGSFusedDeviceVecs(bcgs); /* b and x may be the user's now */
  } else {
    PetscCall(PetscLogEventBegin(KSP_PBCGSFused_UpdateXRP, ksp, 0, 0, 0));
    PetscCall(PBCGSFusedStart_CUDA(ksp, bcgs, NULL));
    PetscCall(PetscLogEventEnd(KSP_PBCGSFused_UpdateXRP, ksp, 0, 0, 0));
    v = PBCGSFusedDeviceVecs(bcgs);
    PetscCall(PetscLogEventBegin(KSP_Fused_DeviceLoop, ksp, 0, 0, 0));
    PetscCall(KSPFusedCUDAFirstTest(ksp, fused, reference, v.b, v.d, BCGS_DEVICE_RHS, &conv));
  }
  PetscCheck(!PBCGSFusedDevicePC(bcgs) && !fused->op.halo && !fused->ns.m, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the device's first test needs the fused PC on one rank, without a null space");
  PetscCallFusedCUDA(FusedPBCGSLoop(fused->work.cuda, fused->op.mat, &v, &conv, -1, fused->single_kernel, start, &stopped));
  PetscCall(PetscLogFlops(stopped * (30.0 * fused->work.n + 4.0 * fused->op.nnz)));
  PetscCall(PetscLogEventEnd(KSP_Fused_DeviceLoop, ksp, 0, 0, 0));
  /* iteration 'stopped' is tested by the host itself */
  PetscCall(KSPFusedCUDAReplayFromStart(ksp, fused, &conv, stopped));
  PetscCall(PBCGSFusedLoopProductP(bcgs, partial1, product_done));
  fused->loop_its += stopped;
  fused->loop_starts++;
  *its = stopped;
  PetscFunctionReturn(0);
}

const KSPPBCGSFusedSteps KSPPBCGSFusedSteps_CUDA = {PBCGSFusedStart_CUDA, PBCGSFusedProductP_CUDA, PBCGSFusedUpdateS_CUDA, PBCGSFusedProductS_CUDA, PBCGSFusedUpdateXRP_CUDA, PBCGSFusedRestart_CUDA, PBCGSFusedLoop_CUDA, PBCGSFusedStartLoop_CUDA};
