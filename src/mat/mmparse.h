/* The Matrix Market parser over a byte buffer: plain C (PETSc's index and
   scalar types, no PETSc calls), so that the reader (mmread.c), the tests and
   the fuzz target (tests/fuzz_mm.c) share it. It never trusts the buffer:
   every failure is a message with the line number, nothing is cut or read
   silently wrong, and it allocates as entries arrive, never from a count the
   file declares. */
#ifndef MMPARSE_H
#define MMPARSE_H
#include <stddef.h>
#include <petscsys.h> /* its types and format macros only: the parser calls no PETSc function */

typedef enum { MM_GENERAL, MM_SYMMETRIC, MM_SKEW } MMSymmetry;

typedef struct {
  PetscInt     m, n, nnz;   /* from the size line */
  MMSymmetry   symmetry;
  PetscInt     count;       /* entries stored (symmetric ones expanded) */
  size_t       cap;         /* room in row, col, val */
  PetscInt    *row, *col;   /* 0-based */
  PetscScalar *val;
} MMTriplets;

/* Longest field accepted (a value with many digits, an index with leading zeros) */
#define MM_MAX_FIELD 511

/* Parses buf[0..len) into t. max_bytes bounds what the matrix the size line
   declares may need (its triplets, its AIJ copy, and per row the reader's
   counts, AIJ's row arrays and a solve's vectors), checked before anything
   is allocated. Returns 0, or 1 with a message in err (t is then empty).
   The caller frees t with MMTripletsFree(). */
int  MMParseBuffer(const char *buf, size_t len, double max_bytes, MMTriplets *t, char *err, size_t errlen);
void MMTripletsFree(MMTriplets *t);
#endif
