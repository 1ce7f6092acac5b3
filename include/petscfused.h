/* petsc-fused: pipelined Krylov methods with fused vector work, for PETSc.

   Three ways in:
     - link libpetscfused and call PetscFusedInitializePackage() (or just use
       -ksp_type pcgfused|pbcgsfused|pgmresfused after calling it),
     - -dll_append /path/to/libpetscfused.so in any PETSc program,
     - KSPSetType(ksp, KSPPCGFUSED) etc. after PetscFusedInitializePackage(). */
#ifndef PETSCFUSED_H
#define PETSCFUSED_H

#include <petscksp.h>

#define KSPPCGFUSED    "pcgfused"
#define KSPPBCGSFUSED  "pbcgsfused"
#define KSPPGMRESFUSED "pgmresfused"

/* Where the fused steps run. AUTO picks CUDA when a device and the CUDA
   backend are both there, the reference (host) backend otherwise. */
typedef enum {
  KSP_FUSED_BACKEND_AUTO,
  KSP_FUSED_BACKEND_CUDA,
  KSP_FUSED_BACKEND_REFERENCE
} KSPFusedBackend;
PETSC_EXTERN const char *const KSPFusedBackends[];

PETSC_EXTERN PetscClassId  PETSCFUSED_CLASSID;
PETSC_EXTERN PetscErrorCode PetscFusedInitializePackage(void);
PETSC_EXTERN PetscErrorCode PetscFusedFinalizePackage(void);

PETSC_EXTERN PetscErrorCode KSPFusedSetBackend(KSP, KSPFusedBackend);
PETSC_EXTERN PetscErrorCode KSPFusedGetBackend(KSP, KSPFusedBackend *);
PETSC_EXTERN PetscErrorCode KSPFusedGetBackendUsed(KSP, KSPFusedBackend *);
PETSC_EXTERN PetscErrorCode KSPFusedGetDeviceIterations(KSP, PetscInt *);
PETSC_EXTERN PetscErrorCode KSPFusedGetDeviceLoopStarts(KSP, PetscInt *);
PETSC_EXTERN PetscErrorCode KSPFusedGetDeviceLoopSingleKernel(KSP, PetscBool *);
PETSC_EXTERN PetscErrorCode KSPFusedGetSystemInPlace(KSP, PetscBool *);
PETSC_EXTERN PetscErrorCode KSPFusedGetOperatorSymmetric(KSP, PetscBool *);
PETSC_EXTERN PetscErrorCode KSPFusedSetCompensated(KSP, PetscBool);
PETSC_EXTERN PetscErrorCode KSPFusedGetCompensated(KSP, PetscBool *);
PETSC_EXTERN PetscErrorCode KSPPGMRESFusedSetRestart(KSP, PetscInt);
PETSC_EXTERN PetscErrorCode KSPPGMRESFusedGetRestart(KSP, PetscInt *);

/* The sparse matrix on the GPU: AIJ on the host (the master for assembly),
   DIA, ELL, HYB or CSR on the device (-mat_hybcuda_format). */
#define MATHYBCUDA    "hybcuda"
#define MATSEQHYBCUDA "seqhybcuda"
#define MATMPIHYBCUDA "mpihybcuda"

/* CUDA devices visible to this process; 0 with a reason where there is no
   device or no usable driver. Never errors for the absence of a GPU. */
PETSC_EXTERN PetscErrorCode PetscFusedCUDADeviceCount(PetscInt *, char *reason, size_t reasonlen);
PETSC_EXTERN PetscErrorCode PetscFusedCUDADeviceName(PetscInt, char *name, size_t namelen);
/* Free and total bytes of a device's memory, once its queued work is done */
PETSC_EXTERN PetscErrorCode PetscFusedCUDAMemoryInfo(PetscInt, size_t *free_bytes, size_t *total_bytes);

/* Measured device-to-device copy bandwidth of device 0 in bytes (read plus
   written) per second, over a buffer of the given size: the yardstick of the
   bandwidth floor in the benchmark. */
PETSC_EXTERN PetscErrorCode PetscFusedCUDACopyBandwidth(size_t bytes, PetscReal *bytes_per_s);

/* Matrix Market (coordinate real/integer, general/symmetric) into an AIJ
   matrix on comm; read on rank 0 and distributed by rows. */
PETSC_EXTERN PetscErrorCode MatLoadMatrixMarket(MPI_Comm, const char[], Mat *);

#endif
