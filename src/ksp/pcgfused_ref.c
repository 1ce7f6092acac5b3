/* pcgfused, reference backend: each fused step is one loop over the local
   arrays. This is the oracle the CUDA kernels are tested against. */
#include "ksp/pcgfusedimpl.h"

/* The norm PETSc's cg reports for each norm type */
static inline PetscScalar PCGNormTerm(KSPNormType type, PetscScalar r, PetscScalar z)
{
  switch (type) {
  case KSP_NORM_PRECONDITIONED:
    return z * z;
  case KSP_NORM_UNPRECONDITIONED:
    return r * r;
  default:
    return 0.0; /* NATURAL uses <r,z>; NONE reports nothing */
  }
}

/* z_i = (B r)_i for the fused PCs: Jacobi (d), point-block Jacobi, none */
static inline PetscScalar PCGPreconditioned(const KSPFused *fused, const PetscScalar *d, const PetscScalar *r, PetscInt i)
{
  if (d) return d[i] * r[i];
  if (fused->pcplace == KSP_FUSED_PC_PBJACOBI) return KSPFusedBlockRow(fused->dblock, fused->dblock_bs, r, i);
  return r[i];
}

static PetscErrorCode PCGFusedStart_Reference(KSP ksp, KSP_PCGFused *cg, PetscScalar partial[])
{
  KSPFused          *fused = &cg->fused;
  Mat                Amat;
  PetscInt           n, i;
  const PetscScalar *r, *d = NULL, *zh = NULL;
  PetscScalar       *p;
  KSPFusedSum        rz = {0.0, 0.0}, nn = {0.0, 0.0};

  PetscFunctionBegin;
  PetscCall(PCGetOperators(ksp->pc, &Amat, NULL));
  if (ksp->guess_zero) PetscCall(VecCopy(ksp->vec_rhs, cg->r));
  else {
    PetscCall(MatMult(Amat, ksp->vec_sol, cg->r));
    PetscCall(VecAYPX(cg->r, -1.0, ksp->vec_rhs));
  }
  if (fused->pcplace == KSP_FUSED_PC_HOST) PetscCall(KSP_PCApply(ksp, cg->r, cg->z));
  /* the blocks the steps below apply (the other methods' reference steps apply the PC itself) */
  if (fused->pcplace == KSP_FUSED_PC_PBJACOBI) PetscCall(KSPFusedBlockDiagonal(ksp, fused));
  PetscCall(VecGetLocalSize(cg->r, &n));
  PetscCall(VecGetArrayRead(cg->r, &r));
  PetscCall(VecGetArrayWrite(cg->p, &p));
  if (fused->pcplace == KSP_FUSED_PC_JACOBI) PetscCall(VecGetArrayRead(fused->dinv, &d));
  if (fused->pcplace == KSP_FUSED_PC_HOST) PetscCall(VecGetArrayRead(cg->z, &zh));
  for (i = 0; i < n; i++) {
    const PetscScalar z = zh ? zh[i] : PCGPreconditioned(fused, d, r, i);
    p[i] = z;
    KSPFusedSumAddProduct(&rz, fused->compensated, r[i], z);
    KSPFusedSumAdd(&nn, fused->compensated, PCGNormTerm(ksp->normtype, r[i], z));
  }
  if (d) PetscCall(VecRestoreArrayRead(fused->dinv, &d));
  if (zh) PetscCall(VecRestoreArrayRead(cg->z, &zh));
  PetscCall(VecRestoreArrayWrite(cg->p, &p));
  PetscCall(VecRestoreArrayRead(cg->r, &r));
  partial[PCG_RZ]   = KSPFusedSumValue(rz);
  partial[PCG_NORM] = KSPFusedSumValue(nn);
  PetscCall(PetscLogFlops(5.0 * n));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCGFusedUpdate_Reference(KSP ksp, KSP_PCGFused *cg, PetscScalar alpha, PetscScalar beta, PetscScalar partial[])
{
  KSPFused          *fused = &cg->fused;
  PetscInt           n, i;
  const PetscScalar *y, *d = NULL, *w = NULL;
  PetscScalar       *x, *r, *p, *zh = NULL;
  KSPFusedSum        rz = {0.0, 0.0}, nn = {0.0, 0.0};
  const PetscInt     bs = fused->pcplace == KSP_FUSED_PC_PBJACOBI ? fused->dblock_bs : 1;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(cg->r, &n));
  PetscCall(VecGetArray(ksp->vec_sol, &x));
  PetscCall(VecGetArray(cg->r, &r));
  PetscCall(VecGetArray(cg->p, &p));
  PetscCall(VecGetArrayRead(cg->y, &y));
  if (fused->pcplace == KSP_FUSED_PC_JACOBI) PetscCall(VecGetArrayRead(fused->dinv, &d));
  if (fused->pcplace == KSP_FUSED_PC_HOST) {
    PetscCall(VecGetArray(cg->z, &zh));
    PetscCall(VecGetArrayRead(cg->w, &w));
  }
  /* a block at a time: point-block Jacobi's z reads the block's new r */
  for (PetscInt i0 = 0; i0 < n; i0 += bs) {
    for (i = i0; i < i0 + bs; i++) {
      x[i] += alpha * p[i];
      r[i] -= alpha * y[i];
    }
    for (i = i0; i < i0 + bs; i++) {
      PetscScalar z;

      if (zh) z = zh[i] = zh[i] - alpha * w[i];
      else z = PCGPreconditioned(fused, d, r, i);
      p[i] = z + beta * p[i];
      KSPFusedSumAddProduct(&rz, fused->compensated, r[i], z);
      KSPFusedSumAdd(&nn, fused->compensated, PCGNormTerm(ksp->normtype, r[i], z));
    }
  }
  if (zh) {
    PetscCall(VecRestoreArray(cg->z, &zh));
    PetscCall(VecRestoreArrayRead(cg->w, &w));
  }
  if (d) PetscCall(VecRestoreArrayRead(fused->dinv, &d));
  PetscCall(VecRestoreArrayRead(cg->y, &y));
  PetscCall(VecRestoreArray(cg->p, &p));
  PetscCall(VecRestoreArray(cg->r, &r));
  PetscCall(VecRestoreArray(ksp->vec_sol, &x));
  partial[PCG_RZ]   = KSPFusedSumValue(rz);
  partial[PCG_NORM] = KSPFusedSumValue(nn);
  PetscCall(PetscLogFlops(10.0 * n));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCGFusedProduct_Reference(KSP ksp, KSP_PCGFused *cg, PetscScalar partial[])
{
  KSPFused          *fused = &cg->fused;
  Mat                Amat;
  PetscInt           n, i;
  const PetscScalar *p, *y, *r, *d = NULL, *w = NULL, *zh = NULL;
  KSPFusedSum        py = {0.0, 0.0}, yw = {0.0, 0.0}, yz = {0.0, 0.0};

  PetscFunctionBegin;
  PetscCall(PCGetOperators(ksp->pc, &Amat, NULL));
  PetscCall(MatMult(Amat, cg->p, cg->y));
  if (fused->pcplace == KSP_FUSED_PC_HOST) PetscCall(KSP_PCApply(ksp, cg->y, cg->w));
  PetscCall(VecGetLocalSize(cg->y, &n));
  PetscCall(VecGetArrayRead(cg->p, &p));
  PetscCall(VecGetArrayRead(cg->y, &y));
  PetscCall(VecGetArrayRead(cg->r, &r));
  if (fused->pcplace == KSP_FUSED_PC_JACOBI) PetscCall(VecGetArrayRead(fused->dinv, &d));
  if (fused->pcplace == KSP_FUSED_PC_HOST) {
    PetscCall(VecGetArrayRead(cg->w, &w));
    PetscCall(VecGetArrayRead(cg->z, &zh));
  }
  for (i = 0; i < n; i++) {
    const PetscScalar wi = w ? w[i] : PCGPreconditioned(fused, d, y, i);
    const PetscScalar zi = zh ? zh[i] : PCGPreconditioned(fused, d, r, i);
    KSPFusedSumAddProduct(&py, fused->compensated, p[i], y[i]);
    KSPFusedSumAddProduct(&yw, fused->compensated, y[i], wi);
    KSPFusedSumAddProduct(&yz, fused->compensated, y[i], zi);
  }
  if (w) {
    PetscCall(VecRestoreArrayRead(cg->w, &w));
    PetscCall(VecRestoreArrayRead(cg->z, &zh));
  }
  if (d) PetscCall(VecRestoreArrayRead(fused->dinv, &d));
  PetscCall(VecRestoreArrayRead(cg->r, &r));
  PetscCall(VecRestoreArrayRead(cg->y, &y));
  PetscCall(VecRestoreArrayRead(cg->p, &p));
  partial[PCG_PY] = KSPFusedSumValue(py);
  partial[PCG_YW] = KSPFusedSumValue(yw);
  partial[PCG_YZ] = KSPFusedSumValue(yz);
  PetscCall(PetscLogFlops(7.0 * n));
  PetscFunctionReturn(0);
}

const KSPPCGFusedSteps KSPPCGFusedSteps_Reference = {PCGFusedStart_Reference, PCGFusedUpdate_Reference, PCGFusedProduct_Reference, NULL, NULL};
