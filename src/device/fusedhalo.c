/* The compressed halo plan of fusedhalo.h */
#include "device/fusedhalo.h"

PETSC_INTERN PetscErrorCode FusedHaloCreate(PetscLayout cmap, PetscInt nghost, const PetscInt garray[], FusedHalo *out)
{
  FusedHalo       h;
  PetscMPIInt     size, rank, r, *nneed, *nask, nr = 0, ns = 0;
  const PetscInt *ranges;
  PetscInt        k, rstart, *asked, i;
  MPI_Request    *reqs;

  PetscFunctionBegin;
  PetscCall(PetscNew(&h));
  h->comm   = cmap->comm;
  h->nghost = nghost;
  PetscCallMPI(MPI_Comm_size(h->comm, &size));
  PetscCallMPI(MPI_Comm_rank(h->comm, &rank));
  PetscCall(PetscLayoutGetRanges(cmap, &ranges));
  rstart = ranges[rank];
  /* what we need from each owner: garray is sorted, so each owner's entries are contiguous */
  PetscCall(PetscCalloc2(size, &nneed, size, &nask));
  for (k = 0, r = 0; k < nghost; k++) {
    while (garray[k] >= ranges[r + 1]) r++;
    PetscCheck(r != rank, PETSC_COMM_SELF, PETSC_ERR_PLIB, "ghost column %" PetscInt_FMT " is owned by this rank", garray[k]);
    nneed[r]++;
  }
  PetscCallMPI(MPI_Alltoall(nneed, 1, MPI_INT, nask, 1, MPI_INT, h->comm));
  for (r = 0; r < size; r++) {
    if (nneed[r]) nr++;
    if (nask[r]) ns++;
  }
  h->nrecv = nr;
  h->nsend = ns;
  PetscCall(PetscMalloc3(nr, &h->recv_rank, nr + 1, &h->recv_off, nr + ns, &h->req));
  PetscCall(PetscMalloc2(ns, &h->send_rank, ns + 1, &h->send_off));
  h->recv_off[0] = 0;
  for (r = 0, nr = 0; r < size; r++)
    if (nneed[r]) {
      h->recv_rank[nr]    = r;
      h->recv_off[nr + 1] = h->recv_off[nr] + nneed[r];
      nr++;
    }
  h->send_off[0] = 0;
  for (r = 0, ns = 0; r < size; r++)
    if (nask[r]) {
      h->send_rank[ns]    = r;
      h->send_off[ns + 1] = h->send_off[ns] + nask[r];
      ns++;
    }
  /* the owners learn which of their rows we read */
  PetscCall(PetscMalloc1(h->send_off[ns], &h->send_idx));
  PetscCall(PetscMalloc1(nr + ns, &reqs));
  for (i = 0; i < ns; i++) PetscCallMPI(MPI_Irecv(h->send_idx + h->send_off[i], (PetscMPIInt)(h->send_off[i + 1] - h->send_off[i]), MPIU_INT, h->send_rank[i], 0, h->comm, &reqs[i]));
  for (i = 0; i < nr; i++) PetscCallMPI(MPI_Isend(garray + h->recv_off[i], (PetscMPIInt)(h->recv_off[i + 1] - h->recv_off[i]), MPIU_INT, h->recv_rank[i], 0, h->comm, &reqs[ns + i]));
  PetscCallMPI(MPI_Waitall(nr + ns, reqs, MPI_STATUSES_IGNORE));
  PetscCall(PetscFree(reqs));
  asked = h->send_idx;
  for (k = 0; k < h->send_off[ns]; k++) {
    PetscCheck(asked[k] >= rstart && asked[k] < ranges[rank + 1], PETSC_COMM_SELF, PETSC_ERR_PLIB, "asked for row %" PetscInt_FMT " that this rank does not own", asked[k]);
    asked[k] -= rstart;
  }
  PetscCall(PetscFree2(nneed, nask));
  *out = h;
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode FusedHaloDestroy(FusedHalo *ph)
{
  FusedHalo h = *ph;

  PetscFunctionBegin;
  if (!h) PetscFunctionReturn(0);
  PetscCall(PetscFree3(h->recv_rank, h->recv_off, h->req));
  PetscCall(PetscFree2(h->send_rank, h->send_off));
  PetscCall(PetscFree(h->send_idx));
  PetscCall(PetscFree(h));
  *ph = NULL;
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode FusedHaloExchange(FusedHalo h, const PetscScalar sendbuf[], PetscScalar ghost[])
{
  PetscMPIInt i;

  PetscFunctionBegin;
  for (i = 0; i < h->nrecv; i++) PetscCallMPI(MPI_Irecv(ghost + h->recv_off[i], (PetscMPIInt)(h->recv_off[i + 1] - h->recv_off[i]), MPIU_SCALAR, h->recv_rank[i], 1, h->comm, &h->req[i]));
  for (i = 0; i < h->nsend; i++) PetscCallMPI(MPI_Isend(sendbuf + h->send_off[i], (PetscMPIInt)(h->send_off[i + 1] - h->send_off[i]), MPIU_SCALAR, h->send_rank[i], 1, h->comm, &h->req[h->nrecv + i]));
  PetscCallMPI(MPI_Waitall(h->nrecv + h->nsend, h->req, MPI_STATUSES_IGNORE));
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode FusedHaloPack(FusedHalo h, const PetscScalar x[], PetscScalar sendbuf[])
{
  PetscInt k;

  PetscFunctionBegin;
  for (k = 0; k < h->send_off[h->nsend]; k++) sendbuf[k] = x[h->send_idx[k]];
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode FusedHaloVolume(FusedHalo h, PetscInt *mine, PetscInt *total)
{
  PetscInt m = h->send_off[h->nsend];

  PetscFunctionBegin;
  if (mine) *mine = m;
  if (total) PetscCallMPI(MPI_Allreduce(&m, total, 1, MPIU_INT, MPI_SUM, h->comm));
  PetscFunctionReturn(0);
}
