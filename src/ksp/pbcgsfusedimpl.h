/* pbcgsfused: pipelined BiCGStab of Rupp et al. (2015, Algorithm 4). Four
   fused steps per iteration. The inner products of an iteration travel in
   two packed reductions: a small one with <v,r0*> that alpha needs (with the
   residual norm and <r,r0*> riding along), and the main one with the four
   products that omega and beta need. */
#ifndef PBCGSFUSEDIMPL_H
#define PBCGSFUSEDIMPL_H
#include "ksp/fusedimpl.h"

/* First reduction: after v = B A p */
enum { BCGS_RR, BCGS_RR0, BCGS_VR0, BCGS_NSUMS1 };
/* Second reduction: after t = B A s */
enum { BCGS_TT, BCGS_TS, BCGS_TR0, BCGS_SR0, BCGS_SS, BCGS_NSUMS2 };

typedef struct _KSP_PBCGSFused KSP_PBCGSFused;

typedef struct {
  /* r = B (b - A x), r0* = r, p = r; partial RR, RR0 */
  PetscErrorCode (*start)(KSP, KSP_PBCGSFused *, PetscScalar partial1[]);
  /* v = B A p; partial VR0 */
  PetscErrorCode (*product_p)(KSP, KSP_PBCGSFused *, PetscScalar partial1[]);
  /* s = r - alpha v */
  PetscErrorCode (*update_s)(KSP, KSP_PBCGSFused *, PetscScalar alpha);
  /* t = B A s; partial TT, TS, TR0, SR0, SS */
  PetscErrorCode (*product_s)(KSP, KSP_PBCGSFused *, PetscScalar partial2[]);
  /* x += alpha p + omega s, r = s - omega t, p = r + beta (p - omega v); partial RR, RR0 */
  PetscErrorCode (*update_xrp)(KSP, KSP_PBCGSFused *, PetscScalar alpha, PetscScalar omega, PetscScalar beta, PetscScalar partial1[]);
  /* r0* = r, p = r: a new shadow residual where <r,r0*> vanished; partial
     RR and RR0 (both <r,r>), before product_p */
  PetscErrorCode (*restart)(KSP, KSP_PBCGSFused *, PetscScalar partial1[]);
  /* after update_xrp of iteration it0: iterations on without the host until
     the test or a check needs it (NULL: no such loop); *its is where the
     host goes on, from product_p, or after it where the loop made it too
     (*product_done, its sums in partial1) */
  PetscErrorCode (*loop)(KSP, KSP_PBCGSFused *, PetscInt it0, PetscInt *its, PetscScalar partial1[], PetscBool *product_done);
  /* the start and the loop after it in one go, iteration 0 tested on the
     device against the reference norm FUSED_REFERENCE_* (NULL: no such
     loop); *its, the replay and product_p as loop's */
  PetscErrorCode (*start_loop)(KSP, KSP_PBCGSFused *, int reference, PetscInt *its, PetscScalar partial1[], PetscBool *product_done);
} KSPPBCGSFusedSteps;

/* A backend may hand a step's partial sums over with the next step that
   waits for the device: all of them are in place when the step before a
   synchronization point returns. */

struct _KSP_PBCGSFused {
  KSPFused                  fused; /* first: the shared driver reads it through ksp->data */
  Vec                       r, rstar, p, v, s, t, tmp;
  PetscInt                  restarts; /* of r0* in the last solve */
  /* a null space removed on the device: <t, n_k> of the last second
     reduction (<v, n_k> of the first go to fused.ns.coef) */
  PetscScalar               t_coef[FUSED_NULLSPACE_MAX];
  const KSPPBCGSFusedSteps *steps;
};

PETSC_INTERN const KSPPBCGSFusedSteps KSPPBCGSFusedSteps_Reference;
PETSC_INTERN const KSPPBCGSFusedSteps KSPPBCGSFusedSteps_CUDA;
PETSC_INTERN PetscErrorCode KSPPBCGSFusedPrepare_CUDA(KSP);

#endif
