/* What the PCs petsc-fused applies with its own device code (fusedmg.c:
   PETSc's multigrid; fusedilu.c: PETSc's ILU(0)) share: a key that says
   when PETSc's PC changed, and the check of our application against
   PCApply() on a probe vector before it is used. */
#include "ksp/fusedimpl.h"

/* the same probe vector in every run: a fixed pseudo-random sequence in [-1, 1] */
PETSC_INTERN PetscErrorCode KSPFusedFillProbe(Vec v, PetscInt seed)
{
  PetscScalar *a;
  PetscInt     n;
  PetscInt64   s = 0x9E3779B97F4A7C15LL ^ (PetscInt64)(seed + 1);

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetArrayWrite(v, &a));
  for (PetscInt i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= (PetscInt64)((unsigned long long)s >> 7);
    s ^= s << 17;
    a[i] = (PetscScalar)((double)((unsigned long long)s >> 11) / 4503599627370496.0 - 1.0);
  }
  PetscCall(VecRestoreArrayWrite(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* FNV-1a over the bytes of value */
PETSC_INTERN void KSPFusedKeyAdd(PetscInt64 *key, PetscInt64 value)
{
  unsigned long long h = (unsigned long long)*key;
  for (int b = 0; b < 8; b++) {
    h ^= (unsigned long long)(value >> (8 * b)) & 0xffu;
    h *= 1099511628211ULL;
  }
  *key = (PetscInt64)h;
}

/* an object's id and state (nothing for NULL) */
PETSC_INTERN PetscErrorCode KSPFusedKeyAddObject(PetscInt64 *key, PetscObject obj)
{
  PetscObjectId    id = 0;
  PetscObjectState state = 0;

  PetscFunctionBegin;
  if (obj) {
    PetscCall(PetscObjectGetId(obj, &id));
    PetscCall(PetscObjectStateGet(obj, &state));
  }
  KSPFusedKeyAdd(key, (PetscInt64)id);
  KSPFusedKeyAdd(key, (PetscInt64)state);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* apply (ours, on the device) against PETSc's PCApply() on a probe vector:
   *rel their relative difference, collective (a NaN where either is one) */
PETSC_INTERN PetscErrorCode KSPFusedCompareWithPCApply(KSP ksp, KSPFused *fused, KSPFusedDeviceApply apply, double *scratch_in, double *scratch_out, PetscReal *rel)
{
  Vec       in, ref, ours;
  PetscReal diff, size;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(ksp->vec_rhs, &in));
  PetscCall(VecDuplicate(in, &ref));
  PetscCall(VecDuplicate(in, &ours));
  PetscCall(KSPFusedFillProbe(in, 1000));
  PetscCall(PCApply(ksp->pc, in, ref));
  PetscCall(FusedDeviceUpload(&fused->work, in, scratch_in));
  PetscCall(apply(fused, scratch_in, scratch_out));
  PetscCall(FusedDeviceDownload(&fused->work, scratch_out, ours));
  PetscCall(VecNorm(ref, NORM_2, &size));
  PetscCall(VecAXPY(ours, -1.0, ref));
  PetscCall(VecNorm(ours, NORM_2, &diff));
  *rel = size > 0 ? diff / size : diff;
  PetscCall(VecDestroy(&in));
  PetscCall(VecDestroy(&ref));
  PetscCall(VecDestroy(&ours));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -ksp_view's line where the PC is one of ours: text (ours, made at the
   build) where why is empty and *active is set, else where the PC runs and
   why it is not in our own (what: "V-cycle", "triangular solves") */
PETSC_INTERN PetscErrorCode KSPFusedOwnPCPlace(KSPFused *fused, const char *why, const char *what, char *text, size_t textlen, PetscBool *active)
{
  PetscFunctionBegin;
  *active = (PetscBool)!why[0];
  if (why[0]) PetscCall(PetscSNPrintf(text, textlen, "%s; not in petsc-fused's own %s: %s", fused->pcplace_why, what, why));
  fused->pcplace_why = text;
  PetscFunctionReturn(PETSC_SUCCESS);
}
