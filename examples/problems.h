/* Test and demo problems: built-in operators and file loading. */
#ifndef PROBLEMS_H
#define PROBLEMS_H
#include <petscfused.h>

typedef enum {
  PROBLEM_LAP2D,    /* 5-point Laplacian, Dirichlet, SPD */
  PROBLEM_LAP3D,    /* 7-point Laplacian, Dirichlet, SPD */
  PROBLEM_CONVDIFF, /* 2D convection-diffusion, upwinded: nonsymmetric */
  PROBLEM_NEUMANN2D /* 5-point Laplacian, Neumann: singular, constants in the null space */
} ProblemType;
extern const char *const ProblemTypes[];

/* n points per side; the matrix is distributed over comm by rows. */
PetscErrorCode ProblemCreate(MPI_Comm, ProblemType, PetscInt n, Mat *);
/* A Matrix Market file (.mtx) or a PETSc binary matrix file. */
PetscErrorCode ProblemLoad(MPI_Comm, const char path[], Mat *);
/* x* with entries in [0.5, 1.5] (smooth, reproducible on any rank count) and b = A x* */
PetscErrorCode ProblemExactSolution(Mat, Vec *xstar, Vec *b);
/* |b - A x| / |b| (|b - A x| where b = 0) */
PetscErrorCode ProblemTrueResidual(Mat, Vec b, Vec x, PetscReal *rel);
/* |x - x*| / |x*| */
PetscErrorCode ProblemRelativeError(Vec x, Vec xstar, PetscReal *err);
#endif
