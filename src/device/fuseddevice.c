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
#if defined(FUSED_HAVE_PETSC_CUDA)
  {
    /* a CUDA PETSc's vectors and matrices are on its device: work there too */
    PetscDeviceContext dctx;
    PetscDeviceType    type;
    PetscDevice        pdevice;

    if (FusedDevicePETScHasCUDA()) {
      PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
      PetscCall(PetscDeviceContextGetDeviceType(dctx, &type));
      if (type == PETSC_DEVICE_CUDA) {
        PetscCall(PetscDeviceContextGetDevice(dctx, &pdevice));
        PetscCall(PetscDeviceGetDeviceId(pdevice, device));
        PetscFunctionReturn(PETSC_SUCCESS);
      }
    }
  }
#endif
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
  PetscMemType       mtype;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetArrayReadAndMemType(v, &a, &mtype));
  if (PetscMemTypeDevice(mtype)) {
    PetscCall(FusedDeviceWorkWaitForPETSc(work));
    PetscCallFusedCUDA(FusedCUDACopy(work->cuda, dev, a, (int)n));
  } else {
    PetscInt lo, hi;

    /* a pinned array's interior straight from it; the rest (all of it where
       none is pinned) through the staging */
    PetscCall(FusedDevicePinnedRange(work, v, a, n, &lo, &hi));
    PetscCallFusedCUDA(FusedCUDAUploadSplit(work->cuda, dev, a, (int)n, (int)lo, (int)hi));
  }
  PetscCall(VecRestoreArrayReadAndMemType(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode FusedDeviceDownload(FusedDeviceWork *work, const double *dev, Vec v)
{
  PetscScalar *a;
  PetscInt     n;
  PetscMemType mtype;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetArrayWriteAndMemType(v, &a, &mtype));
  if (PetscMemTypeDevice(mtype)) {
    PetscCall(FusedDeviceWorkWaitForPETSc(work)); /* PETSc's last work on v comes first */
    PetscCallFusedCUDA(FusedCUDACopy(work->cuda, a, dev, (int)n));
    PetscCall(FusedDeviceWorkHandToPETSc(work));
  } else {
    PetscInt lo, hi;

    PetscCall(FusedDevicePinnedRange(work, v, a, n, &lo, &hi));
    PetscCallFusedCUDA(FusedCUDADownloadSplit(work->cuda, a, dev, (int)n, (int)lo, (int)hi));
  }
  PetscCall(VecRestoreArrayWriteAndMemType(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(FUSED_HAVE_PETSC_CUDA)
/* The CUDA stream of PETSc's current device context, when it is a CUDA one */
static PetscErrorCode FusedPETScStream(void **stream, PetscBool *cuda)
{
  PetscDeviceContext dctx;
  PetscDeviceType    type;
  void              *handle = NULL;

  PetscFunctionBegin;
  *cuda = PETSC_FALSE;
  if (!FusedDevicePETScHasCUDA()) PetscFunctionReturn(PETSC_SUCCESS); /* no PETSc device work to order with */
  PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
  PetscCall(PetscDeviceContextGetDeviceType(dctx, &type));
  if (type != PETSC_DEVICE_CUDA) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscDeviceContextGetStreamHandle(dctx, &handle));
  *stream = *(void **)handle; /* a cudaStream_t *: NULL is the default stream */
  *cuda   = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/* One ordering of the work's stream with PETSc's: join(work's context, PETSc's stream) */
static PetscErrorCode FusedDeviceWorkJoinPETSc(FusedDeviceWork *work, int (*join)(FusedCUDA, void *))
{
  PetscFunctionBegin;
#if defined(FUSED_HAVE_PETSC_CUDA)
  {
    void     *stream = NULL;
    PetscBool cuda;

    PetscCall(FusedPETScStream(&stream, &cuda));
    if (cuda) PetscCallFusedCUDA(join(work->cuda, stream));
  }
#else
  (void)work;
  (void)join;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode FusedDeviceWorkWaitForPETSc(FusedDeviceWork *work)
{
  return FusedDeviceWorkJoinPETSc(work, FusedCUDAStreamWaitFor);
}

PETSC_INTERN PetscErrorCode FusedDeviceWorkHandToPETSc(FusedDeviceWork *work)
{
  return FusedDeviceWorkJoinPETSc(work, FusedCUDAStreamHandTo);
}

PETSC_INTERN PetscErrorCode FusedDeviceVecCreate(Vec like, Vec *v)
{
  PetscFunctionBegin;
  *v = NULL;
#if defined(FUSED_HAVE_PETSC_CUDA)
  {
    MPI_Comm    comm = PetscObjectComm((PetscObject)like);
    PetscMPIInt size;
    PetscInt    n, N, bs;

    PetscCall(VecGetLocalSize(like, &n));
    PetscCall(VecGetSize(like, &N));
    PetscCall(VecGetBlockSize(like, &bs));
    PetscCallMPI(MPI_Comm_size(comm, &size));
    if (size == 1) PetscCall(VecCreateSeqCUDAWithArray(comm, bs, n, NULL, v));
    else PetscCall(VecCreateMPICUDAWithArray(comm, bs, n, N, NULL, v));
  }
#else
  (void)like;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode FusedDeviceVecPlace(Vec v, const double *dev)
{
  PetscFunctionBegin;
#if defined(FUSED_HAVE_PETSC_CUDA)
  PetscCall(VecCUDAPlaceArray(v, dev)); /* the device entries are the valid ones */
#else
  (void)v;
  (void)dev;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode FusedDeviceVecTake(Vec v, const double *dev)
{
  PetscFunctionBegin;
#if defined(FUSED_HAVE_PETSC_CUDA)
  {
    const PetscScalar *a;

    /* where PETSc last wrote v on the host, this brings it to the device */
    PetscCall(VecCUDAGetArrayRead(v, &a));
    PetscCheck(a == dev, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the preconditioner replaced the device array of a work vector");
    PetscCall(VecCUDARestoreArrayRead(v, &a));
    PetscCall(VecCUDAResetArray(v));
  }
#else
  (void)v;
  (void)dev;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscLogDouble FusedDevicePETScCopies(void)
{
#if defined(FUSED_HAVE_PETSC_CUDA)
  return petsc_gtoc_ct + petsc_ctog_ct;
#else
  return 0.0;
#endif
}

PETSC_INTERN PetscBool FusedDevicePETScHasCUDA(void)
{
#if defined(FUSED_HAVE_PETSC_CUDA)
  /* only where the program uses PETSc's CUDA objects: starting PETSc's
     device ourselves would make a PETSc without GPU-aware MPI refuse to run */
  return PetscDeviceInitialized(PETSC_DEVICE_CUDA);
#else
  return PETSC_FALSE;
#endif
}

PETSC_INTERN PetscErrorCode FusedDeviceOperatorCreate(PetscInt device, const FusedDeviceCSR *csr, PetscInt format, PetscLayout cmap, FusedHaloTransport transport, FusedDeviceOperator *op)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(op, sizeof(*op)));
  op->device      = device;
  op->from_device = csr->on_device;
  op->nnz         = csr->on_device ? (PetscLogDouble)csr->nnz : csr->ia[csr->n] + (csr->oia ? csr->oia[csr->n] : 0);
  {
    const int err = (csr->on_device ? FusedDevMatCreateFromDevice : FusedDevMatCreate)((int)device, (int)csr->n, csr->ia, csr->ja, csr->va, (int)csr->nghost, csr->oia, csr->oja, csr->ova, (int)format, (int)csr->check_symmetry, &op->mat);
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

PETSC_INTERN PetscErrorCode FusedDeviceOperatorRefresh(FusedDeviceOperator *op, const FusedDeviceCSR *csr)
{
  PetscFunctionBegin;
  PetscCheck(op->from_device && csr->on_device, PETSC_COMM_SELF, PETSC_ERR_PLIB, "only an operator made from device arrays takes new values from device arrays");
  PetscCallFusedCUDA(FusedDevMatRefreshFromDevice(op->mat, csr->ia, csr->ja, csr->va, csr->ova));
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
