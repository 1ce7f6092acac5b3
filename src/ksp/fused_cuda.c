/* The CUDA backend's share of the driver: which backend a solve gets, the
   device workspace and operator, the compressed ghost exchange, and the
   device loop's contract with KSPConvergedDefault and the monitors. */
#include "ksp/fusedimpl.h"

static PetscErrorCode FusedOperatorIsAIJ(KSP ksp, PetscBool *isaij)
{
  Mat Amat;

  PetscFunctionBegin;
  PetscCall(PCGetOperators(ksp->pc, &Amat, NULL));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)Amat, isaij, MATSEQAIJ, MATMPIAIJ, MATSEQHYBCUDA, MATMPIHYBCUDA, "seqaijcusparse", "mpiaijcusparse", ""));
  PetscFunctionReturn(0);
}

/* Per solve, after the PC placement is known. AUTO takes CUDA wherever it
   can; an explicit request for CUDA that cannot be met is an error, except
   for a PC with no device implementation, which runs the solve on the
   reference backend and says so in -ksp_view. */
PETSC_INTERN PetscErrorCode KSPFusedChooseBackend(KSP ksp, KSPFused *fused)
{
  PetscInt    count;
  char        reason[256];
  PetscBool   isaij;
  Mat         Amat;
  const char *name = ((PetscObject)ksp)->type_name;

  PetscFunctionBegin;
  fused->backend = KSP_FUSED_BACKEND_REFERENCE;
  if (fused->backend_requested == KSP_FUSED_BACKEND_REFERENCE) {
    PetscCall(PetscSNPrintf(fused->backend_why, sizeof(fused->backend_why), "requested with -ksp_fused_backend reference"));
    PetscFunctionReturn(0);
  }
  PetscCall(FusedDeviceCount(&count, reason, sizeof(reason)));
  PetscCall(PCGetOperators(ksp->pc, &Amat, NULL));
  PetscCall(FusedOperatorIsAIJ(ksp, &isaij));
  if (fused->backend_requested == KSP_FUSED_BACKEND_CUDA) {
    PetscCheck(count > 0, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP_SYS, "-ksp_fused_backend cuda: no usable CUDA device: %s. Use -ksp_fused_backend reference (or auto)", reason);
    PetscCheck(isaij, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "-ksp_fused_backend cuda: %s needs an AIJ operator (seqaij or mpiaij) to copy to the device, not %s; use -ksp_fused_backend reference", name, ((PetscObject)Amat)->type_name);
    PetscCheck(fused->convert, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_INCOMP, "-ksp_fused_backend cuda with -ksp_fused_convert false: the operator is %s, not a device matrix; allow the conversion or use the reference backend", ((PetscObject)Amat)->type_name);
  }
  if (fused->pcplace == KSP_FUSED_PC_HOST && count > 0 && isaij && fused->convert && fused->device_pc && FusedDevicePETScHasCUDA()) {
    /* PETSc applies its PC to CUDA vectors: on the device where it can */
    PCType       type;
    MatNullSpace nullsp;

    PetscCall(PCGetType(ksp->pc, &type));
    PetscCall(MatGetNullSpace(Amat, &nullsp));
    PetscCall(PetscSNPrintf(fused->pcplace_text, sizeof(fused->pcplace_text), "on the device: PETSc's %s through PCApply() on CUDA vectors over the solver's device vectors%s; the rest of each iteration fused", type, nullsp && ksp->pc_side == PC_LEFT ? ", and the operator's null space removed there" : ""));
    fused->pcplace     = KSP_FUSED_PC_DEVICE;
    fused->pcplace_why = fused->pcplace_text;
  }
  if (fused->pcplace == KSP_FUSED_PC_HOST && count > 0 && isaij && fused->convert && fused->device_pc && !FusedDevicePETScHasCUDA()) {
    /* a PETSc without CUDA applies its PCs on the host; its ILU(0) factors
       and its multigrid hierarchy can still go to the device, in our
       triangular solves and our V-cycle */
    PetscBool fits;

    PetscCall(KSPFusedILUFits(ksp, fused, &fits));
    if (!fits) PetscCall(KSPFusedMGFits(ksp, fused, &fits));
    if (fits) {
      PCType type;

      PetscCall(PCGetType(ksp->pc, &type));
      PetscCall(PetscSNPrintf(fused->pcplace_text, sizeof(fused->pcplace_text), "PETSc's %s through PCApply() on the host between the fused steps on the device, its input and output crossing PCIe at each application", type));
      fused->pcplace     = KSP_FUSED_PC_DEVICE;
      fused->pcplace_why = fused->pcplace_text;
    }
  }
  if (count <= 0) PetscCall(PetscSNPrintf(fused->backend_why, sizeof(fused->backend_why), "no CUDA device (%s)", reason));
  else if (!isaij) PetscCall(PetscSNPrintf(fused->backend_why, sizeof(fused->backend_why), "the operator (%s) is not AIJ, so it has no device copy", ((PetscObject)Amat)->type_name));
  else if (!fused->convert) PetscCall(PetscSNPrintf(fused->backend_why, sizeof(fused->backend_why), "-ksp_fused_convert is off and the operator is %s", ((PetscObject)Amat)->type_name));
  else if (fused->pcplace == KSP_FUSED_PC_HOST) PetscCall(PetscSNPrintf(fused->backend_why, sizeof(fused->backend_why), "the preconditioner runs on the host (%s), so the whole solve stays there", fused->pcplace_why));
  else {
    fused->backend = KSP_FUSED_BACKEND_CUDA;
    PetscCall(PetscSNPrintf(fused->backend_why, sizeof(fused->backend_why), "%s", fused->backend_requested == KSP_FUSED_BACKEND_CUDA ? "requested" : "a CUDA device is present"));
  }
  if (fused->nullsp && fused->backend != KSP_FUSED_BACKEND_CUDA) {
    /* the reference backend's steps remove it through PCApply(), as PETSc's methods do */
    fused->nullsp      = NULL;
    fused->pcplace     = KSP_FUSED_PC_HOST;
    fused->pcplace_why = "on the host through PCApply(), because the operator has a null space to remove";
  }
  if (fused->backend_requested == KSP_FUSED_BACKEND_CUDA && fused->backend != KSP_FUSED_BACKEND_CUDA) PetscCall(PetscInfo(ksp, "CUDA backend requested, but %s: this solve runs on the reference backend\n", fused->backend_why));
  PetscFunctionReturn(0);
}

/* Whether a block's CSR arrays are a CUDA PETSc's device arrays, and if so
   those (MatSeqAIJGetCSRAndMemType() brings them up to date there) */
static PetscErrorCode FusedBlockDeviceCSR(Mat B, const char *which, const PetscInt **ia, const PetscInt **ja, const PetscScalar **va, PetscBool *on_device)
{
  PetscBool    cusparse, bound;
  PetscMemType mtype;
  PetscScalar *values;

  PetscFunctionBegin;
  *on_device = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompare((PetscObject)B, "seqaijcusparse", &cusparse));
  if (!cusparse) {
    PetscCall(PetscInfo(B, "The operator's %s block is %s, with no device CSR arrays: its device copy comes from the host arrays\n", which, ((PetscObject)B)->type_name));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatBoundToCPU(B, &bound));
  if (bound) {
    PetscCall(PetscInfo(B, "The operator's %s block is bound to the CPU: its device copy comes from the host arrays\n", which));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatSeqAIJGetCSRAndMemType(B, ia, ja, &values, &mtype));
  *va        = values;
  *on_device = PetscMemTypeDevice(mtype);
  if (!*on_device) PetscCall(PetscInfo(B, "The operator's %s block hands out host CSR arrays: its device copy comes from there\n", which));
#if defined(FUSED_HAVE_PETSC_CUDA)
  if (*on_device) {
    /* a block with empty rows (the off-process block, mostly) keeps only its
       nonempty rows' starts there (compressed rows): the starts of every row
       come from here, kept by PETSc until the pattern changes */
    const PetscInt *starts, *cols, *starts_back, *cols_back;

    PetscCall(MatSeqAIJCUSPARSEGetIJ(B, PETSC_FALSE, &starts, &cols));
    *ia         = starts;
    starts_back = starts;
    cols_back   = cols;
    PetscCall(MatSeqAIJCUSPARSERestoreIJ(B, PETSC_FALSE, &starts_back, &cols_back));
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The operator's blocks as device CSR arrays where they all are on the
   device (a CUDA PETSc's aijcusparse), else csr->on_device stays false */
static PetscErrorCode FusedOperatorDeviceCSR(Mat Amat, FusedDeviceCSR *csr)
{
  Mat       Ad, Ao = NULL;
  PetscBool on;
  MatInfo   info;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(csr, sizeof(*csr)));
  PetscCall(MatHYBCUDAGetBlocks(Amat, &Ad, &Ao, &csr->garray));
  PetscCall(FusedBlockDeviceCSR(Ad, "diagonal", &csr->ia, &csr->ja, &csr->va, &on));
  if (!on) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetLocalSize(Ad, &csr->n, NULL));
  PetscCall(MatGetInfo(Ad, MAT_LOCAL, &info));
  csr->nnz = (PetscInt)info.nz_used;
  if (Ao) PetscCall(MatGetSize(Ao, NULL, &csr->nghost));
  if (csr->nghost > 0) {
    PetscCall(FusedBlockDeviceCSR(Ao, "off-process", &csr->oia, &csr->oja, &csr->ova, &on));
    if (!on) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(MatGetInfo(Ao, MAT_LOCAL, &info));
    csr->nnz += (PetscInt)info.nz_used;
  }
  csr->on_device = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the device copy of Amat is to be checked against its transpose:
   where the method takes a shortcut for a symmetric A, PETSc does not know
   whether it is, and one rank holds it all (a pass over the matrix, 7 ms at
   160^3 on an H200: not for methods that do not use it) */
static PetscErrorCode FusedOperatorCheckSymmetry(KSP ksp, KSPFused *fused, Mat Amat, PetscBool *check)
{
  PetscBool   set, flg;
  PetscMPIInt size;

  PetscFunctionBegin;
  *check = PETSC_FALSE;
  if (!fused->check_symmetry) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &size));
  PetscCall(MatIsSymmetricKnown(Amat, &set, &flg));
  *check = (PetscBool)(size == 1 && !(set && flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The operator's device rows, made again when the matrix (id or state)
   changed; from a CUDA PETSc's device arrays new values on the same pattern
   only refill the storage, on the device */
static PetscErrorCode FusedBuildDeviceOperator(KSP ksp, KSPFused *fused)
{
  Mat              Amat, Ad, Ao = NULL;
  PetscObjectId    id;
  PetscObjectState state, nzstate;
  PetscBool        isseqhyb, done, check_symmetry;
  PetscInt         on;
  FusedDeviceCSR   csr;
  PetscLayout      cmap;

  PetscFunctionBegin;
  PetscCall(PCGetOperators(ksp->pc, &Amat, NULL));
  PetscCall(PetscObjectGetId((PetscObject)Amat, &id));
  PetscCall(PetscObjectStateGet((PetscObject)Amat, &state));
  PetscCall(MatGetNonzeroState(Amat, &nzstate));
  if (fused->op.mat && id == fused->op_id && state == fused->op_state) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(KSP_Fused_Convert, ksp, 0, 0, 0));
  PetscCall(PetscObjectTypeCompare((PetscObject)Amat, MATSEQHYBCUDA, &isseqhyb));
  PetscCall(FusedOperatorCheckSymmetry(ksp, fused, Amat, &check_symmetry));
  if (!isseqhyb) PetscCall(FusedOperatorDeviceCSR(Amat, &csr));
  csr.check_symmetry = check_symmetry;
  if (!isseqhyb && fused->op.mat && fused->op.from_device && id == fused->op_id) {
    /* every rank refreshes or every rank rebuilds: a rebuild plans the halo together */
    int refresh = csr.on_device && nzstate == fused->op_nzstate, all;

    PetscCallMPI(MPI_Allreduce(&refresh, &all, 1, MPI_INT, MPI_MIN, PetscObjectComm((PetscObject)ksp)));
    if (all) {
      PetscCall(FusedDeviceOperatorRefresh(&fused->op, &csr));
      PetscCall(PetscInfo(ksp, "Operator's new values refilled its device storage from PETSc's device arrays (same pattern)\n"));
      fused->op_state = state;
      PetscCall(PetscLogEventEnd(KSP_Fused_Convert, ksp, 0, 0, 0));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  PetscCall(FusedDeviceOperatorRelease(&fused->op));
  PetscCall(MatGetLayouts(Amat, NULL, &cmap));
  if (isseqhyb) {
    /* the matrix is on the device already: the solver works on its copy */
    PetscInt    device;
    FusedDevMat mat;
    MatInfo     info;

    PetscCall(MatHYBCUDAGetDevMat(Amat, &mat, &device));
    PetscCheck(device == fused->device, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "the hybcuda operator is on CUDA device %" PetscInt_FMT " and the solver on %" PetscInt_FMT "; give both the same -fused_device_id", device, fused->device);
    PetscCall(MatGetInfo(Amat, MAT_LOCAL, &info));
    PetscCall(FusedDeviceOperatorBorrow(device, mat, info.nz_used, &fused->op));
  } else if (csr.on_device) {
    PetscCall(FusedDeviceOperatorCreate(fused->device, &csr, fused->format, cmap, fused->halo_transport, &fused->op));
  } else {
    PetscCall(PetscMemzero(&csr, sizeof(csr)));
    csr.check_symmetry = check_symmetry;
    PetscCall(MatHYBCUDAGetBlocks(Amat, &Ad, &Ao, &csr.garray));
    PetscCall(MatGetRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &csr.n, &csr.ia, &csr.ja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "cannot get the CSR arrays of the operator's diagonal block");
    PetscCall(MatSeqAIJGetArrayRead(Ad, &csr.va));
    if (Ao) {
      PetscCall(MatGetSize(Ao, NULL, &csr.nghost));
      PetscCall(MatGetRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &on, &csr.oia, &csr.oja, &done));
      PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "cannot get the CSR arrays of the operator's off-process block");
      PetscCall(MatSeqAIJGetArrayRead(Ao, &csr.ova));
    }
    {
      /* the arrays go back to the matrix also when the copy failed */
      PetscErrorCode err = FusedDeviceOperatorCreate(fused->device, &csr, fused->format, cmap, fused->halo_transport, &fused->op);

      PetscCall(MatSeqAIJRestoreArrayRead(Ad, &csr.va));
      PetscCall(MatRestoreRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &csr.n, &csr.ia, &csr.ja, &done));
      if (Ao) {
        PetscCall(MatSeqAIJRestoreArrayRead(Ao, &csr.ova));
        PetscCall(MatRestoreRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &on, &csr.oia, &csr.oja, &done));
      }
      PetscCall(err);
    }
  }
  fused->op_id      = id;
  fused->op_state   = state;
  fused->op_nzstate = nzstate;
  PetscCall(PetscLogEventEnd(KSP_Fused_Convert, ksp, 0, 0, 0));
  {
    int    format, ndiag, ng;
    size_t bytes;

    char   rows[256];

    FusedDevMatGetInfo(fused->op.mat, &format, &ndiag, &bytes, &ng);
    FusedDevMatDescribeLongRows(fused->op.mat, rows, sizeof(rows));
    PetscCall(PetscInfo(ksp, "Operator on device %" PetscInt_FMT ": %s storage, %d diagonals or ELL width, %zu bytes, %d ghost values, built %s; %s\n", fused->device, FusedFormatNames[format], ndiag, bytes, ng, fused->op.from_device ? "on the device from PETSc's device CSR arrays" : "from host CSR arrays", rows));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* At KSPSetUp(): where the solve will likely run on the GPU, the device and
   the operator's device copy are set up here, so that -log_view and the
   caller's timings put them in the setup, not in the first solve. */
PETSC_INTERN PetscErrorCode KSPFusedCUDASetUp(KSP ksp, KSPFused *fused)
{
  PetscInt  count;
  PetscBool isaij;
  Mat       Amat;

  PetscFunctionBegin;
  if (fused->backend_requested == KSP_FUSED_BACKEND_REFERENCE || !fused->convert || !ksp->pc) PetscFunctionReturn(0);
  PetscCall(FusedDeviceCount(&count, NULL, 0));
  if (count <= 0) PetscFunctionReturn(0);
  PetscCall(PCGetOperators(ksp->pc, &Amat, NULL));
  if (!Amat) PetscFunctionReturn(0);
  {
    PetscBool assembled;
    PetscCall(MatAssembled(Amat, &assembled));
    if (!assembled) PetscFunctionReturn(0);
  }
  PetscCall(FusedOperatorIsAIJ(ksp, &isaij));
  if (!isaij) PetscFunctionReturn(0);
  PetscCall(FusedDevicePick((PetscObject)ksp, &fused->device));
  PetscCall(FusedBuildDeviceOperator(ksp, fused));
  /* not at the first launch of each kernel, inside the first solve */
  PetscCallFusedCUDA(FusedCUDALoadCommonKernels((int)fused->device));
  if (fused->load_kernels) PetscCallFusedCUDA(fused->load_kernels((int)fused->device, (int)fused->compensated));
  PetscFunctionReturn(0);
}

static PetscErrorCode FusedDestroyWraps(KSPFused *fused)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < fused->nwrap; i++) PetscCall(VecDestroy(&fused->wrap[i]));
  fused->nwrap = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}


/* the null space's stored vectors to workspace vectors first, first + 1, ...
   (once per null space and workspace), and fused->ns set from them */
static PetscErrorCode FusedNullSpaceToDevice(KSP ksp, KSPFused *fused, PetscInt first)
{
  PetscBool  has_cnst;
  PetscInt   nvecs, N;
  const Vec *vecs;

  PetscFunctionBegin;
  fused->ns.m = 0;
  if (!fused->nullsp) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatNullSpaceGetVecs(fused->nullsp, &has_cnst, &nvecs, &vecs));
  PetscCall(VecGetSize(ksp->vec_sol, &N));
  if (((PetscObject)fused->nullsp)->id != fused->ns_uploaded) {
    /* PETSc's null space vectors do not change after MatNullSpaceCreate() */
    for (PetscInt k = 0; k < nvecs; k++) PetscCall(FusedDeviceUpload(&fused->work, vecs[k], FusedCUDAVec(fused->work.cuda, (int)(first + k))));
    fused->ns_uploaded = ((PetscObject)fused->nullsp)->id;
  }
  fused->ns.has_cnst = has_cnst ? 1 : 0;
  fused->ns.m        = (int)nvecs + fused->ns.has_cnst;
  fused->ns.cnst     = has_cnst ? 1.0 / PetscSqrtReal((PetscReal)N) : 0.0;
  fused->ns.vecs     = nvecs ? FusedCUDAVec(fused->work.cuda, (int)first) : NULL;
  fused->ns.ld       = (int)fused->work.n; /* workspace vector i + 1 follows i */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode KSPFusedCUDANullSpaceRemove(KSP ksp, KSPFused *fused, double *r)
{
  FusedNullSpace ns = fused->ns;
  PetscScalar    c[FUSED_NULLSPACE_MAX];

  PetscFunctionBegin;
  PetscCallFusedCUDA(FusedCUDANullSpaceSums(fused->work.cuda, r, &ns));
  PetscCallFusedCUDA(FusedCUDAGetSums(fused->work.cuda, 0, ns.m, c));
  PetscCall(KSPFusedAllreduce(ksp, fused, ns.m, c));
  for (int k = 0; k < ns.m; k++) ns.coef[k] = c[k];
  PetscCallFusedCUDA(FusedCUDANullSpaceRemove(fused->work.cuda, r, &ns));
  PetscCall(PetscLogFlops(4.0 * ns.m * fused->work.n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* point-block Jacobi's inverse blocks on the device, at workspace vectors
   first.. (dblock_bs of them, one after another): in a CUDA PETSc the PC
   runs on the device over the scratch device vectors in and out; else they
   come from the host */
static PetscErrorCode FusedBlockDiagonalToDevice(KSP ksp, KSPFused *fused, PetscInt first, double *in, double *out)
{
  const PetscInt   bs = fused->dblock_bs;
  Mat              Pmat;
  PetscObjectId    id;
  PetscObjectState state;
  double          *dblock = FusedCUDAVec(fused->work.cuda, (int)first);
  const int        n      = (int)fused->work.n;

  PetscFunctionBegin;
  PetscCall(PCGetOperators(ksp->pc, NULL, &Pmat));
  PetscCall(PetscObjectGetId((PetscObject)Pmat, &id));
  PetscCall(PetscObjectStateGet((PetscObject)Pmat, &state));
  if (id == fused->dblock_device_id && state == fused->dblock_device_state) PetscFunctionReturn(PETSC_SUCCESS);
  if (FusedDevicePETScHasCUDA()) {
    /* the PC on the device, column k of the blocks from the unit vector of place k (KSPFusedBlockDiagonal()) */
    for (PetscInt k = 0; k < bs; k++) {
      PetscCallFusedCUDA(FusedCUDAStrideUnit(fused->work.cuda, in, n, (int)bs, (int)k));
      PetscCall(KSPFusedCUDAApplyPC(ksp, fused, in, out));
      PetscCallFusedCUDA(FusedCUDAStrideScatter(fused->work.cuda, dblock, out, n, (int)bs, (int)k));
    }
  } else {
    PetscCall(KSPFusedBlockDiagonal(ksp, fused));
    PetscCallFusedCUDA(FusedCUDAUpload(fused->work.cuda, dblock, fused->dblock, (int)(n * bs)));
  }
  fused->dblock_device_id    = id;
  fused->dblock_device_state = state;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The most rows the method's single-kernel loop takes on this operator: a
   method whose single kernel loses to its graph sooner on long rows (a
   phase and a grid barrier more per product) says so, unless the user gave
   -ksp_fused_single_kernel_rows */
static PetscInt KSPFusedSingleKernelRows(KSPFused *fused)
{
  if (!fused->single_kernel_rows_set && fused->single_kernel_rows_long >= 0 && fused->op.mat && FusedDevMatLongRows(fused->op.mat)) return PetscMin(fused->single_kernel_rows, fused->single_kernel_rows_long);
  return fused->single_kernel_rows;
}

/* Whether the method's single kernel suits this operator on this device,
   where the rows allowed it: the method says (single_kernel_suits()),
   unless the user gave -ksp_fused_single_kernel_rows */
static PetscErrorCode KSPFusedSingleKernelSuits(KSP ksp, KSPFused *fused, PetscBool *suits)
{
  PetscFunctionBegin;
  *suits = PETSC_TRUE;
  if (!fused->single_kernel_rows_set && fused->single_kernel_suits) PetscCall(fused->single_kernel_suits(ksp, suits));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* How the iterations run where the PC is applied between the fused steps */
static const char *FusedDevicePCLoopWhy(const KSPFused *fused)
{
  if (fused->mg.active) return "one host check per iteration: the host queues the V-cycle at its place in each iteration";
  if (fused->ilu.active) return "one host check per iteration: the host queues the triangular solves at their place in each iteration";
  return "one host check per iteration: the host calls PCApply() at its place in each iteration";
}

PETSC_INTERN PetscErrorCode KSPFusedCUDAPrepare(KSP ksp, KSPFused *fused, PetscInt nvecs, PetscInt maxsums, const char *what)
{
  PetscInt  n, aux = 0;
  PetscBool created;

  PetscFunctionBegin;
  PetscCheck(nvecs > 2, PETSC_COMM_SELF, PETSC_ERR_PLIB, "a fused method's device work starts with the Jacobi diagonal, the iterate and b");
  if (fused->pcplace == KSP_FUSED_PC_PBJACOBI) aux = fused->dblock_bs;
  else if (fused->nullsp) PetscCall(MatNullSpaceGetVecs(fused->nullsp, NULL, &aux, NULL));
  {
    Mat Amat;

    /* the operator's rows: also at KSPSetUp(), before the solve has vectors */
    PetscCall(PCGetOperators(ksp->pc, &Amat, NULL));
    PetscCall(MatGetLocalSize(Amat, &n, NULL));
  }
  PetscCall(FusedDevicePick((PetscObject)ksp, &fused->device));
  PetscCall(FusedDeviceWorkEnsure(&fused->work, fused->device, n, nvecs + aux, maxsums, what, &created));
  if (created) {
    fused->dinv_uploaded       = -1;
    fused->ns_uploaded         = 0;
    fused->dblock_device_id    = 0;
    fused->dblock_device_state = 0;
    PetscCall(FusedDestroyWraps(fused)); /* over the vectors that went */
  }
  PetscCallFusedCUDA(FusedCUDASetCompensated(fused->work.cuda, (int)fused->compensated));
  PetscCall(FusedBuildDeviceOperator(ksp, fused));
  if (fused->pcplace == KSP_FUSED_PC_JACOBI) {
    PetscObjectState state;

    PetscCall(PetscObjectStateGet((PetscObject)fused->dinv, &state));
    if (state != fused->dinv_uploaded) {
      PetscCall(FusedDeviceUpload(&fused->work, fused->dinv, FusedCUDAVec(fused->work.cuda, FUSED_VEC_DINV)));
      fused->dinv_uploaded = state;
    }
  }
  fused->aux_vecs = nvecs;
  /* vectors 1 and 2 (x and b) are free until the system goes up */
  PetscCall(KSPFusedMGPrepare(ksp, fused, FusedCUDAVec(fused->work.cuda, 2), FusedCUDAVec(fused->work.cuda, 1)));
  PetscCall(KSPFusedILUPrepare(ksp, fused, FusedCUDAVec(fused->work.cuda, 2), FusedCUDAVec(fused->work.cuda, 1)));
  if (fused->pcplace == KSP_FUSED_PC_DEVICE && fused->loop_why) fused->loop_why = FusedDevicePCLoopWhy(fused); /* said before the PC was read */
  if (fused->pcplace == KSP_FUSED_PC_PBJACOBI) PetscCall(FusedBlockDiagonalToDevice(ksp, fused, nvecs, FusedCUDAVec(fused->work.cuda, 1), FusedCUDAVec(fused->work.cuda, 2)));
  PetscCall(FusedNullSpaceToDevice(ksp, fused, nvecs));
  /* the device loop's buffers, which its first launch would make otherwise
     (a cudaMallocHost among them); the loop runs on one rank only */
  {
    PetscMPIInt size;
    PetscBool   loop, single_rows;

    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &size));
    loop        = (PetscBool)(size == 1 && fused->device_loop && ksp->max_it <= FUSED_LOOP_MAX_IT);
    single_rows = (PetscBool)(n <= KSPFusedSingleKernelRows(fused));
    if (loop && single_rows) PetscCall(KSPFusedSingleKernelSuits(ksp, fused, &single_rows));
    /* as KSPFusedCUDALoopAllowed() will likely judge (a guess: launch facts asked for nothing cost nothing) */
    fused->single_kernel_likely = (PetscBool)(loop && single_rows && !fused->nullsp && fused->pcplace != KSP_FUSED_PC_PBJACOBI && fused->pcplace != KSP_FUSED_PC_DEVICE);
    if (loop) PetscCallFusedCUDA(FusedCUDAPrepareLoop(fused->work.cuda, (int)ksp->max_it, single_rows ? (int)fused->loop_spare_vecs : 0));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode KSPFusedCUDAApplyPC(KSP ksp, KSPFused *fused, const double *in, double *out)
{
  PetscLogDouble copies;

  PetscFunctionBegin;
  if (fused->mg.active) {
    PetscCall(KSPFusedMGApply(ksp, fused, in, out));
    fused->pc_applies++;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (fused->ilu.active) {
    PetscCall(KSPFusedILUApply(ksp, fused, in, out));
    fused->pc_applies++;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!FusedDevicePETScHasCUDA()) {
    /* a PETSc without CUDA whose multigrid or ILU did not go into our own solves:
       PCApply() on host vectors, in and out across PCIe */
    for (; fused->nwrap < 2; fused->nwrap++) PetscCall(VecDuplicate(ksp->vec_sol, &fused->wrap[fused->nwrap]));
    PetscCall(FusedDeviceDownload(&fused->work, in, fused->wrap[0]));
    PetscCall(KSP_PCApply(ksp, fused->wrap[0], fused->wrap[1]));
    PetscCall(FusedDeviceUpload(&fused->work, fused->wrap[1], out));
    fused->pc_copies += 2;
    fused->pc_applies++;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* two PETSc vectors without arrays of their own: the input and the output */
  for (; fused->nwrap < 2; fused->nwrap++) {
    PetscCall(FusedDeviceVecCreate(ksp->vec_sol, &fused->wrap[fused->nwrap]));
    PetscCheck(fused->wrap[fused->nwrap], PETSC_COMM_SELF, PETSC_ERR_SUP, "this PETSc has no CUDA vectors to apply the PC on the device");
  }
  PetscCall(FusedDeviceVecPlace(fused->wrap[0], in));
  PetscCall(FusedDeviceVecPlace(fused->wrap[1], out));
  PetscCall(FusedDeviceWorkHandToPETSc(&fused->work)); /* PETSc reads what our stream wrote */
  copies = FusedDevicePETScCopies();
  PetscCall(KSP_PCApply(ksp, fused->wrap[0], fused->wrap[1])); /* with the null space removed, as PETSc's methods do */
  PetscCall(FusedDeviceVecTake(fused->wrap[1], out));
  PetscCall(FusedDeviceVecTake(fused->wrap[0], in));
  fused->pc_copies += FusedDevicePETScCopies() - copies;
  fused->pc_applies++;
  PetscCall(FusedDeviceWorkWaitForPETSc(&fused->work)); /* and our stream what PETSc wrote */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode KSPFusedCUDAReset(KSPFused *fused)
{
  PetscFunctionBegin;
  PetscCall(FusedDestroyWraps(fused));
  PetscCall(KSPFusedMGReset(fused)); /* it may use op's device copy */
  PetscCall(KSPFusedILUReset(fused));
  PetscCall(FusedDeviceOperatorRelease(&fused->op)); /* its halo first: collective */
  PetscCall(FusedDeviceWorkDestroy(&fused->work));
  fused->op_id    = 0;
  fused->op_state = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The device loop replays the residual norms through the monitors after the
   fact, so only monitors that read nothing but the norm may watch it. */
static PetscBool FusedMonitorReadsOnlyNorm(PetscErrorCode (*monitor)(KSP, PetscInt, PetscReal, void *))
{
  return (PetscBool)(monitor == (PetscErrorCode(*)(KSP, PetscInt, PetscReal, void *))KSPMonitorResidual || FusedMonitorIsResidualShort(monitor));
}

PETSC_INTERN PetscErrorCode KSPFusedCUDALoopAllowed(KSP ksp, KSPFused *fused, PetscBool *allowed)
{
  PetscMPIInt size;
  PetscInt    i;
  PetscBool   long_rows_graph = PETSC_FALSE; /* the graph, where the single kernel would run but for the operator's long rows */

  PetscFunctionBegin;
  *allowed                      = PETSC_FALSE;
  fused->loop_solve             = PETSC_FALSE;
  fused->single_kernel_unsuited = PETSC_FALSE;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &size));
  if (!fused->device_loop) {
    fused->loop_why = "on the host, one check per iteration (-ksp_fused_device_loop false)";
    PetscFunctionReturn(0);
  }
  if (ksp->max_it > FUSED_LOOP_MAX_IT) {
    fused->loop_why = "on the host, one check per iteration: the device loop keeps the residual norms of at most 2^20 iterations, and -ksp_max_it is larger";
    PetscFunctionReturn(0);
  }
  if (fused->pcplace == KSP_FUSED_PC_DEVICE) {
    fused->loop_why = FusedDevicePCLoopWhy(fused);
    PetscFunctionReturn(0);
  }
  if (size > 1) {
    fused->loop_why = "one host check per iteration: each synchronization point is an MPI_Allreduce";
    PetscFunctionReturn(0);
  }
  if (ksp->converged != KSPConvergedDefault) {
    fused->loop_why = "one host check per iteration: the convergence test is not KSPConvergedDefault";
    PetscFunctionReturn(0);
  }
  if (ksp->err_hist) {
    fused->loop_why = "one host check per iteration: the error history needs the solution at every iteration";
    PetscFunctionReturn(0);
  }
  for (i = 0; i < ksp->numbermonitors; i++) {
    if (!FusedMonitorReadsOnlyNorm(ksp->monitor[i])) {
      fused->loop_why = "one host check per iteration: a monitor may read the solution or residual";
      PetscFunctionReturn(0);
    }
  }
  {
    const PetscInt most = KSPFusedSingleKernelRows(fused);
    PetscInt       n;

    PetscCall(VecGetLocalSize(ksp->vec_sol, &n));
    /* pcgfused's single kernel removes a null space of one vector (the constants, say), not more */
    fused->single_kernel = (PetscBool)(n <= most && (!fused->nullsp || KSPFusedNullSpaceBasisSize(fused->nullsp) <= fused->single_kernel_ns) && fused->pcplace != KSP_FUSED_PC_PBJACOBI);
    long_rows_graph      = (PetscBool)(n > most && n <= fused->single_kernel_rows);
    if (fused->single_kernel) {
      PetscBool suits;

      PetscCall(KSPFusedSingleKernelSuits(ksp, fused, &suits));
      fused->single_kernel          = suits;
      fused->single_kernel_unsuited = (PetscBool)!suits;
    }
  }
  if (fused->single_kernel) fused->loop_why = "on the device, in one cooperative kernel with grid barriers (-ksp_fused_single_kernel_rows); the host looks only where the test stops it";
  else if (fused->pcplace == KSP_FUSED_PC_PBJACOBI) fused->loop_why = "on the device, from a CUDA graph of one kernel per step (the single kernel has no point-block Jacobi); the host looks only where the test stops it";
  else if (fused->nullsp && fused->single_kernel_ns) fused->loop_why = "on the device, from a CUDA graph of one kernel per step (the single kernel removes a null space of one vector only); the host looks only where the test stops it";
  else if (fused->nullsp) fused->loop_why = "on the device, from a CUDA graph of one kernel per step (the single kernel removes no null space); the host looks only where the test stops it";
  else if (fused->single_kernel_unsuited) fused->loop_why = "on the device, from a CUDA graph of one kernel per step (the method's single kernel does not suit this operator on this device; -ksp_fused_single_kernel_rows sets one limit for all); the host looks only where the test stops it";
  else if (long_rows_graph) fused->loop_why = "on the device, from a CUDA graph of one kernel per step (the method's single kernel stops at fewer rows where the operator has long rows; -ksp_fused_single_kernel_rows sets one limit for all); the host looks only where the test stops it";
  else fused->loop_why = "on the device, from a CUDA graph of one kernel per step (-ksp_fused_single_kernel_rows); the host looks only where the test stops it";
  *allowed          = PETSC_TRUE;
  fused->loop_solve = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* After KSPConvergedDefault has seen iteration 0, ttol and rnorm0 are set */
PETSC_INTERN PetscErrorCode KSPFusedCUDAConvergence(KSP ksp, FusedConvergence *conv)
{
  PetscFunctionBegin;
  conv->ttol    = ksp->ttol;
  conv->dtol    = ksp->divtol * ksp->rnorm0;
  conv->chknorm = (int)ksp->chknorm;
  conv->max_it  = (int)ksp->max_it;
  conv->sign_rz = 1.0;
  conv->sign_py = 1.0;
  conv->judge_first = 0;
  conv->reference   = FUSED_REFERENCE_RESIDUAL;
  conv->rhs_slot    = -1;
  conv->rtol        = ksp->rtol;
  conv->abstol      = ksp->abstol;
  conv->divtol      = ksp->divtol;
  PetscFunctionReturn(0);
}

/* Whether the device may test iteration 0 itself, so that a solve starts its
   loop without waiting for the first sums, and with which reference norm
   (FUSED_REFERENCE_*): that iteration's own norm (a zero initial guess, or
   -ksp_converged_use_initial_residual_norm), or, where the method forms the
   right-hand side's norm on the device (rhs_on_device), the one that
   KSPConvergedDefault would form with PCApply() and VecNorm() on b. The
   device loop must be allowed (KSPFusedCUDALoopAllowed()) first. */
PETSC_INTERN PetscBool KSPFusedCUDAFirstTestOnDevice(KSP ksp, PetscBool rhs_on_device, int *reference)
{
  const KSPConvergedDefaultCtx *cctx = (const KSPConvergedDefaultCtx *)ksp->cnvP;

  *reference = FUSED_REFERENCE_RESIDUAL;
  if (ksp->converged != KSPConvergedDefault || !cctx || ksp->normtype == KSP_NORM_NONE || ksp->pc_side != PC_LEFT) return PETSC_FALSE;
  if (ksp->guess_zero || cctx->initialrtol) return PETSC_TRUE;
  *reference = cctx->mininitialrtol ? FUSED_REFERENCE_MIN : FUSED_REFERENCE_RHS;
  return rhs_on_device;
}

/* The test of a loop that tests iteration 0 itself (judge_first) against
   the reference norm FUSED_REFERENCE_*, b's squared norm to be in
   sums[rhs_slot] */
PETSC_INTERN PetscErrorCode KSPFusedCUDAFirstTestConvergence(KSP ksp, int reference, int rhs_slot, FusedConvergence *conv)
{
  PetscFunctionBegin;
  PetscCall(KSPFusedCUDAConvergence(ksp, conv));
  conv->judge_first = 1;
  conv->reference   = reference;
  conv->rhs_slot    = rhs_slot;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* For a single kernel that makes the solve's start itself: b and x to the
   device (x not zeroed: the kernel zeroes it after a zero guess), which
   start it makes (FUSED_LOOP_START_*), the first test's convergence with
   b's squared norm to be in sums[rhs_slot], and the start's flops. The
   method takes its b and x from KSPFusedCUDASystemVec() after this. */
PETSC_INTERN PetscErrorCode KSPFusedCUDAStartInKernel(KSP ksp, KSPFused *fused, double *b_dev, double *x_dev, int reference, int rhs_slot, PetscLogDouble flops, int *start, FusedConvergence *conv)
{
  PetscFunctionBegin;
  PetscCall(KSPFusedCUDASystemToDevice(ksp, fused, b_dev, x_dev, PETSC_FALSE));
  *start = ksp->guess_zero ? FUSED_LOOP_START_ZERO : FUSED_LOOP_START_GUESS;
  PetscCall(KSPFusedCUDAFirstTestConvergence(ksp, reference, rhs_slot, conv));
  PetscCall(PetscLogFlops(flops));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The same, where the device forms b's squared norm in sums[rhs_slot]
   from b and the fused PC d (both on the device), queued before the loop */
PETSC_INTERN PetscErrorCode KSPFusedCUDAFirstTest(KSP ksp, KSPFused *fused, int reference, const double *b, const double *d, int rhs_slot, FusedConvergence *conv)
{
  PetscFunctionBegin;
  PetscCall(KSPFusedCUDAFirstTestConvergence(ksp, reference, rhs_slot, conv));
  if (reference != FUSED_REFERENCE_RESIDUAL) PetscCallFusedCUDA(FusedCUDARhsNorm(fused->work.cuda, b, d, KSPFusedNormType(ksp), rhs_slot));
  PetscFunctionReturn(0);
}

/* Iteration 0, tested on the device with the right-hand side's norm as the
   reference, seen by the host: what KSPConvergedDefault records there
   (rnorm0 and ttol, from the same norms as the device), without its PCApply()
   and VecNorm() of b, then the monitors. */
static PetscErrorCode KSPFusedCUDAReplayFirst(KSP ksp, KSPFused *fused, int reference, double rhs_square)
{
  PetscReal rnorm;

  PetscFunctionBegin;
  PetscCallFusedCUDA(FusedCUDAGetHistory(fused->work.cuda, 0, 1, &rnorm));
  ksp->its    = 0;
  ksp->rnorm  = rnorm;
  ksp->rnorm0 = FusedReferenceNorm(reference, rnorm, rhs_square);
  ksp->ttol   = PetscMax(ksp->rtol * ksp->rnorm0, ksp->abstol);
  PetscCall(PetscInfo(ksp, "Nonzero initial guess: the right-hand side's norm %g formed on the device as the reference\n", (double)ksp->rnorm0));
  PetscCall(KSPLogResidualHistory(ksp, rnorm));
  PetscCall(KSPLogErrorHistory(ksp));
  PetscCall(KSPMonitor(ksp, 0, rnorm));
  PetscFunctionReturn(0);
}

/* After a loop that tested iteration 0 itself (FusedConvergence.judge_first):
   iterations 0..to-1 seen by the host (none where the device stopped at 0:
   the host tests that one); iteration 0 without KSPConvergedDefault where the
   reference is b's norm, whose square the device left in sums[conv->rhs_slot] */
PETSC_INTERN PetscErrorCode KSPFusedCUDAReplayFromStart(KSP ksp, KSPFused *fused, const FusedConvergence *conv, PetscInt to)
{
  double rhs_square;

  PetscFunctionBegin;
  if (to <= 0) PetscFunctionReturn(0);
  if (conv->reference == FUSED_REFERENCE_RESIDUAL) {
    PetscCall(KSPFusedCUDAReplay(ksp, fused, 0, to));
    PetscFunctionReturn(0);
  }
  PetscCallFusedCUDA(FusedCUDAGetLoopSums(fused->work.cuda, conv->rhs_slot, 1, &rhs_square));
  PetscCall(KSPFusedCUDAReplayFirst(ksp, fused, conv->reference, rhs_square));
  PetscCall(KSPFusedCUDAReplay(ksp, fused, 1, to));
  PetscFunctionReturn(0);
}

/* Iterations from..to-1 ran on the device and passed its test; the host's
   own test must agree, and the monitors see each of them now. */
PETSC_INTERN PetscErrorCode KSPFusedCUDAReplay(KSP ksp, KSPFused *fused, PetscInt from, PetscInt to)
{
  PetscReal *hist;
  PetscInt   it;

  PetscFunctionBegin;
  if (to <= from) PetscFunctionReturn(0);
  PetscCall(PetscMalloc1(to - from, &hist));
  PetscCallFusedCUDA(FusedCUDAGetHistory(fused->work.cuda, (int)from, (int)(to - from), hist));
  for (it = from; it < to; it++) {
    PetscCall(KSPFusedConverged(ksp, it, hist[it - from]));
    PetscCheck(!ksp->reason, PetscObjectComm((PetscObject)ksp), PETSC_ERR_PLIB, "The device loop went on past iteration %" PetscInt_FMT ", where KSPConvergedDefault stopped (%s); please report this", it, KSPConvergedReasons[ksp->reason]);
  }
  PetscCall(PetscFree(hist));
  PetscFunctionReturn(0);
}

/* Where the solve runs the single-kernel device loop on VECCUDA b and x of
   distinct arrays, it reads and writes those arrays in place: no copy of b
   in, of the guess in or of x out, and one ordering with PETSc's stream each
   way instead of one per copy. The arrays stay checked out until
   KSPFusedFinishSolve(). Elsewhere (host vectors, the graph, whose
   kernels' arguments would change with the user's vectors, the host-driven
   steps) b and x are copied to the workspace's own vectors. */
/* Gives back b's and x's device arrays, as far as they were checked out */
static PetscErrorCode KSPFusedCUDASystemRelease(KSP ksp, KSPFused *fused)
{
  PetscFunctionBegin;
  if (fused->x_inplace && fused->x_inplace_write) PetscCall(VecRestoreArrayWriteAndMemType(ksp->vec_sol, &fused->x_inplace));
  else if (fused->x_inplace) PetscCall(VecRestoreArrayAndMemType(ksp->vec_sol, &fused->x_inplace));
  if (fused->b_inplace) PetscCall(VecRestoreArrayReadAndMemType(ksp->vec_rhs, &fused->b_inplace));
  fused->x_inplace = NULL;
  fused->b_inplace = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPFusedCUDASystemInPlace(KSP ksp, KSPFused *fused, PetscBool *inplace)
{
  PetscMemType btype, xtype = PETSC_MEMTYPE_HOST;

  PetscFunctionBegin;
  *inplace = PETSC_FALSE;
  if (!fused->loop_solve || !fused->single_kernel || ksp->vec_rhs == ksp->vec_sol) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecGetArrayReadAndMemType(ksp->vec_rhs, &fused->b_inplace, &btype));
  fused->x_inplace_write = ksp->guess_zero;
  if (PetscMemTypeDevice(btype)) {
    if (ksp->guess_zero) PetscCall(VecGetArrayWriteAndMemType(ksp->vec_sol, &fused->x_inplace, &xtype));
    else PetscCall(VecGetArrayAndMemType(ksp->vec_sol, &fused->x_inplace, &xtype));
  }
  if (!PetscMemTypeDevice(btype) || !PetscMemTypeDevice(xtype) || (const PetscScalar *)fused->x_inplace == fused->b_inplace) PetscCall(KSPFusedCUDASystemRelease(ksp, fused));
  else *inplace = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* b to b_dev, and the initial guess (or, with zero_guess, zero) to x_dev,
   which holds the iterate from now on; or, in place
   (KSPFusedCUDASystemInPlace()), the user's arrays for them: a method takes
   its b and x from KSPFusedCUDASystemVec() after this. Without zero_guess a
   zero guess leaves x as it is, for the method's first kernel to zero. */
PETSC_INTERN PetscErrorCode KSPFusedCUDASystemToDevice(KSP ksp, KSPFused *fused, double *b_dev, double *x_dev, PetscBool zero_guess)
{
  PetscBool inplace;

  PetscFunctionBegin;
  PetscCall(KSPFusedCUDASystemInPlace(ksp, fused, &inplace));
  if (fused->inplace_said != (inplace ? 2 : 1)) PetscCall(PetscInfo(ksp, "b and x %s\n", inplace ? "read and written in place on the device (VECCUDA, the single-kernel loop)" : "copied to and from the solver's device vectors"));
  fused->inplace_said = inplace ? 2 : 1;
  fused->inplace_last = inplace;
  if (inplace) {
    PetscCall(FusedDeviceWorkWaitForPETSc(&fused->work)); /* PETSc's last work on b and x comes first */
    x_dev = fused->x_inplace;
    if (ksp->guess_zero && zero_guess) PetscCallFusedCUDA(FusedCUDAZero(fused->work.cuda, x_dev, (int)fused->work.n));
  } else {
    PetscCall(FusedDeviceUpload(&fused->work, ksp->vec_rhs, b_dev));
    /* a zero guess never crosses: x's values are not read (the method's
       first kernel zeroes x itself where zero_guess is false) */
    if (!ksp->guess_zero) PetscCall(FusedDeviceUpload(&fused->work, ksp->vec_sol, x_dev));
    else if (zero_guess) PetscCallFusedCUDA(FusedCUDAZero(fused->work.cuda, x_dev, (int)fused->work.n));
    PetscCall(FusedDeviceVecPinned(ksp->vec_rhs, &fused->b_pinned));
  }
  if (!inplace) {
    PetscBool host;

    /* a CUDA PETSc's VECCUDA crosses device to device, not PCIe */
    PetscCall(PetscObjectTypeCompareAny((PetscObject)ksp->vec_rhs, &host, VECSEQ, VECMPI, ""));
    fused->hostvec_last = host;
  }
  fused->x_device = x_dev;
  PetscFunctionReturn(0);
}

/* The device vector a method's steps use for b (FUSED_SYSTEM_B) or x
   (FUSED_SYSTEM_X): the user's in place, else the workspace's vector slot */
PETSC_INTERN double *KSPFusedCUDASystemVec(KSPFused *fused, KSPFusedSystemPart part, int slot)
{
  if (part == FUSED_SYSTEM_B && fused->b_inplace) return (double *)fused->b_inplace;
  if (part == FUSED_SYSTEM_X && fused->x_inplace) return fused->x_inplace;
  return FusedCUDAVec(fused->work.cuda, slot);
}

/* The device iterate to ksp->vec_sol (mid-solve for a monitor, or at the
   end); in place, x is there already: PETSc's stream only waits for it */
PETSC_INTERN PetscErrorCode KSPFusedCUDASolutionToHost(KSP ksp, KSPFused *fused)
{
  PetscFunctionBegin;
  if (fused->x_inplace) PetscCall(FusedDeviceWorkHandToPETSc(&fused->work));
  else if (fused->x_device) {
    PetscCall(FusedDeviceDownload(&fused->work, fused->x_device, ksp->vec_sol));
    PetscCall(FusedDeviceVecPinned(ksp->vec_sol, &fused->x_pinned));
  }
  PetscFunctionReturn(0);
}

/* End of every solve, on either backend */
PETSC_INTERN PetscErrorCode KSPFusedFinishSolve(KSP ksp, KSPFused *fused)
{
  PetscFunctionBegin;
  if (fused->x_inplace) { /* x is in the user's array: PETSc's stream waits for it, and the arrays go back */
    PetscCall(FusedDeviceWorkHandToPETSc(&fused->work));
    PetscCall(KSPFusedCUDASystemRelease(ksp, fused));
  } else if (ksp->reason != KSP_DIVERGED_PC_FAILED) PetscCall(KSPFusedCUDASolutionToHost(ksp, fused)); /* a failed PC has set the solution to Inf on the host: keep that */
  fused->x_device   = NULL;
  fused->loop_solve = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* The solution mid-solve: from the device while it lives there */
PETSC_INTERN PetscErrorCode KSPBuildSolution_Fused(KSP ksp, Vec v, Vec *V)
{
  PetscFunctionBegin;
  PetscCall(KSPFusedCUDASolutionToHost(ksp, (KSPFused *)ksp->data));
  PetscCall(KSPBuildSolutionDefault(ksp, v, V));
  PetscFunctionReturn(0);
}
