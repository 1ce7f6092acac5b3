/* pcgfused, CUDA backend: the steps of pcgfusedimpl.h as kernels on vectors
   that stay on the device for the whole solve (src/cuda/pcgfused.cu). */
#include <string.h>
#include "ksp/pcgfusedimpl.h"

/* workspace vectors after the Jacobi diagonal */
enum { PCG_VEC_X = 1, PCG_VEC_B, PCG_VEC_R, PCG_VEC_P, PCG_VEC_Y, PCG_NVECS };
/* with the PC applied between kernels, z = B r and w = B y are stored too
   (point-block Jacobi's blocks or a null space's vectors follow the
   method's: KSPFusedCUDAPrepare()) */
enum { PCG_VEC_Z = PCG_NVECS, PCG_VEC_W, PCG_NVECS_STORED };

static FusedPCGVecs PCGFusedDeviceVecs(KSP ksp, KSP_PCGFused *cg)
{
  FusedCUDA    ctx = cg->fused.work.cuda;
  FusedPCGVecs v;

  /* the padding too: the device loop compares its kernels' arguments bytewise */
  memset(&v, 0, sizeof(v));
  v.x        = KSPFusedCUDASystemVec(&cg->fused, FUSED_SYSTEM_X, PCG_VEC_X);
  v.b        = KSPFusedCUDASystemVec(&cg->fused, FUSED_SYSTEM_B, PCG_VEC_B);
  v.r        = FusedCUDAVec(ctx, PCG_VEC_R);
  v.p        = FusedCUDAVec(ctx, PCG_VEC_P);
  v.y        = FusedCUDAVec(ctx, PCG_VEC_Y);
  v.d        = cg->fused.pcplace == KSP_FUSED_PC_JACOBI ? FusedCUDAVec(ctx, FUSED_VEC_DINV) : NULL;
  v.dblock   = cg->fused.pcplace == KSP_FUSED_PC_PBJACOBI ? FusedCUDAVec(ctx, (int)cg->fused.aux_vecs) : NULL;
  v.bs       = v.dblock ? (int)cg->fused.dblock_bs : 1;
  v.z        = cg->fused.pcplace == KSP_FUSED_PC_DEVICE ? FusedCUDAVec(ctx, PCG_VEC_Z) : NULL;
  v.w        = cg->fused.pcplace == KSP_FUSED_PC_DEVICE ? FusedCUDAVec(ctx, PCG_VEC_W) : NULL;
  v.normtype = KSPFusedNormType(ksp);
  v.ns       = cg->fused.ns;
  return v;
}

/* Whether the graph loop takes <y,z> from A's symmetry (FusedPCGVecs.symmetric):
   PETSc knows A is symmetric (MAT_SYMMETRIC or MAT_SPD set, and not undone by
   an assembly since), or the device copy of A, checked entry by entry at
   each build and refill, equals its transpose; and the PC is Jacobi or none
   without a null space */
static PetscErrorCode PCGFusedKnownSymmetric(KSP ksp, int *symmetric)
{
  KSPFused *fused = &((KSP_PCGFused *)ksp->data)->fused;
  Mat       A;
  PetscBool set, flg, known, checked;

  PetscFunctionBegin;
  PetscCall(KSPGetOperators(ksp, &A, NULL));
  PetscCall(MatIsSymmetricKnown(A, &set, &flg));
  known      = set && flg;
  checked    = KSPFusedOperatorFoundSymmetric(fused);
  *symmetric = (known || checked) && !fused->single_kernel && !fused->nullsp && (fused->pcplace == KSP_FUSED_PC_NONE || fused->pcplace == KSP_FUSED_PC_JACOBI);
  if (*symmetric) PetscCall(PetscInfo(ksp, "A is symmetric (%s): the graph loop takes <y,z> = <p,y> - beta <p,y_last> (the product does not read r)\n", known ? "known to PETSc" : "its device copy equals its transpose"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The device workspace and what goes up once, for the solve to come (also
   from KSPSetUp()) */
PETSC_INTERN PetscErrorCode KSPPCGFusedPrepare_CUDA(KSP ksp)
{
  KSP_PCGFused *cg = (KSP_PCGFused *)ksp->data;

  PetscFunctionBegin;
  PetscCall(KSPFusedCUDAPrepare(ksp, &cg->fused, cg->fused.pcplace == KSP_FUSED_PC_DEVICE ? PCG_NVECS_STORED : PCG_NVECS, FUSED_PCG_DEVICE_SUMS, "pcgfused"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGFusedStart_CUDA(KSP ksp, KSP_PCGFused *cg, PetscScalar partial[])
{
  KSPFused    *fused = &cg->fused;
  FusedPCGVecs v;
  PetscInt     n;

  PetscFunctionBegin;
  (void)partial; /* delivered by the product step */
  PetscCall(KSPPCGFusedPrepare_CUDA(ksp));
  v = PCGFusedDeviceVecs(ksp, cg);
  PetscCall(VecGetLocalSize(ksp->vec_rhs, &n));
  PetscCall(KSPFusedCUDASystemToDevice(ksp, fused, v.b, v.x, PETSC_TRUE));
  v = PCGFusedDeviceVecs(ksp, cg); /* b and x may be the user's now */
  if (!ksp->guess_zero) PetscCall(FusedDeviceGhosts(&fused->op, &fused->work, v.x));
  PetscCallFusedCUDA(FusedPCGStart(fused->work.cuda, fused->op.mat, &v, ksp->guess_zero ? 1 : 0));
  if (v.ns.m) {
    /* z = B r less its null space part needs <B r, n_k> first: one more
       synchronization, at the start only */
    PetscScalar e[FUSED_NULLSPACE_MAX];

    PetscCallFusedCUDA(FusedCUDAGetSums(fused->work.cuda, FUSED_PCG_BR_N, v.ns.m, e));
    PetscCall(KSPFusedAllreduce(ksp, fused, v.ns.m, e));
    for (int k = 0; k < v.ns.m; k++) v.ns.coef[k] = e[k];
    PetscCallFusedCUDA(FusedPCGStartProject(fused->work.cuda, &v));
  }
  if (v.z) {
    PetscCall(KSPFusedCUDAApplyPC(ksp, fused, v.r, v.z));
    PetscCallFusedCUDA(FusedPCGStartPreconditioned(fused->work.cuda, &v));
  }
  PetscCall(PetscLogFlops(5.0 * n + (ksp->guess_zero ? 0.0 : 2.0 * fused->op.nnz)));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCGFusedUpdate_CUDA(KSP ksp, KSP_PCGFused *cg, PetscScalar alpha, PetscScalar beta, PetscScalar partial[])
{
  FusedPCGVecs v = PCGFusedDeviceVecs(ksp, cg);

  PetscFunctionBegin;
  /* partial[] still holds the last synchronization point's global sums: the
     null space's coefficients for the new r come from them; this step's own
     sums are delivered by the product step */
  for (int k = 0; k < v.ns.m; k++) v.ns.coef[k] = FusedPCGNullSpaceCoef(partial, FUSED_NULLSPACE_MAX, k, alpha);
  PetscCallFusedCUDA(FusedPCGUpdate(cg->fused.work.cuda, &v, alpha, beta));
  PetscCall(PetscLogFlops(10.0 * cg->fused.work.n));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCGFusedProduct_CUDA(KSP ksp, KSP_PCGFused *cg, PetscScalar partial[])
{
  FusedPCGVecs v     = PCGFusedDeviceVecs(ksp, cg);
  const int    nsums = v.ns.m ? FUSED_PCG_SUMS : PCG_NSUMS;

  PetscFunctionBegin;
  if (cg->fused.op.halo && v.dblock) {
    /* point-block Jacobi's <y, B y> couples a block's rows: the product waits for the ghosts */
    PetscCall(FusedDeviceGhosts(&cg->fused.op, &cg->fused.work, v.p));
    PetscCallFusedCUDA(FusedPCGProduct(cg->fused.work.cuda, cg->fused.op.mat, &v));
    PetscCallFusedCUDA(FusedCUDAGetSums(cg->fused.work.cuda, 0, nsums, partial));
  } else if (cg->fused.op.halo) {
    /* the local block's product runs while the ghost values of p travel */
    PetscCall(FusedDeviceGhostsBegin(&cg->fused.op, &cg->fused.work, v.p));
    PetscCallFusedCUDA(FusedPCGProductLocal(cg->fused.work.cuda, cg->fused.op.mat, &v));
    PetscCall(FusedDeviceGhostsEnd(&cg->fused.op, &cg->fused.work));
    PetscCallFusedCUDA(FusedPCGProductGhosts(cg->fused.work.cuda, cg->fused.op.mat, &v));
    if (!v.w) PetscCallFusedCUDA(FusedCUDAGetPostedSums(cg->fused.work.cuda, nsums, partial));
  } else {
    PetscCallFusedCUDA(FusedPCGProduct(cg->fused.work.cuda, cg->fused.op.mat, &v));
    if (!v.w) PetscCallFusedCUDA(FusedCUDAGetSums(cg->fused.work.cuda, 0, nsums, partial));
  }
  if (v.w) {
    /* w = B y, then <y,w> beside the product's sums (<y,z> came with them) */
    PetscCall(KSPFusedCUDAApplyPC(ksp, &cg->fused, v.y, v.w));
    PetscCallFusedCUDA(FusedPCGProductPreconditioned(cg->fused.work.cuda, &v));
    PetscCallFusedCUDA(FusedCUDAGetSums(cg->fused.work.cuda, 0, PCG_NSUMS, partial));
  }
  PetscCall(PetscLogFlops(5.0 * cg->fused.work.n + 2.0 * cg->fused.op.nnz));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCGFusedLoop_CUDA(KSP ksp, KSP_PCGFused *cg, PetscInt it0, PetscInt *its, PetscScalar sums[])
{
  KSPFused        *fused = &cg->fused;
  FusedPCGVecs     v     = PCGFusedDeviceVecs(ksp, cg);
  FusedConvergence conv;
  int              stopped;

  PetscFunctionBegin;
  PetscCall(KSPFusedCUDAConvergence(ksp, &conv));
  PetscCall(PCGFusedKnownSymmetric(ksp, &v.symmetric));
  /* the signs the host saw last: the device hands back at a change of either */
  conv.sign_rz = PetscRealPart(sums[PCG_RZ]) < 0.0 ? -1.0 : 1.0;
  conv.sign_py = PetscRealPart(sums[PCG_PY]) < 0.0 ? -1.0 : 1.0;
  PetscCall(PetscLogEventBegin(KSP_Fused_DeviceLoop, ksp, 0, 0, 0));
  PetscCallFusedCUDA(FusedPCGLoop(fused->work.cuda, fused->op.mat, &v, &conv, (int)it0, fused->single_kernel, FUSED_LOOP_GOES_ON, &stopped));
  PetscCall(PetscLogFlops((stopped - it0) * (15.0 * fused->work.n + 2.0 * fused->op.nnz)));
  PetscCall(PetscLogEventEnd(KSP_Fused_DeviceLoop, ksp, 0, 0, 0));
  PetscCall(KSPFusedCUDAReplay(ksp, fused, it0 + 1, stopped));
  PetscCallFusedCUDA(FusedCUDAGetLoopSums(fused->work.cuda, 0, v.ns.m ? FUSED_PCG_SUMS : PCG_NSUMS, sums));
  fused->loop_its += stopped - it0;
  fused->loop_starts++;
  *its = stopped;
  PetscFunctionReturn(0);
}

/* The start and the first product queued behind the uploads, and the loop
   behind them, testing iteration 0 itself: one wait for the device where the
   host-driven start and product cost one more. After a nonzero guess the
   right-hand side's norm, which KSPConvergedDefault would form with
   PCApply() and VecNorm() on the host, is formed on the device beside them.
   The single kernel makes the start, the product and b's norm itself: one
   launch a solve where kernels of their own took four, each waiting for
   the host to queue it. Only the single-rank device loop with a fused PC
   comes here. */
static PetscErrorCode PCGFusedStartLoop_CUDA(KSP ksp, KSP_PCGFused *cg, int reference, PetscInt *its, PetscScalar sums[])
{
  KSPFused        *fused = &cg->fused;
  FusedPCGVecs     v;
  FusedConvergence conv;
  int              stopped, start = FUSED_LOOP_GOES_ON;

  PetscFunctionBegin;
  if (fused->single_kernel) {
    PetscCall(PetscLogEventBegin(KSP_Fused_DeviceLoop, ksp, 0, 0, 0));
    PetscCall(KSPPCGFusedPrepare_CUDA(ksp));
    v = PCGFusedDeviceVecs(ksp, cg);
    PetscCall(KSPFusedCUDAStartInKernel(ksp, fused, v.b, v.x, reference, FUSED_PCG_RHS, 5.0 * fused->work.n + (ksp->guess_zero ? 0.0 : 2.0 * fused->op.nnz), &start, &conv)); /* the start's flops as PCGFusedStart_CUDA() logs them */
    v = PCGFusedDeviceVecs(ksp, cg); /* b and x may be the user's now */
  } else {
    PetscCall(PetscLogEventBegin(KSP_PCGFused_Update, ksp, 0, 0, 0));
    PetscCall(PCGFusedStart_CUDA(ksp, cg, sums));
    PetscCall(PetscLogEventEnd(KSP_PCGFused_Update, ksp, 0, 0, 0));
    PetscCall(PetscLogEventBegin(KSP_Fused_DeviceLoop, ksp, 0, 0, 0));
    v = PCGFusedDeviceVecs(ksp, cg);
    PetscCallFusedCUDA(FusedPCGProduct(fused->work.cuda, fused->op.mat, &v));
    PetscCall(KSPFusedCUDAFirstTest(ksp, fused, reference, v.b, v.d, FUSED_PCG_RHS, &conv));
  }
  PetscCheck(!v.z && !fused->op.halo && !v.ns.m, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the device's first test needs the fused PC on one rank, without a null space");
  PetscCall(PCGFusedKnownSymmetric(ksp, &v.symmetric));
  PetscCallFusedCUDA(FusedPCGLoop(fused->work.cuda, fused->op.mat, &v, &conv, 0, fused->single_kernel, start, &stopped));
  PetscCall(PetscLogFlops(5.0 * fused->work.n + 2.0 * fused->op.nnz + stopped * (15.0 * fused->work.n + 2.0 * fused->op.nnz)));
  PetscCall(PetscLogEventEnd(KSP_Fused_DeviceLoop, ksp, 0, 0, 0));
  PetscCall(KSPFusedCUDAReplayFromStart(ksp, fused, &conv, stopped));
  PetscCallFusedCUDA(FusedCUDAGetLoopSums(fused->work.cuda, 0, PCG_NSUMS, sums));
  fused->loop_its += stopped;
  fused->loop_starts++;
  *its = stopped;
  PetscFunctionReturn(0);
}

const KSPPCGFusedSteps KSPPCGFusedSteps_CUDA = {PCGFusedStart_CUDA, PCGFusedUpdate_CUDA, PCGFusedProduct_CUDA, PCGFusedLoop_CUDA, PCGFusedStartLoop_CUDA};
