/* libFuzzer target: the Matrix Market parser over arbitrary bytes (make
   fuzz). A parse either fails with a message or gives triplets whose every
   index lies in the declared size and whose every value is finite; anything
   else, a crash, a leak, a hang or an allocation beyond libFuzzer's limit,
   is a finding. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "mat/mmparse.h"

/* what a parse may claim to need: small, so that declared sizes are refused, not allocated */
#define FUZZ_MAX_BYTES 64e6

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  MMTriplets t;
  char       err[512];
  PetscInt   k;

  err[0] = 0;
  if (MMParseBuffer((const char *)data, size, FUZZ_MAX_BYTES, &t, err, sizeof(err))) {
    if (!err[0] || t.row || t.count) abort(); /* a failure says why and keeps nothing */
    return 0;
  }
  if (t.m < 0 || t.n < 0 || t.count < 0 || (t.count && (size_t)t.count > t.cap)) abort();
  if (t.count > (t.symmetry == MM_GENERAL ? t.nnz : 2 * (int64_t)t.nnz)) abort();
  for (k = 0; k < t.count; k++) {
    if (t.row[k] < 0 || t.row[k] >= t.m || t.col[k] < 0 || t.col[k] >= t.n) abort();
    if (!isfinite(t.val[k])) abort();
  }
  MMTripletsFree(&t);
  return 0;
}
