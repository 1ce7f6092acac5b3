/* Test and demo problems: built-in operators and file loading. */
#ifndef PROBLEMS_H
#define PROBLEMS_H
#include <petscfused.h>

typedef enum {
  PROBLEM_LAP2D,    /* 5-point Laplacian, Dirichlet, SPD */
  PROBLEM_LAP3D,    /* 7-point Laplacian, Dirichlet, SPD */
  PROBLEM_CONVDIFF, /* 2D convection-diffusion, upwinded: nonsymmetric */
  PROBLEM_NEUMANN2D, /* 5-point Laplacian, Neumann: singular, constants in the null space */
  PROBLEM_KEPT3D,    /* 7-point Laplacian whose Dirichlet boundary rows stay as identity rows times
                        -problem_dirichlet_scale (default 6, the interior diagonal); the interior rows
                        keep their boundary columns, so the matrix is not symmetric */
  PROBLEM_JUMP2D,    /* 5-point diffusion whose coefficient is -problem_jump (default 1e6) in a
                        checkerboard of 4 x 4 squares and 1 elsewhere (harmonic means on faces): SPD */
  PROBLEM_ANISO2D,   /* -u_xx - e u_yy, e = -problem_anisotropy (default 1e-3): SPD */
  PROBLEM_ARROW,     /* n rows: a chain (1D Laplacian couplings) with row and column 0 dense; SPD */
  PROBLEM_POWERLAW,  /* n rows: the chain and -problem_hubs hubs (default 64) spread over the rows,
                        hub k coupled to every (k+1) s-th row, s = n / -problem_longest (default
                        5000): row lengths fall off as 1/k, the longest about 5000; SPD */
  PROBLEM_VECLAP3D   /* 3 components on an n^3 grid, block size 3: the 7-point Laplacian of each
                        plus a coupling K = [1 .5 .25; .5 1 .5; .25 .5 1] at every point (L (x) I + I (x) K);
                        SPD, with 3 x 3 diagonal blocks for point-block Jacobi */
} ProblemType;
extern const char *const ProblemTypes[];

/* An N x N matrix of the -mat_type given (MatSetFromOptions), preallocated
   for diag entries per row in the diagonal block and offdiag outside it */
PetscErrorCode ProblemMatCreate(MPI_Comm, PetscInt N, PetscInt diag, PetscInt offdiag, Mat *);
/* n points per side (arrow, powerlaw: n rows); the matrix is distributed over comm by rows. Options:
   -problem_negate (every problem times -1: negative definite from SPD),
   -problem_scale S (D A D with d_i from S^-1 to S over the rows: badly scaled),
   -problem_symmetric (MAT_SYMMETRIC set on a matrix checked to be symmetric),
   -problem_peclet Pe (convdiff: the global Peclet number in x, half of it
   in y; without it the cell Peclet numbers are 0.5 and 0.25),
   -problem_variable_blocks (point blocks of 1, 2 and 3 rows in turn, for
   -pc_type vpbjacobi), and the parameters named above. */
PetscErrorCode ProblemCreate(MPI_Comm, ProblemType, PetscInt n, Mat *);
/* A Matrix Market file (.mtx) or a PETSc binary matrix file (-problem_scale
   as above applies). */
PetscErrorCode ProblemLoad(MPI_Comm, const char path[], Mat *);
/* Large-bandwidth matrices of the kind Ziane Khodja et al. partition with
   hypergraphs, made of copies of a small matrix A (n x n): m block rows of n
   rows; block row i holds A at block column i and c A (c = 0.15) at block
   columns i +- 1 (the copies' own band) and i +- m/2 (a far band: rows half
   the matrix apart share columns); FIVEBAND adds i +- m/4. The result is
   (I + c T) (x) A with T the block adjacency, so it is SPD when A is
   (c times T's largest degree stays below 1), and it is the same on any
   number of ranks. Row blocks then exchange about everything; a partition
   that keeps the rows a far band couples on one rank exchanges little. */
typedef enum {
  BAND_NONE,
  BAND_BAND,    /* the copies' band and one far band on each side */
  BAND_FIVEBAND /* and a second far band on each side */
} BandKind;
extern const char *const BandKinds[];
PetscErrorCode ProblemCreateBanded(MPI_Comm, Mat A_seq, BandKind, PetscInt copies, Mat *);

/* x* with entries in [0.5, 1.5] (smooth, reproducible on any rank count) and b = A x* */
PetscErrorCode ProblemExactSolution(Mat, Vec *xstar, Vec *b);
/* |b - A x| / |b| (|b - A x| where b = 0) */
PetscErrorCode ProblemTrueResidual(Mat, Vec b, Vec x, PetscReal *rel);
/* |x - x*| / |x*| */
PetscErrorCode ProblemRelativeError(Vec x, Vec xstar, PetscReal *err);

/* For programs that run several methods side by side, each set with
   KSPSetType() and then KSPSetFromOptions(): a -ksp_type on the command line
   would replace every one of them, so it is removed from the options with a
   warning on stderr that names the program's own way to choose methods. */
PetscErrorCode ProblemIgnoreKSPType(const char *program, const char *instead);
/* Where the solve of ksp ran, read from what ran: "GPU (CUDA)" or "CPU
   (reference)" for the fused methods (KSPFusedGetBackendUsed()); for PETSc's
   own, "GPU (PETSc)" where its vectors live on the device, "CPU + GPU Mat"
   where only the operator is a device type, else "CPU (PETSc)". */
PetscErrorCode ProblemBackendLabel(KSP ksp, char *label, size_t len);
/* Before PetscInitialize(), in a PETSc built with CUDA: an MPI that is not
   built CUDA-aware makes PETSc abort at its first CUDA vector unless
   -use_gpu_aware_mpi 0 is given, so the examples give it (the command line
   and PETSC_OPTIONS still decide). Nothing elsewhere. */
PetscErrorCode ProblemPreInitialize(void);
/* In a PETSc built with CUDA, on a machine with a GPU, and unless -mat_type
   says otherwise: the problems are assembled as aijcusparse, so that their
   vectors are VECCUDA and PETSc's own methods run on the GPU beside ours.
   *device: that is the case (also when -mat_type asked for it). */
PetscErrorCode ProblemPreferDevice(PetscBool *device);
/* Whether type is one of the fused methods */
PetscBool ProblemIsFusedType(const char *type);
#endif
