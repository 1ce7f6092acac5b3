/* The device layer (fuseddevice.h): device choice, a solver's device work,
   an operator's device rows, and the public device queries. */
#include <petscfused.h>
#include "device/fuseddevice.h"

#if defined(PETSC_USE_64BIT_INDICES)
  #error "the CUDA code takes 32-bit indices; build against a PETSc with 32-bit PetscInt"
#endif

PetscLogEvent FUSED_Halo;

PETSC_INTERN PetscErrorCode FusedDeviceCount(PetscInt *count, char *reason, size_t reasonlen)
{
  static PetscInt known = -1;
  static char     why[256];

  PetscFunctionBegin;
  if (known < 0) PetscCall(PetscFusedCUDADeviceCount(&known, why, sizeof(why)));
  *count = known;
  if (reason) PetscCall(PetscStrncpy(reason, why, reasonlen));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode FusedDevicePick(PetscObject obj, PetscInt *device)
{
  MPI_Comm    local;
  PetscMPIInt lrank;
  PetscInt     count, id;
  PetscBool    set;
  PetscOptions options;

  PetscFunctionBegin;
  if (*device >= 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(FusedDeviceCount(&count, NULL, 0));
  PetscCall(PetscObjectGetOptions(obj, &options));
  PetscCall(PetscOptionsGetInt(options, NULL, "-fused_device_id", &id, &set));
  if (set) {
    PetscCheck(id >= 0 && id < count, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-fused_device_id %" PetscInt_FMT ": this process sees %" PetscInt_FMT " CUDA device(s), 0 to %" PetscInt_FMT, id, count, count - 1);
    *device = id;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(count > 0, PETSC_COMM_SELF, PETSC_ERR_SUP_SYS, "no CUDA device");
  PetscCallMPI(MPI_Comm_split_type(PetscObjectComm(obj), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local));
  PetscCallMPI(MPI_Comm_rank(local, &lrank));
  PetscCallMPI(MPI_Comm_free(&local));
  *device = lrank % count;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode FusedDeviceWorkEnsure(FusedDeviceWork *work, PetscInt device, PetscInt n, PetscInt nvecs, PetscInt maxsums, const char *what, PetscBool *created)
{
  PetscFunctionBegin;
  *created = PETSC_FALSE;
  if (work->cuda && (work->device != device || work->n != n || work->nvecs != nvecs || work->maxsums < maxsums)) PetscCall(FusedDeviceWorkDestroy(work));
  if (work->cuda) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallFusedCUDA(FusedCUDACreate((int)device, (int)n, (int)nvecs, (int)maxsums, what, &work->cuda));
  work->device  = device;
  work->n       = n;
  work->nvecs   = nvecs;
  work->maxsums = maxsums;
  *created      = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode FusedDeviceWorkDestroy(FusedDeviceWork *work)
{
  PetscFunctionBegin;
  PetscCallFusedCUDA(FusedCUDADestroy(&work->cuda));
  work->n = work->nvecs = work->maxsums = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode FusedDeviceUpload(FusedDeviceWork *work, Vec v, double *dev)
{
  const PetscScalar *a;
  PetscInt           n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetArrayRead(v, &a));
  PetscCallFusedCUDA(FusedCUDAUpload(work->cuda, dev, a, (int)n));
  PetscCall(VecRestoreArrayRead(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode FusedDeviceDownload(FusedDeviceWork *work, const double *dev, Vec v)
{
  PetscScalar *a;
  PetscInt     n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetArrayWrite(v, &a));
  PetscCallFusedCUDA(FusedCUDADownload(work->cuda, a, dev, (int)n));
  PetscCall(VecRestoreArrayWrite(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode FusedDeviceOperatorCreate(PetscInt device, const FusedDeviceCSR *csr, PetscInt format, PetscLayout cmap, FusedHaloTransport transport, FusedDeviceOperator *op)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(op, sizeof(*op)));
  op->device = device;
  op->nnz    = csr->ia[csr->n] + (csr->oia ? csr->oia[csr->n] : 0);
  {
    const int err = FusedDevMatCreate((int)device, (int)csr->n, csr->ia, csr->ja, csr->va, (int)csr->nghost, csr->oia, csr->oja, csr->ova, (int)format, &op->mat);
    PetscCheck(!err, PETSC_COMM_SELF, err == FUSED_CUDA_ERR_MEM ? PETSC_ERR_MEM : (err == FUSED_CUDA_ERR_ARG ? PETSC_ERR_ARG_OUTOFRANGE : PETSC_ERR_LIB), "copying the operator to the device: %s", FusedCUDALastError());
  }
  PetscCallMPI(MPI_Comm_size(cmap->comm, &size));
  if (size > 1) {
    PetscInt nsend;

    /* every rank takes part in the exchange, also one with no ghosts */
    PetscCall(FusedHaloCreate(cmap, csr->nghost, csr->garray, &op->halo));
    PetscCall(FusedHaloVolume(op->halo, &nsend, &op->halo_total));
    PetscCallFusedCUDA(FusedDevMatSetHalo(op->mat, (int)nsend, op->halo->send_idx, &op->halo_send, &op->halo_ghost));
    PetscCall(FusedHaloTransportSetUp(op->halo, op->mat, device, transport));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode FusedDeviceOperatorBorrow(PetscInt device, FusedDevMat mat, PetscLogDouble nnz, FusedDeviceOperator *op)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(op, sizeof(*op)));
  op->mat      = mat;
  op->borrowed = PETSC_TRUE;
  op->device   = device;
  op->nnz      = nnz;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode FusedDeviceOperatorRelease(FusedDeviceOperator *op)
{
  PetscFunctionBegin;
  PetscCall(FusedHaloTransportDestroy(&op->halo)); /* before the buffers it shares go */
  if (op->borrowed) op->mat = NULL;
  else PetscCallFusedCUDA(FusedDevMatDestroy(&op->mat));
  PetscCall(PetscMemzero(op, sizeof(*op)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode FusedDeviceGhostsBegin(FusedDeviceOperator *op, FusedDeviceWork *work, const double *x)
{
  FusedHalo h = op->halo;

  PetscFunctionBegin;
  if (!h) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(FUSED_Halo, 0, 0, 0, 0));
  PetscCall(FusedHaloTransportBegin(h, op->mat, work->cuda, x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode FusedDeviceGhostsEnd(FusedDeviceOperator *op, FusedDeviceWork *work)
{
  FusedHalo h = op->halo;

  PetscFunctionBegin;
  if (!h) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(FusedHaloTransportEnd(h, op->mat, work->cuda, op->halo_send, op->halo_ghost));
  PetscCall(PetscLogEventEnd(FUSED_Halo, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode FusedDeviceGhosts(FusedDeviceOperator *op, FusedDeviceWork *work, const double *x)
{
  PetscFunctionBegin;
  PetscCall(FusedDeviceGhostsBegin(op, work, x));
  PetscCall(FusedDeviceGhostsEnd(op, work));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the public device queries (petscfused.h) ---------------------------- */

PetscErrorCode PetscFusedCUDADeviceCount(PetscInt *count, char *reason, size_t reasonlen)
{
  int n = 0;

  PetscFunctionBegin;
  PetscCheck(!FusedCUDADeviceCount(&n, reason, reasonlen), PETSC_COMM_SELF, PETSC_ERR_LIB, "CUDA device query failed");
  *count = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PetscFusedCUDADeviceName(PetscInt device, char *name, size_t namelen)
{
  char errmsg[256];

  PetscFunctionBegin;
  PetscCheck(!FusedCUDADeviceName((int)device, name, namelen, errmsg, sizeof(errmsg)), PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", errmsg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PetscFusedCUDAMemoryInfo(PetscInt device, size_t *free_bytes, size_t *total_bytes)
{
  char errmsg[256];

  PetscFunctionBegin;
  PetscCheck(!FusedCUDAMemoryInfo((int)device, free_bytes, total_bytes, errmsg, sizeof(errmsg)), PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", errmsg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PetscFusedCUDACopyBandwidth(size_t bytes, PetscReal *bytes_per_s)
{
  double bw;

  PetscFunctionBegin;
  PetscCallFusedCUDA(FusedCUDACopyBandwidth(0, bytes, 10, &bw));
  *bytes_per_s = bw;
  PetscFunctionReturn(PETSC_SUCCESS);
}
