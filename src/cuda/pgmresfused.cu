/* pgmresfused on the GPU: the kernels of the fused steps of
   pgmresfusedimpl.h. The basis V lies in the workspace as restart vectors
   one after another; the host keeps R, xi and the back solve (a few dozen
   numbers per step). Device sums: [0, restart] for the products of a step,
   then the coefficients (h or t) handed to the device. */
#include <string.h>
#include "cuda/fusedcuda_impl.cuh"

/* r = B (b - A x) (left) or b - A x (right); <r,r> */
__global__ void PGMRESStartKernel(FusedMatView A, FusedPGMRESVecs v, int guess_zero, double *partials, double *sums, unsigned int *ticket)
{
  double acc[1] = {0.0};
  FUSED_GRID_LOOP(i, A.n)
  {
    double r = guess_zero ? v.b[i] : v.b[i] - FusedRowProduct(A, v.x, i);
    if (v.d && !v.right) r *= v.d[i];
    v.r[i] = r;
    acc[0] += r * r;
  }
  FusedReduce<1>(acc, partials, sums, ticket, 0);
}

/* out = scale * d .* in (d may be NULL) */
__global__ void PGMRESScaleKernel(int n, double *out, const double *in, double scale, const double *d)
{
  FUSED_GRID_LOOP(i, n) out[i] = scale * (d ? d[i] : 1.0) * in[i];
}

/* w = dleft .* (A in) */
__global__ void PGMRESSpMVKernel(FusedMatView A, double *w, const double *in, const double *dleft)
{
  FUSED_GRID_LOOP(i, A.n)
  {
    const double y = FusedRowProduct(A, in, i);
    w[i]           = dleft ? dleft[i] * y : y;
  }
}

/* partials of <V_l, w> for l < j (blockIdx.y = l) and of <w, w> (l = j) */
__global__ void PGMRESMDotKernel(int n, const double *V, const double *w, int j, double *partials)
{
  const int     l = blockIdx.y;
  const double *u = l < j ? V + (size_t)l * n : w;
  double        acc[1] = {0.0};
  FUSED_GRID_LOOP(i, n) acc[0] += u[i] * w[i];
  FusedBlockSum<1>(acc);
  if (threadIdx.x == 0) partials[(size_t)l * gridDim.x + blockIdx.x] = acc[0];
}

/* sums[l] = sum of the nblocks partials of sum l, one block per sum */
__global__ void PGMRESFinishKernel(const double *partials, int nblocks, double *sums)
{
  double acc[1] = {0.0};
  for (int b = threadIdx.x; b < nblocks; b += blockDim.x) acc[0] += partials[(size_t)blockIdx.x * nblocks + b];
  FusedBlockSum<1>(acc);
  if (threadIdx.x == 0) sums[blockIdx.x] = acc[0];
}

/* w -= sum_{l<j} h_l V_l; <w,w>, <w,r>, <r,r> */
__global__ void PGMRESOrthogKernel(int n, FusedPGMRESVecs v, int j, const double *h, double *partials, double *sums, unsigned int *ticket)
{
  double acc[3] = {0.0, 0.0, 0.0};
  FUSED_GRID_LOOP(i, n)
  {
    double w = v.w[i];
    for (int l = 0; l < j; l++) w -= h[l] * v.V[(size_t)l * n + i];
    const double r = v.r[i];
    v.w[i]         = w;
    acc[0] += w * w;
    acc[1] += w * r;
    acc[2] += r * r;
  }
  FusedReduce<3>(acc, partials, sums, ticket, 0);
}

/* v_j = scale w, r -= xi v_j */
__global__ void PGMRESNormalizeKernel(int n, FusedPGMRESVecs v, int j, double scale, double xi)
{
  double *vj = v.V + (size_t)j * n;
  FUSED_GRID_LOOP(i, n)
  {
    const double u = scale * v.w[i];
    vj[i]          = u;
    v.r[i] -= xi * u;
  }
}

/* y += dright .* (t_0 z_0 + sum_{0<l<k} t_l v_{l-1}) */
__global__ void PGMRESUpdateKernel(int n, FusedPGMRESVecs v, int k, const double *t, double *y)
{
  FUSED_GRID_LOOP(i, n)
  {
    double s = t[0] * v.z0[i];
    for (int l = 1; l < k; l++) s += t[l] * v.V[(size_t)(l - 1) * n + i];
    y[i] += (v.right && v.d) ? v.d[i] * s : s;
  }
}

/* the coefficients handed to the device sit after the products of a step */
static double *PGMRESCoefficients(FusedCUDA ctx)
{
  return ctx->sums + ctx->maxsums / 2;
}

extern "C" int FusedPGMRESStart(FusedCUDA ctx, FusedDevMat A, const FusedPGMRESVecs *v, int guess_zero)
{
  PGMRESStartKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, guess_zero, ctx->partials, ctx->sums, ctx->ticket);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESStartKernel");
  return FUSED_CUDA_OK;
}

/* Before the product the caller exchanges the ghosts of the vector the
   product reads: FusedPGMRESProductInput() says which. */
extern "C" int FusedPGMRESProduct(FusedCUDA ctx, FusedDevMat A, const FusedPGMRESVecs *v, int j)
{
  const double *in = j == 0 ? v->z0 : v->V + (size_t)(j - 1) * ctx->n;
  if (v->right && v->d) in = v->tmp;
  PGMRESSpMVKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, v->w, in, v->right ? NULL : v->d);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESSpMVKernel");
  return FUSED_CUDA_OK;
}

/* z_0 = scale r (j = 0) and, with right Jacobi, tmp = d .* z_j: the vector the product reads */
extern "C" int FusedPGMRESProductInput(FusedCUDA ctx, const FusedPGMRESVecs *v, int j, double scale, const double **in)
{
  const double *z = j == 0 ? v->z0 : v->V + (size_t)(j - 1) * ctx->n;
  if (j == 0) {
    PGMRESScaleKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, v->z0, v->r, scale, NULL);
    FUSED_CUDA_CHECK_LAUNCH("PGMRESScaleKernel");
  }
  if (v->right && v->d) {
    PGMRESScaleKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, v->tmp, z, 1.0, v->d);
    FUSED_CUDA_CHECK_LAUNCH("PGMRESScaleKernel");
    z = v->tmp;
  }
  *in = z;
  return FUSED_CUDA_OK;
}

extern "C" int FusedPGMRESMDot(FusedCUDA ctx, const FusedPGMRESVecs *v, int j)
{
  dim3 grid(ctx->nblocks, j + 1);
  if (j + 1 > ctx->maxsums / 2) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "%d products exceed the workspace's %d", j + 1, ctx->maxsums / 2);
  PGMRESMDotKernel<<<grid, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, v->V, v->w, j, ctx->partials);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESMDotKernel");
  PGMRESFinishKernel<<<j + 1, FUSED_BLOCK, 0, ctx->stream>>>(ctx->partials, ctx->nblocks, ctx->sums);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESFinishKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FusedPGMRESOrthog(FusedCUDA ctx, const FusedPGMRESVecs *v, int j, const double *h)
{
  double *hd = PGMRESCoefficients(ctx);
  /* through pinned staging, so the copy needs no wait: the caller's next
     step waits for the sums anyway before the staging is used again */
  if (j > 0) {
    memcpy(ctx->coef_host, h, sizeof(double) * j);
    FUSED_CUDA_CHECK(cudaMemcpyAsync(hd, ctx->coef_host, sizeof(double) * j, cudaMemcpyHostToDevice, ctx->stream));
  }
  PGMRESOrthogKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, j, hd, ctx->partials, ctx->sums, ctx->ticket);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESOrthogKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FusedPGMRESNormalize(FusedCUDA ctx, const FusedPGMRESVecs *v, int j, double scale, double xi)
{
  PGMRESNormalizeKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, j, scale, xi);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESNormalizeKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FusedPGMRESUpdate(FusedCUDA ctx, const FusedPGMRESVecs *v, int k, const double *t, double *y)
{
  double *td = PGMRESCoefficients(ctx);
  if (k <= 0) return FUSED_CUDA_OK;
  FUSED_CUDA_CHECK(cudaMemcpyAsync(td, t, sizeof(double) * k, cudaMemcpyHostToDevice, ctx->stream));
  PGMRESUpdateKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, k, td, y);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESUpdateKernel");
  FUSED_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
  return FUSED_CUDA_OK;
}
