/* pgmresfused, CUDA backend: the steps of pgmresfusedimpl.h as kernels; the
   basis, the residual and the iterate stay on the device for the whole
   solve, and only the sums of each step come to the host. */
#include <string.h>
#include "ksp/pgmresfusedimpl.h"

/* workspace vectors after the Jacobi diagonal; the basis follows them
   (point-block Jacobi's blocks or a null space's vectors follow the basis:
   KSPFusedCUDAPrepare()) */
enum { GM_VEC_X = 1, GM_VEC_B, GM_VEC_R, GM_VEC_Z0, GM_VEC_W, GM_VEC_TMP, GM_VEC_W2, GM_VEC_V };

static FusedPGMRESVecs PGMRESFusedDeviceVecs(KSP ksp, KSP_PGMRESFused *gm)
{
  FusedCUDA       ctx = gm->fused.work.cuda;
  FusedPGMRESVecs v;

  /* the padding too: the device loop compares its kernels' arguments bytewise */
  memset(&v, 0, sizeof(v));
  v.x     = KSPFusedCUDASystemVec(&gm->fused, FUSED_SYSTEM_X, GM_VEC_X);
  v.b     = KSPFusedCUDASystemVec(&gm->fused, FUSED_SYSTEM_B, GM_VEC_B);
  v.r     = FusedCUDAVec(ctx, GM_VEC_R);
  v.z0    = FusedCUDAVec(ctx, GM_VEC_Z0);
  v.w     = FusedCUDAVec(ctx, GM_VEC_W);
  v.tmp   = FusedCUDAVec(ctx, GM_VEC_TMP);
  v.w2    = FusedCUDAVec(ctx, GM_VEC_W2);
  v.V     = FusedCUDAVec(ctx, GM_VEC_V);
  v.d     = gm->fused.pcplace == KSP_FUSED_PC_JACOBI ? FusedCUDAVec(ctx, FUSED_VEC_DINV) : NULL;
  v.dblock = gm->fused.pcplace == KSP_FUSED_PC_PBJACOBI ? FusedCUDAVec(ctx, (int)gm->fused.aux_vecs) : NULL;
  v.bs     = v.dblock ? (int)gm->fused.dblock_bs : 1;
  v.right = ksp->pc_side == PC_RIGHT;
  v.pc_between = gm->fused.pcplace == KSP_FUSED_PC_DEVICE;
  return v;
}

/* The device workspace and what goes up once, for the solve to come (also
   from KSPSetUp()) */
PETSC_INTERN PetscErrorCode KSPPGMRESFusedPrepare_CUDA(KSP ksp)
{
  KSP_PGMRESFused *gm = (KSP_PGMRESFused *)ksp->data;
  const PetscInt   m  = gm->restart;
  char             what[160];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(what, sizeof(what), "pgmresfused with restart %" PetscInt_FMT " (a smaller -ksp_pgmresfused_restart needs less)", m));
  /* sums: a step's products, then the orthogonalization's with a null space's room and b's norm */
  PetscCall(KSPFusedCUDAPrepare(ksp, &gm->fused, GM_VEC_V + m, 2 * PetscMax(m + 1, GMRES_NSUMS + FUSED_NULLSPACE_MAX + 1), what));
  if (gm->fused.device_loop) PetscCallFusedCUDA(FusedPGMRESPrepareLoop(gm->fused.work.cuda, gm->fused.op.mat, (int)m, (double)gm->adaptive, (int)gm->fused.single_kernel_likely));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The single kernel suits where it keeps the basis in shared memory or a
   cycle's working set stays in L2 (FusedPGMRESSingleKernelSuits()) */
PETSC_INTERN PetscErrorCode KSPPGMRESFusedSingleKernelSuits_CUDA(KSP ksp, PetscBool *suits)
{
  KSP_PGMRESFused *gm = (KSP_PGMRESFused *)ksp->data;
  int              suits_device;

  PetscFunctionBegin;
  *suits = PETSC_TRUE;
  if (!gm->fused.op.mat) PetscFunctionReturn(PETSC_SUCCESS); /* no device copy of the operator: the rows decide */
  PetscCallFusedCUDA(FusedPGMRESSingleKernelSuits(gm->fused.work.cuda, gm->fused.op.mat, (int)gm->restart, (double)gm->adaptive, &suits_device));
  *suits = (PetscBool)suits_device;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Called at every cycle start; b and the initial guess go to the device at
   the first. Queues r and |r|^2 (sums[0]) without waiting for them. */
static PetscErrorCode PGMRESFusedQueueStart_CUDA(KSP ksp, KSP_PGMRESFused *gm)
{
  KSPFused       *fused = &gm->fused;
  FusedPGMRESVecs v;

  PetscFunctionBegin;
  if (!fused->x_device) {
    PetscCall(KSPPGMRESFusedPrepare_CUDA(ksp));
    v = PGMRESFusedDeviceVecs(ksp, gm);
    PetscCall(KSPFusedCUDASystemToDevice(ksp, fused, v.b, v.x, PETSC_TRUE));
  }
  v = PGMRESFusedDeviceVecs(ksp, gm);
  if (!ksp->guess_zero) PetscCall(FusedDeviceGhosts(&fused->op, &fused->work, v.x));
  if (v.pc_between && !v.right) {
    /* r = B (b - A x): the residual to tmp, the PC from there to r */
    FusedPGMRESVecs into_tmp = v;

    into_tmp.r = v.tmp;
    PetscCallFusedCUDA(FusedPGMRESStart(fused->work.cuda, fused->op.mat, &into_tmp, ksp->guess_zero ? 1 : 0));
    PetscCall(KSPFusedCUDAApplyPC(ksp, fused, v.tmp, v.r));
    PetscCallFusedCUDA(FusedPGMRESNorm(fused->work.cuda, &v));
  } else PetscCallFusedCUDA(FusedPGMRESStart(fused->work.cuda, fused->op.mat, &v, ksp->guess_zero ? 1 : 0));
  if (fused->ns.m) PetscCall(KSPFusedCUDANullSpaceRemove(ksp, fused, v.r)); /* one more synchronization at each cycle start; <r,r> in sums[0] */
  PetscCall(PetscLogFlops(3.0 * fused->work.n + (ksp->guess_zero ? 0.0 : 2.0 * fused->op.nnz)));
  PetscFunctionReturn(0);
}

static PetscErrorCode PGMRESFusedStart_CUDA(KSP ksp, KSP_PGMRESFused *gm, PetscScalar partial[])
{
  PetscFunctionBegin;
  PetscCall(PGMRESFusedQueueStart_CUDA(ksp, gm));
  PetscCallFusedCUDA(FusedCUDAGetSums(gm->fused.work.cuda, 0, 1, partial));
  PetscFunctionReturn(0);
}

static PetscErrorCode PGMRESFusedProduct_CUDA(KSP ksp, KSP_PGMRESFused *gm, PetscInt j, PetscScalar scale, PetscBool from_r)
{
  FusedPGMRESVecs v = PGMRESFusedDeviceVecs(ksp, gm);
  const double   *in;

  PetscFunctionBegin;
  if (j > 0 && from_r) v.zin = v.w2; /* an adaptive step's scale r goes there: w2 is free between the steps */
  PetscCallFusedCUDA(FusedPGMRESProductInput(gm->fused.work.cuda, &v, (int)j, scale, &in));
  if (v.pc_between && v.right) {
    /* tmp = B z_j, the vector the product reads */
    PetscCall(KSPFusedCUDAApplyPC(ksp, &gm->fused, in, v.tmp));
    in = v.tmp;
  }
  if (gm->fused.op.halo && !v.dblock) {
    /* the local block's product runs while the ghost values travel */
    PetscCall(FusedDeviceGhostsBegin(&gm->fused.op, &gm->fused.work, in));
    PetscCallFusedCUDA(FusedPGMRESProductLocal(gm->fused.work.cuda, gm->fused.op.mat, &v, (int)j));
    PetscCall(FusedDeviceGhostsEnd(&gm->fused.op, &gm->fused.work));
    PetscCallFusedCUDA(FusedPGMRESProductGhosts(gm->fused.work.cuda, gm->fused.op.mat, &v));
  } else {
    PetscCall(FusedDeviceGhosts(&gm->fused.op, &gm->fused.work, in));
    PetscCallFusedCUDA(FusedPGMRESProduct(gm->fused.work.cuda, gm->fused.op.mat, &v, (int)j));
  }
  if (v.pc_between && !v.right) PetscCall(KSPFusedCUDAApplyPC(ksp, &gm->fused, v.tmp, v.w)); /* w = B A z_j */
  PetscCall(PetscLogFlops(2.0 * gm->fused.op.nnz + 2.0 * gm->fused.work.n));
  PetscFunctionReturn(0);
}

static PetscErrorCode PGMRESFusedMDot_CUDA(KSP ksp, KSP_PGMRESFused *gm, PetscInt j, PetscScalar partial[])
{
  FusedPGMRESVecs v = PGMRESFusedDeviceVecs(ksp, gm);

  PetscFunctionBegin;
  PetscCallFusedCUDA(FusedPGMRESMDot(gm->fused.work.cuda, &v, (int)j));
  PetscCallFusedCUDA(FusedCUDAGetSums(gm->fused.work.cuda, 0, (int)j + 1, partial));
  PetscCall(PetscLogFlops(2.0 * gm->fused.work.n * (j + 1)));
  PetscFunctionReturn(0);
}

static PetscErrorCode PGMRESFusedOrthog_CUDA(KSP ksp, KSP_PGMRESFused *gm, PetscInt j, const PetscScalar h[], PetscScalar partial[])
{
  FusedPGMRESVecs v = PGMRESFusedDeviceVecs(ksp, gm);

  PetscFunctionBegin;
  PetscCallFusedCUDA(FusedPGMRESOrthog(gm->fused.work.cuda, &v, (int)j, h, &gm->fused.ns));
  PetscCallFusedCUDA(FusedCUDAGetSums(gm->fused.work.cuda, 0, GMRES_NSUMS + gm->fused.ns.m, partial));
  PetscCall(PetscLogFlops(2.0 * gm->fused.work.n * (j + 3 + gm->fused.ns.m)));
  PetscFunctionReturn(0);
}

static PetscErrorCode PGMRESFusedNormalize_CUDA(KSP ksp, KSP_PGMRESFused *gm, PetscInt j, PetscScalar scale, PetscScalar xi)
{
  FusedPGMRESVecs v = PGMRESFusedDeviceVecs(ksp, gm);

  PetscFunctionBegin;
  /* with a null space, fused->ns.coef holds the last orthogonalization's <w, n_k> */
  PetscCallFusedCUDA(FusedPGMRESNormalize(gm->fused.work.cuda, &v, (int)j, scale, xi, &gm->fused.ns));
  PetscCall(PetscLogFlops((3.0 + 2.0 * gm->fused.ns.m) * gm->fused.work.n));
  PetscFunctionReturn(0);
}

/* y NULL: the device iterate; a host vector y gets the correction added */
static PetscErrorCode PGMRESFusedUpdate_CUDA(KSP ksp, KSP_PGMRESFused *gm, PetscInt k, const PetscScalar t[], Vec y)
{
  FusedPGMRESVecs v = PGMRESFusedDeviceVecs(ksp, gm);

  PetscFunctionBegin;
  if (k == 0) PetscFunctionReturn(0);
  if (v.pc_between && v.right) {
    /* the correction B (sum t_i z_i): the sum to tmp, the PC from there to w2 */
    PetscCallFusedCUDA(FusedCUDAZero(gm->fused.work.cuda, v.tmp, (int)gm->fused.work.n));
    PetscCallFusedCUDA(FusedPGMRESUpdate(gm->fused.work.cuda, &v, (int)k, t, v.tmp));
    PetscCall(KSPFusedCUDAApplyPC(ksp, &gm->fused, v.tmp, v.w2));
    if (!y) PetscCallFusedCUDA(FusedPGMRESAddTo(gm->fused.work.cuda, v.x, v.w2));
    else {
      PetscCall(FusedDeviceDownload(&gm->fused.work, v.w2, gm->tmp));
      PetscCall(VecAXPY(y, 1.0, gm->tmp));
    }
  } else if (!y) PetscCallFusedCUDA(FusedPGMRESUpdate(gm->fused.work.cuda, &v, (int)k, t, v.x));
  else {
    PetscCallFusedCUDA(FusedCUDAZero(gm->fused.work.cuda, v.tmp, (int)gm->fused.work.n));
    PetscCallFusedCUDA(FusedPGMRESUpdate(gm->fused.work.cuda, &v, (int)k, t, v.tmp));
    PetscCall(FusedDeviceDownload(&gm->fused.work, v.tmp, gm->tmp));
    PetscCall(VecAXPY(y, 1.0, gm->tmp));
  }
  PetscCall(PetscLogFlops(2.0 * gm->fused.work.n * k));
  PetscFunctionReturn(0);
}

/* flops of a cycle's steps on the device: per step j the product and 2j + 8
   vector operations of length n */
static PetscLogDouble PGMRESFusedLoopFlops(KSPFused *fused, int steps, int stopped)
{
  return (steps + stopped) * (2.0 * fused->op.nnz + 8.0 * fused->work.n) + 2.0 * fused->work.n * steps * (steps + stopped - 1.0);
}

/* flops of the cycles the single kernel ended in `its` iterations, each
   with its update and the next start: whole cycles, and the last one at
   max_it */
static PetscLogDouble PGMRESFusedEndedCyclesFlops(KSP_PGMRESFused *gm, int its)
{
  KSPFused      *fused = &gm->fused;
  const int      m = (int)gm->restart, cycles = its / m, rest = its % m;
  PetscLogDouble ends = 2.0 * fused->op.nnz + 3.0 * fused->work.n; /* the start after each */

  return cycles * (PGMRESFusedLoopFlops(fused, m, 0) + 2.0 * fused->work.n * m + ends) + (rest ? PGMRESFusedLoopFlops(fused, rest, 0) + 2.0 * fused->work.n * rest + ends : 0.0);
}

/* A cycle start the device made after ending a cycle, handed over with
   r in place: the host tests its norm rather than making it again */
static void PGMRESFusedTakeStart(KSP_PGMRESFused *gm, PetscBool made, double norm)
{
  gm->start_made = made;
  gm->start_norm = made ? (PetscReal)norm : 0.0;
}

static PetscErrorCode PGMRESFusedLoop_CUDA(KSP ksp, KSP_PGMRESFused *gm, PetscInt *its0, PetscReal rnorm0, PetscBool *pending, PetscBool *start_on_host, PetscScalar sums[])
{
  KSPFused        *fused = &gm->fused;
  FusedPGMRESVecs  v     = PGMRESFusedDeviceVecs(ksp, gm);
  FusedConvergence conv;
  const double    *in;
  const int        its_first = (int)*its0;
  int              its_last  = its_first, steps, stopped, on_host, ended, adaptive_steps;
  double           start_norm;

  PetscFunctionBegin;
  PetscCall(KSPFusedCUDAConvergence(ksp, &conv));
  PetscCall(PetscLogEventBegin(KSP_Fused_DeviceLoop, ksp, 0, 0, 0));
  PetscCallFusedCUDA(FusedPGMRESProductInput(fused->work.cuda, &v, 0, 1.0 / rnorm0, &in));
  PetscCallFusedCUDA(FusedPGMRESLoop(fused->work.cuda, fused->op.mat, &v, &fused->ns, (int)gm->restart, (double)gm->breakdowntol, (double)gm->adaptive, (double)rnorm0, &conv, &its_last, fused->single_kernel, FUSED_LOOP_GOES_ON, gm->R, gm->xi, gm->rho, &adaptive_steps, gm->sums, sums, &steps, &stopped, &on_host, &start_norm, &ended));
  gm->adaptive_steps += adaptive_steps;
  PetscCall(PetscLogFlops(PGMRESFusedEndedCyclesFlops(gm, its_last - (int)*its0) + PGMRESFusedLoopFlops(fused, steps, stopped) + (ended ? 2.0 * fused->work.n * steps : 0.0)));
  PetscCall(PetscLogEventEnd(KSP_Fused_DeviceLoop, ksp, 0, 0, 0));
  /* a step left to the host: its <w, n_k> for the normalization */
  if (stopped)
    for (int k = 0; k < fused->ns.m; k++) fused->ns.coef[k] = sums[GMRES_NSUMS + k];
  /* a cycle the device started itself has its start replayed too where its first step waits for the host */
  PetscCall(KSPFusedCUDAReplay(ksp, fused, *its0 + 1, its_last + steps + (stopped && steps == 0 && its_last > *its0 ? 1 : 0)));
  fused->loop_its += its_last + steps - *its0;
  fused->loop_starts++;
  *its0          = its_last;
  gm->k          = steps;
  *pending       = stopped ? PETSC_TRUE : PETSC_FALSE;
  *start_on_host = on_host ? PETSC_TRUE : PETSC_FALSE;
  gm->cycle_ended = ended ? PETSC_TRUE : PETSC_FALSE;
  PGMRESFusedTakeStart(gm, on_host && its_last > its_first, start_norm);
  PetscFunctionReturn(0);
}

/* The first cycle: the start with the loop queued behind it, which tests the
   start itself (after a nonzero guess against ||B b||, formed beside it)
   and makes z_0: the waits for |r0| leave the solve. The single kernel
   that ends cycles makes the start itself (FusedPGMRESLoop()): one launch
   where four kernels and a copy each waited for the host to queue them.
   Only the single-rank device loop with a fused left PC comes here. */
static PetscErrorCode PGMRESFusedStartLoop_CUDA(KSP ksp, KSP_PGMRESFused *gm, int reference, PetscBool *tested, PetscInt *its0, PetscReal *rnorm0, PetscBool *pending, PetscBool *start_on_host, PetscScalar sums[])
{
  KSPFused        *fused = &gm->fused;
  FusedPGMRESVecs  v;
  FusedConvergence conv;
  int              its_last = 0, steps, stopped, on_host, start, ended, adaptive_steps;
  double           start_norm;

  PetscFunctionBegin;
  if (fused->single_kernel) {
    PetscCall(PetscLogEventBegin(KSP_Fused_DeviceLoop, ksp, 0, 0, 0));
    PetscCall(KSPPGMRESFusedPrepare_CUDA(ksp));
    v = PGMRESFusedDeviceVecs(ksp, gm);
    PetscCall(KSPFusedCUDAStartInKernel(ksp, fused, v.b, v.x, reference, FusedPGMRESRhsSlot(fused->work.cuda), 3.0 * fused->work.n + (ksp->guess_zero ? 0.0 : 2.0 * fused->op.nnz), &start, &conv)); /* the start's flops as PGMRESFusedQueueStart_CUDA() logs them */
    v = PGMRESFusedDeviceVecs(ksp, gm); /* b and x may be the user's now */
  } else {
    PetscCall(PetscLogEventBegin(KSP_PGMRESFused_Update, ksp, 0, 0, 0));
    PetscCall(PGMRESFusedQueueStart_CUDA(ksp, gm));
    PetscCall(PetscLogEventEnd(KSP_PGMRESFused_Update, ksp, 0, 0, 0));
    v = PGMRESFusedDeviceVecs(ksp, gm);
    PetscCall(PetscLogEventBegin(KSP_Fused_DeviceLoop, ksp, 0, 0, 0));
    PetscCall(KSPFusedCUDAFirstTest(ksp, fused, reference, v.b, v.d, FusedPGMRESRhsSlot(fused->work.cuda), &conv));
    start = FUSED_LOOP_GOES_ON;
  }
  PetscCheck(!v.pc_between && !v.right && !fused->op.halo && ksp->its == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the device's first test needs the first cycle, a fused left PC and one rank");
  PetscCallFusedCUDA(FusedPGMRESLoop(fused->work.cuda, fused->op.mat, &v, &fused->ns, (int)gm->restart, (double)gm->breakdowntol, (double)gm->adaptive, 0.0 /* the device's first start records its norm */, &conv, &its_last, fused->single_kernel, start, gm->R, gm->xi, gm->rho, &adaptive_steps, gm->sums, sums, &steps, &stopped, &on_host, &start_norm, &ended));
  gm->adaptive_steps += adaptive_steps;
  PetscCall(PetscLogFlops(PGMRESFusedEndedCyclesFlops(gm, its_last) + PGMRESFusedLoopFlops(fused, steps, stopped) + (ended ? 2.0 * fused->work.n * steps : 0.0)));
  PetscCall(PetscLogEventEnd(KSP_Fused_DeviceLoop, ksp, 0, 0, 0));
  *tested = (PetscBool)!(on_host && its_last == 0);
  if (!*tested) PetscFunctionReturn(0); /* the host starts again and tests the start itself */
  PetscCallFusedCUDA(FusedCUDAGetHistory(fused->work.cuda, 0, 1, rnorm0));
  /* the last cycle's start too where its first step waits for the host (which tests no residual at step 0) */
  PetscCall(KSPFusedCUDAReplayFromStart(ksp, fused, &conv, its_last + steps + (stopped && steps == 0 ? 1 : 0)));
  fused->loop_its += its_last + steps;
  fused->loop_starts++;
  *its0          = its_last;
  gm->k          = steps;
  *pending       = stopped ? PETSC_TRUE : PETSC_FALSE;
  *start_on_host = on_host ? PETSC_TRUE : PETSC_FALSE;
  gm->cycle_ended = ended ? PETSC_TRUE : PETSC_FALSE;
  PGMRESFusedTakeStart(gm, on_host && its_last > 0, start_norm);
  PetscFunctionReturn(0);
}

const KSPPGMRESFusedSteps KSPPGMRESFusedSteps_CUDA = {PGMRESFusedStart_CUDA, PGMRESFusedProduct_CUDA, PGMRESFusedMDot_CUDA, PGMRESFusedOrthog_CUDA, PGMRESFusedNormalize_CUDA, PGMRESFusedUpdate_CUDA, PGMRESFusedLoop_CUDA, PGMRESFusedStartLoop_CUDA};
