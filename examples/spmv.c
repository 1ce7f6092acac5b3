/* The SpMV benchmark of the hybcuda storage (issue 3): y = A x on device
   vectors in the storage the automatic choice makes, against cuSPARSE's CSR
   SpMV on the same matrix in the same run, against the bandwidth floor, and
   the cost of getting the matrix there.

     build/examples/spmv [-sizes2d 1000,2000] [-sizes3d 100,160] [-f a.mtx,b.mtx]
                         [-arrow rows,...] [-powerlaw rows,...] (irregular: problems.h)
                         [-reps 200] [-csv out.csv] [-label h100]

   For each matrix (one rank, one GPU):
   - ours: FusedDevMatCreate (CSR up, format chosen and filled on the device),
     then -reps products timed with CUDA events after a warm-up;
   - cuSPARSE: the CSR arrays up, cusparseSpMV with CUSPARSE_SPMV_CSR_ALG1
     and ALG2, the faster one reported;
   - the floor: CSR values and column indices once, the row pointers, x once
     and y once (the byte count), over the copy bandwidth measured in
     this run; "x copy" is the fraction of the copy bandwidth reached;
   - the build: our conversion and upload (median of 3) against 20 of our
     products plus the PCIe copy of the CSR bytes from where PETSc keeps them
     (pageable memory, median of 3), the copy also timed from pinned memory;
   - device memory of our storage over the CSR bytes;
   - the largest difference between our y and cuSPARSE's, relative to max |y|. */
#include <cuda_runtime_api.h>
#include <cusparse.h>
#include "problems.h"
#include "cuda/fusedcuda.h"

#define MAX_ITEMS 16

#define CHKCUDA(call) \
  do { \
    cudaError_t e_ = (call); \
    PetscCheck(e_ == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "%s: %s", #call, cudaGetErrorString(e_)); \
  } while (0)
#define CHKSPARSE(call) \
  do { \
    cusparseStatus_t s_ = (call); \
    PetscCheck(s_ == CUSPARSE_STATUS_SUCCESS, PETSC_COMM_SELF, PETSC_ERR_LIB, "%s: %s", #call, cusparseGetErrorString(s_)); \
  } while (0)
#define CHKFUSED(call) \
  do { \
    int e_ = (call); \
    PetscCheck(!e_, PETSC_COMM_SELF, e_ == FUSED_CUDA_ERR_MEM ? PETSC_ERR_MEM : PETSC_ERR_LIB, "%s", FusedCUDALastError()); \
  } while (0)

typedef struct {
  double ours_us, cusparse_us, floor_us, bytes_floor, convert_ms, pcie_ms, pcie_pinned_ms, mem_ratio, maxdiff;
  int    format, width, cusparse_alg;
} Result;

/* median of reps products, each timed alone, after warm-ups */
static PetscErrorCode TimeProducts(PetscErrorCode (*mult)(void *), void *ctx, PetscInt reps, double *us)
{
  cudaEvent_t start, stop;
  float       ms;
  PetscReal  *t;

  PetscFunctionBegin;
  CHKCUDA(cudaEventCreate(&start));
  CHKCUDA(cudaEventCreate(&stop));
  PetscCall(PetscMalloc1(reps, &t));
  for (PetscInt r = 0; r < 5; r++) PetscCall(mult(ctx));
  for (PetscInt r = 0; r < reps; r++) {
    CHKCUDA(cudaEventRecord(start, 0));
    PetscCall(mult(ctx));
    CHKCUDA(cudaEventRecord(stop, 0));
    CHKCUDA(cudaEventSynchronize(stop));
    CHKCUDA(cudaEventElapsedTime(&ms, start, stop));
    t[r] = 1e3 * ms;
  }
  PetscCall(PetscSortReal(reps, t));
  *us = t[reps / 2];
  PetscCall(PetscFree(t));
  CHKCUDA(cudaEventDestroy(start));
  CHKCUDA(cudaEventDestroy(stop));
  PetscFunctionReturn(0);
}

typedef struct {
  FusedDevMat  D;
  const double *x;
  double       *y;
} OursCtx;

static PetscErrorCode MultOurs(void *c)
{
  OursCtx *o = (OursCtx *)c;
  PetscFunctionBegin;
  CHKFUSED(FusedDevMatMultDevice(o->D, o->x, o->y, NULL));
  PetscFunctionReturn(0);
}

typedef struct {
  cusparseHandle_t     h;
  cusparseSpMatDescr_t A;
  cusparseDnVecDescr_t x, y;
  cusparseSpMVAlg_t    alg;
  void                *buffer;
} SparseCtx;

static PetscErrorCode MultSparse(void *c)
{
  SparseCtx   *s = (SparseCtx *)c;
  const double one = 1.0, zero = 0.0;
  PetscFunctionBegin;
  CHKSPARSE(cusparseSpMV(s->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->A, s->x, &zero, s->y, CUDA_R_64F, s->alg, s->buffer));
  PetscFunctionReturn(0);
}

static PetscErrorCode BenchMatrix(Mat A, PetscInt reps, double copy_bw, Result *res)
{
  const PetscInt    *ia, *ja;
  const PetscScalar *va;
  PetscInt           n;
  PetscBool          done;
  size_t             nnz, csr_bytes, dev_bytes;
  double            *x, *y_ours, *y_sparse, *hx, *hy1, *hy2, ymax = 0.0, dmax = 0.0;
  int               *d_rowptr, *d_col, nghost, width;
  double            *d_val;
  void              *pinned;
  OursCtx            oc;
  SparseCtx          sc;
  PetscLogDouble     t0, t1;
  cudaEvent_t        e0, e1;
  float              ms;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "no CSR arrays");
  PetscCall(MatSeqAIJGetArrayRead(A, &va));
  nnz       = (size_t)ia[n];
  csr_bytes = nnz * (sizeof(double) + sizeof(int)) + (size_t)(n + 1) * sizeof(int);

  /* ours: conversion and upload, timed to the last kernel; the median of 3 */
  {
    PetscReal t[3];
    for (int r = 0; r < 3; r++) {
      if (r) CHKFUSED(FusedDevMatDestroy(&oc.D));
      CHKCUDA(cudaDeviceSynchronize());
      PetscCall(PetscTime(&t0));
      CHKFUSED(FusedDevMatCreate(0, (int)n, ia, ja, va, 0, NULL, NULL, NULL, FUSED_FORMAT_AUTO, 0, &oc.D));
      CHKCUDA(cudaDeviceSynchronize());
      PetscCall(PetscTime(&t1));
      t[r] = 1e3 * (t1 - t0);
    }
    PetscCall(PetscSortReal(3, t));
    res->convert_ms = t[1];
  }
  FusedDevMatGetInfo(oc.D, &res->format, &width, &dev_bytes, &nghost);
  res->width     = width;
  res->mem_ratio = (double)dev_bytes / (double)csr_bytes;

  /* cuSPARSE's copy of the CSR arrays; the PCIe copy timed from PETSc's (pageable) arrays and from pinned memory */
  CHKCUDA(cudaMalloc((void **)&d_rowptr, sizeof(int) * (n + 1)));
  CHKCUDA(cudaMalloc((void **)&d_col, sizeof(int) * (nnz + 1)));
  CHKCUDA(cudaMalloc((void **)&d_val, sizeof(double) * (nnz + 1)));
  CHKCUDA(cudaEventCreate(&e0));
  CHKCUDA(cudaEventCreate(&e1));
  {
    PetscReal t[3];
    for (int r = 0; r < 3; r++) {
      CHKCUDA(cudaEventRecord(e0, 0));
      CHKCUDA(cudaMemcpy(d_rowptr, ia, sizeof(int) * (n + 1), cudaMemcpyHostToDevice));
      CHKCUDA(cudaMemcpy(d_col, ja, sizeof(int) * nnz, cudaMemcpyHostToDevice));
      CHKCUDA(cudaMemcpy(d_val, va, sizeof(double) * nnz, cudaMemcpyHostToDevice));
      CHKCUDA(cudaEventRecord(e1, 0));
      CHKCUDA(cudaEventSynchronize(e1));
      CHKCUDA(cudaEventElapsedTime(&ms, e0, e1));
      t[r] = ms;
    }
    PetscCall(PetscSortReal(3, t));
    res->pcie_ms = t[1]; /* the median, as for the build */
  }
  CHKCUDA(cudaMallocHost(&pinned, csr_bytes));
  res->pcie_pinned_ms = 1e30;
  for (int r = 0; r < 3; r++) {
    CHKCUDA(cudaEventRecord(e0, 0));
    CHKCUDA(cudaMemcpy(d_val, pinned, sizeof(double) * nnz, cudaMemcpyHostToDevice));
    CHKCUDA(cudaMemcpy(d_col, (char *)pinned + sizeof(double) * nnz, sizeof(int) * nnz, cudaMemcpyHostToDevice));
    CHKCUDA(cudaMemcpy(d_rowptr, (char *)pinned + (sizeof(double) + sizeof(int)) * nnz, sizeof(int) * (n + 1), cudaMemcpyHostToDevice));
    CHKCUDA(cudaEventRecord(e1, 0));
    CHKCUDA(cudaEventSynchronize(e1));
    CHKCUDA(cudaEventElapsedTime(&ms, e0, e1));
    res->pcie_pinned_ms = PetscMin(res->pcie_pinned_ms, ms);
  }
  CHKCUDA(cudaFreeHost(pinned));
  /* the pinned copies overwrote the arrays: the real ones again */
  CHKCUDA(cudaMemcpy(d_rowptr, ia, sizeof(int) * (n + 1), cudaMemcpyHostToDevice));
  CHKCUDA(cudaMemcpy(d_col, ja, sizeof(int) * nnz, cudaMemcpyHostToDevice));
  CHKCUDA(cudaMemcpy(d_val, va, sizeof(double) * nnz, cudaMemcpyHostToDevice));

  /* x: reproducible, not constant (a constant x hides column errors) */
  PetscCall(PetscMalloc3(n, &hx, n, &hy1, n, &hy2));
  for (PetscInt i = 0; i < n; i++) hx[i] = 1.0 + 0.5 * PetscSinReal(0.01 * (PetscReal)i);
  CHKCUDA(cudaMalloc((void **)&x, sizeof(double) * (n + 1)));
  CHKCUDA(cudaMalloc((void **)&y_ours, sizeof(double) * (n + 1)));
  CHKCUDA(cudaMalloc((void **)&y_sparse, sizeof(double) * (n + 1)));
  CHKCUDA(cudaMemcpy(x, hx, sizeof(double) * n, cudaMemcpyHostToDevice));
  oc.x = x;
  oc.y = y_ours;
  PetscCall(TimeProducts(MultOurs, &oc, reps, &res->ours_us));

  CHKSPARSE(cusparseCreate(&sc.h));
  CHKSPARSE(cusparseCreateCsr(&sc.A, n, n, (int64_t)nnz, d_rowptr, d_col, d_val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  CHKSPARSE(cusparseCreateDnVec(&sc.x, n, x, CUDA_R_64F));
  CHKSPARSE(cusparseCreateDnVec(&sc.y, n, y_sparse, CUDA_R_64F));
  res->cusparse_us = 1e30;
  for (int a = 0; a < 2; a++) {
    const cusparseSpMVAlg_t algs[2] = {CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2};
    const double            one = 1.0, zero = 0.0;
    size_t                  bsize = 0;
    double                  us;
    sc.alg = algs[a];
    CHKSPARSE(cusparseSpMV_bufferSize(sc.h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sc.A, sc.x, &zero, sc.y, CUDA_R_64F, sc.alg, &bsize));
    CHKCUDA(cudaMalloc(&sc.buffer, bsize + 1));
    PetscCall(TimeProducts(MultSparse, &sc, reps, &us));
    CHKCUDA(cudaFree(sc.buffer));
    if (us < res->cusparse_us) res->cusparse_us = us, res->cusparse_alg = a + 1;
  }
  CHKCUDA(cudaMemcpy(hy1, y_ours, sizeof(double) * n, cudaMemcpyDeviceToHost));
  CHKCUDA(cudaMemcpy(hy2, y_sparse, sizeof(double) * n, cudaMemcpyDeviceToHost));
  for (PetscInt i = 0; i < n; i++) {
    ymax = PetscMax(ymax, PetscAbsReal(hy2[i]));
    dmax = PetscMax(dmax, PetscAbsReal(hy1[i] - hy2[i]));
  }
  res->maxdiff     = ymax > 0 ? dmax / ymax : dmax;
  res->bytes_floor = (double)csr_bytes + 2.0 * sizeof(double) * n;
  res->floor_us    = 1e6 * res->bytes_floor / copy_bw;

  CHKSPARSE(cusparseDestroyDnVec(sc.x));
  CHKSPARSE(cusparseDestroyDnVec(sc.y));
  CHKSPARSE(cusparseDestroySpMat(sc.A));
  CHKSPARSE(cusparseDestroy(sc.h));
  CHKCUDA(cudaFree(x));
  CHKCUDA(cudaFree(y_ours));
  CHKCUDA(cudaFree(y_sparse));
  CHKCUDA(cudaFree(d_rowptr));
  CHKCUDA(cudaFree(d_col));
  CHKCUDA(cudaFree(d_val));
  CHKCUDA(cudaEventDestroy(e0));
  CHKCUDA(cudaEventDestroy(e1));
  CHKFUSED(FusedDevMatDestroy(&oc.D));
  PetscCall(PetscFree3(hx, hy1, hy2));
  PetscCall(MatSeqAIJRestoreArrayRead(A, &va));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt    sizes2d[MAX_ITEMS] = {1000, 2000}, sizes3d[MAX_ITEMS] = {100, 160}, n2 = MAX_ITEMS, n3 = MAX_ITEMS, nf = MAX_ITEMS, reps = 200, ndev;
  PetscInt    arrows[MAX_ITEMS], powerlaws[MAX_ITEMS], na = MAX_ITEMS, np = MAX_ITEMS;
  PetscBool   seta, setp;
  PetscBool   set2, set3;
  char       *files[MAX_ITEMS], csvpath[PETSC_MAX_PATH_LEN] = "", label[64] = "", devname[256], reason[256];
  PetscReal   copy_bw;
  FILE       *csv = NULL;
  PetscMPIInt size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, "petsc-fused: SpMV of the hybcuda storage against cuSPARSE\n"));
  PetscCall(PetscFusedInitializePackage());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCheck(size == 1, PETSC_COMM_WORLD, PETSC_ERR_SUP, "spmv runs on one rank");
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "petsc-fused spmv", "");
  PetscCall(PetscOptionsIntArray("-sizes2d", "2D Laplacian sides", "", sizes2d, &n2, &set2));
  PetscCall(PetscOptionsIntArray("-sizes3d", "3D Laplacian sides", "", sizes3d, &n3, &set3));
  PetscCall(PetscOptionsStringArray("-f", "Matrix Market files", "", files, &nf, NULL));
  PetscCall(PetscOptionsIntArray("-arrow", "Rows of arrow matrices (one dense row and column)", "", arrows, &na, &seta));
  PetscCall(PetscOptionsIntArray("-powerlaw", "Rows of power-law matrices (hubs' rows of 1/k lengths)", "", powerlaws, &np, &setp));
  PetscCall(PetscOptionsInt("-reps", "Timed products per case (median)", "", reps, &reps, NULL));
  PetscCall(PetscOptionsString("-csv", "Append the results to this CSV file", "", csvpath, csvpath, sizeof(csvpath), NULL));
  PetscCall(PetscOptionsString("-label", "Label of this run in the CSV", "", label, label, sizeof(label), NULL));
  PetscOptionsEnd();
  if (!set2) n2 = 2;
  if (!set3) n3 = 2;
  if (!seta) na = 0;
  if (!setp) np = 0;
  PetscCheck(reps >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-reps %" PetscInt_FMT " must be at least 1", reps);
  PetscCall(PetscFusedCUDADeviceCount(&ndev, reason, sizeof(reason)));
  PetscCheck(ndev > 0, PETSC_COMM_WORLD, PETSC_ERR_SUP_SYS, "spmv needs a CUDA device: %s", reason);
  PetscCall(PetscFusedCUDADeviceName(0, devname, sizeof(devname)));
  PetscCall(PetscFusedCUDACopyBandwidth((size_t)1 << 30, &copy_bw));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "device: %s; measured copy bandwidth %.0f GB/s (1 GiB device-to-device, read + write)\n", devname, copy_bw / 1e9));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "us: median of %" PetscInt_FMT " products; floor: CSR bytes + x + y over the copy bandwidth; build: our conversion and upload vs 20 of our products + the pageable PCIe copy of the CSR bytes\n", reps));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-16s %9s %10s %-8s %7s %9s %9s %9s %7s %7s %9s %9s %9s %9s %8s\n", "matrix", "rows", "nnz", "format", "mem/CSR", "ours us", "cusp us", "floor us", "x copy", "vs cusp", "build ms", "target ms", "pcie ms", "pinned ms", "max diff"));
  if (csvpath[0]) {
    PetscCall(PetscFOpen(PETSC_COMM_WORLD, csvpath, "a", &csv));
    PetscCall(PetscFPrintf(PETSC_COMM_WORLD, csv, "label,device,matrix,rows,nnz,format,width,mem_ratio,ours_us,cusparse_us,cusparse_alg,floor_us,copy_fraction,build_ms,build_target_ms,pcie_ms,pcie_pinned_ms,max_rel_diff\n"));
  }
  for (PetscInt c = 0; c < n2 + n3 + na + np + nf; c++) {
    Mat      A;
    Result   r;
    char     name[PETSC_MAX_PATH_LEN];
    PetscInt N, nnz;
    MatInfo  info;
    double   target;

    if ((c < n2 && sizes2d[c] <= 0) || (c >= n2 && c < n2 + n3 && sizes3d[c - n2] <= 0)) continue; /* 0: none of that kind */
    if (c < n2) {
      PetscCall(ProblemCreate(PETSC_COMM_SELF, PROBLEM_LAP2D, sizes2d[c], &A));
      PetscCall(PetscSNPrintf(name, sizeof(name), "lap2d-%" PetscInt_FMT, sizes2d[c]));
    } else if (c < n2 + n3) {
      PetscCall(ProblemCreate(PETSC_COMM_SELF, PROBLEM_LAP3D, sizes3d[c - n2], &A));
      PetscCall(PetscSNPrintf(name, sizeof(name), "lap3d-%" PetscInt_FMT, sizes3d[c - n2]));
    } else if (c < n2 + n3 + na + np) {
      const PetscBool arrow = (PetscBool)(c < n2 + n3 + na);
      const PetscInt  rows  = arrow ? arrows[c - n2 - n3] : powerlaws[c - n2 - n3 - na];
      PetscCall(ProblemCreate(PETSC_COMM_SELF, arrow ? PROBLEM_ARROW : PROBLEM_POWERLAW, rows, &A));
      PetscCall(PetscSNPrintf(name, sizeof(name), "%s-%" PetscInt_FMT, arrow ? "arrow" : "powerlaw", rows));
    } else {
      const char *file = files[c - n2 - n3 - na - np], *base = strrchr(file, '/');
      PetscCall(ProblemLoad(PETSC_COMM_SELF, file, &A));
      PetscCall(PetscStrncpy(name, base ? base + 1 : file, sizeof(name)));
    }
    PetscCall(MatGetSize(A, &N, NULL));
    PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
    nnz = (PetscInt)info.nz_used;
    PetscCall(BenchMatrix(A, reps, copy_bw, &r));
    target = 20.0 * r.ours_us / 1e3 + r.pcie_ms;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-16s %9" PetscInt_FMT " %10" PetscInt_FMT " %-4s %-3d %7.2f %9.1f %9.1f %9.1f %6.0f%% %6.2fx %9.2f %9.2f %9.2f %9.2f %8.1e\n", name, N, nnz, FusedFormatNames[r.format], r.width, r.mem_ratio, r.ours_us, r.cusparse_us, r.floor_us, 100.0 * r.floor_us / r.ours_us, r.cusparse_us / r.ours_us, r.convert_ms, target, r.pcie_ms, r.pcie_pinned_ms, r.maxdiff));
    if (csv) PetscCall(PetscFPrintf(PETSC_COMM_WORLD, csv, "%s,%s,%s,%" PetscInt_FMT ",%" PetscInt_FMT ",%s,%d,%.4f,%.2f,%.2f,%d,%.2f,%.4f,%.3f,%.3f,%.3f,%.3f,%.2e\n", label, devname, name, N, nnz, FusedFormatNames[r.format], r.width, r.mem_ratio, r.ours_us, r.cusparse_us, r.cusparse_alg, r.floor_us, r.floor_us / r.ours_us, r.convert_ms, target, r.pcie_ms, r.pcie_pinned_ms, r.maxdiff));
    PetscCall(MatDestroy(&A));
  }
  for (PetscInt f = 0; f < nf; f++) PetscCall(PetscFree(files[f]));
  if (csv) PetscCall(PetscFClose(PETSC_COMM_WORLD, csv));
  PetscCall(PetscFinalize());
  return 0;
}
