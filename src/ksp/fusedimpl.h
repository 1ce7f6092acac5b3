/* What the three fused methods share: where the preconditioner runs, the
   backend choice, the Jacobi diagonal, the synchronization points, and
   convergence and monitoring exactly as PETSc's own methods do them. */
#ifndef FUSEDIMPL_H
#define FUSEDIMPL_H

#include <petscfused.h>
#include <petsc/private/kspimpl.h>
#include "fusedcompat.h"
#include "device/fuseddevice.h"

#if defined(PETSC_USE_COMPLEX)
  #error "petsc-fused needs a PETSc built with real scalars"
#endif

/* Where the preconditioner is applied. NONE, JACOBI and PBJACOBI (point-block
   Jacobi, in the methods that fuse it) are fused into the vector updates; DEVICE calls PCApply() at its place in the algorithm on
   CUDA vectors over the solver's device vectors (a CUDA PETSc), the rest of
   the iteration staying fused on the device; HOST calls PCApply() in a
   solve that runs on the host (the reference backend). */
typedef enum {
  KSP_FUSED_PC_NONE,
  KSP_FUSED_PC_JACOBI,
  KSP_FUSED_PC_PBJACOBI,
  KSP_FUSED_PC_DEVICE,
  KSP_FUSED_PC_HOST
} KSPFusedPCPlace;

/* the PETSc vectors a PC is applied to and from on the device */
#define FUSED_MAX_WRAPS 2

/* PETSc's multigrid (PCMG, PCGAMG) in petsc-fused's own V-cycle on the
   device (fusedmg.c): levels 0 (coarsest) up, ops[3 l + 0..2] level l's
   operator, interpolation and restriction on the device */
#define FUSED_MG_MAX_LEVELS 30
#define FUSED_MG_COARSE_MAX 2048 /* rows of the coarsest level, solved as a dense matrix */
#define FUSED_MG_PROBE_TOL  1e-10 /* a smoother is its polynomial to this much of its result */
#define FUSED_MG_VERIFY_TOL 1e-8  /* our V-cycle is PETSc's to this much on a probe vector */
typedef struct {
  PetscBool            enabled; /* -ksp_fused_mg */
  PetscBool            active;  /* this solve applies it */
  PetscInt64           key;     /* the hierarchy it was built from or refused for (0: none) */
  FusedDevMG           dev;
  PetscInt             nlevels;
  FusedDeviceOperator *ops;
  char                 why[384];  /* why the last hierarchy stays with PCApply() ("": it does not) */
  char                 text[768]; /* -ksp_view's line */
} KSPFusedMG;

/* PETSc's ILU(0) (PCILU, or block Jacobi whose blocks are ILU(0)) in
   petsc-fused's own level-scheduled triangular solves (fusedilu.c) */
#define FUSED_ILU_VERIFY_TOL 1e-8 /* our solves are PETSc's to this much on a probe vector */
typedef struct {
  PetscBool   enabled; /* -ksp_fused_ilu */
  PetscInt    wide_level; /* -ksp_fused_ilu_wide_level: mean rows a level above which a triangle's solve takes a grid of blocks */
  PetscBool   active;  /* this solve applies it */
  PetscInt64  key;     /* the factor it was built from or refused for (0: none) */
  FusedDevTri dev;
  char        why[384];  /* why the last factor stays with PCApply() ("": it does not) */
  char        text[768]; /* -ksp_view's line */
} KSPFusedILU;

typedef struct {
  /* what the user asked for (options and setters) */
  KSPFusedBackend    backend_requested;
  PetscBool          convert;            /* -ksp_fused_convert: device copy of an AIJ operator */
  PetscInt           format;             /* -ksp_fused_mat_format */
  PetscBool          device_loop;        /* -ksp_fused_device_loop: iterate on the device where allowed */
  PetscInt           single_kernel_rows; /* -ksp_fused_single_kernel_rows: up to this size, the loop is one cooperative kernel */
  PetscInt           single_kernel_rows_long; /* the method's default where the operator has long rows (-1: the same) */
  PetscBool          single_kernel_rows_set;  /* the user gave single_kernel_rows: it holds for every operator */
  FusedHaloTransport halo_transport;     /* -ksp_fused_halo: how ghost values travel (auto: decided per operator) */
  PetscBool          compensated;        /* -ksp_fused_compensated: every reduction's sums compensated (KSPFusedSum) */
  const char        *description;        /* the method in one line, for -ksp_view */

  /* where this solve runs, and why */
  KSPFusedBackend    backend;            /* CUDA or REFERENCE */
  char               backend_why[256];
  KSPFusedPCPlace    pcplace;
  const char        *pcplace_why;        /* one line for -ksp_view */
  char               pcplace_text[256];  /* where pcplace_why names the PC */
  PetscBool          device_pc;          /* the method's CUDA steps can apply a PC between kernels */
  Vec                dinv;               /* inverse diagonal, when Jacobi is fused */
  PetscObjectId      dinv_pmat_id;       /* the Pmat (id, state) dinv was taken from */
  PetscObjectState   dinv_pmat_state;
  /* fused point-block Jacobi: its inverse blocks as the PC applies them,
     row by row (FusedPCGVecs in src/cuda/fusedcuda.h), for the reference
     backend and for a CUDA backend whose PETSc has no CUDA vectors */
  PetscBool          device_pbjacobi;    /* the method's steps fuse it (CUDA and reference backends) */
  int (*load_kernels)(int device, int compensated); /* the method's CUDA kernels (plain or compensated sums), loaded at KSPSetUp() (src/cuda/modules.cu) */
  PetscErrorCode (*cuda_prepare)(KSP);   /* the method's device workspace: KSPFusedCUDAPrepare() with its sizes */
  PetscErrorCode (*single_kernel_suits)(KSP, PetscBool *); /* whether the method's single kernel suits this operator on this device, asked where the rows allow it and the user gave no limit (NULL: the rows decide) */
  PetscBool          pbjacobi_left_only; /* as a left preconditioner only */
  PetscInt           dblock_bs;          /* rows a block, where pcplace is PBJACOBI */
  PetscScalar       *dblock;             /* on the host (NULL until needed) */
  PetscObjectId      dblock_pmat_id;     /* the Pmat (id, state) dblock was taken from */
  PetscObjectState   dblock_pmat_state;
  PetscInt           nsync;              /* global reductions in the last solve */

  /* the CUDA backend: the device, the solver's work there (vector 0 is the
     Jacobi diagonal), and the operator's device rows with their halo */
  PetscInt            device;
  FusedDeviceWork     work;
  FusedDeviceOperator op;
  PetscObjectId       op_id;             /* the operator (id, state) op was made from */
  PetscObjectState    op_state;
  PetscObjectState    op_nzstate;        /* its nonzero pattern's state */
  PetscObjectState    dinv_uploaded;     /* state of dinv when it went to the device */
  PetscObjectId       dblock_device_id;  /* the Pmat (id, state) the device's inverse blocks were taken from (0: none) */
  PetscInt            aux_vecs;          /* workspace vector where the inverse blocks or the null space's vectors begin (KSPFusedCUDAPrepare()) */
  PetscObjectState    dblock_device_state;
  double             *x_device;          /* the iterate on the device during a CUDA solve, else NULL */
  /* VECCUDA b and x read and written in place, in the single-kernel device
     loop (KSPFusedCUDASystemToDevice()): their device arrays, checked out
     for the solve, else NULL */
  const PetscScalar  *b_inplace;
  PetscScalar        *x_inplace;
  PetscBool           x_inplace_write;   /* x's was checked out for writing only (a zero guess) */
  PetscBool           inplace_last;      /* the last solve took b and x in place */
  PetscBool           hostvec_last;      /* the last solve copied b and x between host vectors and the device */
  PetscBool           b_pinned, x_pinned; /* ... and their arrays were pinned in place (-ksp_fused_pin_host_vectors) */
  PetscInt            inplace_said;      /* what -info last said of it: 0 nothing yet, 1 copies, 2 in place */
  PetscBool           loop_solve;        /* this solve may iterate in the device loop (KSPFusedCUDALoopAllowed()) */
  PetscBool           single_kernel;     /* this solve's device loop is one cooperative kernel (else a CUDA graph) */
  PetscBool           single_kernel_unsuited; /* the last KSPFusedCUDALoopAllowed(): the rows allowed the single kernel, the method's single_kernel_suits() did not */
  PetscBool           single_kernel_likely; /* at the last KSPFusedCUDAPrepare(): the solve will likely take the single kernel (its launch facts are asked ahead) */
  const char         *loop_why;          /* where the iterations ran in the last solve */
  PetscInt            loop_its;          /* iterations run by the device loop in the last solve */
  PetscInt            loop_starts;       /* times the host started the device loop in the last solve */
  /* a PC applied on the device: PETSc vectors over the work's device vectors */
  Vec                 wrap[FUSED_MAX_WRAPS];
  PetscInt            nwrap;
  PetscInt            pc_applies;        /* in the last solve */
  PetscLogDouble      pc_copies;         /* host-device copies PETSc counted in those */
  PetscBool           check_symmetry;    /* the method takes a shortcut where A is symmetric: where PETSc does not know, the device copy is checked (one rank; KSPFusedOperatorFoundSymmetric()) */
  /* the operator's null space, removed by the fused steps on the device */
  PetscBool           device_nullspace;  /* the method's CUDA steps can, with the fused PC */
  PetscInt            single_kernel_ns;  /* the largest basis its single-kernel loop removes (0: none; a larger one takes the graph) */
  PetscInt            loop_spare_vecs;   /* second copies of vectors its single-kernel loop alternates with */
  MatNullSpace        nullsp;            /* this solve's where they do, else NULL */
  FusedNullSpace      ns;                /* its basis on the device (ns.m = 0: none) */
  PetscObjectId       ns_uploaded;       /* the null space whose vectors are on the device (0: none) */
  KSPFusedMG          mg;                /* a multigrid PC in our own V-cycle */
  KSPFusedILU         ilu;               /* an ILU(0) PC in our own triangular solves */
} KSPFused;

/* A sum of the reference backend's reductions: plain, or with
   -ksp_fused_compensated the rounding error of each addition and product
   carried in c (TwoSum and TwoProduct: Ogita, Rump and Oishi's Dot2), as
   the CUDA backend's FusedDD; the value is s + c. The plain path adds as
   the loops always did. */
typedef struct {
  PetscScalar s, c;
} KSPFusedSum;

static inline void KSPFusedSumAdd(KSPFusedSum *a, PetscBool compensated, PetscScalar x)
{
  if (compensated) {
    /* x read back from memory: a compiler that contracts may not fuse the
       product x came from into the addition (TwoSum needs x rounded) */
    const volatile PetscScalar xv = x;
    const PetscScalar          s = a->s + xv, bb = s - a->s;
    a->c += (a->s - (s - bb)) + (xv - bb);
    a->s = s;
  } else a->s += x;
}

static inline void KSPFusedSumAddProduct(KSPFusedSum *a, PetscBool compensated, PetscScalar x, PetscScalar y)
{
  if (compensated) {
    const PetscScalar p = x * y;
    KSPFusedSumAdd(a, PETSC_TRUE, p);
    a->c += fma(x, y, -p); /* x y - p exactly */
  } else a->s += x * y;
}

static inline PetscScalar KSPFusedSumValue(KSPFusedSum a)
{
  return a.s + a.c;
}

/* Reserved workspace vector: the inverse diagonal of fused Jacobi */
#define FUSED_VEC_DINV 0

/* (B x)_i for fused point-block Jacobi over local arrays: row i of its
   block's inverse (dblock, row by row) times the block's entries of x */
static inline PetscScalar KSPFusedBlockRow(const PetscScalar *dblock, PetscInt bs, const PetscScalar *x, PetscInt i)
{
  const PetscScalar *row = dblock + i * bs, *xb = x + (i - i % bs);
  PetscScalar        s   = 0.0;

  for (PetscInt k = 0; k < bs; k++) s += row[k] * xb[k];
  return s;
}

PETSC_INTERN PetscLogEvent KSP_Fused_Allreduce, KSP_Fused_DeviceLoop, KSP_Fused_Convert, KSP_Fused_MGCycle, KSP_Fused_ILUSolve;
PETSC_INTERN PetscLogEvent KSP_PCGFused_Update, KSP_PCGFused_Product;
PETSC_INTERN PetscLogEvent KSP_PBCGSFused_ProductP, KSP_PBCGSFused_UpdateS, KSP_PBCGSFused_ProductS, KSP_PBCGSFused_UpdateXRP;
PETSC_INTERN PetscLogEvent KSP_PGMRESFused_Product, KSP_PGMRESFused_MDot, KSP_PGMRESFused_Orthog, KSP_PGMRESFused_Normalize, KSP_PGMRESFused_Update;

PETSC_INTERN PetscBool      KSPFusedOperatorFoundSymmetric(const KSPFused *);
PETSC_INTERN PetscErrorCode KSPFusedSetFromOptions(KSP, KSPFused *, FusedOptionItems);
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
PETSC_INTERN PetscErrorCode KSPSetFromOptions_Fused(KSP, FusedOptionItems);
PETSC_INTERN PetscErrorCode KSPFusedDecomposeBackend(KSP);

/* CUDA backend (fused_cuda.c) */
PETSC_INTERN PetscErrorCode KSPFusedChooseBackend(KSP, KSPFused *);
PETSC_INTERN PetscErrorCode KSPFusedCUDASetUp(KSP, KSPFused *);
/* The device work of a solve: the method's own nvecs vectors (1 and 2 the
   iterate and b, not yet sent: KSPFusedCUDASystemToDevice()), the operator,
   the Jacobi diagonal, and after the method's vectors, from aux_vecs on,
   point-block Jacobi's inverse blocks or the null space's stored vectors
   (fused->ns set) */
PETSC_INTERN PetscErrorCode KSPFusedCUDAPrepare(KSP, KSPFused *, PetscInt nvecs, PetscInt maxsums, const char *what);
PETSC_INTERN PetscErrorCode KSPFusedCUDAReset(KSPFused *);
/* a null space's basis vectors, the constant counted */
PETSC_INTERN PetscInt KSPFusedNullSpaceBasisSize(MatNullSpace);
/* r -= sum_k <r, n_k> n_k on the device for the null space of fused->ns
   (its sums wait for the device and cross the ranks: one synchronization);
   the device's sums[0] is then <r,r>, this rank's */
PETSC_INTERN PetscErrorCode KSPFusedCUDANullSpaceRemove(KSP, KSPFused *, double *r);
/* point-block Jacobi's inverse blocks on the host (fused->dblock), remade where the Pmat changed */
PETSC_INTERN PetscErrorCode KSPFusedBlockDiagonal(KSP, KSPFused *);
/* out = B in on the device (KSP_FUSED_PC_DEVICE): PCApply() on CUDA vectors over in and out */
PETSC_INTERN PetscErrorCode KSPFusedCUDAApplyPC(KSP, KSPFused *, const double *in, double *out);
/* PETSc's multigrid in our own V-cycle (fusedmg.c): built before a solve
   where the PC is one and the hierarchy changed, applied in place of PCApply() */
PETSC_INTERN PetscErrorCode KSPFusedMGPrepare(KSP, KSPFused *, double *scratch_in, double *scratch_out);
PETSC_INTERN PetscErrorCode KSPFusedMGApply(KSP, KSPFused *, const double *in, double *out);
PETSC_INTERN PetscErrorCode KSPFusedMGReset(KSPFused *);
PETSC_INTERN PetscErrorCode KSPFusedMGFits(KSP, KSPFused *, PetscBool *);
/* PETSc's ILU(0) in our own triangular solves (fusedilu.c), the same way */
PETSC_INTERN PetscErrorCode KSPFusedILUPrepare(KSP, KSPFused *, double *scratch_in, double *scratch_out);
PETSC_INTERN PetscErrorCode KSPFusedILUApply(KSP, KSPFused *, const double *in, double *out);
PETSC_INTERN PetscErrorCode KSPFusedILUReset(KSPFused *);
PETSC_INTERN PetscErrorCode KSPFusedILUFits(KSP, KSPFused *, PetscBool *);
/* what both share (fusedpcown.c): the key of a PC's parts, the probe, and
   the check of our application (apply: out = B in on the device) against PCApply() */
typedef PetscErrorCode (*KSPFusedDeviceApply)(KSPFused *, const double *in, double *out);
PETSC_INTERN PetscErrorCode KSPFusedFillProbe(Vec, PetscInt seed);
PETSC_INTERN void           KSPFusedKeyAdd(PetscInt64 *key, PetscInt64 value);
PETSC_INTERN PetscErrorCode KSPFusedKeyAddObject(PetscInt64 *key, PetscObject);
PETSC_INTERN PetscErrorCode KSPFusedCompareWithPCApply(KSP, KSPFused *, KSPFusedDeviceApply apply, double *scratch_in, double *scratch_out, PetscReal *rel);
PETSC_INTERN PetscErrorCode KSPFusedOwnPCPlace(KSPFused *, const char *why, const char *what, char *text, size_t textlen, PetscBool *active);
/* the hybcuda matrix type (src/mat/hybcuda.c) */
PETSC_INTERN PetscErrorCode MatHYBCUDAGetBlocks(Mat, Mat *Ad, Mat *Ao, const PetscInt **garray);
PETSC_INTERN PetscErrorCode MatHYBCUDAGetDevMat(Mat, FusedDevMat *, PetscInt *device);
PETSC_INTERN PetscErrorCode KSPFusedCUDALoopAllowed(KSP, KSPFused *, PetscBool *);
PETSC_INTERN PetscErrorCode KSPFusedCUDAConvergence(KSP, FusedConvergence *);
PETSC_INTERN PetscBool      KSPFusedCUDAFirstTestOnDevice(KSP, PetscBool rhs_on_device, int *reference);
PETSC_INTERN PetscErrorCode KSPFusedCUDAFirstTestConvergence(KSP, int reference, int rhs_slot, FusedConvergence *);
PETSC_INTERN PetscErrorCode KSPFusedCUDAStartInKernel(KSP, KSPFused *, double *b_dev, double *x_dev, int reference, int rhs_slot, PetscLogDouble flops, int *start, FusedConvergence *);
PETSC_INTERN PetscErrorCode KSPFusedCUDAFirstTest(KSP, KSPFused *, int reference, const double *b, const double *d, int rhs_slot, FusedConvergence *);
PETSC_INTERN PetscErrorCode KSPFusedCUDAReplayFromStart(KSP, KSPFused *, const FusedConvergence *, PetscInt to);
/* the KSP's norm type as the device's FUSED_NORM_* */
static inline int KSPFusedNormType(KSP ksp)
{
  return ksp->normtype == KSP_NORM_PRECONDITIONED ? FUSED_NORM_PRECONDITIONED : ksp->normtype == KSP_NORM_UNPRECONDITIONED ? FUSED_NORM_UNPRECONDITIONED : ksp->normtype == KSP_NORM_NATURAL ? FUSED_NORM_NATURAL : FUSED_NORM_NONE;
}
PETSC_INTERN PetscErrorCode KSPFusedCUDAReplay(KSP, KSPFused *, PetscInt from, PetscInt to);
PETSC_INTERN PetscErrorCode KSPFusedCUDASystemToDevice(KSP, KSPFused *, double *b_dev, double *x_dev, PetscBool zero_guess);
PETSC_INTERN PetscErrorCode KSPFusedCUDASolutionToHost(KSP, KSPFused *);
typedef enum {
  FUSED_SYSTEM_B,
  FUSED_SYSTEM_X
} KSPFusedSystemPart;
PETSC_INTERN double *KSPFusedCUDASystemVec(KSPFused *, KSPFusedSystemPart, int slot);
PETSC_INTERN PetscErrorCode KSPFusedFinishSolve(KSP, KSPFused *);
PETSC_INTERN PetscErrorCode KSPBuildSolution_Fused(KSP, Vec, Vec *);

/* Reference-backend helpers over local arrays */
PETSC_INTERN PetscErrorCode KSPFusedApplyPC_Reference(KSP, KSPFused *, Vec, Vec);
PETSC_INTERN PetscErrorCode KSPFusedApplyOp_Reference(KSP, KSPFused *, Vec, Vec, Vec);

#endif
