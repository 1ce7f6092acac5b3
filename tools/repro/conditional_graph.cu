// A minimal CUDA program with the shape of the fused methods' device loops:
// a graph whose conditional while node runs a body captured into it with
// cudaStreamBeginCaptureToGraph(), two kernels per pass, the second launched
// with programmatic dependent launch (-pdl 1) or not (-pdl 0), and the last
// clearing the condition. Nothing of petsc-fused: it tells whether a
// compute-sanitizer tool fails on this shape of graph by itself.
//   nvcc -arch=sm_90 -o conditional_graph conditional_graph.cu
//   compute-sanitizer --tool racecheck ./conditional_graph 1
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(call) \
  do { \
    cudaError_t e_ = (call); \
    if (e_ != cudaSuccess) { \
      std::printf("%s: %s\n", #call, cudaGetErrorString(e_)); \
      return 1; \
    } \
  } while (0)

__global__ void step(double *x, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
  if (i < n) x[i] = 0.5 * x[i] + 1.0;
}

__global__ void test(int *count, cudaGraphConditionalHandle handle)
{
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    *count -= 1;
    if (*count <= 0) cudaGraphSetConditional(handle, 0);
  }
}

int main(int argc, char **argv)
{
  const int  n = 1 << 16, pdl = argc > 1 ? std::atoi(argv[1]) : 1;
  double    *x;
  int       *count, left = -1;
  cudaStream_t stream;
  cudaGraph_t  graph, body;
  cudaGraphExec_t exec;
  cudaGraphConditionalHandle handle;
  cudaGraphNode_t node;
  /* a union without a default constructor: zeroed storage instead */
  alignas(cudaGraphNodeParams) unsigned char params_storage[sizeof(cudaGraphNodeParams)];
  cudaGraphNodeParams &params = *reinterpret_cast<cudaGraphNodeParams *>(params_storage);

  CHECK(cudaMalloc(&x, n * sizeof(double)));
  CHECK(cudaMalloc(&count, sizeof(int)));
  CHECK(cudaMemset(x, 0, n * sizeof(double)));
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (int launch = 0; launch < 3; launch++) {
    const int iterations = 10;
    CHECK(cudaGraphCreate(&graph, 0));
    CHECK(cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault));
    std::memset(params_storage, 0, sizeof(params_storage));
    params.type               = cudaGraphNodeTypeConditional;
    params.conditional.handle = handle;
    params.conditional.type   = cudaGraphCondTypeWhile;
    params.conditional.size   = 1;
    CHECK(cudaGraphAddNode(&node, graph, NULL, NULL, 0, &params));
    body = params.conditional.phGraph_out[0];
    CHECK(cudaStreamBeginCaptureToGraph(stream, body, NULL, NULL, 0, cudaStreamCaptureModeThreadLocal));
    {
      cudaLaunchConfig_t   cfg = {};
      cudaLaunchAttribute  attr[1];
      attr[0].id                                         = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr[0].val.programmaticStreamSerializationAllowed = 1;
      cfg.gridDim  = dim3((n + 255) / 256);
      cfg.blockDim = dim3(256);
      cfg.stream   = stream;
      cfg.attrs    = pdl ? attr : NULL;
      cfg.numAttrs = pdl ? 1 : 0;
      CHECK(cudaLaunchKernelEx(&cfg, step, x, n));
      cfg.gridDim = dim3(1);
      CHECK(cudaLaunchKernelEx(&cfg, test, count, handle));
    }
    {
      cudaGraph_t captured;
      CHECK(cudaStreamEndCapture(stream, &captured));
    }
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaMemcpyAsync(count, &iterations, sizeof(int), cudaMemcpyHostToDevice, stream));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaMemcpyAsync(&left, count, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaGraphExecDestroy(exec));
    std::printf("graph %d (pdl %d): the loop ran until count %d (0 expected)\n", launch, pdl, left);
  }
  CHECK(cudaFree(x));
  CHECK(cudaFree(count));
  CHECK(cudaStreamDestroy(stream));
  return left == 0 ? 0 : 1;
}
