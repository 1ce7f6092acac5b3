/* Row redistribution for smaller halos (partition.h). */
#include "partition.h"
#if defined(PETSC_HAVE_ZOLTAN)
  #include <zoltan.h>
#endif

const char *const PartitionModes[] = {"none", "graph", "hypergraph", "PartitionMode", "PARTITION_", NULL};

PetscErrorCode PartitionStatsGet(Mat A, PartitionStats *st)
{
  PetscMPIInt size;
  PetscInt    nghost = 0, nlocal, N, most_rows;
  PetscBool   ismpi;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIAIJ, &ismpi));
  if (ismpi) {
    Mat             Ad, Ao;
    const PetscInt *garray;
    PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
    PetscCall(MatGetSize(Ao, NULL, &nghost));
  }
  PetscCallMPI(MPI_Allreduce(&nghost, &st->volume, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)A)));
  PetscCallMPI(MPI_Allreduce(&nghost, &st->most, 1, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)A)));
  PetscCall(MatGetLocalSize(A, &nlocal, NULL));
  PetscCall(MatGetSize(A, &N, NULL));
  PetscCallMPI(MPI_Allreduce(&nlocal, &most_rows, 1, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)A)));
  st->imbalance = N > 0 ? (PetscReal)most_rows * size / N : 1.0;
  PetscFunctionReturn(0);
}

#if defined(PETSC_HAVE_ZOLTAN)
/* Zoltan's view of the rows, the column-net model of Catalyurek and Aykanat:
   vertices are rows, and net j holds the rows with an entry in column j and
   row j itself (the owner of x_j). A net over k parts costs k - 1 transfers of
   x_j per product, so the cut Zoltan minimizes is the halo's volume, for
   nonsymmetric patterns too. Each rank gives its rows' nets (compressed by
   vertex): row i's column indices, and i. */
typedef struct {
  PetscInt        rstart, nlocal;
  const PetscInt *ia, *ja; /* local rows in global column numbers, each with its diagonal */
} ZoltanRows;

static int ZNumObj(void *data, int *ierr)
{
  *ierr = ZOLTAN_OK;
  return (int)((ZoltanRows *)data)->nlocal;
}

static void ZObjList(void *data, int ngid, int nlid, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids, int wdim, float *w, int *ierr)
{
  ZoltanRows *z = (ZoltanRows *)data;
  (void)ngid, (void)nlid, (void)wdim, (void)w;
  for (PetscInt i = 0; i < z->nlocal; i++) {
    gids[i] = (ZOLTAN_ID_TYPE)(z->rstart + i);
    lids[i] = (ZOLTAN_ID_TYPE)i;
  }
  *ierr = ZOLTAN_OK;
}

static void ZHGSize(void *data, int *nlists, int *npins, int *format, int *ierr)
{
  ZoltanRows *z = (ZoltanRows *)data;
  *nlists = (int)z->nlocal;
  *npins  = (int)z->ia[z->nlocal];
  *format = ZOLTAN_COMPRESSED_VERTEX;
  *ierr   = ZOLTAN_OK;
}

static void ZHGCS(void *data, int ngid, int nlists, int npins, int format, ZOLTAN_ID_PTR vtx_gids, int *vtx_ptr, ZOLTAN_ID_PTR pin_gids, int *ierr)
{
  ZoltanRows *z = (ZoltanRows *)data;
  (void)ngid, (void)format;
  for (int i = 0; i < nlists; i++) {
    vtx_gids[i] = (ZOLTAN_ID_TYPE)(z->rstart + i);
    vtx_ptr[i]  = (int)z->ia[i];
  }
  for (int k = 0; k < npins; k++) pin_gids[k] = (ZOLTAN_ID_TYPE)z->ja[k];
  *ierr = ZOLTAN_OK;
}

/* For each local row, the rank it goes to, from Zoltan's PHG */
static PetscErrorCode PartitionHypergraph(Mat A, IS *newrank)
{
  MPI_Comm              comm = PetscObjectComm((PetscObject)A);
  struct Zoltan_Struct *zz;
  ZoltanRows            z;
  PetscInt              rend, row, ncols, *ia, *ja, *dest;
  const PetscInt       *cols;
  PetscMPIInt           rank, size;
  float                 version;
  int                   changes, ngid, nlid, nimp, nexp, *imp_procs, *imp_parts, *exp_procs, *exp_parts, err;
  ZOLTAN_ID_PTR         imp_gids, imp_lids, exp_gids, exp_lids;
  char                  nparts[16];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCheck(Zoltan_Initialize(0, NULL, &version) == ZOLTAN_OK, comm, PETSC_ERR_LIB, "Zoltan_Initialize failed");
  PetscCall(MatGetOwnershipRange(A, &z.rstart, &rend));
  z.nlocal = rend - z.rstart;
  /* the local rows' column lists in global numbering, each with room for the diagonal */
  PetscCall(PetscMalloc1(z.nlocal + 1, &ia));
  ia[0] = 0;
  for (row = z.rstart; row < rend; row++) {
    PetscCall(MatGetRow(A, row, &ncols, NULL, NULL));
    ia[row - z.rstart + 1] = ia[row - z.rstart] + ncols + 1;
    PetscCall(MatRestoreRow(A, row, &ncols, NULL, NULL));
  }
  PetscCall(PetscMalloc1(ia[z.nlocal] + 1, &ja));
  for (row = z.rstart; row < rend; row++) {
    PetscInt *pins = ja + ia[row - z.rstart], npins = 0;
    PetscBool hasdiag = PETSC_FALSE;

    PetscCall(MatGetRow(A, row, &ncols, &cols, NULL));
    for (PetscInt k = 0; k < ncols; k++) {
      pins[npins++] = cols[k];
      hasdiag       = (PetscBool)(hasdiag || cols[k] == row);
    }
    PetscCall(MatRestoreRow(A, row, &ncols, &cols, NULL));
    if (!hasdiag) pins[npins++] = row;
    ia[row - z.rstart + 1] = ia[row - z.rstart] + npins; /* ia is rebuilt in step with the fill */
  }
  z.ia = ia;
  z.ja = ja;
  zz   = Zoltan_Create(comm);
  PetscCheck(zz, comm, PETSC_ERR_LIB, "Zoltan_Create failed");
  PetscCall(PetscSNPrintf(nparts, sizeof(nparts), "%d", size));
  Zoltan_Set_Param(zz, "DEBUG_LEVEL", "0");
  Zoltan_Set_Param(zz, "LB_METHOD", "HYPERGRAPH");
  Zoltan_Set_Param(zz, "HYPERGRAPH_PACKAGE", "PHG");
  Zoltan_Set_Param(zz, "LB_APPROACH", "PARTITION");
  Zoltan_Set_Param(zz, "NUM_GID_ENTRIES", "1");
  Zoltan_Set_Param(zz, "NUM_LID_ENTRIES", "1");
  Zoltan_Set_Param(zz, "RETURN_LISTS", "EXPORT");
  Zoltan_Set_Param(zz, "NUM_GLOBAL_PARTS", nparts);
  Zoltan_Set_Param(zz, "OBJ_WEIGHT_DIM", "0");
  Zoltan_Set_Param(zz, "EDGE_WEIGHT_DIM", "0");
  Zoltan_Set_Num_Obj_Fn(zz, ZNumObj, &z);
  Zoltan_Set_Obj_List_Fn(zz, ZObjList, &z);
  Zoltan_Set_HG_Size_CS_Fn(zz, ZHGSize, &z);
  Zoltan_Set_HG_CS_Fn(zz, ZHGCS, &z);
  err = Zoltan_LB_Partition(zz, &changes, &ngid, &nlid, &nimp, &imp_gids, &imp_lids, &imp_procs, &imp_parts, &nexp, &exp_gids, &exp_lids, &exp_procs, &exp_parts);
  PetscCheck(err == ZOLTAN_OK, comm, PETSC_ERR_LIB, "Zoltan_LB_Partition (PHG) failed with code %d", err);
  PetscCall(PetscMalloc1(z.nlocal, &dest));
  for (row = 0; row < z.nlocal; row++) dest[row] = rank;
  for (int k = 0; k < nexp; k++) dest[exp_lids[k]] = exp_parts[k];
  Zoltan_LB_Free_Part(&imp_gids, &imp_lids, &imp_procs, &imp_parts);
  Zoltan_LB_Free_Part(&exp_gids, &exp_lids, &exp_procs, &exp_parts);
  Zoltan_Destroy(&zz);
  PetscCall(PetscFree(ia));
  PetscCall(PetscFree(ja));
  PetscCall(ISCreateGeneral(comm, z.nlocal, dest, PETSC_OWN_POINTER, newrank));
  PetscFunctionReturn(0);
}
#else
static PetscErrorCode PartitionHypergraph(Mat A, IS *newrank)
{
  PetscFunctionBegin;
  (void)newrank;
  SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "-partition hypergraph needs Zoltan, and this PETSc was configured without it (reconfigure with --with-zoltan, as make petsc-cuda does); or use -partition graph");
}
#endif

/* For each local row, the rank it goes to, from MatPartitioning on A + A^T */
static PetscErrorCode PartitionGraph(Mat A, IS *newrank)
{
  Mat             adj, sym;
  MatPartitioning part;

  PetscFunctionBegin;
  /* a symmetric pattern for the graph partitioner */
  PetscCall(MatTranspose(A, MAT_INITIAL_MATRIX, &sym));
  PetscCall(MatAXPY(sym, 1.0, A, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatConvert(sym, MATMPIADJ, MAT_INITIAL_MATRIX, &adj));
  PetscCall(MatPartitioningCreate(PetscObjectComm((PetscObject)A), &part));
  PetscCall(MatPartitioningSetAdjacency(part, adj));
#if defined(PETSC_HAVE_PTSCOTCH)
  PetscCall(MatPartitioningSetType(part, MATPARTITIONINGPTSCOTCH));
#elif defined(PETSC_HAVE_PARMETIS)
  PetscCall(MatPartitioningSetType(part, MATPARTITIONINGPARMETIS));
#else
  SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "-partition graph needs PT-Scotch or ParMETIS, and this PETSc was configured with neither (reconfigure with --with-ptscotch, as make petsc-cuda does)");
#endif
  PetscCall(MatPartitioningSetFromOptions(part)); /* -mat_partitioning_type another */
  PetscCall(MatPartitioningApply(part, newrank));
  PetscCall(MatPartitioningDestroy(&part));
  PetscCall(MatDestroy(&adj));
  PetscCall(MatDestroy(&sym));
  PetscFunctionReturn(0);
}

PetscErrorCode PartitionApply(PartitionMode mode, Mat *A)
{
  IS          newrank, rows;
  Mat         B;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)*A), &size));
  if (mode == PARTITION_NONE || size == 1) PetscFunctionReturn(0);
  if (mode == PARTITION_GRAPH) PetscCall(PartitionGraph(*A, &newrank));
  else PetscCall(PartitionHypergraph(*A, &newrank));
  /* the rows each rank receives (old global numbers), and A permuted to them */
  PetscCall(ISBuildTwoSided(newrank, NULL, &rows));
  PetscCall(ISSort(rows));
  PetscCall(MatCreateSubMatrix(*A, rows, rows, MAT_INITIAL_MATRIX, &B));
  PetscCall(ISDestroy(&rows));
  PetscCall(ISDestroy(&newrank));
  PetscCall(MatDestroy(A));
  *A = B;
  PetscFunctionReturn(0);
}
