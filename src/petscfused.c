/* Registration of the package: its KSP types, log events and -info class,
   for programs that link us and for -dll_append. */
#include "ksp/fusedimpl.h"

PETSC_EXTERN PetscErrorCode KSPCreate_PCGFused(KSP);
PETSC_EXTERN PetscErrorCode KSPCreate_PBCGSFused(KSP);
PETSC_EXTERN PetscErrorCode KSPCreate_PGMRESFused(KSP);
PETSC_EXTERN PetscErrorCode MatCreate_HYBCUDA(Mat);
PETSC_EXTERN PetscErrorCode MatCreate_SeqHYBCUDA(Mat);
PETSC_EXTERN PetscErrorCode MatCreate_MPIHYBCUDA(Mat);
PETSC_INTERN PetscLogEvent  MAT_HYBCUDA_Build, MAT_HYBCUDA_Values, MAT_HYBCUDA_Mult;

PetscClassId  PETSCFUSED_CLASSID;
PetscLogEvent KSP_Fused_Allreduce, KSP_Fused_DeviceLoop, KSP_Fused_Convert, KSP_Fused_MGCycle, KSP_Fused_ILUSolve;
PetscLogEvent KSP_PCGFused_Update, KSP_PCGFused_Product;
PetscLogEvent KSP_PBCGSFused_ProductP, KSP_PBCGSFused_UpdateS, KSP_PBCGSFused_ProductS, KSP_PBCGSFused_UpdateXRP;
PetscLogEvent KSP_PGMRESFused_Product, KSP_PGMRESFused_MDot, KSP_PGMRESFused_Orthog, KSP_PGMRESFused_Normalize, KSP_PGMRESFused_Update;

static PetscBool PetscFusedPackageInitialized = PETSC_FALSE;

/*@C
   PetscFusedFinalizePackage - Lets the package be initialized again after `PetscFinalize()`; called by PETSc.

   Level: developer
@*/
PetscErrorCode PetscFusedFinalizePackage(void)
{
  PetscFunctionBegin;
  PetscFusedPackageInitialized = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@C
   PetscFusedInitializePackage - Registers the fused Krylov methods (`KSPPCGFUSED`, `KSPPBCGSFUSED`,
   `KSPPGMRESFUSED`), their log events and the "fused" -info class. Safe to call more than once.

   Level: beginner

.seealso: `KSPSetType()`, `PetscDLLibraryRegister_petscfused()`
@*/
PetscErrorCode PetscFusedInitializePackage(void)
{
  PetscBool          opt, pkg;
  char               logList[256];

  PetscFunctionBegin;
  if (PetscFusedPackageInitialized) PetscFunctionReturn(0);
  PetscFusedPackageInitialized = PETSC_TRUE;
  PetscCall(KSPInitializePackage());
  PetscCall(MatInitializePackage());
  PetscCall(PetscClassIdRegister("PetscFused", &PETSCFUSED_CLASSID));

  PetscCall(KSPRegister(KSPPCGFUSED, KSPCreate_PCGFused));
  PetscCall(KSPRegister(KSPPBCGSFUSED, KSPCreate_PBCGSFused));
  PetscCall(KSPRegister(KSPPGMRESFUSED, KSPCreate_PGMRESFused));
  PetscCall(MatRegister(MATHYBCUDA, MatCreate_HYBCUDA));
  PetscCall(MatRegister(MATSEQHYBCUDA, MatCreate_SeqHYBCUDA));
  PetscCall(MatRegister(MATMPIHYBCUDA, MatCreate_MPIHYBCUDA));
  PetscCall(PetscLogEventRegister("HYBCUDABuild", MAT_CLASSID, &MAT_HYBCUDA_Build));
  PetscCall(PetscLogEventRegister("HYBCUDAValues", MAT_CLASSID, &MAT_HYBCUDA_Values));
  PetscCall(PetscLogEventRegister("HYBCUDAMult", MAT_CLASSID, &MAT_HYBCUDA_Mult));

  /* one event per fused step, so -log_view shows where the time goes */
  PetscCall(PetscLogEventRegister("FusedAllreduce", PETSCFUSED_CLASSID, &KSP_Fused_Allreduce));
  PetscCall(PetscLogEventRegister("FusedDeviceLoop", PETSCFUSED_CLASSID, &KSP_Fused_DeviceLoop));
  PetscCall(PetscLogEventRegister("FusedToDevice", PETSCFUSED_CLASSID, &KSP_Fused_Convert));
  PetscCall(PetscLogEventRegister("FusedMGCycle", PETSCFUSED_CLASSID, &KSP_Fused_MGCycle));
  PetscCall(PetscLogEventRegister("FusedILUSolve", PETSCFUSED_CLASSID, &KSP_Fused_ILUSolve));
  PetscCall(PetscLogEventRegister("FusedHalo", PETSCFUSED_CLASSID, &FUSED_Halo));
  PetscCall(PetscLogEventRegister("PCGFusedUpdate", PETSCFUSED_CLASSID, &KSP_PCGFused_Update));
  PetscCall(PetscLogEventRegister("PCGFusedProduct", PETSCFUSED_CLASSID, &KSP_PCGFused_Product));
  PetscCall(PetscLogEventRegister("PBCGSFusedProdP", PETSCFUSED_CLASSID, &KSP_PBCGSFused_ProductP));
  PetscCall(PetscLogEventRegister("PBCGSFusedUpdS", PETSCFUSED_CLASSID, &KSP_PBCGSFused_UpdateS));
  PetscCall(PetscLogEventRegister("PBCGSFusedProdS", PETSCFUSED_CLASSID, &KSP_PBCGSFused_ProductS));
  PetscCall(PetscLogEventRegister("PBCGSFusedUpdXRP", PETSCFUSED_CLASSID, &KSP_PBCGSFused_UpdateXRP));
  PetscCall(PetscLogEventRegister("PGMRESFusedProd", PETSCFUSED_CLASSID, &KSP_PGMRESFused_Product));
  PetscCall(PetscLogEventRegister("PGMRESFusedMDot", PETSCFUSED_CLASSID, &KSP_PGMRESFused_MDot));
  PetscCall(PetscLogEventRegister("PGMRESFusedOrth", PETSCFUSED_CLASSID, &KSP_PGMRESFused_Orthog));
  PetscCall(PetscLogEventRegister("PGMRESFusedNorm", PETSCFUSED_CLASSID, &KSP_PGMRESFused_Normalize));
  PetscCall(PetscLogEventRegister("PGMRESFusedUpd", PETSCFUSED_CLASSID, &KSP_PGMRESFused_Update));

  /* -info fused / -info :fused excludes, as for PETSc's own packages */
  {
    PetscClassId ids[1] = {PETSCFUSED_CLASSID};
    PetscCall(PetscInfoProcessClass("fused", 1, ids));
  }
  PetscCall(PetscOptionsGetString(NULL, NULL, "-log_exclude", logList, sizeof(logList), &opt));
  if (opt) {
    PetscCall(PetscStrInList("fused", logList, ',', &pkg));
    if (pkg) PetscCall(PetscLogEventExcludeClass(PETSCFUSED_CLASSID));
  }
  PetscCall(PetscRegisterFinalize(PetscFusedFinalizePackage));
  PetscFunctionReturn(0);
}

/*@C
   PetscDLLibraryRegister_petscfused - Called by PETSc when libpetscfused is loaded with -dll_append or -dll_prepend,
   so that a program that was built without this package can use -ksp_type pcgfused, pbcgsfused and pgmresfused.

   Level: developer
@*/
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_petscfused(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFusedInitializePackage());
  PetscFunctionReturn(0);
}
