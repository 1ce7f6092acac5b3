/* ViennaCL's pipelined solvers on the same Laplacians as examples/bench, for
   the comparison issue 6 asks for: ViennaCL 1.7.1 from Debian's
   libviennacl-dev (header-only), CUDA backend. No PETSc here.

     build/examples/viennacl_bench [-sizes2d 100,316,1000] [-sizes3d 64,160] [-its 200] [-csv out.csv] [-label viennacl]

   Time per iteration as in examples/bench: the difference of a 2*its and an
   its solve, over its (tolerance 0, so each runs all its iterations), after a
   warm-up solve, the fastest of 3 solves of each length. ViennaCL's CUDA solvers take no preconditioner: the runs are
   unpreconditioned (our benchmark uses Jacobi, whose extra work is one vector
   read fused into an existing pass). GMRES: restart 30. */
#define VIENNACL_WITH_CUDA
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include <viennacl/compressed_matrix.hpp>
#include <viennacl/vector.hpp>
#include <viennacl/linalg/prod.hpp>
#include <viennacl/linalg/cg.hpp>
#include <viennacl/linalg/bicgstab.hpp>
#include <viennacl/linalg/gmres.hpp>

typedef std::vector<std::map<unsigned int, double> > HostMatrix;

/* 5-point (2D, n x n) or 7-point (3D, n^3) Laplacian, as examples/problems.c */
static HostMatrix Laplacian(int n, int dim)
{
  const long N = dim == 2 ? (long)n * n : (long)n * n * n;
  HostMatrix A((size_t)N);
  for (long row = 0; row < N; row++) {
    const long i = row % n, j = (row / n) % n, k = dim == 3 ? row / ((long)n * n) : 0;
    A[row][(unsigned)row] = dim == 2 ? 4.0 : 6.0;
    if (i > 0) A[row][(unsigned)(row - 1)] = -1.0;
    if (i < n - 1) A[row][(unsigned)(row + 1)] = -1.0;
    if (j > 0) A[row][(unsigned)(row - n)] = -1.0;
    if (j < n - 1) A[row][(unsigned)(row + n)] = -1.0;
    if (dim == 3 && k > 0) A[row][(unsigned)(row - (long)n * n)] = -1.0;
    if (dim == 3 && k < n - 1) A[row][(unsigned)(row + (long)n * n)] = -1.0;
  }
  return A;
}

static void Check(cudaError_t e, const char *what)
{
  if (e != cudaSuccess) {
    fprintf(stderr, "viennacl_bench: %s failed: %s\n", what, cudaGetErrorString(e));
    exit(1);
  }
}

/* ViennaCL 1.7.1's tags leave their iteration count unset until a solve
   sets it; gcc sees the constructor, not the solver that writes it */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

/* seconds of one solve of exactly its iterations, and the iterations made */
static double Solve(const std::string &method, const viennacl::compressed_matrix<double> &A, const viennacl::vector<double> &b, int its, size_t *done)
{
  Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const auto t0 = std::chrono::steady_clock::now();
  viennacl::vector<double> x(b.size());
  if (method == "cg") {
    viennacl::linalg::cg_tag tag(0.0, (unsigned)its);
    x     = viennacl::linalg::solve(A, b, tag);
    *done = tag.iters();
  } else if (method == "bicgstab") {
    viennacl::linalg::bicgstab_tag tag(0.0, (unsigned)its);
    x     = viennacl::linalg::solve(A, b, tag);
    *done = tag.iters();
  } else {
    viennacl::linalg::gmres_tag tag(0.0, (unsigned)its, 30);
    x     = viennacl::linalg::solve(A, b, tag);
    *done = tag.iters();
  }
  Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

static std::vector<int> ParseList(const char *s)
{
  std::vector<int> out;
  for (const char *p = s; *p;) {
    out.push_back(atoi(p));
    while (*p && *p != ',') p++;
    if (*p == ',') p++;
  }
  return out;
}

int main(int argc, char **argv)
{
  std::vector<int> sizes2d = {100, 316, 1000}, sizes3d = {64, 160};
  int              its     = 200;
  const char      *csvpath = NULL, *label = "viennacl";
  char             devname[256] = "?";
  cudaDeviceProp   prop;

  for (int a = 1; a < argc; a++) {
    const bool more = a + 1 < argc;
    if (!strcmp(argv[a], "-sizes2d") && more) sizes2d = ParseList(argv[++a]);
    else if (!strcmp(argv[a], "-sizes3d") && more) sizes3d = ParseList(argv[++a]);
    else if (!strcmp(argv[a], "-its") && more) its = atoi(argv[++a]);
    else if (!strcmp(argv[a], "-csv") && more) csvpath = argv[++a];
    else if (!strcmp(argv[a], "-label") && more) label = argv[++a];
    else {
      fprintf(stderr, "viennacl_bench: unknown or incomplete option %s\n", argv[a]);
      return 1;
    }
  }
  if (its < 1) {
    fprintf(stderr, "viennacl_bench: -its %d must be at least 1\n", its);
    return 1;
  }
  Check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  snprintf(devname, sizeof(devname), "%s", prop.name);
  printf("device: %s; ViennaCL headers %d.%d.%d (version.hpp), CUDA backend, no preconditioner, GMRES restart 30\n", devname, VIENNACL_MAJOR_VERSION, VIENNACL_MINOR_VERSION, VIENNACL_PATCH_VERSION);
  printf("%-14s %10s %-12s %6s %11s\n", "problem", "rows", "method", "its", "us/iter");
  FILE *csv = csvpath ? fopen(csvpath, "a") : NULL;
  if (csvpath && !csv) {
    fprintf(stderr, "viennacl_bench: cannot open %s\n", csvpath);
    return 1;
  }
  for (int dim = 2; dim <= 3; dim++) {
    for (int n : dim == 2 ? sizes2d : sizes3d) {
      if (n < 2) continue;
      const HostMatrix                  H = Laplacian(n, dim);
      viennacl::compressed_matrix<double> A(H.size(), H.size());
      viennacl::copy(H, A);
      viennacl::vector<double> ones = viennacl::scalar_vector<double>(H.size(), 1.0);
      viennacl::vector<double> b    = viennacl::linalg::prod(A, ones);
      char                     pname[32];
      snprintf(pname, sizeof(pname), "lap%dd-%d", dim, n);
      for (const char *method : {"cg", "bicgstab", "gmres"}) {
        size_t d0 = 0, d1 = 0, d2 = 0;
        double t1 = 1e30, t2 = 1e30;
        (void)Solve(method, A, b, its, &d0); /* warm-up */
        for (int rep = 0; rep < 3; rep++) {
          t1 = std::min(t1, Solve(method, A, b, its, &d1));
          t2 = std::min(t2, Solve(method, A, b, 2 * its, &d2));
        }
        const double us = d2 > d1 ? 1e6 * (t2 - t1) / (double)(d2 - d1) : 0.0;
        printf("%-14s %10zu %-12s %6zu %11.1f\n", pname, H.size(), method, d1, us);
        if (csv) fprintf(csv, "%s,%s,1,%s,%zu,%s,%zu,%.2f,0,0,0\n", label, devname, pname, H.size(), method, d1, us);
      }
    }
  }
  if (csv) fclose(csv);
  return 0;
}
