import sys
p=sys.argv[1]+'/src/cuda/pgmresfused.cu'
s=open(p).read()
def rep(a,b,cnt=1):
    global s
    assert s.count(a)==cnt, (a, s.count(a))
    s=s.replace(a,b)
rep('#include <cooperative_groups.h>\n', '''#include <cooperative_groups.h>
#include <stdio.h>
#include <stdlib.h>
__device__ unsigned long long pgm_trace[3 * 200];
__device__ int pgm_trace_n;
__device__ __forceinline__ void PGMTrace(int tag)
{
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int k = pgm_trace_n;
    if (k < 200) {
      unsigned long long g;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
      pgm_trace[3 * k] = tag; pgm_trace[3 * k + 1] = g; pgm_trace[3 * k + 2] = clock64();
      pgm_trace_n = k + 1;
    }
  }
}
''')
rep('''  if (threadIdx.x < 32) PGMRESBackSolveWarp(Rs, m, k_steps, t);
  __syncthreads();
''','''  PGMTrace(27);
  if (threadIdx.x < 32) PGMRESBackSolveWarp(Rs, m, k_steps, t);
  __syncthreads();
  PGMTrace(22);
''')
rep('''    v.x[i] = __dadd_rn(v.x[i], PGMRESCorrection<1>(v, k_steps, t, i, [&](int l) { return sV ? sV[PGMRESSlot(l, k, R)] : v.V[(size_t)l * n + i]; }));
}''','''    v.x[i] = __dadd_rn(v.x[i], PGMRESCorrection<1>(v, k_steps, t, i, [&](int l) { return sV ? sV[PGMRESSlot(l, k, R)] : v.V[(size_t)l * n + i]; }));
  PGMTrace(23);
}''')
if 'grid.sync(); /* R\'s last column' in s:
    rep("  grid.sync(); /* R's last column, which block 0 wrote */\n","  grid.sync(); /* R's last column, which block 0 wrote */\n  PGMTrace(24);\n")
rep('''  grid.sync(); /* the product reads the other blocks' rows of x */
''','''  grid.sync(); /* the product reads the other blocks' rows of x */
  PGMTrace(25);
''')
rep('''  FusedStorePartials<1>(acc, part);
  grid.sync();
  (void)PGMRESSumPartials<4>(part, gridDim.x, 1, 0, sum);
  return sqrt(fabs(sum[0]));''','''  FusedStorePartials<1>(acc, part);
  PGMTrace(28);
  grid.sync();
  PGMTrace(29);
  (void)PGMRESSumPartials<4>(part, gridDim.x, 1, 0, sum);
  return sqrt(fabs(sum[0]));''')
rep('''  /* every way out hands the loop's results back from block 0 */
  if constexpr (CYCLES) {''','''  /* every way out hands the loop's results back from block 0 */
  PGMTrace(1);
  if constexpr (CYCLES) {''')
rep('''  for (int j = 0;; j++) {
    bool normalize = true;''','''  PGMTrace(2);
  for (int j = 0;; j++) {
    PGMTrace(100 + j);
    bool normalize = true;''')
import re
m=re.search(r'      const double rnorm0     = PGMRESNextCycleStart\([^\n]*\n', s)
s=s[:m.start()]+'      PGMTrace(20);\n'+m.group(0)+'      PGMTrace(21);\n'+s[m.end():]
rep('''    if (int err = FusedCUDARunSingleKernel(ctx, kernel, FUSED_BLOCK, ctx->n * lanes, restart + 4, smem_single, conv, its0, prologue, kargs, &part, &its)) return err;''','''    {
      static const int zero = 0;
      FUSED_CUDA_CHECK(cudaMemcpyToSymbolAsync(pgm_trace_n, &zero, sizeof(int), 0, cudaMemcpyHostToDevice, ctx->stream));
    }
    if (int err = FusedCUDARunSingleKernel(ctx, kernel, FUSED_BLOCK, ctx->n * lanes, restart + 4, smem_single, conv, its0, prologue, kargs, &part, &its)) return err;
    if (getenv("FUSED_TRACE")) {
      unsigned long long t[3 * 200]; int nt = 0;
      FUSED_CUDA_CHECK(cudaMemcpyFromSymbol(&nt, pgm_trace_n, sizeof(int)));
      FUSED_CUDA_CHECK(cudaMemcpyFromSymbol(t, pgm_trace, sizeof(t)));
      fprintf(stderr, "PGMT n=%d smem=%zu R=%d:", nt, smem_single, R);
      for (int k = 1; k < nt; k++) fprintf(stderr, " %llu:%.2f", t[3 * k], (t[3 * k + 1] - t[3 * k - 2]) * 1e-3);
      fprintf(stderr, "\\n");
    }''')
open(p,'w').write(s)
