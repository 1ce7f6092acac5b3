/* Host vectors pinned where they are (the device layer). The array of a
   host vector that goes to or from the device on its third trip is
   registered with the driver (cudaHostRegister), so that its later trips
   cross PCIe straight from and to it instead of through a host copy into
   the pinned staging: on the H100's host a memcpy ran at about 13 GB/s and
   a copy of pinned memory at about 50 (docs/history.md, "Host vectors
   pinned in place").

   A registration must end before its memory is freed or changes hands: the
   driver would otherwise keep copying the pages it pinned while the address
   serves a new allocation. So the operations that free or swap a vector's
   array (destroy, placearray, resetarray, replacearray) are wrapped to end
   it first, and duplicate is wrapped because a duplicate copies the
   operations of its original (VecDuplicate_Seq(), VecDuplicate_MPI()): it
   gets the unwrapped ones back. Only VECSEQ and VECMPI vectors are pinned.
   The page-aligned interior of an array is registered, so that two arrays
   sharing a page can both be; the pieces outside it (under a page each)
   keep the staging. */
#include <stdint.h>
#include <petsc/private/vecimpl.h>
#include "device/fuseddevice.h"

#define FUSED_PIN_TRIPS 3    /* a one-off solve never pays for a registration (0.1-0.35 ms on the H100's host) */
#define FUSED_PIN_PAGE  4096 /* the host's page, the unit the driver pins */

typedef struct FusedPin_s *FusedPin;
struct FusedPin_s {
  Vec                vec;     /* not referenced: the record ends with the vector */
  const PetscScalar *array;   /* the array of the last trips */
  PetscInt           trips;   /* its trips so far */
  void              *pinned;  /* the start of its registered interior, or NULL */
  PetscInt           lo, hi;  /* the registered entries [lo, hi) */
  PetscBool          refused; /* the driver refused this array: it is staged */
  struct _VecOps     ops;     /* the vector's operations before the wrapping */
  FusedPin           next;
};

static FusedPin fused_pins = NULL; /* every vector wrapped: a short list (the systems' b and x) */

/* the operations of the first vector of each type wrapped, for a vector
   that carries the wrapped operations without a record of its own: the
   members of a group VecDuplicateVecs() makes in one allocation copy them
   past the duplicate operation (PETSc's GEMV variant) */
static struct _VecOps fused_pin_type_ops[2];
static PetscBool      fused_pin_type_known[2];

static PetscErrorCode VecDestroy_FusedPin(Vec);
static PetscErrorCode VecPlaceArray_FusedPin(Vec, const PetscScalar *);
static PetscErrorCode VecResetArray_FusedPin(Vec);
static PetscErrorCode VecReplaceArray_FusedPin(Vec, const PetscScalar *);
static PetscErrorCode VecDuplicate_FusedPin(Vec, Vec *);

static FusedPin FusedPinFind(Vec v)
{
  for (FusedPin pin = fused_pins; pin; pin = pin->next)
    if (pin->vec == v) return pin;
  return NULL;
}

static PetscErrorCode FusedPinTypeIndex(Vec v, PetscInt *index)
{
  PetscBool mpi;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)v, VECMPI, &mpi));
  *index = mpi ? 1 : 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the operations v had before the wrapping: its record's, else its type's */
static PetscErrorCode FusedPinOriginalOps(Vec v, const struct _VecOps **ops)
{
  FusedPin pin = FusedPinFind(v);
  PetscInt index = 0;

  PetscFunctionBegin;
  if (pin) {
    *ops = &pin->ops;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(FusedPinTypeIndex(v, &index));
  PetscCheck(fused_pin_type_known[index], PETSC_COMM_SELF, PETSC_ERR_PLIB, "a vector carries petsc-fused's pinning operations, but none of its type was pinned");
  *ops = &fused_pin_type_ops[index];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* v's wrapped operations back to ops' */
static void FusedPinUnwrap(Vec v, const struct _VecOps *ops)
{
  if (v->ops->destroy == VecDestroy_FusedPin) v->ops->destroy = ops->destroy;
  if (v->ops->placearray == VecPlaceArray_FusedPin) v->ops->placearray = ops->placearray;
  if (v->ops->resetarray == VecResetArray_FusedPin) v->ops->resetarray = ops->resetarray;
  if (v->ops->replacearray == VecReplaceArray_FusedPin) v->ops->replacearray = ops->replacearray;
  if (v->ops->duplicate == VecDuplicate_FusedPin) v->ops->duplicate = ops->duplicate;
}

/* the registration ends; the array starts counting its trips again. The
   driver may refuse where the array's memory went first: a vector of a
   group that VecDuplicateVecs() made in one allocation (PETSc's GEMV
   variant) loses it when the group's first vector is destroyed. */
static PetscErrorCode FusedPinRelease(FusedPin pin)
{
  PetscFunctionBegin;
  if (pin->pinned) {
    char why[128];
    int  ok;

    PetscCallFusedCUDA(FusedCUDAHostUnregister(pin->pinned, &ok, why, sizeof(why)));
    if (!ok) PetscCall(PetscInfo(pin->vec, "the driver did not end the registration of a host vector's array (%s)\n", why));
  }
  pin->pinned  = NULL;
  pin->array   = NULL;
  pin->trips   = 0;
  pin->lo      = 0;
  pin->hi      = 0;
  pin->refused = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FusedPinReleaseOf(Vec v)
{
  FusedPin pin = FusedPinFind(v);

  PetscFunctionBegin;
  if (pin) PetscCall(FusedPinRelease(pin));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode VecDestroy_FusedPin(Vec v)
{
  FusedPin      *link = &fused_pins, pin;
  struct _VecOps ops;

  PetscFunctionBegin;
  while (*link && (*link)->vec != v) link = &(*link)->next;
  pin = *link;
  if (pin) {
    PetscCall(FusedPinRelease(pin)); /* before the array is freed */
    *link = pin->next;
    ops   = pin->ops;
    PetscCall(PetscFree(pin));
  } else {
    const struct _VecOps *type_ops;

    PetscCall(FusedPinOriginalOps(v, &type_ops));
    ops = *type_ops;
  }
  FusedPinUnwrap(v, &ops);
  if (ops.destroy) PetscCall((*ops.destroy)(v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode VecPlaceArray_FusedPin(Vec v, const PetscScalar *a)
{
  const struct _VecOps *ops;

  PetscFunctionBegin;
  PetscCall(FusedPinOriginalOps(v, &ops));
  PetscCall(FusedPinReleaseOf(v));
  PetscCall((*ops->placearray)(v, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode VecResetArray_FusedPin(Vec v)
{
  const struct _VecOps *ops;

  PetscFunctionBegin;
  PetscCall(FusedPinOriginalOps(v, &ops));
  PetscCall(FusedPinReleaseOf(v)); /* the placed array may be freed once it is back with its owner */
  PetscCall((*ops->resetarray)(v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode VecReplaceArray_FusedPin(Vec v, const PetscScalar *a)
{
  const struct _VecOps *ops;

  PetscFunctionBegin;
  PetscCall(FusedPinOriginalOps(v, &ops));
  PetscCall(FusedPinReleaseOf(v)); /* the old array is freed */
  PetscCall((*ops->replacearray)(v, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode VecDuplicate_FusedPin(Vec v, Vec *dup)
{
  const struct _VecOps *ops;

  PetscFunctionBegin;
  PetscCall(FusedPinOriginalOps(v, &ops));
  PetscCall((*ops->duplicate)(v, dup));
  FusedPinUnwrap(*dup, ops); /* it copied the wrapped operations */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* v's record, made (and its operations wrapped) at its first trip; NULL
   for a vector that is not pinned */
static PetscErrorCode FusedPinGet(Vec v, FusedPin *pin)
{
  PetscBool plain;
  PetscInt  index = 0;

  PetscFunctionBegin;
  *pin = FusedPinFind(v);
  if (*pin) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompareAny((PetscObject)v, &plain, VECSEQ, VECMPI, ""));
  if (!plain || !v->ops->destroy || !v->ops->placearray || !v->ops->resetarray || !v->ops->replacearray || !v->ops->duplicate || v->ops->destroy == VecDestroy_FusedPin) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscNew(pin));
  (*pin)->vec  = v;
  (*pin)->ops  = *v->ops;
  (*pin)->next = fused_pins;
  fused_pins   = *pin;
  PetscCall(FusedPinTypeIndex(v, &index));
  if (!fused_pin_type_known[index]) {
    fused_pin_type_ops[index]   = *v->ops;
    fused_pin_type_known[index] = PETSC_TRUE;
  }
  v->ops->destroy             = VecDestroy_FusedPin;
  v->ops->placearray          = VecPlaceArray_FusedPin;
  v->ops->resetarray          = VecResetArray_FusedPin;
  v->ops->replacearray        = VecReplaceArray_FusedPin;
  v->ops->duplicate           = VecDuplicate_FusedPin;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode FusedDevicePinnedRange(FusedDeviceWork *work, Vec v, const PetscScalar *a, PetscInt n, PetscInt *lo, PetscInt *hi)
{
  FusedPin pin;

  PetscFunctionBegin;
  *lo = *hi = 0;
  if (work->stage_only || n <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(FusedPinGet(v, &pin));
  if (!pin) PetscFunctionReturn(PETSC_SUCCESS);
  if (pin->array != a) { /* another array than at the last trip, swapped by some way not wrapped */
    PetscCall(FusedPinRelease(pin));
    pin->array = a;
  }
  if (!pin->pinned && !pin->refused && ++pin->trips >= FUSED_PIN_TRIPS) {
    const uintptr_t start = (uintptr_t)a, end = (uintptr_t)(a + n);
    const uintptr_t first = (start + FUSED_PIN_PAGE - 1) & ~(uintptr_t)(FUSED_PIN_PAGE - 1), last = end & ~(uintptr_t)(FUSED_PIN_PAGE - 1);
    char            why[128] = "the array is shorter than a page, or not aligned to its entries";
    int             ok       = 0;

    if (last > first && start % sizeof(PetscScalar) == 0) PetscCallFusedCUDA(FusedCUDAHostRegister((void *)first, (size_t)(last - first), &ok, why, sizeof(why)));
    if (ok) {
      pin->pinned = (void *)first;
      pin->lo     = (PetscInt)((first - start) / sizeof(PetscScalar));
      pin->hi     = (PetscInt)((last - start) / sizeof(PetscScalar));
      PetscCall(PetscInfo(v, "host vector pinned in place: %" PetscInt_FMT " of its %" PetscInt_FMT " entries registered with the driver; they cross PCIe without the staging copy\n", pin->hi - pin->lo, n));
    } else {
      pin->refused = PETSC_TRUE;
      PetscCall(PetscInfo(v, "host vector not pinned (%s): it goes through the pinned staging\n", why));
    }
  }
  if (pin->pinned) {
    *lo = pin->lo;
    *hi = pin->hi;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode FusedDeviceVecPinned(Vec v, PetscBool *pinned)
{
  FusedPin pin = FusedPinFind(v);

  PetscFunctionBegin;
  *pinned = (PetscBool)(pin && pin->pinned);
  PetscFunctionReturn(PETSC_SUCCESS);
}
