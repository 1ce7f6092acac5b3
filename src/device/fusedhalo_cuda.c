/* The transports of the compressed halo on the CUDA backend (fusedhalo.h).
   The entries the neighbours read are packed on the device; then
   - host: they cross to a pinned buffer, go through MPI, and come back;
   - cuda_aware_mpi: MPI sends the device buffers themselves;
   - ipc (ranks of one host): each rank shares its device send buffer with
     the ranks that read it (CUDA IPC, once per operator) and copies its
     ghosts straight out of its neighbours' buffers, over NVLink where the
     GPUs have it. Two one-int messages per neighbour order the copies: 'ready'
     (the sender packed) and 'done' (the reader copied: the sender may pack
     again), the second one waited for only before the next pack. */
#include "device/fuseddevice.h"
#if defined(OPEN_MPI) && OPEN_MPI
  #include <mpi-ext.h>
#endif

const char *const FusedHaloTransports[] = {"auto", "host", "ipc", "cuda_aware_mpi", "FusedHaloTransport", "FUSED_HALO_", NULL};

enum { FUSED_TAG_READY = 11, FUSED_TAG_DONE = 12 };

/* Refuses -fused_cuda_aware_mpi where the MPI library says it cannot take device memory */
PETSC_INTERN PetscErrorCode FusedHaloCheckCUDAAwareMPI(MPI_Comm comm)
{
  PetscFunctionBegin;
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  PetscCheck(MPIX_Query_cuda_support(), comm, PETSC_ERR_SUP_SYS, "-fused_cuda_aware_mpi (or -ksp_fused_halo cuda_aware_mpi): this MPI library reports no CUDA support (MPIX_Query_cuda_support() is 0); leave it out to exchange through IPC or pinned host buffers");
#else
  (void)comm;
#endif
  PetscFunctionReturn(0);
}

/* Shares the send buffers through CUDA IPC; every rank learns whether all could (collective) */
static PetscErrorCode FusedHaloIpcSetUp(FusedHalo h, FusedDevMat A, PetscInt device, PetscBool *ok)
{
  unsigned char *out, *in;
  PetscInt      *off_in, *my_off;
  MPI_Request   *reqs;
  PetscMPIInt    i, nr = h->nrecv, ns = h->nsend;
  int            mine = 1, all;

  PetscFunctionBegin;
  PetscCall(PetscMalloc4(FUSED_IPC_HANDLE_BYTES, &out, nr * FUSED_IPC_HANDLE_BYTES + 1, &in, nr + 1, &off_in, ns + 1, &my_off));
  PetscCall(PetscMalloc1(2 * (nr + ns), &reqs));
  if (FusedCUDAIpcExport(A, out)) {
    PetscCall(PetscInfo(NULL, "CUDA IPC unavailable here: %s\n", FusedCUDALastError()));
    mine = 0;
  }
  /* to each reader: our handle and where its entries start in the buffer */
  for (i = 0; i < ns; i++) my_off[i] = h->send_off[i];
  for (i = 0; i < nr; i++) {
    PetscCallMPI(MPI_Irecv(in + i * FUSED_IPC_HANDLE_BYTES, FUSED_IPC_HANDLE_BYTES, MPI_BYTE, h->recv_rank[i], FUSED_TAG_READY, h->comm, &reqs[i]));
    PetscCallMPI(MPI_Irecv(off_in + i, 1, MPIU_INT, h->recv_rank[i], FUSED_TAG_DONE, h->comm, &reqs[nr + i]));
  }
  for (i = 0; i < ns; i++) {
    PetscCallMPI(MPI_Isend(out, FUSED_IPC_HANDLE_BYTES, MPI_BYTE, h->send_rank[i], FUSED_TAG_READY, h->comm, &reqs[2 * nr + i]));
    PetscCallMPI(MPI_Isend(my_off + i, 1, MPIU_INT, h->send_rank[i], FUSED_TAG_DONE, h->comm, &reqs[2 * nr + ns + i]));
  }
  PetscCallMPI(MPI_Waitall(2 * (nr + ns), reqs, MPI_STATUSES_IGNORE));
  PetscCall(PetscCalloc4(nr, &h->peer_base, nr, &h->peer_src, nr, &h->pull_off, nr, &h->pull_count));
  for (i = 0; i < nr && mine; i++) {
    if (FusedCUDAIpcOpen((int)device, in + i * FUSED_IPC_HANDLE_BYTES, &h->peer_base[i])) {
      PetscCall(PetscInfo(NULL, "cannot open the send buffer of rank %d through CUDA IPC: %s\n", h->recv_rank[i], FusedCUDALastError()));
      mine = 0;
      break;
    }
    h->peer_src[i]   = (const double *)h->peer_base[i] + off_in[i];
    h->pull_off[i]   = (int)h->recv_off[i];
    h->pull_count[i] = (int)(h->recv_off[i + 1] - h->recv_off[i]);
  }
  PetscCallMPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, h->comm));
  *ok = all ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(PetscFree4(out, in, off_in, my_off));
  PetscCall(PetscFree(reqs));
  PetscCall(PetscMalloc2(2 * (nr + ns), &h->tokens, nr + ns, &h->token_buf));
  PetscFunctionReturn(0);
}

/* Our readers are done with the last contents of our send buffer */
static PetscErrorCode FusedHaloIpcWaitReaders(FusedHalo h)
{
  PetscFunctionBegin;
  if (h->tokens_pending) PetscCallMPI(MPI_Waitall(h->nrecv + h->nsend, h->tokens, MPI_STATUSES_IGNORE));
  h->tokens_pending = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* Closes what IPC opened; collective, so that no rank frees a buffer another still reads */
PETSC_INTERN PetscErrorCode FusedHaloTransportDestroy(FusedHalo *ph)
{
  FusedHalo   h = *ph;
  PetscMPIInt i;

  PetscFunctionBegin;
  if (!h) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(FusedHaloIpcWaitReaders(h));
  if (h->peer_base) {
    for (i = 0; i < h->nrecv; i++) PetscCallFusedCUDA(FusedCUDAIpcClose(h->peer_base[i]));
    PetscCallMPI(MPI_Barrier(h->comm));
  }
  PetscCall(PetscFree4(h->peer_base, h->peer_src, h->pull_off, h->pull_count));
  PetscCall(PetscFree2(h->tokens, h->token_buf));
  PetscCall(FusedHaloDestroy(ph));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Picks the transport of a new halo (collective) */
PETSC_INTERN PetscErrorCode FusedHaloTransportSetUp(FusedHalo h, FusedDevMat A, PetscInt device, FusedHaloTransport asked)
{
  MPI_Comm    local;
  PetscMPIInt size, lsize;

  PetscFunctionBegin;
  h->transport = asked;
  if (asked == FUSED_HALO_AUTO) {
    PetscCallMPI(MPI_Comm_size(h->comm, &size));
    PetscCallMPI(MPI_Comm_split_type(h->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local));
    PetscCallMPI(MPI_Comm_size(local, &lsize));
    PetscCallMPI(MPI_Comm_free(&local));
    h->transport = lsize == size ? FUSED_HALO_IPC : FUSED_HALO_HOST;
  }
  if (h->transport == FUSED_HALO_CUDA_AWARE_MPI) PetscCall(FusedHaloCheckCUDAAwareMPI(h->comm));
  if (h->transport == FUSED_HALO_IPC) {
    PetscBool ok = PETSC_FALSE;

    PetscCall(FusedHaloIpcSetUp(h, A, device, &ok));
    if (!ok) {
      PetscCheck(asked == FUSED_HALO_AUTO, h->comm, PETSC_ERR_SUP_SYS, "-ksp_fused_halo ipc: CUDA IPC between the ranks failed (run with -info for the reason); use -ksp_fused_halo host");
      PetscCall(PetscInfo(NULL, "CUDA IPC failed on some rank; the halo goes through pinned host buffers\n"));
      h->transport = FUSED_HALO_HOST;
    }
  }
  PetscFunctionReturn(0);
}

/* After the pack: 'ready' to our readers, then our ghosts copied out of the neighbours' buffers */
static PetscErrorCode FusedHaloIpcExchange(FusedHalo h, FusedDevMat A, FusedCUDA ctx)
{
  PetscMPIInt nr = h->nrecv, ns = h->nsend, i;
  static int  token = 1;

  PetscFunctionBegin;
  for (i = 0; i < nr; i++) PetscCallMPI(MPI_Irecv(h->token_buf + i, 1, MPI_INT, h->recv_rank[i], FUSED_TAG_READY, h->comm, &h->tokens[i]));
  for (i = 0; i < ns; i++) PetscCallMPI(MPI_Isend(&token, 1, MPI_INT, h->send_rank[i], FUSED_TAG_READY, h->comm, &h->tokens[nr + i]));
  PetscCallMPI(MPI_Waitall(nr + ns, h->tokens, MPI_STATUSES_IGNORE));
  PetscCallFusedCUDA(FusedCUDAHaloPull(ctx, A, (int)nr, h->peer_src, h->pull_off, h->pull_count));
  for (i = 0; i < nr; i++) PetscCallMPI(MPI_Isend(&token, 1, MPI_INT, h->recv_rank[i], FUSED_TAG_DONE, h->comm, &h->tokens[i]));
  for (i = 0; i < ns; i++) PetscCallMPI(MPI_Irecv(h->token_buf + nr + i, 1, MPI_INT, h->send_rank[i], FUSED_TAG_DONE, h->comm, &h->tokens[nr + i]));
  h->tokens_pending = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The pack of x's entries, queued on ctx's stream (to the pinned buffer for the host transport) */
PETSC_INTERN PetscErrorCode FusedHaloTransportBegin(FusedHalo h, FusedDevMat A, FusedCUDA ctx, const double *x)
{
  PetscFunctionBegin;
  if (h->transport == FUSED_HALO_IPC) PetscCall(FusedHaloIpcWaitReaders(h));
  PetscCallFusedCUDA(FusedCUDAHaloPack(ctx, A, x, h->transport == FUSED_HALO_HOST ? 1 : 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The exchange itself: what ctx's stream queues from now on sees the ghost values */
PETSC_INTERN PetscErrorCode FusedHaloTransportEnd(FusedHalo h, FusedDevMat A, FusedCUDA ctx, double *send_host, double *ghost_host)
{
  PetscFunctionBegin;
  PetscCallFusedCUDA(FusedCUDAHaloWaitPacked(A));
  switch (h->transport) {
  case FUSED_HALO_IPC:
    PetscCall(FusedHaloIpcExchange(h, A, ctx));
    break;
  case FUSED_HALO_CUDA_AWARE_MPI:
    PetscCall(FusedHaloExchange(h, FusedDevMatSendBuffer(A), FusedDevMatGhostBuffer(A)));
    break;
  default:
    PetscCall(FusedHaloExchange(h, send_host, ghost_host));
    PetscCallFusedCUDA(FusedCUDAHaloUnpack(ctx, A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
