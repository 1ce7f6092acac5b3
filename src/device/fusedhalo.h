/* The compressed halo exchange of a row-distributed operator (Ziane Khodja
   et al. 2014): each rank sends each neighbour only the entries of its part
   of x that the neighbour's off-diagonal block reads, packed, with
   point-to-point MPI. The plan is plain C over the column layout; packing
   runs on the host here and on the device in fusedhalo_cuda.c. */
#ifndef FUSEDHALO_H
#define FUSEDHALO_H
#include <petscvec.h>

/* How the packed entries travel between devices (device/fusedhalo_cuda.c) */
typedef enum {
  FUSED_HALO_AUTO,           /* ipc where every rank is on one host, else host */
  FUSED_HALO_HOST,           /* device -> pinned host buffer -> MPI -> pinned -> device */
  FUSED_HALO_IPC,            /* device to device: each rank copies from its neighbours' send buffers (CUDA IPC) */
  FUSED_HALO_CUDA_AWARE_MPI  /* MPI on the device buffers */
} FusedHaloTransport;
PETSC_INTERN const char *const FusedHaloTransports[];

typedef struct _n_FusedHalo *FusedHalo;
struct _n_FusedHalo {
  MPI_Comm     comm;
  PetscInt     nghost;                /* entries received, in the off-diagonal block's column order */
  PetscMPIInt  nrecv, *recv_rank;     /* neighbours we receive from */
  PetscInt    *recv_off;              /* nrecv + 1 offsets into the ghost array */
  PetscMPIInt  nsend, *send_rank;     /* neighbours we send to */
  PetscInt    *send_off;              /* nsend + 1 offsets into send_idx */
  PetscInt    *send_idx;              /* local indices of the entries to send, packed by neighbour */
  MPI_Request *req;                   /* nrecv + nsend */
  /* the transport of the CUDA backend */
  FusedHaloTransport transport;
  void             **peer_base;        /* ipc: each sender's send buffer, opened here (nrecv) */
  const double     **peer_src;         /* ipc: where our entries start in it */
  int               *pull_off, *pull_count; /* ipc: where they go in the ghost array, how many */
  MPI_Request       *tokens;           /* ipc: 'ready' and 'done with your buffer' messages, 2 (nrecv + nsend) */
  int               *token_buf;
  PetscBool          tokens_pending;   /* ipc: the 'done' messages of the last exchange are in flight */
};

/* cmap: the layout of the vector the operator multiplies; garray: the sorted
   global columns of its off-diagonal block (MatMPIAIJGetSeqAIJ) */
PETSC_INTERN PetscErrorCode FusedHaloCreate(PetscLayout cmap, PetscInt nghost, const PetscInt garray[], FusedHalo *);
PETSC_INTERN PetscErrorCode FusedHaloDestroy(FusedHalo *);
/* sendbuf packed (by whoever packs), ghost receives; collective */
PETSC_INTERN PetscErrorCode FusedHaloExchange(FusedHalo, const PetscScalar sendbuf[], PetscScalar ghost[]);
/* sendbuf[k] = x[send_idx[k]]: the host packing */
PETSC_INTERN PetscErrorCode FusedHaloPack(FusedHalo, const PetscScalar x[], PetscScalar sendbuf[]);
/* entries this rank sends per exchange, and the sum over ranks */
PETSC_INTERN PetscErrorCode FusedHaloVolume(FusedHalo, PetscInt *mine, PetscInt *total);
#endif
