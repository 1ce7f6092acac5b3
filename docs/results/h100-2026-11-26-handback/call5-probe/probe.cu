#include <cstdio>
#include <chrono>
#include <cooperative_groups.h>
#define CK(x) do { cudaError_t ce_ = (x); if (ce_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(ce_)); return 1; } } while (0)
__global__ void plain(double *a) { if (a) a[threadIdx.x] += 1.0; }
__global__ void coop(double *a) { cooperative_groups::this_grid().sync(); if (a) a[threadIdx.x] += 1.0; }
__global__ void coop2(double *a) { cooperative_groups::this_grid().sync(); if (a) a[threadIdx.x] += 2.0; }
__global__ void tohost(double *h) { if (blockIdx.x == 0) h[threadIdx.x] = threadIdx.x; }
static double now() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
template <class F> static int T(const char *label, F f) { double t0 = now(); int r = f(); printf("%-44s %9.1f us\n", label, now() - t0); return r; }
int main()
{
  double *d, *h, *h2; cudaStream_t s; int per = 0;
  if (T("cudaFree(0) (context)", [&]() -> int { CK(cudaFree(0)); return 0; })) return 1;
  if (T("cudaStreamCreate", [&]() -> int { CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); return 0; })) return 1;
  if (T("cudaMalloc 1 MB", [&]() -> int { CK(cudaMalloc(&d, 1 << 20)); return 0; })) return 1;
  if (T("cudaMallocHost 64 KB, first", [&]() -> int { CK(cudaMallocHost(&h, 1 << 16)); return 0; })) return 1;
  if (T("cudaMallocHost 64 KB, second", [&]() -> int { CK(cudaMallocHost(&h2, 1 << 16)); return 0; })) return 1;
  if (T("plain launch + sync, first", [&]() -> int { plain<<<1, 32, 0, s>>>(d); CK(cudaStreamSynchronize(s)); return 0; })) return 1;
  if (T("plain launch + sync, second", [&]() -> int { plain<<<1, 32, 0, s>>>(d); CK(cudaStreamSynchronize(s)); return 0; })) return 1;
  if (T("occupancy query coop, first", [&]() -> int { CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, coop, 256, 0)); return 0; })) return 1;
  if (T("occupancy query coop2", [&]() -> int { CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, coop2, 256, 0)); return 0; })) return 1;
  void *args[] = {&d};
  if (T("cooperative launch + sync, first", [&]() -> int { CK(cudaLaunchCooperativeKernel((void *)coop, 132, 256, args, 0, s)); CK(cudaStreamSynchronize(s)); return 0; })) return 1;
  if (T("cooperative launch + sync, second", [&]() -> int { CK(cudaLaunchCooperativeKernel((void *)coop, 132, 256, args, 0, s)); CK(cudaStreamSynchronize(s)); return 0; })) return 1;
  if (T("cooperative launch other kernel + sync", [&]() -> int { CK(cudaLaunchCooperativeKernel((void *)coop2, 132, 256, args, 0, s)); CK(cudaStreamSynchronize(s)); return 0; })) return 1;
  if (T("kernel writes pinned host + sync, first", [&]() -> int { tohost<<<1, 64, 0, s>>>(h); CK(cudaStreamSynchronize(s)); return 0; })) return 1;
  if (T("kernel writes pinned host + sync, second", [&]() -> int { tohost<<<1, 64, 0, s>>>(h2); CK(cudaStreamSynchronize(s)); return 0; })) return 1;
  if (T("memcpy H2D 64 KB pinned, first", [&]() -> int { CK(cudaMemcpyAsync(d, h, 1 << 16, cudaMemcpyHostToDevice, s)); CK(cudaStreamSynchronize(s)); return 0; })) return 1;
  if (T("memcpy D2H 64 KB pinned, first", [&]() -> int { CK(cudaMemcpyAsync(h, d, 1 << 16, cudaMemcpyDeviceToHost, s)); CK(cudaStreamSynchronize(s)); return 0; })) return 1;
  if (T("memcpy D2H 64 KB pinned, second", [&]() -> int { CK(cudaMemcpyAsync(h2, d, 1 << 16, cudaMemcpyDeviceToHost, s)); CK(cudaStreamSynchronize(s)); return 0; })) return 1;
  cudaEvent_t ev;
  if (T("cudaEventCreate", [&]() -> int { CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming)); return 0; })) return 1;
  if (T("cudaEventRecord + sync", [&]() -> int { CK(cudaEventRecord(ev, s)); CK(cudaEventSynchronize(ev)); return 0; })) return 1;
  cudaGraph_t g; cudaGraphExec_t ge;
  if (T("graph capture+instantiate+launch, first", [&]() -> int { CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal)); plain<<<1,32,0,s>>>(d); CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ge, g, 0)); CK(cudaGraphLaunch(ge, s)); CK(cudaStreamSynchronize(s)); return 0; })) return 1;
  return 0;
}
