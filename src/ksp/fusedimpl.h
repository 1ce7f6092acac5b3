/* What the three fused methods share: where the preconditioner runs, the
   backend choice, the Jacobi diagonal, the synchronization points, and
   convergence and monitoring exactly as PETSc's own methods do them. */
#ifndef FUSEDIMPL_H
#define FUSEDIMPL_H

#include <petscfused.h>
#include <petsc/private/kspimpl.h>
#include "cuda/fusedcuda.h"
#include "ksp/fusedhalo.h"

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
  char             backend_why[256];  /* why this backend, for -ksp_view */

  /* CUDA backend: the workspace (vector 0 is the Jacobi diagonal), the
     operator on the device, and the compressed exchange of its ghost values */
  PetscBool        convert;           /* -ksp_fused_convert: device copy of an AIJ operator */
  PetscInt         format;            /* -ksp_fused_mat_format */
  PetscBool        device_loop;       /* -ksp_fused_device_loop: iterate on the device where allowed */
  PetscInt         single_kernel_rows; /* -ksp_fused_single_kernel_rows: up to this size, the loop is one cooperative kernel */
  PetscBool        single_kernel;      /* this solve's device loop is one cooperative kernel (else a CUDA graph) */
  FusedCUDA        cuda;
  PetscInt         cuda_device, cuda_n, cuda_nvecs, cuda_maxsums;
  FusedDevMat      devmat;
  PetscBool        devmat_borrowed;   /* devmat is a hybcuda operator's own copy, not ours to free */
  PetscObjectId    devmat_id;
  PetscObjectState devmat_state;
  PetscLogDouble   mat_nnz;           /* local nonzeros of the operator, for the flop counts */
  PetscObjectState dinv_uploaded;     /* state of dinv when it went to the device */
  FusedHalo        halo;              /* the compressed exchange of the operator's ghost values */
  double          *halo_send, *halo_ghost; /* its pinned buffers (owned by devmat) */
  PetscInt         halo_total;        /* entries exchanged per product, summed over ranks */
  FusedHaloTransport halo_transport;  /* -ksp_fused_halo: how the entries travel (auto: decided per operator) */
  double          *x_device;          /* the iterate on the device during a CUDA solve, else NULL */
  const char      *loop_why;          /* where the iterations ran in the last solve */
  PetscInt         loop_its;          /* iterations run by the device loop in the last solve */
  PetscInt         loop_starts;       /* times the host started the device loop in the last solve */
} KSPFused;

/* Reserved workspace vector: the inverse diagonal of fused Jacobi */
#define FUSED_VEC_DINV 0

#define PetscCallFusedCUDA(call) \
  do { \
    int fused_cuda_err_ = (call); \
    PetscCheck(!fused_cuda_err_, PETSC_COMM_SELF, fused_cuda_err_ == FUSED_CUDA_ERR_MEM ? PETSC_ERR_MEM : PETSC_ERR_LIB, "%s", FusedCUDALastError()); \
  } while (0)

PETSC_INTERN PetscLogEvent KSP_Fused_Allreduce, KSP_Fused_DeviceLoop, KSP_Fused_Convert, KSP_Fused_Halo;
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

/* CUDA backend (fused_cuda.c) */
PETSC_INTERN PetscErrorCode KSPFusedChooseBackend(KSP, KSPFused *);
PETSC_INTERN PetscErrorCode KSPFusedCUDASetUp(KSP, KSPFused *);
PETSC_INTERN PetscErrorCode KSPFusedCUDAPrepare(KSP, KSPFused *, PetscInt nvecs, PetscInt maxsums, const char *what);
PETSC_INTERN PetscErrorCode KSPFusedCUDAReset(KSPFused *);
PETSC_INTERN PetscErrorCode KSPFusedCUDAUpload(KSPFused *, Vec, double *);
PETSC_INTERN PetscErrorCode KSPFusedCUDADownload(KSPFused *, const double *, Vec);
PETSC_INTERN PetscErrorCode KSPFusedCUDAGhosts(KSPFused *, const double *);
PETSC_INTERN PetscErrorCode KSPFusedCUDAGhostsBegin(KSPFused *, const double *);
PETSC_INTERN PetscErrorCode KSPFusedCUDAGhostsEnd(KSPFused *);
PETSC_INTERN PetscErrorCode KSPFusedCUDAHaloSetUp(KSPFused *, FusedHaloTransport);
PETSC_INTERN PetscErrorCode KSPFusedCUDAHaloDestroy(KSPFused *);
PETSC_INTERN PetscErrorCode FusedHaloCheckCUDAAwareMPI(MPI_Comm);
PETSC_INTERN PetscErrorCode FusedPickDevice(PetscObject, PetscInt *);
/* the hybcuda matrix type (src/mat/hybcuda.c) */
PETSC_INTERN PetscErrorCode MatHYBCUDAGetBlocks(Mat, Mat *Ad, Mat *Ao, const PetscInt **garray);
PETSC_INTERN PetscErrorCode MatHYBCUDAGetDevMat(Mat, FusedDevMat *, PetscInt *device);
PETSC_INTERN PetscErrorCode KSPFusedCUDALoopAllowed(KSP, KSPFused *, PetscBool *);
PETSC_INTERN PetscErrorCode KSPFusedCUDAConvergence(KSP, FusedConvergence *);
PETSC_INTERN PetscErrorCode KSPFusedCUDAReplay(KSP, KSPFused *, PetscInt from, PetscInt to);
PETSC_INTERN PetscErrorCode KSPFusedCUDASystemToDevice(KSP, KSPFused *, double *b_dev, double *x_dev);
PETSC_INTERN PetscErrorCode KSPFusedCUDASolutionToHost(KSP, KSPFused *);
PETSC_INTERN PetscErrorCode KSPFusedFinishSolve(KSP, KSPFused *);
PETSC_INTERN PetscErrorCode KSPBuildSolution_Fused(KSP, Vec, Vec *);

/* Reference-backend helpers over local arrays */
PETSC_INTERN PetscErrorCode KSPFusedApplyPC_Reference(KSP, KSPFused *, Vec, Vec);
PETSC_INTERN PetscErrorCode KSPFusedApplyOp_Reference(KSP, KSPFused *, Vec, Vec, Vec);

#endif
