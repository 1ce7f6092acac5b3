/* The hybcuda matrix type (seqhybcuda on one rank, mpihybcuda on several):
   an AIJ matrix whose host copy stays the master for assembly and every AIJ
   operation, with a device copy in the storage of src/mat/fusedformat.h
   (DIA, ELL, HYB or CSR) for the products. The copy is made at
   MatAssemblyEnd(); when only the values changed (same nonzero state, as for
   a Jacobian re-assembled each Newton step) just the values go up again;
   MatScale() and MatShift() change a current copy in place; any other change
   (MatZeroEntries(), MatCopy(), ...) reaches the device at the next product
   through the object state. */
#ifndef HYBCUDAIMPL_H
#define HYBCUDAIMPL_H
#include <petscfused.h>
#include <petsc/private/matimpl.h>
#include "fusedcompat.h"
#include "device/fuseddevice.h"
#include "mat/fusedformat.h"

typedef struct {
  struct _MatOps   aijops;       /* the AIJ operations, for what we extend and for converting back */
  FusedDevMat      dev;          /* the device copy */
  PetscObjectState dev_state;    /* the matrix state it holds */
  PetscObjectState dev_nzstate;  /* the nonzero state it was built on */
  PetscInt         format;       /* -mat_hybcuda_format: FUSED_FORMAT_* */
  PetscInt         device;       /* the rank's CUDA device */
  Mat              transpose;    /* A^T as a hybcuda matrix, for MatMultTranspose(), made on demand */
  PetscObjectState transpose_state;
  VecScatter       ghost_scatter; /* mpihybcuda: the off-process entries of x the off-diagonal block reads */
  Vec              ghost_values;
  PetscObjectState scatter_nzstate;
} Mat_HYBCUDA;

PETSC_INTERN PetscErrorCode MatHYBCUDASync(Mat);
PETSC_INTERN PetscErrorCode MatHYBCUDAGetBlocks(Mat, Mat *Ad, Mat *Ao, const PetscInt **garray);
PETSC_INTERN PetscErrorCode MatHYBCUDAGetDevMat(Mat, FusedDevMat *, PetscInt *device);
PETSC_INTERN PetscLogEvent  MAT_HYBCUDA_Build, MAT_HYBCUDA_Values, MAT_HYBCUDA_Mult;
#endif
