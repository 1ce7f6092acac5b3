/* What the three fused methods share: where the preconditioner runs, the
   backend choice, the Jacobi diagonal, the synchronization points, and
   convergence and monitoring exactly as PETSc's own methods do them. */
#ifndef FUSEDIMPL_H
#define FUSEDIMPL_H

#include <petscfused.h>
#include <petsc/private/kspimpl.h>

#if defined(PETSC_USE_COMPLEX)
  #error "petsc-fused needs a PETSc built with real scalars"
#endif

/* Where the preconditioner is applied. NONE and JACOBI are fused into the
   vector updates; HOST calls PCApply() at its place in the algorithm. */
typedef enum {
  KSP_FUSED_PC_NONE,
  KSP_FUSED_PC_JACOBI,
  KSP_FUSED_PC_HOST
} KSPFusedPCPlace;

typedef struct {
  KSPFusedBackend  backend_requested; /* what the user asked for */
  KSPFusedBackend  backend;           /* what runs: CUDA or REFERENCE */
  KSPFusedPCPlace  pcplace;
  const char      *pcplace_why;       /* one line for -ksp_view */
  Vec              dinv;              /* inverse diagonal, when Jacobi is fused */
  PetscObjectId    dinv_pmat_id;      /* the Pmat (id, state) dinv was taken from */
  PetscObjectState dinv_pmat_state;
  PetscInt         nsync;             /* global reductions in the last solve */
  const char      *description;       /* the method in one line, for -ksp_view */
} KSPFused;

PETSC_INTERN PetscLogEvent KSP_Fused_Allreduce;
PETSC_INTERN PetscLogEvent KSP_PCGFused_Update, KSP_PCGFused_Product;
PETSC_INTERN PetscLogEvent KSP_PBCGSFused_ProductP, KSP_PBCGSFused_UpdateS, KSP_PBCGSFused_ProductS, KSP_PBCGSFused_UpdateXRP;
PETSC_INTERN PetscLogEvent KSP_PGMRESFused_Product, KSP_PGMRESFused_MDot, KSP_PGMRESFused_Orthog, KSP_PGMRESFused_Normalize, KSP_PGMRESFused_Update;

PETSC_INTERN PetscErrorCode KSPFusedSetFromOptions(KSP, KSPFused *, PetscOptionItems *);
PETSC_INTERN PetscErrorCode KSPFusedSetUp(KSP, KSPFused *);
PETSC_INTERN PetscErrorCode KSPFusedPrepareSolve(KSP, KSPFused *);
PETSC_INTERN PetscErrorCode KSPFusedView(KSPFused *, PetscViewer);
PETSC_INTERN PetscErrorCode KSPFusedReset(KSPFused *);
PETSC_INTERN PetscErrorCode KSPFusedAllreduce(KSP, KSPFused *, PetscInt, PetscScalar[]);
PETSC_INTERN PetscErrorCode KSPFusedConverged(KSP, PetscInt, PetscReal);
PETSC_INTERN PetscErrorCode KSPFusedComposeBackend(KSP, KSPFused *, const char *description);
/* KSP hooks for methods with nothing of their own to reset, view or set */
PETSC_INTERN PetscErrorCode KSPReset_Fused(KSP);
PETSC_INTERN PetscErrorCode KSPDestroy_Fused(KSP);
PETSC_INTERN PetscErrorCode KSPView_Fused(KSP, PetscViewer);
PETSC_INTERN PetscErrorCode KSPSetFromOptions_Fused(KSP, PetscOptionItems *);
PETSC_INTERN PetscErrorCode KSPFusedDecomposeBackend(KSP);

/* Reference-backend helpers over local arrays */
PETSC_INTERN PetscErrorCode KSPFusedApplyPC_Reference(KSP, KSPFused *, Vec, Vec);
PETSC_INTERN PetscErrorCode KSPFusedApplyOp_Reference(KSP, KSPFused *, Vec, Vec, Vec);

#endif
