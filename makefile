# petsc-fused: builds lib/libpetscfused.so against PETSc ($PETSC_DIR, Debian's
# petsc-dev by default) and the CUDA toolkit ($CUDA_HOME). GNU Make only.
#
#   make deps      install what the build needs (PETSc from apt) if it is missing
#   make           build the library, the examples and the tests
#   make run       the main job: solve a built-in problem with our methods and PETSc's
#   make check     run every test this machine can run

PETSC_DIR ?= /usr/lib/petsc
CUDA_HOME ?= /usr/local/cuda
CUDA_ARCH ?= -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=compute_90

PETSC_VARIABLES := $(PETSC_DIR)/lib/petsc/conf/variables
ifneq ($(wildcard $(PETSC_VARIABLES)),)
include $(PETSC_VARIABLES)
endif

NVCC      := $(CUDA_HOME)/bin/nvcc
WARN      := -Wall -Wextra -Werror=implicit-function-declaration
# PETSc's headers are not ours to warn about
PETSC_INC := $(patsubst -I%,-isystem %,$(PETSC_CC_INCLUDES))
CFLAGS    := $(PCC_FLAGS) -O2 -fPIC $(WARN) $(PETSC_INC) -Iinclude -Isrc
NVFLAGS   := -O3 -Xcompiler -fPIC,-Wall,-Wextra $(CUDA_ARCH) -Isrc
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart
LIB_LINK  := -Llib -Wl,-rpath,$(CURDIR)/lib -lpetscfused

LIB_C   := $(wildcard src/*.c src/ksp/*.c src/mat/*.c)
LIB_CU  := $(wildcard src/cuda/*.cu)
LIB_OBJ := $(patsubst src/%.c,build/%.o,$(LIB_C)) $(patsubst src/%.cu,build/%.cu.o,$(LIB_CU))
HEADERS := $(wildcard include/*.h src/*.h src/ksp/*.h src/mat/*.h src/cuda/*.h src/cuda/*.cuh)

EXAMPLES := build/examples/solve build/examples/bench build/examples/spmv build/examples/grid_sums
TESTS    := $(patsubst tests/%.c,build/tests/%,$(wildcard tests/*.c))

.PHONY: all deps run check check-gpu clean petsc-present viennacl
all: petsc-present lib/libpetscfused.so $(EXAMPLES) $(TESTS)

petsc-present:
	@test -f "$(PETSC_VARIABLES)" || { echo "No PETSc at PETSC_DIR=$(PETSC_DIR): run 'make deps' first (it installs Debian's petsc-dev), or set PETSC_DIR"; exit 1; }

deps:
	@sh tools/deps.sh "$(PETSC_DIR)" "$(CUDA_HOME)"

lib/libpetscfused.so: $(LIB_OBJ)
	@mkdir -p lib
	$(PCC) -shared -o $@ $^ $(PETSC_LIB) $(CUDA_LIBS)

build/%.o: src/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(PCC) $(CFLAGS) -c $< -o $@

build/%.cu.o: src/%.cu $(HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -c $< -o $@

build/examples/solve: examples/solve.c examples/problems.c examples/problems.h examples/partition.c examples/partition.h lib/libpetscfused.so
	@mkdir -p $(dir $@)
	$(PCC) $(CFLAGS) -Iexamples examples/solve.c examples/problems.c examples/partition.c -o $@ $(LIB_LINK) $(PETSC_LIB)

build/examples/bench: examples/bench.c examples/problems.c examples/problems.h lib/libpetscfused.so
	@mkdir -p $(dir $@)
	$(PCC) $(CFLAGS) -Iexamples examples/bench.c examples/problems.c -o $@ $(LIB_LINK) $(PETSC_LIB)

# The SpMV benchmark calls cuSPARSE itself, to time it beside our storage
build/examples/spmv: examples/spmv.c examples/problems.c examples/problems.h lib/libpetscfused.so
	@mkdir -p $(dir $@)
	$(PCC) $(CFLAGS) -isystem $(CUDA_HOME)/include -Iexamples examples/spmv.c examples/problems.c -o $@ $(LIB_LINK) $(PETSC_LIB) $(CUDA_LIBS) -lcusparse

# ViennaCL's pipelined solvers on the same Laplacians, for the comparison
# (Debian's libviennacl-dev, header-only; not part of all: make viennacl)
VIENNACL_INCLUDE ?= /usr/include
# the grid barrier and sums microbenchmark (needs no PETSc)
build/examples/grid_sums: examples/grid_sums.cu $(HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) -O3 -std=c++17 -Xcompiler -Wall,-Wextra $(CUDA_ARCH) -Isrc $< -o $@

viennacl: build/examples/viennacl_bench
build/examples/viennacl_bench: examples/viennacl_bench.cu
	@test -f $(VIENNACL_INCLUDE)/viennacl/version.hpp || { echo "make viennacl: no ViennaCL headers in $(VIENNACL_INCLUDE); apt-get install libviennacl-dev" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(NVCC) -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -Xcompiler -Wall,-Wextra $(if $(filter /usr/include,$(VIENNACL_INCLUDE)),,-isystem $(VIENNACL_INCLUDE)) $< -o $@

# Test programs link the library, except the -dll_append test, which must not.
build/tests/dll_append: tests/dll_append.c
	@mkdir -p $(dir $@)
	$(PCC) $(CFLAGS) $< -o $@ $(PETSC_LIB)

# The halo plan is internal to the library: its test compiles it in.
build/tests/halo: tests/halo.c src/ksp/fusedhalo.c src/ksp/fusedhalo.h
	@mkdir -p $(dir $@)
	$(PCC) $(CFLAGS) $< src/ksp/fusedhalo.c -o $@ $(PETSC_LIB)

build/tests/%: tests/%.c examples/problems.c examples/problems.h examples/partition.c examples/partition.h lib/libpetscfused.so
	@mkdir -p $(dir $@)
	$(PCC) $(CFLAGS) -Iexamples $< examples/problems.c examples/partition.c -o $@ $(LIB_LINK) $(PETSC_LIB)

# The default problem; RUN_ARGS adds options, e.g. RUN_ARGS="-f tests/data/494_bus.mtx -pc_type jacobi"
run: all
	build/examples/solve -pc_type jacobi $(RUN_ARGS)

check: all
	@sh tests/run.sh

check-gpu: all
	@FUSED_REQUIRE_GPU=1 sh tests/run.sh

clean:
	rm -rf build lib
