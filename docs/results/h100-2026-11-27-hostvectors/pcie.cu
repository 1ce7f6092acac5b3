// What a host vector's trip costs on this machine: pageable copies, the
// pinned staging of src/cuda/context.cu with several chunk sizes, the pinned
// floor, and registering the caller's array in place (cudaHostRegister).
// nvcc -O2 -arch=sm_90 -o pcie pcie.cu; ./pcie    (us, median of 31)
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)
static double now() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
static cudaStream_t s;
static double *stage; static cudaEvent_t done[2]; static unsigned long next_half;
static void staged_up(double *dev, const double *host, size_t n, size_t chunk) {
  for (size_t off = 0; off < n; off += chunk) {
    size_t len = std::min(chunk, n - off); int h = next_half++ & 1; double *half = stage + h * chunk;
    CK(cudaEventSynchronize(done[h])); memcpy(half, host + off, len * 8);
    CK(cudaMemcpyAsync(dev + off, half, len * 8, cudaMemcpyHostToDevice, s)); CK(cudaEventRecord(done[h], s));
  }
  CK(cudaStreamSynchronize(s));
}
static void staged_down(double *host, const double *dev, size_t n, size_t chunk) {
  size_t nch = (n + chunk - 1) / chunk;
  for (size_t k = 0; k <= nch; k++) {
    if (k < nch) { size_t off = k * chunk, len = std::min(chunk, n - off);
      CK(cudaMemcpyAsync(stage + (k & 1) * chunk, dev + off, len * 8, cudaMemcpyDeviceToHost, s)); CK(cudaEventRecord(done[k & 1], s)); }
    if (k >= 1) { size_t j = k - 1, off = j * chunk, len = std::min(chunk, n - off);
      CK(cudaEventSynchronize(done[j & 1])); memcpy(host + off, stage + (j & 1) * chunk, len * 8); }
  }
}
template <class F> static double med(F f) {
  std::vector<double> t; for (int r = 0; r < 31; r++) { double t0 = now(); f(); t.push_back(now() - t0); }
  std::sort(t.begin(), t.end()); return t[15];
}
int main() {
  CK(cudaStreamCreate(&s)); const size_t maxn = 4096000;
  CK(cudaMallocHost((void **)&stage, 2 * maxn * 8)); for (int h = 0; h < 2; h++) CK(cudaEventCreateWithFlags(&done[h], cudaEventDisableTiming));
  double *pinned; CK(cudaMallocHost((void **)&pinned, maxn * 8)); double *dev; CK(cudaMalloc((void **)&dev, maxn * 8));
  size_t sizes[] = {10000, 99856, 262144, 1000000, 4096000};
  printf("%9s %9s | %8s %8s | %8s %8s | %8s %8s %8s %8s | %8s %8s %8s %8s | %8s %8s %8s %8s\n", "n", "memcpy", "page up", "page dn", "pin up", "pin dn",
         "st64K up", "st256K", "st1M", "st2M", "st64K dn", "st256K", "st1M", "st2M", "register", "reg up", "reg dn", "unreg");
  for (size_t n : sizes) {
    double *host = (double *)aligned_alloc(64, n * 8), *other = (double *)aligned_alloc(64, n * 8);
    for (size_t i = 0; i < n; i++) host[i] = other[i] = i;
    double tm = med([&] { memcpy(other, host, n * 8); });
    double pu = med([&] { CK(cudaMemcpyAsync(dev, host, n * 8, cudaMemcpyHostToDevice, s)); CK(cudaStreamSynchronize(s)); });
    double pd = med([&] { CK(cudaMemcpyAsync(host, dev, n * 8, cudaMemcpyDeviceToHost, s)); CK(cudaStreamSynchronize(s)); });
    double fu = med([&] { CK(cudaMemcpyAsync(dev, pinned, n * 8, cudaMemcpyHostToDevice, s)); CK(cudaStreamSynchronize(s)); });
    double fd = med([&] { CK(cudaMemcpyAsync(pinned, dev, n * 8, cudaMemcpyDeviceToHost, s)); CK(cudaStreamSynchronize(s)); });
    size_t chunks[] = {8192, 32768, 131072, 262144}; double su[4], sd[4];
    for (int c = 0; c < 4; c++) { su[c] = med([&] { staged_up(dev, host, n, chunks[c]); }); sd[c] = med([&] { staged_down(host, dev, n, chunks[c]); }); }
    std::vector<double> reg, ru, rd, unr;
    for (int r = 0; r < 31; r++) {
      double t0 = now(); CK(cudaHostRegister(host, n * 8, cudaHostRegisterDefault)); reg.push_back(now() - t0);
      t0 = now(); CK(cudaMemcpyAsync(dev, host, n * 8, cudaMemcpyHostToDevice, s)); CK(cudaStreamSynchronize(s)); ru.push_back(now() - t0);
      t0 = now(); CK(cudaMemcpyAsync(host, dev, n * 8, cudaMemcpyDeviceToHost, s)); CK(cudaStreamSynchronize(s)); rd.push_back(now() - t0);
      t0 = now(); CK(cudaHostUnregister(host)); unr.push_back(now() - t0);
    }
    for (auto *v : {&reg, &ru, &rd, &unr}) std::sort(v->begin(), v->end());
    printf("%9zu %9.1f | %8.1f %8.1f | %8.1f %8.1f | %8.1f %8.1f %8.1f %8.1f | %8.1f %8.1f %8.1f %8.1f | %8.1f %8.1f %8.1f %8.1f\n", n, tm, pu, pd, fu, fd,
           su[0], su[1], su[2], su[3], sd[0], sd[1], sd[2], sd[3], reg[15], ru[15], rd[15], unr[15]);
    free(host); free(other);
  }
  return 0;
}
