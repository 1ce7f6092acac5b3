/* Lists the CUDA devices this process sees. With -require it fails where
   there is none: the GPU tests' own first check. Exit code 0 with no device
   otherwise, so the runner can ask whether GPU tests can run. */
#include <petscfused.h>

int main(int argc, char **argv)
{
  PetscInt  count, i;
  char      reason[256], name[256];
  PetscBool require = PETSC_FALSE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-require", &require, NULL));
  {
    /* the runner reads this line to pick the tests whose meaning differs by version */
    PetscInt major, minor, subminor;

    PetscCall(PetscGetVersionNumber(&major, &minor, &subminor, NULL));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PETSc version: %" PetscInt_FMT ".%" PetscInt_FMT ".%" PetscInt_FMT "\n", major, minor, subminor));
#if defined(PETSC_HAVE_CUDA)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PETSc with CUDA: yes\n"));
#else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PETSc with CUDA: no\n"));
#endif
  }
  PetscCall(PetscFusedCUDADeviceCount(&count, reason, sizeof(reason)));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "CUDA devices: %" PetscInt_FMT " (%s)\n", count, reason));
  for (i = 0; i < count; i++) {
    PetscCall(PetscFusedCUDADeviceName(i, name, sizeof(name)));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  device %" PetscInt_FMT ": %s\n", i, name));
  }
  PetscCheck(!require || count > 0, PETSC_COMM_WORLD, PETSC_ERR_SUP_SYS, "no CUDA device: %s", reason);
  PetscCall(PetscFinalize());
  return 0;
}
