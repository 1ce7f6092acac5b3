/* pgmresfused, reference backend: each step one pass over the local arrays
   (the basis read once per pass), the oracle for the CUDA kernels. */
#include "ksp/pgmresfusedimpl.h"

static PetscErrorCode PGMRESFusedStart_Reference(KSP ksp, KSP_PGMRESFused *gm, PetscScalar partial[])
{
  Mat                Amat;
  PetscInt           n, i;
  const PetscScalar *r;
  KSPFusedSum        rr = {0.0, 0.0};

  PetscFunctionBegin;
  PetscCall(PCGetOperators(ksp->pc, &Amat, NULL));
  if (ksp->guess_zero) PetscCall(VecCopy(ksp->vec_rhs, gm->tmp));
  else {
    PetscCall(MatMult(Amat, ksp->vec_sol, gm->tmp));
    PetscCall(VecAYPX(gm->tmp, -1.0, ksp->vec_rhs));
  }
  if (ksp->pc_side == PC_LEFT) PetscCall(KSPFusedApplyPC_Reference(ksp, &gm->fused, gm->tmp, gm->r));
  else PetscCall(VecCopy(gm->tmp, gm->r));
  PetscCall(VecGetLocalSize(gm->r, &n));
  PetscCall(VecGetArrayRead(gm->r, &r));
  for (i = 0; i < n; i++) KSPFusedSumAddProduct(&rr, gm->fused.compensated, r[i], r[i]);
  PetscCall(VecRestoreArrayRead(gm->r, &r));
  partial[0] = KSPFusedSumValue(rr);
  PetscCall(PetscLogFlops(2.0 * n));
  PetscFunctionReturn(0);
}

static PetscErrorCode PGMRESFusedProduct_Reference(KSP ksp, KSP_PGMRESFused *gm, PetscInt j, PetscScalar scale, PetscBool from_r)
{
  PetscFunctionBegin;
  if (j == 0) {
    PetscCall(VecAXPBY(gm->z0, scale, 0.0, gm->r));
    PetscCall(KSPFusedApplyOp_Reference(ksp, &gm->fused, gm->z0, gm->w, gm->tmp));
  } else if (from_r) { /* an adaptive step: z_j = scale r, which the update forms from z_0 and the basis */
    PetscCall(VecAXPBY(gm->tmp2, scale, 0.0, gm->r));
    PetscCall(KSPFusedApplyOp_Reference(ksp, &gm->fused, gm->tmp2, gm->w, gm->tmp));
  } else PetscCall(KSPFusedApplyOp_Reference(ksp, &gm->fused, gm->V[j - 1], gm->w, gm->tmp));
  PetscFunctionReturn(0);
}

/* The basis is read four vectors at a time, so w is read once per four
   products instead of once per product (as PETSc's VecMDot does). */
static PetscErrorCode PGMRESFusedMDot_Reference(KSP ksp, KSP_PGMRESFused *gm, PetscInt j, PetscScalar partial[])
{
  PetscInt           n, i, l;
  const PetscScalar *w, *v[4];
  const PetscBool    comp = gm->fused.compensated;
  KSPFusedSum        ww   = {0.0, 0.0};

  PetscFunctionBegin;
  (void)ksp;
  PetscCall(VecGetLocalSize(gm->w, &n));
  PetscCall(VecGetArrayRead(gm->w, &w));
  for (l = 0; l < j; l += 4) {
    const PetscInt m = PetscMin(4, j - l);
    KSPFusedSum    s0 = {0.0, 0.0}, s1 = {0.0, 0.0}, s2 = {0.0, 0.0}, s3 = {0.0, 0.0};
    PetscInt       q;

    for (q = 0; q < m; q++) PetscCall(VecGetArrayRead(gm->V[l + q], &v[q]));
    for (q = m; q < 4; q++) v[q] = v[0]; /* read, never summed */
    for (i = 0; i < n; i++) {
      const PetscScalar wi = w[i];
      KSPFusedSumAddProduct(&s0, comp, v[0][i], wi);
      KSPFusedSumAddProduct(&s1, comp, v[1][i], wi);
      KSPFusedSumAddProduct(&s2, comp, v[2][i], wi);
      KSPFusedSumAddProduct(&s3, comp, v[3][i], wi);
    }
    partial[l] = KSPFusedSumValue(s0);
    if (m > 1) partial[l + 1] = KSPFusedSumValue(s1);
    if (m > 2) partial[l + 2] = KSPFusedSumValue(s2);
    if (m > 3) partial[l + 3] = KSPFusedSumValue(s3);
    for (q = 0; q < m; q++) PetscCall(VecRestoreArrayRead(gm->V[l + q], &v[q]));
  }
  for (i = 0; i < n; i++) KSPFusedSumAddProduct(&ww, comp, w[i], w[i]);
  partial[j] = KSPFusedSumValue(ww);
  PetscCall(VecRestoreArrayRead(gm->w, &w));
  PetscCall(PetscLogFlops(2.0 * n * (j + 1)));
  PetscFunctionReturn(0);
}

/* w -= sum h_l v_l four basis vectors per pass over w, then the three sums */
static PetscErrorCode PGMRESFusedOrthog_Reference(KSP ksp, KSP_PGMRESFused *gm, PetscInt j, const PetscScalar h[], PetscScalar partial[])
{
  PetscInt           n, i, l;
  const PetscScalar *r, *v[4];
  PetscScalar       *w;
  const PetscBool    comp = gm->fused.compensated;
  KSPFusedSum        ww = {0.0, 0.0}, wr = {0.0, 0.0}, rr = {0.0, 0.0};

  PetscFunctionBegin;
  (void)ksp;
  PetscCall(VecGetLocalSize(gm->w, &n));
  PetscCall(VecGetArray(gm->w, &w));
  for (l = 0; l < j; l += 4) {
    const PetscInt m = PetscMin(4, j - l);
    PetscScalar    c[4] = {0.0, 0.0, 0.0, 0.0};
    PetscInt       q;

    for (q = 0; q < m; q++) {
      PetscCall(VecGetArrayRead(gm->V[l + q], &v[q]));
      c[q] = h[l + q];
    }
    for (q = m; q < 4; q++) v[q] = v[0]; /* with a zero coefficient */
    /* left to right, the order of the CUDA kernel: w - c0 v0 - c1 v1 - ... */
    for (i = 0; i < n; i++) w[i] = w[i] - c[0] * v[0][i] - c[1] * v[1][i] - c[2] * v[2][i] - c[3] * v[3][i];
    for (q = 0; q < m; q++) PetscCall(VecRestoreArrayRead(gm->V[l + q], &v[q]));
  }
  PetscCall(VecGetArrayRead(gm->r, &r));
  for (i = 0; i < n; i++) {
    KSPFusedSumAddProduct(&ww, comp, w[i], w[i]);
    KSPFusedSumAddProduct(&wr, comp, w[i], r[i]);
    KSPFusedSumAddProduct(&rr, comp, r[i], r[i]);
  }
  PetscCall(VecRestoreArrayRead(gm->r, &r));
  PetscCall(VecRestoreArray(gm->w, &w));
  partial[GMRES_WW] = KSPFusedSumValue(ww);
  partial[GMRES_WR] = KSPFusedSumValue(wr);
  partial[GMRES_RR] = KSPFusedSumValue(rr);
  PetscCall(PetscLogFlops(2.0 * n * (j + 3)));
  PetscFunctionReturn(0);
}

static PetscErrorCode PGMRESFusedNormalize_Reference(KSP ksp, KSP_PGMRESFused *gm, PetscInt j, PetscScalar scale, PetscScalar xi)
{
  PetscInt           n, i;
  const PetscScalar *w;
  PetscScalar       *v, *r;

  PetscFunctionBegin;
  (void)ksp;
  PetscCall(VecGetLocalSize(gm->w, &n));
  PetscCall(VecGetArrayRead(gm->w, &w));
  PetscCall(VecGetArrayWrite(gm->V[j], &v));
  PetscCall(VecGetArray(gm->r, &r));
  for (i = 0; i < n; i++) {
    v[i] = scale * w[i];
    r[i] -= xi * v[i];
  }
  PetscCall(VecRestoreArray(gm->r, &r));
  PetscCall(VecRestoreArrayWrite(gm->V[j], &v));
  PetscCall(VecRestoreArrayRead(gm->w, &w));
  PetscCall(PetscLogFlops(3.0 * n));
  PetscFunctionReturn(0);
}

static PetscErrorCode PGMRESFusedUpdate_Reference(KSP ksp, KSP_PGMRESFused *gm, PetscInt k, const PetscScalar t[], Vec y)
{
  PetscFunctionBegin;
  if (k == 0) PetscFunctionReturn(0);
  if (!y) y = ksp->vec_sol;
  /* tmp = sum t_i z_i with z_0 = r0/|r0| and z_i = v_{i-1} */
  PetscCall(VecAXPBY(gm->tmp, t[0], 0.0, gm->z0));
  if (k > 1) PetscCall(VecMAXPY(gm->tmp, k - 1, t + 1, gm->V));
  if (ksp->pc_side == PC_RIGHT) {
    PetscCall(KSPFusedApplyPC_Reference(ksp, &gm->fused, gm->tmp, gm->tmp2));
    PetscCall(VecAXPY(y, 1.0, gm->tmp2));
  } else PetscCall(VecAXPY(y, 1.0, gm->tmp));
  PetscFunctionReturn(0);
}

const KSPPGMRESFusedSteps KSPPGMRESFusedSteps_Reference = {PGMRESFusedStart_Reference, PGMRESFusedProduct_Reference, PGMRESFusedMDot_Reference, PGMRESFusedOrthog_Reference, PGMRESFusedNormalize_Reference, PGMRESFusedUpdate_Reference, NULL, NULL};
