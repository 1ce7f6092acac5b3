/* The driver the fused methods share (see fusedimpl.h). Every method's
   ksp->data begins with a KSPFused, so (KSPFused *)ksp->data is valid for all
   three. */
#include "ksp/fusedimpl.h"
#include <petsc/private/matimpl.h> /* a null space's removal function, which has no getter */

const char *const KSPFusedBackends[] = {"auto", "cuda", "reference", "KSPFusedBackend", "KSP_FUSED_BACKEND_", NULL};

PETSC_INTERN PetscErrorCode KSPFusedSetFromOptions(KSP ksp, KSPFused *fused, FusedOptionItems PetscOptionsObject)
{
  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Fused pipelined Krylov options");
  PetscCall(PetscOptionsEnum("-ksp_fused_backend", "Where the fused steps run", "KSPFusedSetBackend", KSPFusedBackends, (PetscEnum)fused->backend_requested, (PetscEnum *)&fused->backend_requested, NULL));
  PetscCall(PetscOptionsBool("-ksp_fused_convert", "CUDA backend: keep a device copy of an AIJ operator (rebuilt when it changes)", "", fused->convert, &fused->convert, NULL));
  PetscCall(PetscOptionsEList("-ksp_fused_mat_format", "CUDA backend: storage of the operator's device copy: auto, csr, dia, ell, hyb", "", FusedFormatNames, 5, FusedFormatNames[fused->format], &fused->format, NULL));
  {
    PetscBool pin = (PetscBool)!fused->work.stage_only;

    PetscCall(PetscOptionsBool("-ksp_fused_pin_host_vectors", "CUDA backend: register the arrays of host vectors (VECSEQ, VECMPI) that cross PCIe at every solve with the driver, so that they cross without a host copy into pinned staging", "", pin, &pin, NULL));
    fused->work.stage_only = (PetscBool)!pin;
  }
  PetscCall(PetscOptionsBool("-ksp_fused_ilu", "CUDA backend: apply PETSc's ILU(0) (PCILU, or block Jacobi with one ILU(0) block a rank) by petsc-fused's own level-scheduled triangular solves on the device, checked against PCApply() when built; else PCApply()", "", fused->ilu.enabled, &fused->ilu.enabled, NULL));
  PetscCall(PetscOptionsBoundedInt("-ksp_fused_ilu_wide_level", "CUDA backend, petsc-fused's triangular solves: a triangle whose levels hold more rows than this on average is solved by a grid of blocks with grid barriers, else by one block", "", fused->ilu.wide_level, &fused->ilu.wide_level, NULL, 1));
  PetscCall(PetscOptionsBool("-ksp_fused_mg", "CUDA backend, one rank: apply PETSc's multigrid PC (PCMG, PCGAMG) by petsc-fused's own V-cycle on the device, checked against PCApply() when built; else PCApply()", "", fused->mg.enabled, &fused->mg.enabled, NULL));
  PetscCall(PetscOptionsBool("-ksp_fused_device_loop", "CUDA backend: run the iterations on the device (one cooperative kernel or a CUDA graph), testing convergence there, where the test and monitors allow", "", fused->device_loop, &fused->device_loop, NULL));
  {
    PetscBool set = PETSC_FALSE;

    PetscCall(PetscOptionsInt("-ksp_fused_single_kernel_rows", "CUDA device loop: up to this many rows the iterations run in one cooperative kernel with grid barriers (latency), above it from a CUDA graph of one kernel per step (bandwidth)", "", fused->single_kernel_rows, &fused->single_kernel_rows, &set));
    if (set) fused->single_kernel_rows_set = PETSC_TRUE;
  }
  PetscCall(PetscOptionsEnum("-ksp_fused_halo", "CUDA backend, several ranks: how the ghost values travel: auto (ipc on one host), host (pinned buffers and MPI), ipc (device to device, CUDA IPC), cuda_aware_mpi", "", FusedHaloTransports, (PetscEnum)fused->halo_transport, (PetscEnum *)&fused->halo_transport, NULL));
  {
    PetscBool aware = PETSC_FALSE;
    /* a global switch, as in the halo's own options: the MPI takes device buffers */
    PetscCall(PetscOptionsGetBool(((PetscObject)ksp)->options, NULL, "-fused_cuda_aware_mpi", &aware, NULL));
    if (aware) {
      PetscCall(FusedHaloCheckCUDAAwareMPI(PetscObjectComm((PetscObject)ksp)));
      fused->halo_transport = FUSED_HALO_CUDA_AWARE_MPI;
    }
  }
  PetscCall(PetscOptionsBool("-ksp_fused_compensated", "Compensated sums (Dot2: as if in twice the working precision, rounded once) in every reduction of the fused steps, for the last digits; slower", "KSPFusedSetCompensated", fused->compensated, &fused->compensated, NULL));
  PetscCheck(fused->single_kernel_rows >= 0, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-ksp_fused_single_kernel_rows %" PetscInt_FMT " must be non-negative", fused->single_kernel_rows);
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPFusedPlacePC(KSP, KSPFused *);

PETSC_INTERN PetscErrorCode KSPFusedSetUp(KSP ksp, KSPFused *fused)
{
  PetscFunctionBegin;
  PetscCheck(ksp->pc_side != PC_SYMMETRIC, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "%s does not support symmetric preconditioning; use -ksp_pc_side left", ((PetscObject)ksp)->type_name);
  if (ksp->pc) {
    Mat      Amat;
    PetscInt m, n;

    PetscCall(PCGetOperators(ksp->pc, &Amat, NULL));
    PetscCall(MatGetSize(Amat, &m, &n));
    PetscCheck(m == n, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_SIZ, "%s: the operator is %" PetscInt_FMT " x %" PetscInt_FMT "; a Krylov method needs a square one", ((PetscObject)ksp)->type_name, m, n);
  }
  PetscCall(KSPFusedCUDASetUp(ksp, fused));
  if (fused->cuda_prepare && fused->op.mat) {
    /* what the first solve would make on the device, made here: its device
       vectors and Jacobi's diagonal. That solve places the PC again and
       finds them in place; with another PC or a null space it makes them. */
    PetscCall(KSPFusedPlacePC(ksp, fused));
    if (fused->backend == KSP_FUSED_BACKEND_CUDA && (fused->pcplace == KSP_FUSED_PC_NONE || fused->pcplace == KSP_FUSED_PC_JACOBI) && !fused->nullsp) PetscCall(fused->cuda_prepare(ksp));
  }
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscInt KSPFusedNullSpaceBasisSize(MatNullSpace nullsp)
{
  return (nullsp->has_cnst ? 1 : 0) + nullsp->n;
}

/* Whether the method's fused steps can remove this null space themselves:
   with the fused PC, a basis of at most FUSED_NULLSPACE_MAX vectors (the
   constant counted) and no user removal function */
static PetscBool KSPFusedNullSpaceFusable(KSPFused *fused, MatNullSpace nullsp, PetscBool fused_pc)
{
  return (PetscBool)(fused->device_nullspace && fused_pc && !nullsp->remove && KSPFusedNullSpaceBasisSize(nullsp) <= FUSED_NULLSPACE_MAX);
}

/* Where the PC runs and on which backend: the PC type, the operator's null
   space and the matrix values may all have changed since the last solve. */
static PetscErrorCode KSPFusedPlacePC(KSP ksp, KSPFused *fused)
{
  Mat          Amat, Pmat;
  MatNullSpace nullsp = NULL;
  PetscBool    isnone, isjacobi, ispbjacobi;
  PetscInt     bs = 1, nlocal;

  PetscFunctionBegin;
  PetscCall(PCGetOperators(ksp->pc, &Amat, &Pmat));
  PetscCall(MatGetNullSpace(Amat, &nullsp));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCNONE, &isnone));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCJACOBI, &isjacobi));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCPBJACOBI, &ispbjacobi));
  if (ispbjacobi) {
    PetscCall(MatGetBlockSize(Pmat, &bs));
    PetscCall(MatGetLocalSize(Pmat, &nlocal, NULL));
    /* blocks of one row are Jacobi: the diagonal below is the PC's own */
    if (bs == 1) isjacobi = PETSC_TRUE;
  }
  fused->nsync  = 0;
  fused->nullsp = NULL;
  fused->ns.m   = 0;
  if (nullsp && ksp->pc_side == PC_LEFT && KSPFusedNullSpaceFusable(fused, nullsp, (PetscBool)(isnone || isjacobi))) {
    /* the fused steps remove it on the device (KSPFusedChooseBackend() sends it back to PCApply() where they cannot) */
    fused->nullsp = nullsp;
  }
  if (nullsp && ksp->pc_side == PC_LEFT && !fused->nullsp) {
    /* PETSc removes the null space from every preconditioned vector; that
       is a global reduction of its own, done where PCApply runs */
    fused->pcplace     = KSP_FUSED_PC_HOST;
    fused->pcplace_why = "on the host through PCApply(), because the operator has a null space to remove";
  } else if (isnone) {
    fused->pcplace     = KSP_FUSED_PC_NONE;
    fused->pcplace_why = fused->nullsp ? "none; the operator's null space removed from each residual in the vector updates on the device (its dot products in the same reductions)" : "none";
  } else if (isjacobi) {
    PetscObjectId    id;
    PetscObjectState state;

    fused->pcplace     = KSP_FUSED_PC_JACOBI;
    fused->pcplace_why = fused->nullsp ? "Jacobi, fused into the vector updates, with the operator's null space removed there on the device (its dot products in the same reductions)" : "Jacobi, fused into the vector updates";
    PetscCall(PetscObjectGetId((PetscObject)Pmat, &id));
    PetscCall(PetscObjectStateGet((PetscObject)Pmat, &state));
    if (!fused->dinv || id != fused->dinv_pmat_id || state != fused->dinv_pmat_state) {
      Vec ones;

      /* The PC's own action on a vector of ones is its inverse diagonal,
         with every -pc_jacobi_* option (rowmax, abs, ...) honoured. */
      if (!fused->dinv) PetscCall(MatCreateVecs(Pmat, &fused->dinv, NULL));
      PetscCall(VecDuplicate(fused->dinv, &ones));
      PetscCall(VecSet(ones, 1.0));
      PetscCall(PCApply(ksp->pc, ones, fused->dinv));
      PetscCall(VecDestroy(&ones));
      fused->dinv_pmat_id    = id;
      fused->dinv_pmat_state = state;
    }
  } else if (ispbjacobi && fused->device_pbjacobi) {
    if (bs > FUSED_PBJACOBI_MAX_BS || nlocal % bs) {
      fused->pcplace = KSP_FUSED_PC_HOST;
      PetscCall(PetscSNPrintf(fused->pcplace_text, sizeof(fused->pcplace_text), "on the host through PCApply(): point-block Jacobi is fused for blocks of at most %d rows that tile each rank's rows, these have %" PetscInt_FMT, FUSED_PBJACOBI_MAX_BS, bs));
    } else if (fused->pbjacobi_left_only && ksp->pc_side == PC_RIGHT) {
      fused->pcplace = KSP_FUSED_PC_HOST;
      PetscCall(PetscSNPrintf(fused->pcplace_text, sizeof(fused->pcplace_text), "on the host through PCApply(): %s fuses point-block Jacobi as a left preconditioner only", ((PetscObject)ksp)->type_name));
    } else {
      fused->pcplace   = KSP_FUSED_PC_PBJACOBI;
      fused->dblock_bs = bs;
      PetscCall(PetscSNPrintf(fused->pcplace_text, sizeof(fused->pcplace_text), "point-block Jacobi (blocks of %" PetscInt_FMT " rows), fused into the vector updates", bs));
    }
    fused->pcplace_why = fused->pcplace_text;
  } else {
    fused->pcplace     = KSP_FUSED_PC_HOST;
    fused->pcplace_why = "on the host through PCApply(): this PC type has no fused implementation";
  }
  PetscCall(KSPFusedChooseBackend(ksp, fused));
  PetscFunctionReturn(0);
}

/* Before each solve: the settings checked, the PC placed, the counters of
   the last solve cleared */
PETSC_INTERN PetscErrorCode KSPFusedPrepareSolve(KSP ksp, KSPFused *fused)
{
  PetscFunctionBegin;
  fused->inplace_last = PETSC_FALSE; /* until the CUDA backend takes b and x in place */
  fused->hostvec_last = PETSC_FALSE;
  fused->b_pinned     = PETSC_FALSE;
  fused->x_pinned     = PETSC_FALSE;
  /* PETSc 3.18 accepts these silently; a negative tolerance would make every test meaningless */
  PetscCheck(ksp->rtol >= 0.0 && ksp->rtol < 1.0, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "%s: relative tolerance %g must be in [0, 1) (-ksp_rtol)", ((PetscObject)ksp)->type_name, (double)ksp->rtol);
  PetscCheck(ksp->abstol >= 0.0, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "%s: absolute tolerance %g must be non-negative (-ksp_atol)", ((PetscObject)ksp)->type_name, (double)ksp->abstol);
  PetscCheck(ksp->divtol > 1.0, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "%s: divergence tolerance %g must be greater than 1 (-ksp_divtol)", ((PetscObject)ksp)->type_name, (double)ksp->divtol);
  PetscCheck(ksp->max_it >= 0, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "%s: maximum iterations %" PetscInt_FMT " must be non-negative (-ksp_max_it)", ((PetscObject)ksp)->type_name, ksp->max_it);
  PetscCheck(!ksp->transpose_solve, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "%s does not support KSPSolveTranspose(); use PETSc's gmres or bcgs for the transposed system", ((PetscObject)ksp)->type_name);
  PetscCall(KSPFusedPlacePC(ksp, fused));
  fused->loop_why    = NULL;
  fused->loop_its    = 0;
  fused->loop_starts = 0;
  fused->pc_applies  = 0;
  fused->pc_copies   = 0.0;
  PetscFunctionReturn(0);
}

/* The PC's action on the vector with ones at place k of every block is
   column k of every inverse block: so the blocks are those the PC applies,
   whatever its layout or options. */
PETSC_INTERN PetscErrorCode KSPFusedBlockDiagonal(KSP ksp, KSPFused *fused)
{
  const PetscInt     bs = fused->dblock_bs;
  Mat                Pmat;
  PetscObjectId      id;
  PetscObjectState   state;
  Vec                unit, column;
  PetscInt           n;
  PetscScalar       *u;
  const PetscScalar *c;

  PetscFunctionBegin;
  PetscCall(PCGetOperators(ksp->pc, NULL, &Pmat));
  PetscCall(PetscObjectGetId((PetscObject)Pmat, &id));
  PetscCall(PetscObjectStateGet((PetscObject)Pmat, &state));
  if (fused->dblock && id == fused->dblock_pmat_id && state == fused->dblock_pmat_state) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatCreateVecs(Pmat, &unit, &column));
  PetscCall(VecGetLocalSize(unit, &n));
  PetscCall(PetscFree(fused->dblock));
  PetscCall(PetscMalloc1(n * bs, &fused->dblock));
  for (PetscInt k = 0; k < bs; k++) {
    PetscCall(VecGetArrayWrite(unit, &u));
    for (PetscInt i = 0; i < n; i++) u[i] = i % bs == k ? 1.0 : 0.0; /* each rank's rows start a block */
    PetscCall(VecRestoreArrayWrite(unit, &u));
    PetscCall(PCApply(ksp->pc, unit, column));
    PetscCall(VecGetArrayRead(column, &c));
    for (PetscInt i = 0; i < n; i++) fused->dblock[i * bs + k] = c[i];
    PetscCall(VecRestoreArrayRead(column, &c));
  }
  PetscCall(VecDestroy(&unit));
  PetscCall(VecDestroy(&column));
  fused->dblock_pmat_id    = id;
  fused->dblock_pmat_state = state;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode KSPFusedView(KSPFused *fused, PetscViewer viewer)
{
  PetscBool iascii;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(0);
  PetscCall(PetscViewerASCIIPrintf(viewer, "  %s\n", fused->description));
  if (fused->backend_why[0]) PetscCall(PetscViewerASCIIPrintf(viewer, "  backend: %s (requested: %s): %s\n", fused->backend == KSP_FUSED_BACKEND_CUDA ? "CUDA" : "reference, on the host", KSPFusedBackends[fused->backend_requested], fused->backend_why));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "  backend: chosen at the first solve (requested: %s)\n", KSPFusedBackends[fused->backend_requested]));
  if (fused->backend == KSP_FUSED_BACKEND_CUDA && fused->op.mat) {
    char   name[256];
    int    format, ndiag, nghost;
    size_t bytes;

    PetscCall(PetscFusedCUDADeviceName(fused->device, name, sizeof(name)));
    FusedDevMatGetInfo(fused->op.mat, &format, &ndiag, &bytes, &nghost);
    PetscCall(PetscViewerASCIIPushSynchronized(viewer));
    PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "  [rank %d] device %" PetscInt_FMT ": %s (-fused_device_id to choose)\n", PetscGlobalRank, fused->device, name));
    PetscCall(PetscViewerFlush(viewer));
    PetscCall(PetscViewerASCIIPopSynchronized(viewer));
    {
      const double growth = (double)bytes / (double)FusedDevMatCSRBytes(fused->op.mat);
      if (format == FUSED_FORMAT_DIA) PetscCall(PetscViewerASCIIPrintf(viewer, "  operator on the device: DIA, %d diagonals, %zu bytes, %.2fx CSR (-ksp_fused_mat_format %s)\n", ndiag, bytes, growth, FusedFormatNames[fused->format]));
      else if (format == FUSED_FORMAT_CSR) PetscCall(PetscViewerASCIIPrintf(viewer, "  operator on the device: CSR, %zu bytes (-ksp_fused_mat_format %s)\n", bytes, FusedFormatNames[fused->format]));
      else PetscCall(PetscViewerASCIIPrintf(viewer, "  operator on the device: %s, width %d, %zu bytes, %.2fx CSR (-ksp_fused_mat_format %s)\n", format == FUSED_FORMAT_ELL ? "ELL" : "HYB (ELL + CSR tail)", ndiag, bytes, growth, FusedFormatNames[fused->format]));
      if (KSPFusedOperatorFoundSymmetric(fused)) PetscCall(PetscViewerASCIIPrintf(viewer, "  operator on the device equals its transpose (checked entry by entry where it was built or refilled)\n"));
    }
    {
      char rows[256];
      FusedDevMatDescribeLongRows(fused->op.mat, rows, sizeof(rows));
      PetscCall(PetscViewerASCIIPushSynchronized(viewer));
      PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "  [rank %d] %s\n", PetscGlobalRank, rows));
      PetscCall(PetscViewerFlush(viewer));
      PetscCall(PetscViewerASCIIPopSynchronized(viewer));
    }
    if (fused->op.halo) {
      const char *how = fused->op.halo->transport == FUSED_HALO_IPC ? "copied device to device from the neighbours' buffers (CUDA IPC)" : fused->op.halo->transport == FUSED_HALO_CUDA_AWARE_MPI ? "point-to-point CUDA-aware MPI on device buffers" : "point-to-point MPI through pinned host buffers";
      PetscCall(PetscViewerASCIIPrintf(viewer, "  halo: %d ghost values per product on this rank, %" PetscInt_FMT " over all ranks; packed on the device, %s (-ksp_fused_halo %s)\n", nghost, fused->op.halo_total, how, FusedHaloTransports[fused->halo_transport]));
    }
    if (fused->loop_why) PetscCall(PetscViewerASCIIPrintf(viewer, "  iterations: %s (%" PetscInt_FMT " of the last solve ran on the device, started %" PetscInt_FMT " times by the host)\n", fused->loop_why, fused->loop_its, fused->loop_starts));
    if (fused->inplace_last) PetscCall(PetscViewerASCIIPrintf(viewer, "  b and x: the last solve read and wrote their device arrays in place (VECCUDA; no copy in or out)\n"));
    else if (fused->hostvec_last) {
      const char *pinned = "straight from and to their arrays, pinned in place", *staged = "through pinned staging";

      PetscCall(PetscViewerASCIIPrintf(viewer, "  b and x: host vectors, copied across PCIe in the last solve: b %s, x %s (-ksp_fused_pin_host_vectors %s)\n", fused->b_pinned ? pinned : staged, fused->x_pinned ? pinned : staged, fused->work.stage_only ? "0" : "1"));
    } else if (fused->loop_why) PetscCall(PetscViewerASCIIPrintf(viewer, "  b and x: device vectors, copied device to device to and from the solver's own in the last solve (in place only in the single-kernel device loop)\n"));
  }
  /* the placement is decided per solve; before the first one there is none to show */
  PetscCall(PetscViewerASCIIPrintf(viewer, "  preconditioner: %s\n", fused->pcplace_why ? fused->pcplace_why : "placement decided at the first solve"));
  if (fused->pcplace == KSP_FUSED_PC_DEVICE && fused->pc_applies > 0) {
    if (fused->pc_copies > 0) PetscCall(PetscViewerASCIIPrintf(viewer, "  the preconditioner copied between host and device %g times in its %" PetscInt_FMT " applications of the last solve: part of it runs on the host\n", (double)fused->pc_copies, fused->pc_applies));
    else PetscCall(PetscViewerASCIIPrintf(viewer, "  the preconditioner ran on the device: no host-device copies in its %" PetscInt_FMT " applications of the last solve\n", fused->pc_applies));
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "  sums of the reductions: %s\n", fused->compensated ? "compensated, each addition's and product's rounding error carried (Dot2; -ksp_fused_compensated)" : "plain double (-ksp_fused_compensated for compensated ones)"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  global reductions (MPI_Allreduce) in the last solve: %" PetscInt_FMT "\n", fused->nsync));
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode KSPFusedReset(KSPFused *fused)
{
  PetscFunctionBegin;
  PetscCall(VecDestroy(&fused->dinv));
  fused->dinv_pmat_id    = 0;
  fused->dinv_pmat_state = 0;
  PetscCall(PetscFree(fused->dblock));
  fused->dblock_pmat_id    = 0;
  fused->dblock_pmat_state = 0;
  PetscCall(KSPFusedCUDAReset(fused));
  PetscFunctionReturn(0);
}

/* The ranks' sums added with compensation: an MPI operation on KSPFusedSum
   pairs, made at the first need and freed at PetscFinalize() */
static MPI_Datatype KSPFusedSumType = MPI_DATATYPE_NULL;
static MPI_Op       KSPFusedSumOp   = MPI_OP_NULL;

static void MPIAPI KSPFusedSumReduce(void *in, void *inout, PetscMPIInt *count, MPI_Datatype *type)
{
  const KSPFusedSum *a = (const KSPFusedSum *)in;
  KSPFusedSum       *b = (KSPFusedSum *)inout;

  (void)type;
  for (PetscMPIInt i = 0; i < *count; i++) {
    KSPFusedSumAdd(&b[i], PETSC_TRUE, a[i].s);
    b[i].c += a[i].c;
  }
}

static PetscErrorCode KSPFusedSumOpFree(void)
{
  PetscFunctionBegin;
  PetscCallMPI(MPI_Op_free(&KSPFusedSumOp));
  PetscCallMPI(MPI_Type_free(&KSPFusedSumType));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPFusedAllreduceCompensated(MPI_Comm comm, PetscMPIInt count, PetscScalar buf[])
{
  KSPFusedSum  stack[64], *pairs = stack;

  PetscFunctionBegin;
  if (KSPFusedSumOp == MPI_OP_NULL) {
    PetscCallMPI(MPI_Type_contiguous(2, MPIU_SCALAR, &KSPFusedSumType));
    PetscCallMPI(MPI_Type_commit(&KSPFusedSumType));
    PetscCallMPI(MPI_Op_create(KSPFusedSumReduce, 1, &KSPFusedSumOp));
    PetscCall(PetscRegisterFinalize(KSPFusedSumOpFree));
  }
  if (count > (PetscMPIInt)(sizeof(stack) / sizeof(stack[0]))) PetscCall(PetscMalloc1(count, &pairs));
  for (PetscMPIInt i = 0; i < count; i++) pairs[i] = (KSPFusedSum){buf[i], 0.0};
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, pairs, count, KSPFusedSumType, KSPFusedSumOp, comm));
  for (PetscMPIInt i = 0; i < count; i++) buf[i] = KSPFusedSumValue(pairs[i]);
  if (pairs != stack) PetscCall(PetscFree(pairs));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One synchronization point: all partial sums of it in one MPI_Allreduce
   (with -ksp_fused_compensated, one that adds them with compensation) */
PETSC_INTERN PetscErrorCode KSPFusedAllreduce(KSP ksp, KSPFused *fused, PetscInt n, PetscScalar buf[])
{
  PetscMPIInt count;

  PetscFunctionBegin;
  PetscCall(PetscMPIIntCast(n, &count));
  PetscCall(PetscLogEventBegin(KSP_Fused_Allreduce, ksp, 0, 0, 0));
  if (fused->compensated) PetscCall(KSPFusedAllreduceCompensated(PetscObjectComm((PetscObject)ksp), count, buf));
  else PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, buf, count, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)ksp)));
  PetscCall(PetscLogEventEnd(KSP_Fused_Allreduce, ksp, 0, 0, 0));
  fused->nsync++;
  PetscFunctionReturn(0);
}

/* Iteration its has residual norm rnorm: record, monitor and test it in the
   order PETSc's own methods do. */
PETSC_INTERN PetscErrorCode KSPFusedConverged(KSP ksp, PetscInt its, PetscReal rnorm)
{
  PetscFunctionBegin;
  ksp->its   = its;
  ksp->rnorm = rnorm;
  PetscCall(KSPLogResidualHistory(ksp, rnorm));
  /* it records only where an error history is kept, and asks for the KSP's
     DM, which makes a DMShell where there is none: the process's first one
     cost its first solve 0.8 ms (H100, pcgfused at 10^4 rows: 1.16 against
     0.24 ms) */
  if (ksp->err_hist) PetscCall(KSPLogErrorHistory(ksp));
  PetscCall(KSPMonitor(ksp, its, rnorm));
  PetscCall((*ksp->converged)(ksp, its, rnorm, &ksp->reason, ksp->cnvP));
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode KSPFusedApplyPC_Reference(KSP ksp, KSPFused *fused, Vec in, Vec out)
{
  PetscFunctionBegin;
  switch (fused->pcplace) {
  case KSP_FUSED_PC_NONE:
    PetscCall(VecCopy(in, out));
    break;
  case KSP_FUSED_PC_JACOBI:
    PetscCall(VecPointwiseMult(out, fused->dinv, in));
    break;
  case KSP_FUSED_PC_PBJACOBI: /* the PC's own application: the same blocks */
  case KSP_FUSED_PC_DEVICE:   /* the reference backend's vectors are the host's: PCApply() as on the host */
  case KSP_FUSED_PC_HOST:
    PetscCall(KSP_PCApply(ksp, in, out));
    break;
  }
  PetscFunctionReturn(0);
}

/* out = B A in (left) or A B in (right); tmp is scratch of the same layout. */
PETSC_INTERN PetscErrorCode KSPFusedApplyOp_Reference(KSP ksp, KSPFused *fused, Vec in, Vec out, Vec tmp)
{
  Mat Amat;

  PetscFunctionBegin;
  PetscCall(PCGetOperators(ksp->pc, &Amat, NULL));
  switch (fused->pcplace) {
  case KSP_FUSED_PC_NONE:
    PetscCall(MatMult(Amat, in, out));
    break;
  case KSP_FUSED_PC_JACOBI:
    if (ksp->pc_side == PC_RIGHT) {
      PetscCall(VecPointwiseMult(tmp, fused->dinv, in));
      PetscCall(MatMult(Amat, tmp, out));
    } else {
      PetscCall(MatMult(Amat, in, out));
      PetscCall(VecPointwiseMult(out, fused->dinv, out));
    }
    break;
  case KSP_FUSED_PC_PBJACOBI:
  case KSP_FUSED_PC_DEVICE:
  case KSP_FUSED_PC_HOST:
    PetscCall(KSP_PCApplyBAorAB(ksp, in, out, tmp));
    break;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPFusedSetBackend_Fused(KSP ksp, KSPFusedBackend backend)
{
  KSPFused *fused = (KSPFused *)ksp->data;

  PetscFunctionBegin;
  fused->backend_requested = backend;
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPFusedGetBackendUsed_Fused(KSP ksp, KSPFusedBackend *backend)
{
  KSPFused *fused = (KSPFused *)ksp->data;

  PetscFunctionBegin;
  *backend = fused->backend;
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPFusedGetDeviceIterations_Fused(KSP ksp, PetscInt *its)
{
  KSPFused *fused = (KSPFused *)ksp->data;

  PetscFunctionBegin;
  *its = fused->loop_its;
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPFusedGetSystemInPlace_Fused(KSP ksp, PetscBool *inplace)
{
  PetscFunctionBegin;
  *inplace = ((KSPFused *)ksp->data)->inplace_last;
  PetscFunctionReturn(0);
}

/* Whether the CUDA backend's copy of the operator was checked and found equal to its transpose */
PETSC_INTERN PetscBool KSPFusedOperatorFoundSymmetric(const KSPFused *fused)
{
  return (PetscBool)(fused->backend == KSP_FUSED_BACKEND_CUDA && fused->op.mat && FusedDevMatSymmetric(fused->op.mat));
}

static PetscErrorCode KSPFusedGetOperatorSymmetric_Fused(KSP ksp, PetscBool *symmetric)
{
  PetscFunctionBegin;
  *symmetric = KSPFusedOperatorFoundSymmetric((KSPFused *)ksp->data);
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPFusedGetDeviceLoopStarts_Fused(KSP ksp, PetscInt *starts)
{
  KSPFused *fused = (KSPFused *)ksp->data;

  PetscFunctionBegin;
  *starts = fused->loop_starts;
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPFusedGetDeviceLoopSingleKernel_Fused(KSP ksp, PetscBool *single)
{
  KSPFused *fused = (KSPFused *)ksp->data;

  PetscFunctionBegin;
  *single = (PetscBool)(fused->loop_its > 0 && fused->single_kernel);
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPFusedGetBackend_Fused(KSP ksp, KSPFusedBackend *backend)
{
  KSPFused *fused = (KSPFused *)ksp->data;

  PetscFunctionBegin;
  *backend = fused->backend_requested;
  PetscFunctionReturn(0);
}

static PetscErrorCode KSPFusedSetCompensated_Fused(KSP ksp, PetscBool compensated)
{
  PetscFunctionBegin;
  ((KSPFused *)ksp->data)->compensated = compensated;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPFusedGetCompensated_Fused(KSP ksp, PetscBool *compensated)
{
  PetscFunctionBegin;
  *compensated = ((KSPFused *)ksp->data)->compensated;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode KSPFusedComposeBackend(KSP ksp, KSPFused *fused, const char *description)
{
  PetscFunctionBegin;
  fused->description       = description;
  fused->backend_requested = KSP_FUSED_BACKEND_AUTO;
  fused->backend           = KSP_FUSED_BACKEND_REFERENCE;
  fused->convert           = PETSC_TRUE;
  fused->device_loop       = PETSC_TRUE;
  fused->mg.enabled        = PETSC_TRUE;
  fused->ilu.enabled       = PETSC_TRUE;
  fused->ilu.wide_level    = 2048; /* one block's 1024 threads twice over */
  fused->single_kernel_rows = 1 << 20;
  fused->single_kernel_rows_long = -1;
  fused->device        = -1; /* picked at the first CUDA setup or solve */
  fused->format            = FUSED_FORMAT_AUTO;
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedSetBackend_C", KSPFusedSetBackend_Fused));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedGetBackend_C", KSPFusedGetBackend_Fused));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedGetBackendUsed_C", KSPFusedGetBackendUsed_Fused));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedGetDeviceIterations_C", KSPFusedGetDeviceIterations_Fused));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedGetDeviceLoopStarts_C", KSPFusedGetDeviceLoopStarts_Fused));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedGetDeviceLoopSingleKernel_C", KSPFusedGetDeviceLoopSingleKernel_Fused));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedGetSystemInPlace_C", KSPFusedGetSystemInPlace_Fused));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedGetOperatorSymmetric_C", KSPFusedGetOperatorSymmetric_Fused));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedSetCompensated_C", KSPFusedSetCompensated_Fused));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedGetCompensated_C", KSPFusedGetCompensated_Fused));
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode KSPFusedDecomposeBackend(KSP ksp)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedSetBackend_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedGetBackend_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedGetBackendUsed_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedGetDeviceIterations_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedGetDeviceLoopStarts_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedGetDeviceLoopSingleKernel_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedGetSystemInPlace_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedGetOperatorSymmetric_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedSetCompensated_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPFusedGetCompensated_C", NULL));
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode KSPReset_Fused(KSP ksp)
{
  PetscFunctionBegin;
  PetscCall(KSPFusedReset((KSPFused *)ksp->data));
  PetscFunctionReturn(0);
}

/* Every method's reset hook frees its own data, so one destroy serves all */
PETSC_INTERN PetscErrorCode KSPDestroy_Fused(KSP ksp)
{
  PetscFunctionBegin;
  PetscCall((*ksp->ops->reset)(ksp));
  PetscCall(KSPFusedDecomposeBackend(ksp));
  PetscCall(KSPDestroyDefault(ksp));
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode KSPView_Fused(KSP ksp, PetscViewer viewer)
{
  PetscFunctionBegin;
  PetscCall(KSPFusedView((KSPFused *)ksp->data, viewer));
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode KSPSetFromOptions_Fused(KSP ksp, FusedOptionItems PetscOptionsObject)
{
  PetscFunctionBegin;
  PetscCall(KSPFusedSetFromOptions(ksp, (KSPFused *)ksp->data, PetscOptionsObject));
  PetscFunctionReturn(0);
}

/*@
   KSPFusedSetBackend - Chooses where the fused steps of a fused Krylov method run.

   Logically Collective

   Input Parameters:
+  ksp     - a `KSP` of type `KSPPCGFUSED`, `KSPPBCGSFUSED` or `KSPPGMRESFUSED`
-  backend - `KSP_FUSED_BACKEND_AUTO`, `KSP_FUSED_BACKEND_CUDA` or `KSP_FUSED_BACKEND_REFERENCE`

   Options Database Key:
.  -ksp_fused_backend <auto,cuda,reference> - the backend

   Level: intermediate
@*/
PetscErrorCode KSPFusedSetBackend(KSP ksp, KSPFusedBackend backend)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(ksp, backend, 2);
  PetscTryMethod(ksp, "KSPFusedSetBackend_C", (KSP, KSPFusedBackend), (ksp, backend));
  PetscFunctionReturn(0);
}

/*@
   KSPFusedGetBackend - Gets the backend requested for a fused Krylov method.

   Not Collective

   Level: intermediate
@*/
PetscErrorCode KSPFusedGetBackend(KSP ksp, KSPFusedBackend *backend)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscAssertPointer(backend, 2);
  PetscUseMethod(ksp, "KSPFusedGetBackend_C", (KSP, KSPFusedBackend *), (ksp, backend));
  PetscFunctionReturn(0);
}

/*@
   KSPFusedGetBackendUsed - Gets the backend the last solve of a fused Krylov method ran on
   (`KSP_FUSED_BACKEND_CUDA` or `KSP_FUSED_BACKEND_REFERENCE`); `KSPView()` says why.

   Not Collective

   Level: intermediate
@*/
PetscErrorCode KSPFusedGetBackendUsed(KSP ksp, KSPFusedBackend *backend)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscAssertPointer(backend, 2);
  PetscUseMethod(ksp, "KSPFusedGetBackendUsed_C", (KSP, KSPFusedBackend *), (ksp, backend));
  PetscFunctionReturn(0);
}

/*@
   KSPFusedGetDeviceIterations - Gets how many iterations of the last solve of a fused Krylov method ran in the
   device loop, without a host look (0 on the reference backend or where the host looked every iteration;
   `KSPView()` says why).

   Not Collective

   Level: advanced
@*/
PetscErrorCode KSPFusedGetDeviceIterations(KSP ksp, PetscInt *its)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscAssertPointer(its, 2);
  PetscUseMethod(ksp, "KSPFusedGetDeviceIterations_C", (KSP, PetscInt *), (ksp, its));
  PetscFunctionReturn(0);
}

/*@
   KSPFusedGetDeviceLoopStarts - Gets how many times the host started the device loop in the last solve of a
   fused Krylov method: once, and again after each host look the solve went on from (for `KSPPGMRESFUSED`, each
   cycle whose end and start the device left to the host). 0 where no iteration ran there.

   Not Collective

   Level: advanced

.seealso: `KSPFusedGetDeviceIterations()`
@*/
PetscErrorCode KSPFusedGetDeviceLoopStarts(KSP ksp, PetscInt *starts)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscAssertPointer(starts, 2);
  PetscUseMethod(ksp, "KSPFusedGetDeviceLoopStarts_C", (KSP, PetscInt *), (ksp, starts));
  PetscFunctionReturn(0);
}

/*@
   KSPFusedGetDeviceLoopSingleKernel - Gets whether the device loop of the last solve of a fused Krylov method ran
   as one cooperative kernel (the small systems' latency-bound loop) rather than from a CUDA graph of a kernel per
   step. `PETSC_FALSE` where no iteration ran in the device loop. `-ksp_fused_single_kernel_rows` and the method's
   own rules choose (`KSPView()` says which and why).

   Not Collective

   Level: advanced

.seealso: `KSPFusedGetDeviceIterations()`, `KSPFusedGetDeviceLoopStarts()`
@*/
PetscErrorCode KSPFusedGetDeviceLoopSingleKernel(KSP ksp, PetscBool *single)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscAssertPointer(single, 2);
  PetscUseMethod(ksp, "KSPFusedGetDeviceLoopSingleKernel_C", (KSP, PetscBool *), (ksp, single));
  PetscFunctionReturn(0);
}

/*@
   KSPFusedGetSystemInPlace - Gets whether the last solve of a fused Krylov method on the CUDA backend read the
   right-hand side and wrote the solution in place, in their own device arrays (`VECCUDA` vectors, the single-kernel
   device loop), rather than through copies to and from the solver's device vectors

   Not Collective

   Level: advanced

.seealso: `KSPFusedGetDeviceIterations()`
@*/
PetscErrorCode KSPFusedGetSystemInPlace(KSP ksp, PetscBool *inplace)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscAssertPointer(inplace, 2);
  PetscUseMethod(ksp, "KSPFusedGetSystemInPlace_C", (KSP, PetscBool *), (ksp, inplace));
  PetscFunctionReturn(0);
}

/*@
   KSPFusedGetOperatorSymmetric - Gets whether the device copy of the operator of a fused Krylov method's last solve
   on the CUDA backend was found equal to its transpose, entry by entry and bit by bit. The device checks it each time
   the copy is built or refilled with new values where the method has a use for it (`KSPPCGFUSED`, whose CUDA graph
   loop then forms `<y,z>` from A's symmetry, as where `MAT_SYMMETRIC` or `MAT_SPD` is set, and reads one vector less
   per iteration) and PETSc does not know whether A is symmetric, on one rank; a `MATHYBCUDA` matrix checks its
   square local block at every assembly. `PETSC_FALSE` where it was not checked.

   Not Collective

   Level: advanced

.seealso: `KSPFusedGetSystemInPlace()`, `MatIsSymmetricKnown()`
@*/
PetscErrorCode KSPFusedGetOperatorSymmetric(KSP ksp, PetscBool *symmetric)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscAssertPointer(symmetric, 2);
  PetscUseMethod(ksp, "KSPFusedGetOperatorSymmetric_C", (KSP, PetscBool *), (ksp, symmetric));
  PetscFunctionReturn(0);
}

/*@
   KSPFusedSetCompensated - Makes every reduction of a fused Krylov method's steps sum with compensation:
   each addition's and each product's rounding error is carried beside the sum (TwoSum and TwoProduct, Ogita,
   Rump and Oishi's Dot2), so that each dot product and norm is as accurate as in twice the working precision,
   then rounded once; the ranks' sums are added the same way. For users who need the last digits (Jost et al.
   2009); it costs time, and on the CUDA backend the device loop runs from a CUDA graph instead of the
   single-kernel loop of small systems.

   Logically Collective

   Input Parameters:
+  ksp         - a `KSP` of type `KSPPCGFUSED`, `KSPPBCGSFUSED` or `KSPPGMRESFUSED`
-  compensated - `PETSC_TRUE` for compensated sums

   Options Database Key:
.  -ksp_fused_compensated <bool> - compensated sums

   Note:
   Reductions made by PETSc itself (a preconditioner applied through `PCApply()`, a null space PETSc removes)
   are PETSc's.

   Level: advanced

.seealso: `KSPFusedGetCompensated()`
@*/
PetscErrorCode KSPFusedSetCompensated(KSP ksp, PetscBool compensated)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveBool(ksp, compensated, 2);
  PetscTryMethod(ksp, "KSPFusedSetCompensated_C", (KSP, PetscBool), (ksp, compensated));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
   KSPFusedGetCompensated - Gets whether a fused Krylov method sums its reductions with compensation.

   Not Collective

   Level: advanced

.seealso: `KSPFusedSetCompensated()`
@*/
PetscErrorCode KSPFusedGetCompensated(KSP ksp, PetscBool *compensated)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscAssertPointer(compensated, 2);
  PetscUseMethod(ksp, "KSPFusedGetCompensated_C", (KSP, PetscBool *), (ksp, compensated));
  PetscFunctionReturn(PETSC_SUCCESS);
}
