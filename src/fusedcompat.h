/* The differences between the PETSc versions petsc-fused builds against
   (Debian's 3.18 to 3.26). This is the only file that tests PETSc's version;
   everything else uses the names defined here. */
#ifndef FUSEDCOMPAT_H
#define FUSEDCOMPAT_H
#include <petscversion.h>
#include <petscksp.h>

/* PetscErrorCode's name for success since 3.19 */
#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

/* The options context of XXXSetFromOptions(): a pointer type since 3.23 */
#if PETSC_VERSION_LT(3, 23, 0)
typedef PetscOptionItems *FusedOptionItems;
#else
typedef PetscOptionItems FusedOptionItems;
#endif

/* PetscValid*Pointer() became PetscAssertPointer() in 3.20 */
#if PETSC_VERSION_LT(3, 20, 0)
  #define PetscAssertPointer(p, arg) PetscValidPointer(p, arg)
#endif

/* The second classical Gram-Schmidt pass: a GMRES setting until 3.25, a KSP
   setting (ksp->cgstype, KSPOrthogonalizationSetCGSRefinementType()) since
   3.26. FusedCGSRefinement(ksp, own) is where the type lives: the KSP's in
   3.26, else the method's own field. */
#if PETSC_VERSION_LT(3, 26, 0)
typedef KSPGMRESCGSRefinementType FusedCGSRefinementType;
  #define FUSED_CGS_REFINE_NEVER          KSP_GMRES_CGS_REFINE_NEVER
  #define FUSED_CGS_REFINE_IFNEEDED       KSP_GMRES_CGS_REFINE_IFNEEDED
  #define FUSED_CGS_REFINE_ALWAYS         KSP_GMRES_CGS_REFINE_ALWAYS
  #define FusedCGSRefinement(ksp, own)    (own)
#else
typedef KSPOrthogonalizationCGSRefinementType FusedCGSRefinementType;
  #define FUSED_CGS_REFINE_NEVER          KSP_ORTHOGONALIZATION_CGS_REFINE_NEVER
  #define FUSED_CGS_REFINE_IFNEEDED       KSP_ORTHOGONALIZATION_CGS_REFINE_IFNEEDED
  #define FUSED_CGS_REFINE_ALWAYS         KSP_ORTHOGONALIZATION_CGS_REFINE_ALWAYS
  #define FusedCGSRefinement(ksp, own)    (*((void)(own), &(ksp)->cgstype)) /* own is unused here */
#endif

/* The specific message of PetscErrorMessage() is a char ** in 3.18 and a
   const char ** in current versions; both take the address of a const char * */
#define FusedErrorMessage(err, text, specific) PetscErrorMessage((err), (text), (void *)(specific))

/* A CUDA PETSc whose device contexts hand out their CUDA stream
   (PetscDeviceContextGetStreamHandle(), 3.20 on): its vectors, matrices and
   preconditioners live on the device, and our work is ordered with theirs */
#if defined(PETSC_HAVE_CUDA) && PETSC_VERSION_GE(3, 20, 0)
  #define FUSED_HAVE_PETSC_CUDA 1
  #include <petscdevice.h>
#endif

/* -ksp_monitor_short's own function until 3.25; since 3.26 -ksp_monitor_short
   is KSPMonitorResidual() with a format */
#if PETSC_VERSION_LT(3, 26, 0)
  #define FusedMonitorIsResidualShort(f) ((f) == (PetscErrorCode(*)(KSP, PetscInt, PetscReal, void *))KSPMonitorResidualShort)
#else
  #define FusedMonitorIsResidualShort(f) PETSC_FALSE
#endif

#endif
