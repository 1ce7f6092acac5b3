/* pbcgsfused, reference backend: one loop over the local arrays per step,
   the oracle for the CUDA kernels. */
#include "ksp/pbcgsfusedimpl.h"

static PetscErrorCode PBCGSFusedRestart_Reference(KSP ksp, KSP_PBCGSFused *bcgs, PetscScalar partial1[])
{
  PetscInt           n, i;
  const PetscScalar *r;
  PetscScalar       *rstar, *p;
  KSPFusedSum        rr = {0.0, 0.0};

  PetscFunctionBegin;
  (void)ksp;
  PetscCall(VecGetLocalSize(bcgs->r, &n));
  PetscCall(VecGetArrayRead(bcgs->r, &r));
  PetscCall(VecGetArrayWrite(bcgs->rstar, &rstar));
  PetscCall(VecGetArrayWrite(bcgs->p, &p));
  for (i = 0; i < n; i++) {
    rstar[i] = p[i] = r[i];
    KSPFusedSumAddProduct(&rr, bcgs->fused.compensated, r[i], r[i]);
  }
  PetscCall(VecRestoreArrayWrite(bcgs->p, &p));
  PetscCall(VecRestoreArrayWrite(bcgs->rstar, &rstar));
  PetscCall(VecRestoreArrayRead(bcgs->r, &r));
  partial1[BCGS_RR]  = KSPFusedSumValue(rr);
  partial1[BCGS_RR0] = partial1[BCGS_RR];
  PetscCall(PetscLogFlops(2.0 * n));
  PetscFunctionReturn(0);
}

static PetscErrorCode PBCGSFusedStart_Reference(KSP ksp, KSP_PBCGSFused *bcgs, PetscScalar partial1[])
{
  Mat Amat;

  PetscFunctionBegin;
  PetscCall(PCGetOperators(ksp->pc, &Amat, NULL));
  if (ksp->guess_zero) PetscCall(VecCopy(ksp->vec_rhs, bcgs->tmp));
  else {
    PetscCall(MatMult(Amat, ksp->vec_sol, bcgs->tmp));
    PetscCall(VecAYPX(bcgs->tmp, -1.0, ksp->vec_rhs));
  }
  PetscCall(KSPFusedApplyPC_Reference(ksp, &bcgs->fused, bcgs->tmp, bcgs->r));
  /* r0* = p = r, as a restart makes them */
  PetscCall(PBCGSFusedRestart_Reference(ksp, bcgs, partial1));
  PetscFunctionReturn(0);
}

static PetscErrorCode PBCGSFusedProductP_Reference(KSP ksp, KSP_PBCGSFused *bcgs, PetscScalar partial1[])
{
  PetscInt           n, i;
  const PetscScalar *v, *rstar;
  KSPFusedSum        vr0 = {0.0, 0.0};

  PetscFunctionBegin;
  PetscCall(KSPFusedApplyOp_Reference(ksp, &bcgs->fused, bcgs->p, bcgs->v, bcgs->tmp));
  PetscCall(VecGetLocalSize(bcgs->v, &n));
  PetscCall(VecGetArrayRead(bcgs->v, &v));
  PetscCall(VecGetArrayRead(bcgs->rstar, &rstar));
  for (i = 0; i < n; i++) KSPFusedSumAddProduct(&vr0, bcgs->fused.compensated, v[i], rstar[i]);
  PetscCall(VecRestoreArrayRead(bcgs->rstar, &rstar));
  PetscCall(VecRestoreArrayRead(bcgs->v, &v));
  partial1[BCGS_VR0] = KSPFusedSumValue(vr0);
  PetscCall(PetscLogFlops(2.0 * n));
  PetscFunctionReturn(0);
}

static PetscErrorCode PBCGSFusedUpdateS_Reference(KSP ksp, KSP_PBCGSFused *bcgs, PetscScalar alpha)
{
  PetscFunctionBegin;
  (void)ksp;
  PetscCall(VecWAXPY(bcgs->s, -alpha, bcgs->v, bcgs->r));
  PetscFunctionReturn(0);
}

static PetscErrorCode PBCGSFusedProductS_Reference(KSP ksp, KSP_PBCGSFused *bcgs, PetscScalar partial2[])
{
  PetscInt           n, i;
  const PetscScalar *s, *t, *rstar;
  const PetscBool    comp = bcgs->fused.compensated;
  KSPFusedSum        tt = {0.0, 0.0}, ts = {0.0, 0.0}, tr0 = {0.0, 0.0}, sr0 = {0.0, 0.0}, ss = {0.0, 0.0};

  PetscFunctionBegin;
  PetscCall(KSPFusedApplyOp_Reference(ksp, &bcgs->fused, bcgs->s, bcgs->t, bcgs->tmp));
  PetscCall(VecGetLocalSize(bcgs->t, &n));
  PetscCall(VecGetArrayRead(bcgs->s, &s));
  PetscCall(VecGetArrayRead(bcgs->t, &t));
  PetscCall(VecGetArrayRead(bcgs->rstar, &rstar));
  for (i = 0; i < n; i++) {
    KSPFusedSumAddProduct(&tt, comp, t[i], t[i]);
    KSPFusedSumAddProduct(&ts, comp, t[i], s[i]);
    KSPFusedSumAddProduct(&tr0, comp, t[i], rstar[i]);
    KSPFusedSumAddProduct(&sr0, comp, s[i], rstar[i]);
    KSPFusedSumAddProduct(&ss, comp, s[i], s[i]);
  }
  PetscCall(VecRestoreArrayRead(bcgs->rstar, &rstar));
  PetscCall(VecRestoreArrayRead(bcgs->t, &t));
  PetscCall(VecRestoreArrayRead(bcgs->s, &s));
  partial2[BCGS_TT]  = KSPFusedSumValue(tt);
  partial2[BCGS_TS]  = KSPFusedSumValue(ts);
  partial2[BCGS_TR0] = KSPFusedSumValue(tr0);
  partial2[BCGS_SR0] = KSPFusedSumValue(sr0);
  partial2[BCGS_SS]  = KSPFusedSumValue(ss);
  PetscCall(PetscLogFlops(10.0 * n));
  PetscFunctionReturn(0);
}

static PetscErrorCode PBCGSFusedUpdateXRP_Reference(KSP ksp, KSP_PBCGSFused *bcgs, PetscScalar alpha, PetscScalar omega, PetscScalar beta, PetscScalar partial1[])
{
  PetscInt           n, i;
  const PetscScalar *s, *t, *v, *rstar;
  PetscScalar       *x, *r, *p;
  KSPFusedSum        rr = {0.0, 0.0}, rr0 = {0.0, 0.0};

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(bcgs->r, &n));
  PetscCall(VecGetArray(ksp->vec_sol, &x));
  PetscCall(VecGetArray(bcgs->r, &r));
  PetscCall(VecGetArray(bcgs->p, &p));
  PetscCall(VecGetArrayRead(bcgs->s, &s));
  PetscCall(VecGetArrayRead(bcgs->t, &t));
  PetscCall(VecGetArrayRead(bcgs->v, &v));
  PetscCall(VecGetArrayRead(bcgs->rstar, &rstar));
  for (i = 0; i < n; i++) {
    x[i] += alpha * p[i] + omega * s[i];
    r[i] = s[i] - omega * t[i];
    p[i] = r[i] + beta * (p[i] - omega * v[i]);
    KSPFusedSumAddProduct(&rr, bcgs->fused.compensated, r[i], r[i]);
    KSPFusedSumAddProduct(&rr0, bcgs->fused.compensated, r[i], rstar[i]);
  }
  PetscCall(VecRestoreArrayRead(bcgs->rstar, &rstar));
  PetscCall(VecRestoreArrayRead(bcgs->v, &v));
  PetscCall(VecRestoreArrayRead(bcgs->t, &t));
  PetscCall(VecRestoreArrayRead(bcgs->s, &s));
  PetscCall(VecRestoreArray(bcgs->p, &p));
  PetscCall(VecRestoreArray(bcgs->r, &r));
  PetscCall(VecRestoreArray(ksp->vec_sol, &x));
  partial1[BCGS_RR]  = KSPFusedSumValue(rr);
  partial1[BCGS_RR0] = KSPFusedSumValue(rr0);
  PetscCall(PetscLogFlops(14.0 * n));
  PetscFunctionReturn(0);
}

const KSPPBCGSFusedSteps KSPPBCGSFusedSteps_Reference = {PBCGSFusedStart_Reference, PBCGSFusedProductP_Reference, PBCGSFusedUpdateS_Reference, PBCGSFusedProductS_Reference, PBCGSFusedUpdateXRP_Reference, PBCGSFusedRestart_Reference, NULL, NULL};
