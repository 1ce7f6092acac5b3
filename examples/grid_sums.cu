/* grid_sums: what a grid barrier and the sums after it cost, the two things
   every iteration of the single-kernel loops waits for (CG one, BiCGStab two
   per iteration). Each variant runs ITERS rounds of: every block makes K
   block sums of its threads' values, the grid synchronizes, every thread
   gets the K grid sums (which feed the next round's values, so that no round
   can start early). Prints microseconds per round, the fastest of 5 launches.

     build/examples/grid_sums        (on a GPU; no PETSc needed)

   Variants (G blocks; "2/SM": two blocks of 256 per multiprocessor):
     sync only           grid.sync() alone
     block-ordered       the sums as the single kernels made them before
                         5d73ee3: every thread loads a stride of partials, two
                         shuffle stages with block barriers (FusedBlockSum)
     by-warp             FusedStorePartials + grid.sync + FusedSumPartialsByWarp
                         (the single kernels now): warp k adds sum k
     atomic              atomicAdd of the block sums, grid.sync, one load: a
                         bound, not a candidate (the sums' order, and so their
                         rounding, changes run to run)
     last block          no grid.sync: the last block to arrive adds all
                         partials and releases the others
     poll                no grid.sync: each block publishes its partials, the
                         others poll them until every block's has arrived
     cluster             one arrival per thread-block cluster at a counter,
                         the cluster's leader adding its blocks' sums
     one cluster         the whole grid one cluster (up to 16 blocks):
                         by-warp with cluster.sync() for grid.sync(), the
                         partials in global memory or in the blocks' shared
                         memory (read through the cluster), against by-warp
                         on as few blocks */
#include <cooperative_groups.h>
#include <cuda/atomic>
#include <cstdio>
#include <cstdlib>
#include "cuda/fusedcuda_impl.cuh"
namespace cg = cooperative_groups;

#define MB_CHECK(call) \
  do { \
    cudaError_t mb_err_ = (call); \
    if (mb_err_ != cudaSuccess) { \
      fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(mb_err_)); \
      exit(1); \
    } \
  } while (0)

/* after the block barrier every thread takes the round's sums from shared memory */
template <int K>
__device__ __forceinline__ void TakeSums(const double (&result)[K], double (&sums)[K])
{
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; k++) sums[k] = result[k];
}

/* the last round's sums leave the kernel, so that no round is optimized away */
template <int K>
__device__ __forceinline__ void KeepSums(const double (&sums)[K], double *out)
{
  KeepSums(sums, out);
}

/* each round's values: the last sums, scaled, plus something per thread */
template <int K>
__device__ __forceinline__ void NextValues(const double (&sums)[K], double (&acc)[K])
{
#pragma unroll
  for (int k = 0; k < K; k++) acc[k] = sums[k] * 1e-3 + threadIdx.x;
}

__global__ void SyncOnlyKernel(int iters, double *out)
{
  cg::grid_group grid = cg::this_grid();
  for (int it = 0; it < iters; it++) grid.sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = 1.0;
}

/* the single kernels' sums before 5d73ee3, for more than 256 partials:
   one stride of loads at a time, then FusedBlockSum's two stages */
template <int K>
__global__ void __launch_bounds__(FUSED_BLOCK, 2) BlockOrderedKernel(double *part, int iters, double *out)
{
  cg::grid_group    grid = cg::this_grid();
  __shared__ double result[K];
  const int         G = gridDim.x;
  double            sums[K] = {};
  for (int it = 0; it < iters; it++) {
    double  acc[K], v[K];
    double *p = part + (size_t)(it & 1) * K * G;
    NextValues(sums, acc);
    FusedStorePartials<K>(acc, p);
    grid.sync();
#pragma unroll
    for (int k = 0; k < K; k++) v[k] = 0.0;
    for (int b = threadIdx.x; b < G; b += FUSED_BLOCK)
#pragma unroll
      for (int k = 0; k < K; k++) v[k] += __ldcg(&p[(size_t)k * G + b]);
    FusedBlockSum<K>(v);
    if (threadIdx.x == 0)
#pragma unroll
      for (int k = 0; k < K; k++) result[k] = v[k];
    TakeSums(result, sums);
  }
  KeepSums(sums, out);
}

/* CLUSTER: the grid is one cluster, whose barrier stands for the grid's */
template <int K, int BLOCK, int LOADS, bool CLUSTER = false>
__global__ void __launch_bounds__(BLOCK, 1) ByWarpKernel(double *part, int iters, double *out)
{
  const int G       = gridDim.x;
  double    sums[K] = {};
  for (int it = 0; it < iters; it++) {
    double  acc[K];
    double *p = part + (size_t)(it & 1) * K * G;
    NextValues(sums, acc);
    FusedStorePartials<K, BLOCK>(acc, p);
    if constexpr (CLUSTER) cg::this_cluster().sync();
    else cg::this_grid().sync();
    FusedSumPartialsByWarp<K, double, LOADS>(p, G, sums);
  }
  KeepSums(sums, out);
}

/* three buffers of K sums: round it adds into it % 3 and zeroes (it + 1) % 3 */
template <int K>
__global__ void __launch_bounds__(FUSED_BLOCK, 2) AtomicKernel(double *total, int iters, double *out)
{
  cg::grid_group    grid = cg::this_grid();
  __shared__ double warp_sums[K][FUSED_WARPS], result[K];
  double            sums[K] = {};
  for (int it = 0; it < iters; it++) {
    double  acc[K];
    double *t = total + (it % 3) * 8;
    NextValues(sums, acc);
    FusedWarpSumsToShared(acc, warp_sums);
    if ((int)threadIdx.x < K) atomicAdd(&t[threadIdx.x], FusedSumOfWarps(warp_sums[threadIdx.x]));
    if (blockIdx.x == 0 && (int)threadIdx.x < K) total[((it + 1) % 3) * 8 + threadIdx.x] = 0.0;
    grid.sync();
    if ((int)threadIdx.x < K) result[threadIdx.x] = __ldcg(&t[threadIdx.x]);
    TakeSums(result, sums);
  }
  KeepSums(sums, out);
}

/* count[0]: arrivals, count[32]: the round the last block has released */
template <int K>
__global__ void __launch_bounds__(FUSED_BLOCK, 2) LastBlockKernel(double *part, double *total, unsigned *count, int iters, double *out)
{
  __shared__ double result[K];
  __shared__ bool   last;
  const int         G = gridDim.x;
  double            sums[K] = {};
  for (int it = 0; it < iters; it++) {
    double  acc[K];
    double *p = part + (size_t)(it & 1) * K * G, *t = total + (it & 1) * 8;
    NextValues(sums, acc);
    FusedStorePartials<K>(acc, p);
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();
      last = atomicAdd(&count[0], 1u) == (unsigned)(it + 1) * G - 1;
    }
    __syncthreads();
    if (last) {
      double v[K];
      __threadfence();
      FusedAddPartials<K>(p, G, FUSED_BLOCK, v);
      FusedBlockSum<K>(v);
      if (threadIdx.x == 0) {
#pragma unroll
        for (int k = 0; k < K; k++) result[k] = t[k] = v[k];
        __threadfence();
        atomicExch(&count[32], (unsigned)it + 1);
      }
    } else if (threadIdx.x == 0) {
      while (*(volatile unsigned *)&count[32] != (unsigned)it + 1) { }
      __threadfence();
#pragma unroll
      for (int k = 0; k < K; k++) result[k] = __ldcg(&t[k]);
    }
    TakeSums(result, sums);
  }
  KeepSums(sums, out);
}

/* a partial read while its owner may be writing it, and written so */
__device__ __forceinline__ double LoadRelaxed(double *p)
{
  return cuda::atomic_ref<double, cuda::thread_scope_device>(*p).load(cuda::memory_order_relaxed);
}

__device__ __forceinline__ void StoreRelaxed(double *p, double v)
{
  cuda::atomic_ref<double, cuda::thread_scope_device>(*p).store(v, cuda::memory_order_relaxed);
}

/* all bits set: a slot not yet written (a NaN no sum is stored as) */
__device__ __forceinline__ bool Missing(double v)
{
  return __double_as_longlong(v) == -1LL;
}

/* three buffers of partials, all bits set at the start: round it writes
   buffer it % 3 and resets its own slots of buffer (it + 1) % 3, which no
   block reads any more once this block has seen round it - 1 complete */
template <int K, int LOADS>
__global__ void __launch_bounds__(FUSED_BLOCK, 2) PollKernel(double *part, int iters, double *out)
{
  __shared__ double warp_sums[K][FUSED_WARPS], result[K];
  const int         G = gridDim.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  double            sums[K] = {};
  for (int it = 0; it < iters; it++) {
    double  acc[K];
    double *p = part + (size_t)(it % 3) * K * G, *p_next = part + (size_t)((it + 1) % 3) * K * G;
    NextValues(sums, acc);
    FusedWarpSumsToShared(acc, warp_sums);
    if ((int)threadIdx.x < K) {
      double s = FusedSumOfWarps(warp_sums[threadIdx.x]);
      if (isnan(s)) s = __longlong_as_double(0x7ff8000000000000LL);
      p_next[(size_t)threadIdx.x * G + blockIdx.x] = __longlong_as_double(-1LL);
      __threadfence();
      StoreRelaxed(&p[(size_t)threadIdx.x * G + blockIdx.x], s);
    }
    if (warp < K) {
      double v[LOADS], sum = 0.0;
#pragma unroll
      for (int j = 0; j < LOADS; j++) v[j] = lane + 32 * j < G ? LoadRelaxed(&p[(size_t)warp * G + lane + 32 * j]) : 0.0;
      for (;;) {
        bool ready = true;
#pragma unroll
        for (int j = 0; j < LOADS; j++) ready = ready && !Missing(v[j]);
        if (__all_sync(0xffffffffu, ready)) break;
#pragma unroll
        for (int j = 0; j < LOADS; j++)
          if (Missing(v[j])) v[j] = LoadRelaxed(&p[(size_t)warp * G + lane + 32 * j]);
      }
      __threadfence();
#pragma unroll
      for (int j = 0; j < LOADS; j++) sum += v[j];
      sum = FusedWarpSum(sum);
      if (lane == 0) result[warp] = sum;
    }
    TakeSums(result, sums);
  }
  KeepSums(sums, out);
}

/* the cluster's leader adds its blocks' sums (shared memory of the cluster)
   into one partial per cluster and arrives at *count; the cluster barrier
   releases its blocks; every block then adds the clusters' partials.
   SUMS false: the barrier alone. */
template <int K, bool SUMS>
__global__ void __launch_bounds__(FUSED_BLOCK, 2) ClusterKernel(double *part, unsigned *count, int iters, double *out)
{
  cg::cluster_group cluster = cg::this_cluster();
  __shared__ double block_sums[K], warp_sums[K][FUSED_WARPS], result[K];
  const int         blocks = cluster.num_blocks(), C = gridDim.x / blocks, cid = blockIdx.x / blocks, rank = cluster.block_rank();
  const int         lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned          target = 0;
  double            sums[K] = {};
  for (int it = 0; it < iters; it++) {
    double  acc[K];
    double *p = part + (size_t)(it & 1) * K * C;
    target += C;
    NextValues(sums, acc);
    if (SUMS) {
      FusedWarpSumsToShared(acc, warp_sums);
      if ((int)threadIdx.x < K) block_sums[threadIdx.x] = FusedSumOfWarps(warp_sums[threadIdx.x]);
    }
    cluster.sync();
    if (rank == 0 && warp == 0) {
      if (SUMS && lane < K) {
        double s = 0.0;
        for (int r = 0; r < blocks; r++) s += cluster.map_shared_rank(block_sums, r)[lane];
        p[(size_t)lane * C + cid] = s;
      }
      __syncwarp();
      if (lane == 0) {
        __threadfence();
        atomicAdd(count, 1u);
        while ((int)(cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*count).load(cuda::memory_order_acquire) - target) < 0) { }
      }
      __syncwarp();
    }
    cluster.sync();
    if (!SUMS) continue;
    if (warp < K) {
      double v = 0.0;
      for (int b = lane; b < C; b += 32) v += __ldcg(&p[(size_t)warp * C + b]);
      v = FusedWarpSum(v);
      if (lane == 0) result[warp] = v;
    }
    TakeSums(result, sums);
  }
  KeepSums(sums, out);
}

__global__ void ClusterSyncKernel(int iters, double *out)
{
  cg::cluster_group cluster = cg::this_cluster();
  for (int it = 0; it < iters; it++) cluster.sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = 1.0;
}

/* the grid one cluster, each block's partials in its own shared memory
   (two rounds' worth), warp k reading sum k of every block through the
   cluster */
template <int K, int BLOCK>
__global__ void __launch_bounds__(BLOCK, 1) DsmClusterKernel(int iters, double *out)
{
  cg::cluster_group cluster = cg::this_cluster();
  __shared__ double warp_sums[K][BLOCK / 32], block_sums[2][K], result[K];
  const int         G = gridDim.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  double            sums[K] = {};
  for (int it = 0; it < iters; it++) {
    double acc[K];
    NextValues(sums, acc);
    FusedWarpSumsToShared<K, BLOCK>(acc, warp_sums);
    if ((int)threadIdx.x < K) block_sums[it & 1][threadIdx.x] = FusedSumOfWarps<BLOCK / 32>(warp_sums[threadIdx.x]);
    cluster.sync();
    if (warp < K) {
      double v = lane < G ? cluster.map_shared_rank(&block_sums[it & 1][warp], lane)[0] : 0.0;
      v = FusedWarpSum(v);
      if (lane == 0) result[warp] = v;
    }
    TakeSums(result, sums);
  }
  cluster.sync(); /* no block leaves while another reads its shared memory */
  KeepSums(sums, out);
}

static const int ITERS = 20000;

/* microseconds per round: the fastest of 5 launches after a warm-up one */
template <class Launch>
static double PerRound(Launch launch)
{
  cudaEvent_t start, stop;
  float       best = 1e30f;
  MB_CHECK(cudaEventCreate(&start));
  MB_CHECK(cudaEventCreate(&stop));
  launch();
  MB_CHECK(cudaDeviceSynchronize());
  for (int r = 0; r < 5; r++) {
    float ms;
    MB_CHECK(cudaEventRecord(start));
    launch();
    MB_CHECK(cudaEventRecord(stop));
    MB_CHECK(cudaEventSynchronize(stop));
    MB_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (ms < best) best = ms;
  }
  MB_CHECK(cudaEventDestroy(start));
  MB_CHECK(cudaEventDestroy(stop));
  return best * 1000.0 / ITERS;
}

static double Cooperative(const void *kernel, int grid, int block, void **args)
{
  return PerRound([&] { MB_CHECK(cudaLaunchCooperativeKernel(kernel, grid, block, args, 0, 0)); });
}

/* one launch of grid blocks of block threads in clusters of cluster blocks (attr: its one attribute) */
static cudaLaunchConfig_t ClusterConfig(cudaLaunchAttribute *attr, int cluster, int grid, int block)
{
  cudaLaunchConfig_t config = {};
  attr->id                  = cudaLaunchAttributeClusterDimension;
  attr->val.clusterDim.x    = cluster;
  attr->val.clusterDim.y    = 1;
  attr->val.clusterDim.z    = 1;
  config.blockDim           = dim3(block);
  config.gridDim            = dim3(grid);
  config.attrs              = attr;
  config.numAttrs           = 1;
  return config;
}

int main(void)
{
  cudaDeviceProp prop;
  double        *part, *total, *out;
  unsigned      *count;
  int            iters = ITERS;
  const size_t   part_bytes = (size_t)3 * 8 * 2048 * sizeof(double);

  MB_CHECK(cudaGetDeviceProperties(&prop, 0));
  MB_CHECK(cudaMalloc(&part, part_bytes));
  MB_CHECK(cudaMalloc(&total, 64 * sizeof(double)));
  MB_CHECK(cudaMalloc(&out, sizeof(double)));
  MB_CHECK(cudaMalloc(&count, 64 * sizeof(unsigned)));
  const int sms = prop.multiProcessorCount, two = 2 * sms;
  void     *args[] = {&part, &iters, &out}, *sync_args[] = {&iters, &out}, *atomic_args[] = {&total, &iters, &out}, *last_args[] = {&part, &total, &count, &iters, &out};
  printf("device: %s, %d multiprocessors; us per barrier and sums (K sums), %d rounds\n", prop.name, sms, ITERS);

  printf("sync only, %d blocks of 256: %.3f\n", two, Cooperative((const void *)SyncOnlyKernel, two, 256, sync_args));
  printf("sync only, %d blocks of 512: %.3f\n", sms, Cooperative((const void *)SyncOnlyKernel, sms, 512, sync_args));
  printf("block-ordered, %d blocks of 256: K=5 %.3f  K=3 %.3f  K=1 %.3f\n", two, Cooperative((const void *)BlockOrderedKernel<5>, two, 256, args), Cooperative((const void *)BlockOrderedKernel<3>, two, 256, args), Cooperative((const void *)BlockOrderedKernel<1>, two, 256, args));
  printf("by-warp, %d blocks of 256: K=5 %.3f  K=3 %.3f  K=1 %.3f\n", two, Cooperative((const void *)ByWarpKernel<5, 256, 9>, two, 256, args), Cooperative((const void *)ByWarpKernel<3, 256, 9>, two, 256, args), Cooperative((const void *)ByWarpKernel<1, 256, 9>, two, 256, args));
  printf("by-warp, %d blocks of 512: K=5 %.3f  K=3 %.3f  K=1 %.3f\n", sms, Cooperative((const void *)ByWarpKernel<5, 512, 5>, sms, 512, args), Cooperative((const void *)ByWarpKernel<3, 512, 5>, sms, 512, args), Cooperative((const void *)ByWarpKernel<1, 512, 5>, sms, 512, args));
  for (int grid = sms; grid <= two; grid += sms) {
    auto atomic = [&](const void *kernel) { return PerRound([&] { MB_CHECK(cudaMemset(total, 0, 64 * sizeof(double))); MB_CHECK(cudaLaunchCooperativeKernel(kernel, grid, 256, atomic_args, 0, 0)); }); };
    auto last   = [&](const void *kernel) { return PerRound([&] { MB_CHECK(cudaMemset(count, 0, 64 * sizeof(unsigned))); MB_CHECK(cudaLaunchCooperativeKernel(kernel, grid, 256, last_args, 0, 0)); }); };
    auto poll   = [&](const void *kernel) { return PerRound([&] { MB_CHECK(cudaMemset(part, 0xff, part_bytes)); MB_CHECK(cudaLaunchCooperativeKernel(kernel, grid, 256, args, 0, 0)); }); };
    printf("atomic (bound), %d blocks of 256: K=5 %.3f  K=3 %.3f\n", grid, atomic((const void *)AtomicKernel<5>), atomic((const void *)AtomicKernel<3>));
    printf("last block, %d blocks of 256: K=5 %.3f  K=3 %.3f\n", grid, last((const void *)LastBlockKernel<5>), last((const void *)LastBlockKernel<3>));
    if (grid <= 288) printf("poll, %d blocks of 256: K=5 %.3f  K=3 %.3f\n", grid, poll((const void *)PollKernel<5, 9>), poll((const void *)PollKernel<3, 9>));
  }
  for (int blocks = 2; blocks <= 8; blocks *= 2) {
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t  config   = ClusterConfig(&attr, blocks, two, 256);
    int                 clusters = 0;
    MB_CHECK(cudaOccupancyMaxActiveClusters(&clusters, ClusterKernel<5, true>, &config));
    const int grid = clusters * blocks < two ? clusters * blocks : two - two % blocks;
    config.gridDim = dim3(grid);
    auto run       = [&](auto kernel) { return PerRound([&] { MB_CHECK(cudaMemset(count, 0, sizeof(unsigned))); MB_CHECK(cudaLaunchKernelEx(&config, kernel, part, count, iters, out)); }); };
    printf("cluster of %d, %d blocks of 256: K=5 %.3f  K=3 %.3f  barrier alone %.3f  cluster.sync() alone %.3f\n", blocks, grid, run(ClusterKernel<5, true>), run(ClusterKernel<3, true>), run(ClusterKernel<5, false>),
           PerRound([&] { MB_CHECK(cudaLaunchKernelEx(&config, ClusterSyncKernel, iters, out)); }));
  }
  MB_CHECK(cudaFuncSetAttribute(ByWarpKernel<5, 512, 1, true>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  MB_CHECK(cudaFuncSetAttribute(DsmClusterKernel<5, 512>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  MB_CHECK(cudaFuncSetAttribute(ClusterSyncKernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  for (int grid = 4; grid <= 40; grid *= 2) {
    const int blocks = grid > 32 ? 40 : grid; /* 40 of 256: 10^4 rows a thread a row */
    printf("by-warp, %d blocks of 512, grid.sync(): K=5 %.3f  sync only %.3f\n", blocks, Cooperative((const void *)ByWarpKernel<5, 512, 1>, blocks, 512, args), Cooperative((const void *)SyncOnlyKernel, blocks, 512, sync_args));
    if (grid > 16) break;
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t  config   = ClusterConfig(&attr, grid, grid, 512);
    int                 clusters = 0;
    MB_CHECK(cudaOccupancyMaxActiveClusters(&clusters, ByWarpKernel<5, 512, 1, true>, &config));
    if (clusters < 1) {
      printf("one cluster of %d blocks of 512: not resident on this device\n", grid);
      continue;
    }
    printf("one cluster of %d blocks of 512: K=5 by-warp %.3f  K=5 shared memory %.3f  cluster.sync() alone %.3f\n", grid, PerRound([&] { MB_CHECK(cudaLaunchKernelEx(&config, ByWarpKernel<5, 512, 1, true>, part, iters, out)); }),
           PerRound([&] { MB_CHECK(cudaLaunchKernelEx(&config, DsmClusterKernel<5, 512>, iters, out)); }), PerRound([&] { MB_CHECK(cudaLaunchKernelEx(&config, ClusterSyncKernel, iters, out)); }));
  }
  MB_CHECK(cudaFree(part));
  MB_CHECK(cudaFree(total));
  MB_CHECK(cudaFree(out));
  MB_CHECK(cudaFree(count));
  return 0;
}
