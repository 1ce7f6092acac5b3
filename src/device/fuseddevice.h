/* The device layer: which CUDA device a rank uses, a solver's work on it
   (vectors, reduction buffers and the stream they are queued on), an
   operator's rows there, and the exchange of ghost values between the ranks'
   devices. It knows PETSc's Vec and PetscLayout and nothing of the solvers or
   the matrix types that use it, so that the stream and memory a CUDA PETSc
   hands over enter in this one place. The kernels behind it are in src/cuda/,
   reached through cuda/fusedcuda.h. */
#ifndef FUSEDDEVICE_H
#define FUSEDDEVICE_H
#include <petscvec.h>
#include "fusedcompat.h"
#include "cuda/fusedcuda.h"
#include "device/fusedhalo.h"

/* A CUDA-side error code as a PETSc error with the CUDA side's message */
#define PetscCallFusedCUDA(call) \
  do { \
    int fused_cuda_err_ = (call); \
    PetscCheck(!fused_cuda_err_, PETSC_COMM_SELF, fused_cuda_err_ == FUSED_CUDA_ERR_MEM ? PETSC_ERR_MEM : PETSC_ERR_LIB, "%s", FusedCUDALastError()); \
  } while (0)

/* Visible devices, asked once per process: 0 with the reason where there is
   no device or no usable driver (never an error for the absence of a GPU) */
PETSC_INTERN PetscErrorCode FusedDeviceCount(PetscInt *count, char *reason, size_t reasonlen);
/* The device of this rank for obj: -fused_device_id, else the node-local rank
   modulo the visible devices. Picked once (*device < 0 until then). */
PETSC_INTERN PetscErrorCode FusedDevicePick(PetscObject obj, PetscInt *device);

/* A solver's work on the device: nvecs vectors of n entries, the buffers of
   up to maxsums sums per reduction, and the stream all of it is queued on */
typedef struct {
  FusedCUDA cuda;
  PetscInt  device, n, nvecs, maxsums;
  PetscBool stage_only; /* host vectors always through the pinned staging, never pinned in place */
} FusedDeviceWork;

/* Makes work fit (device, n, nvecs, at least maxsums); *created: it is new,
   so nothing uploaded before is there any more */
PETSC_INTERN PetscErrorCode FusedDeviceWorkEnsure(FusedDeviceWork *work, PetscInt device, PetscInt n, PetscInt nvecs, PetscInt maxsums, const char *what, PetscBool *created);
PETSC_INTERN PetscErrorCode FusedDeviceWorkDestroy(FusedDeviceWork *work);
/* v's local entries to the device vector dev, and back, on the work's
   stream. A vector whose entries are on the device (a CUDA PETSc's VECCUDA)
   is copied there, device to device, ordered with PETSc's stream and no
   host wait; a host vector crosses PCIe. */
PETSC_INTERN PetscErrorCode FusedDeviceUpload(FusedDeviceWork *work, Vec v, double *dev);
PETSC_INTERN PetscErrorCode FusedDeviceDownload(FusedDeviceWork *work, const double *dev, Vec v);
/* Where the host array a (n entries) of v is registered with the driver
   for copies straight from and to it: entries [*lo, *hi), none (*lo = *hi)
   where it is not (yet). Called at each of the array's trips; it pins a
   VECSEQ or VECMPI array at its third (fusedpin.c says how the registration
   is ended before the array is freed). */
PETSC_INTERN PetscErrorCode FusedDevicePinnedRange(FusedDeviceWork *work, Vec v, const PetscScalar *a, PetscInt n, PetscInt *lo, PetscInt *hi);
/* Whether v's array is pinned in place now */
PETSC_INTERN PetscErrorCode FusedDeviceVecPinned(Vec v, PetscBool *pinned);
/* The work's stream and the stream of PETSc's current device context (a
   CUDA PETSc; nothing to do in another): WaitForPETSc orders what the work
   queues next after what PETSc queued so far, HandToPETSc the reverse, both
   without a host wait */
PETSC_INTERN PetscErrorCode FusedDeviceWorkWaitForPETSc(FusedDeviceWork *work);
PETSC_INTERN PetscErrorCode FusedDeviceWorkHandToPETSc(FusedDeviceWork *work);
/* A PETSc vector (CUDA where PETSc has it) of like's layout and no array of
   its own, for PETSc's own operations (a PC) on the work's device vectors:
   FusedDeviceVecPlace() puts a device array under it (its entries valid
   there), FusedDeviceVecTake() gives the array back, with PETSc's last
   writes brought to the device. *v NULL where PETSc has no CUDA. */
PETSC_INTERN PetscErrorCode FusedDeviceVecCreate(Vec like, Vec *v);
PETSC_INTERN PetscErrorCode FusedDeviceVecPlace(Vec v, const double *dev);
PETSC_INTERN PetscErrorCode FusedDeviceVecTake(Vec v, const double *dev);
/* Copies between host and device that PETSc has counted so far (0 where it has no device) */
PETSC_INTERN PetscLogDouble FusedDevicePETScCopies(void);
/* Whether PETSc itself has CUDA vectors (FusedDeviceVecCreate() makes one) */
PETSC_INTERN PetscBool FusedDevicePETScHasCUDA(void);
PETSC_INTERN PetscErrorCode FusedDeviceVecWritten(Vec v);
PETSC_INTERN PetscErrorCode FusedDeviceVecRead(Vec v, const double *dev);

/* The local rows of an operator in CSR: the diagonal block (n x n) and, on
   several ranks, the off-process block over nghost compressed ghost columns
   whose global indices are garray (sorted) */
typedef struct {
  PetscInt           n;
  const PetscInt    *ia, *ja;
  const PetscScalar *va;
  PetscInt           nghost;
  const PetscInt    *oia, *oja, *garray;
  const PetscScalar *ova;
  PetscBool          on_device; /* ia..ova (not garray) are device arrays: a CUDA PETSc's */
  PetscBool          check_symmetry; /* find whether the diagonal block equals its transpose (FusedDevMatSymmetric()): a pass over it at the build and each refill */
  PetscInt           nnz;       /* entries of both blocks (read from ia and oia on the host) */
} FusedDeviceCSR;

/* An operator's local rows on the device, with the exchange of the ghost
   values its off-process block reads */
typedef struct {
  FusedDevMat    mat;
  PetscBool      borrowed;  /* mat is another object's copy, not ours to free */
  PetscInt       device;
  PetscLogDouble nnz;       /* local nonzeros, for the flop counts */
  FusedHalo      halo;      /* NULL on one rank */
  double        *halo_send, *halo_ghost; /* pinned buffers of the host transport (owned by mat) */
  PetscInt       halo_total; /* entries exchanged per product, summed over ranks */
  PetscBool      from_device; /* built from device CSR arrays: new values can come the same way */
} FusedDeviceOperator;

/* Copies csr to the device in format (FUSED_FORMAT_*); with an off-process
   block on several ranks (collective over cmap's communicator: every rank
   calls it) the halo is planned over cmap and its transport chosen */
PETSC_INTERN PetscErrorCode FusedDeviceOperatorCreate(PetscInt device, const FusedDeviceCSR *csr, PetscInt format, PetscLayout cmap, FusedHaloTransport transport, FusedDeviceOperator *op);
/* New values of the same pattern from device CSR arrays (csr->on_device),
   into the storage op was made from such arrays in; local, no halo change */
PETSC_INTERN PetscErrorCode FusedDeviceOperatorRefresh(FusedDeviceOperator *op, const FusedDeviceCSR *csr);
/* Uses a device copy that another object owns and keeps (one rank only) */
PETSC_INTERN PetscErrorCode FusedDeviceOperatorBorrow(PetscInt device, FusedDevMat mat, PetscLogDouble nnz, FusedDeviceOperator *op);
/* Frees what op owns (collective where it has a halo) and empties it */
PETSC_INTERN PetscErrorCode FusedDeviceOperatorRelease(FusedDeviceOperator *op);

/* The ghost values of the device vector x for op's next product: the pack
   is queued on work's stream, and work that reads no ghost value may be
   queued between Begin and End; after End what the stream queues sees them.
   Collective; nothing to do on one rank. */
PETSC_INTERN PetscErrorCode FusedDeviceGhostsBegin(FusedDeviceOperator *op, FusedDeviceWork *work, const double *x);
PETSC_INTERN PetscErrorCode FusedDeviceGhostsEnd(FusedDeviceOperator *op, FusedDeviceWork *work);
PETSC_INTERN PetscErrorCode FusedDeviceGhosts(FusedDeviceOperator *op, FusedDeviceWork *work, const double *x);
/* Refuses device buffers for MPI where the MPI library says it cannot take them */
PETSC_INTERN PetscErrorCode FusedHaloCheckCUDAAwareMPI(MPI_Comm comm);

/* The halo's transports (fusedhalo_cuda.c), for the operator above: set up
   once per operator (collective), then Begin packs x's entries on ctx's
   stream and End delivers the ghosts into A's ghost buffer */
PETSC_INTERN PetscErrorCode FusedHaloTransportSetUp(FusedHalo h, FusedDevMat A, PetscInt device, FusedHaloTransport asked);
PETSC_INTERN PetscErrorCode FusedHaloTransportBegin(FusedHalo h, FusedDevMat A, FusedCUDA ctx, const double *x);
PETSC_INTERN PetscErrorCode FusedHaloTransportEnd(FusedHalo h, FusedDevMat A, FusedCUDA ctx, double *send_host, double *ghost_host);
PETSC_INTERN PetscErrorCode FusedHaloTransportDestroy(FusedHalo *h);

/* -log_view's event for the ghost exchange (registered by the package) */
PETSC_INTERN PetscLogEvent FUSED_Halo;

#endif
