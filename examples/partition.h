/* Redistributing a matrix's rows over the ranks before the solve, to cut the
   halo each product exchanges: graph partitioning through PETSc's
   MatPartitioning (PT-Scotch in Debian's PETSc) or hypergraph partitioning
   through Zoltan's PHG (Debian's libtrilinos-zoltan). */
#ifndef PARTITION_H
#define PARTITION_H
#include <petscmat.h>

typedef enum {
  PARTITION_NONE,      /* row blocks as given */
  PARTITION_GRAPH,     /* MatPartitioning on the graph of A + A^T */
  PARTITION_HYPERGRAPH /* Zoltan PHG, column-net model (the halo volume exactly) */
} PartitionMode;
extern const char *const PartitionModes[];

typedef struct {
  PetscInt  volume;    /* ghost values one product exchanges, summed over ranks */
  PetscInt  most;      /* ghost values into the busiest rank */
  PetscReal imbalance; /* most rows on a rank over the average */
} PartitionStats;

PetscErrorCode PartitionStatsGet(Mat, PartitionStats *);
/* replaces *A by P A P^T, its rows distributed as the partitioner says */
PetscErrorCode PartitionApply(PartitionMode, Mat *A);
#endif
