/* pcgfused: pipelined CG of Rupp et al. (2015, Algorithm 2). Two fused steps
   per iteration and one synchronization point carrying <r,z>, the norm,
   <p,y>, <y,w> and <y,z>; the residual product of the next iteration comes
   from rz' = rz - 2 alpha <y,z> + alpha^2 <y,w>, so p can be updated in the
   same pass as r. (Rupp's rz' = alpha^2 <y,w> - rz takes <y,z> = <p,y>,
   which holds only for a symmetric A: with a nonsymmetric one, such as kept
   Dirichlet rows, it cost a third more iterations than PETSc's cg.) */
#ifndef PCGFUSEDIMPL_H
#define PCGFUSEDIMPL_H
#include "ksp/fusedimpl.h"

/* Partial sums of the synchronization point, in this order */
enum { PCG_RZ, PCG_NORM, PCG_PY, PCG_YW, PCG_YZ, PCG_NSUMS };
/* a null space's sums follow them (FusedPCGNullSpaceFold() reads YW and YZ by place) */
_Static_assert(PCG_YW == 3 && PCG_YZ == 4 && (int)PCG_NSUMS == (int)FUSED_PCG_BY_N, "pcgfused's sums as the device lays them out");

typedef struct _KSP_PCGFused KSP_PCGFused;

/* beta = <r',z'>/<r,z> from the sums of the last synchronization point,
   with r' = r - alpha y and z' = z - alpha w (the device computes the same) */
static inline PetscScalar PCGFusedBeta(PetscScalar rz, PetscScalar alpha, PetscScalar yw, PetscScalar yz)
{
  return 1.0 + alpha * (alpha * yw - 2.0 * yz) / rz;
}

/* Each step is one pass over the vectors; partial[] receives this rank's sums. */
typedef struct {
  /* r = b - A x, z = B r, p = z; partial RZ and NORM */
  PetscErrorCode (*start)(KSP, KSP_PCGFused *, PetscScalar partial[]);
  /* x += alpha p, r -= alpha y, z -= alpha w, p = z + beta p; partial RZ and NORM */
  PetscErrorCode (*update)(KSP, KSP_PCGFused *, PetscScalar alpha, PetscScalar beta, PetscScalar partial[]);
  /* y = A p, w = B y; partial PY, YW and YZ */
  PetscErrorCode (*product)(KSP, KSP_PCGFused *, PetscScalar partial[]);
  /* iterations it0+1.. without the host, until the test or a check needs it
     (NULL: no such loop); *its is that iteration, sums[] its sums */
  PetscErrorCode (*loop)(KSP, KSP_PCGFused *, PetscInt it0, PetscInt *its, PetscScalar sums[]);
  /* start, product and the loop from iteration 0 in one go, iteration 0
     tested on the device too, against the reference norm FUSED_REFERENCE_*
     (NULL: no such loop); *its and sums[] as loop's, iterations 0..*its-1
     replayed */
  PetscErrorCode (*start_loop)(KSP, KSP_PCGFused *, int reference, PetscInt *its, PetscScalar sums[]);
} KSPPCGFusedSteps;

/* A backend may hand a step's partial sums over with the next step that
   waits for the device: all of them are in place when the step before a
   synchronization point returns. */

struct _KSP_PCGFused {
  KSPFused                fused; /* first: the shared driver reads it through ksp->data */
  Vec                     r, p, y;
  Vec                     z, w; /* only where the PC runs on the host; fused PCs form them on the fly */
  const KSPPCGFusedSteps *steps;
};

PETSC_INTERN const KSPPCGFusedSteps KSPPCGFusedSteps_Reference;
PETSC_INTERN const KSPPCGFusedSteps KSPPCGFusedSteps_CUDA;
PETSC_INTERN PetscErrorCode KSPPCGFusedPrepare_CUDA(KSP);

#endif
