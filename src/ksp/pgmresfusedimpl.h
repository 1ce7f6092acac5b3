/* pgmresfused: restarted simpler GMRES (Walker and Zhou) with classical
   Gram-Schmidt, as pipelined by Rupp et al. (2015, Algorithm 6).

   The basis is Z = [r0/|r0|, v_0, ..., v_{m-2}] with A Z = V R, V orthonormal
   and R upper triangular. xi_j = <v_j, r_j> updates the residual vector,
   r_{j+1} = r_j - xi_j v_j, whose norm rides in the next step's reduction, so
   convergence inside a cycle is seen without a least-squares solve or an
   extra synchronization, and the update x += Z R^{-1} xi uses only the first
   k basis vectors. Each Arnoldi step has four fused steps and two packed
   reductions (three with a second Gram-Schmidt pass); the CUDA device loop
   (loop below) makes them two parts per step, with a grid barrier (single
   kernel) or a kernel boundary (graph: the first part is two kernels) after
   each. */
#ifndef PGMRESFUSEDIMPL_H
#define PGMRESFUSEDIMPL_H
#include "ksp/fusedimpl.h"

/* Sums of the orthogonalization step, in this order */
enum { GMRES_WW, GMRES_WR, GMRES_RR, GMRES_NSUMS };

typedef struct _KSP_PGMRESFused KSP_PGMRESFused;

typedef struct {
  /* r = B (b - A x) (left) or b - A x (right); partial <r,r> */
  PetscErrorCode (*start)(KSP, KSP_PGMRESFused *, PetscScalar partial[]);
  /* w = Op z_j, where z_0 = scale r (and stored), z_j = v_{j-1}, or, with
     from_r (an adaptive step, j > 0), z_j = scale r (not stored) */
  PetscErrorCode (*product)(KSP, KSP_PGMRESFused *, PetscInt j, PetscScalar scale, PetscBool from_r);
  /* partial[i] = <v_i, w> for i < j, partial[j] = <w, w> */
  PetscErrorCode (*mdot)(KSP, KSP_PGMRESFused *, PetscInt j, PetscScalar partial[]);
  /* w -= sum_{i<j} h_i v_i; partial WW = <w,w>, WR = <w,r>, RR = <r,r> */
  PetscErrorCode (*orthog)(KSP, KSP_PGMRESFused *, PetscInt j, const PetscScalar h[], PetscScalar partial[]);
  /* v_j = scale w, r -= xi v_j */
  PetscErrorCode (*normalize)(KSP, KSP_PGMRESFused *, PetscInt j, PetscScalar scale, PetscScalar xi);
  /* y += B^{right} sum_{i<k} t_i z_i; y NULL: the iterate itself */
  PetscErrorCode (*update)(KSP, KSP_PGMRESFused *, PetscInt k, const PetscScalar t[], Vec y);
  /* Steps 0, 1, ... of the cycle that starts at iteration *its0 with residual
     norm rnorm0, on the device (NULL: no such loop), and of the cycles after
     it that the device ends and starts itself, until the host must look: the
     monitors have seen every iteration before it; *its0 the first iteration
     of the last cycle, gm->k its complete steps, their R and xi; *pending
     where step gm->k stopped after its orthogonalization, with its products
     in gm->sums and its WW, WR, RR in sums[]; *start_on_host where the device
     ended a cycle (x updated) and the host is to start the next: where the
     device made that start too, gm->start_made and gm->start_norm;
     gm->cycle_ended where *pending step gm->k was stopped by the test and
     the device ended the cycle with the gm->k steps before it (x updated) */
  PetscErrorCode (*loop)(KSP, KSP_PGMRESFused *, PetscInt *its0, PetscReal rnorm0, PetscBool *pending, PetscBool *start_on_host, PetscScalar sums[]);
  /* the first cycle's start and the loop in one go, the start tested on the
     device against the reference norm FUSED_REFERENCE_* (NULL: no such
     loop); *tested false where the device handed the start to the host
     (nothing done), else as loop's, with *rnorm0 the start's norm */
  PetscErrorCode (*start_loop)(KSP, KSP_PGMRESFused *, int reference, PetscBool *tested, PetscInt *its0, PetscReal *rnorm0, PetscBool *pending, PetscBool *start_on_host, PetscScalar sums[]);
} KSPPGMRESFusedSteps;

struct _KSP_PGMRESFused {
  KSPFused                   fused; /* first: the shared driver reads it through ksp->data */
  PetscInt                   restart;
  FusedCGSRefinementType     cgstype; /* the second pass where the KSP does not hold it (fusedcompat.h) */
  PetscReal                  breakdowntol; /* |w_orth| below this times |w| is a (happy) breakdown */
  Vec                        r, z0, w, tmp, tmp2;
  Vec                       *V;            /* restart vectors */
  Vec                        solution;     /* KSPBuildSolution() without a vector of the caller's */
  PetscScalar               *R;            /* restart x restart, column-major */
  PetscScalar               *xi, *t, *h, *sums;
  PetscReal                  adaptive;     /* nu of adaptive simpler GMRES; 0: plain simpler GMRES */
  PetscReal                 *rho;          /* per step: 0 where z_j = v_{j-1}, else z_j = r_j / rho_j (adaptive) */
  PetscScalar               *coef;         /* the correction's coefficients over z_0 and the basis (adaptive) */
  PetscReal                  cycle_rnorm0; /* |r_0| of the current cycle: z_0 = r_0 / |r_0| */
  PetscInt                   adaptive_steps; /* of the last solve, those whose z_j was r_j / rho_j */
  PetscInt                   k;            /* steps done in the current cycle */
  PetscBool                  start_made;   /* the device loop ended the last cycle and made the next start: r in place */
  PetscReal                  start_norm;   /* and its |r|, which the host tests */
  PetscBool                  cycle_ended;  /* the device loop, stopped by the test at step k, ended the cycle with its k steps: x holds their update */
  const KSPPGMRESFusedSteps *steps;
};

#define PGMRES_R(gm, i, j) ((gm)->R[(i) + (j) * (gm)->restart])

PETSC_INTERN const KSPPGMRESFusedSteps KSPPGMRESFusedSteps_Reference;
PETSC_INTERN const KSPPGMRESFusedSteps KSPPGMRESFusedSteps_CUDA;
PETSC_INTERN PetscErrorCode KSPPGMRESFusedPrepare_CUDA(KSP);
PETSC_INTERN PetscErrorCode KSPPGMRESFusedSingleKernelSuits_CUDA(KSP, PetscBool *);

#endif
