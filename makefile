# petsc-fused: builds lib/libpetscfused.so against PETSc ($PETSC_DIR, Debian's
# petsc-dev by default) and the CUDA toolkit ($CUDA_HOME). GNU Make only.
#
#   make deps        install what the build needs (PETSc from apt) if it is missing
#   make             build the library, the examples and the tests
#   make run         the main job: solve a built-in problem with our methods and PETSc's
#   make check       run every test this machine can run
#   make petsc-cuda  build PETSc 3.26.1 with CUDA into PETSC_CUDA_PREFIX (reused when there;
#                    make petsc-nocuda: without CUDA, into PETSC_NOCUDA_PREFIX)
#   make check-asan  the CPU test list on a build with address and undefined-behaviour sanitizers
#   make fuzz        the Matrix Market parser under libFuzzer for FUZZ_SECONDS (60)
#   make check-gpu   the whole list, a missing GPU a failure; check-gpu-sanitize: compute-sanitizer
#
# Against another PETSc: make PETSC_DIR=/its/prefix [PETSC_ARCH=...]. Each
# PETSc gets its own build folder (BUILD, default build/ for Debian's and
# build/petsc-<major>.<minor>[-cuda] for any other), so builds against two
# PETSc versions live side by side; lib/libpetscfused.so is Debian's build.

comma := ,
PETSC_DIR ?= /usr/lib/petsc
CUDA_HOME ?= /usr/local/cuda
PETSC_CUDA_PREFIX ?= /opt/petsc-3.26.1-cuda
CUDA_ARCH ?= -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=compute_90

PETSC_VARIABLES := $(PETSC_DIR)/lib/petsc/conf/variables
ifneq ($(wildcard $(PETSC_VARIABLES)),)
include $(PETSC_VARIABLES)
endif

# The PETSc's version and whether it has CUDA pick the build folder
PETSC_CONF_H := $(firstword $(wildcard $(PETSC_DIR)/$(PETSC_ARCH)/include/petscconf.h $(PETSC_DIR)/include/petscconf.h))
PETSC_VER_H  := $(firstword $(wildcard $(PETSC_DIR)/include/petscversion.h))
PETSC_MINOR  := $(if $(PETSC_VER_H),$(shell sed -n 's/^\#define PETSC_VERSION_MINOR *\([0-9]*\).*/\1/p' $(PETSC_VER_H)))
PETSC_CUDA   := $(if $(PETSC_CONF_H),$(shell grep -q '^\#define PETSC_HAVE_CUDA 1' $(PETSC_CONF_H) && echo -cuda))
ifeq ($(PETSC_DIR),/usr/lib/petsc)
BUILD  ?= build
LIBDIR ?= lib
else
BUILD  ?= build/petsc-3.$(PETSC_MINOR)$(PETSC_CUDA)
LIBDIR ?= $(BUILD)/lib
endif

NVCC      := $(CUDA_HOME)/bin/nvcc
# WERROR=-Werror (CI) makes every warning an error
WERROR    ?=
WARN      := -Wall -Wextra -Werror=implicit-function-declaration $(WERROR)
# PETSc's headers are not ours to warn about
PETSC_INC := $(patsubst -I%,-isystem %,$(PETSC_CC_INCLUDES))
# SANITIZE: compiler flags of an instrumented build (make check-asan sets them; the
# .cu files stay uninstrumented: nvcc splits -Xcompiler lists at commas)
SANITIZE  ?=
CFLAGS    := $(PCC_FLAGS) -O2 -fPIC $(WARN) $(SANITIZE) $(PETSC_INC) -Iinclude -Isrc
NVFLAGS   := -O3 -Xcompiler -fPIC,-Wall,-Wextra$(if $(WERROR),$(comma)-Werror) $(if $(WERROR),-Werror all-warnings) $(CUDA_ARCH) -Isrc
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart
LIB_LINK  := -L$(LIBDIR) -Wl,-rpath,$(abspath $(LIBDIR)) -lpetscfused

LIB_C   := $(wildcard src/*.c src/ksp/*.c src/mat/*.c src/device/*.c)
LIB_CU  := $(wildcard src/cuda/*.cu)
# the methods' kernels once more with compensated sums (-ksp_fused_compensated)
LIB_CU_COMPENSATED := src/cuda/pcgfused.cu src/cuda/pbcgsfused.cu src/cuda/pgmresfused.cu
LIB_OBJ := $(patsubst src/%.c,$(BUILD)/%.o,$(LIB_C)) $(patsubst src/%.cu,$(BUILD)/%.cu.o,$(LIB_CU)) \
           $(patsubst src/%.cu,$(BUILD)/%.compensated.cu.o,$(LIB_CU_COMPENSATED))
HEADERS := $(wildcard include/*.h src/*.h src/ksp/*.h src/mat/*.h src/device/*.h src/cuda/*.h src/cuda/*.cuh)

LIB      := $(LIBDIR)/libpetscfused.so
EXAMPLES := $(BUILD)/examples/solve $(BUILD)/examples/bench $(BUILD)/examples/transient $(BUILD)/examples/spmv $(BUILD)/examples/grid_sums
TESTS    := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/*.c))
# every object is rebuilt when the PETSc it was built against changes
STAMP    := $(BUILD)/petsc-dir.stamp
$(shell mkdir -p $(BUILD) && { [ "$$(cat $(STAMP) 2>/dev/null)" = "$(PETSC_DIR) $(PETSC_ARCH)" ] || echo "$(PETSC_DIR) $(PETSC_ARCH)" > $(STAMP); })
# what the test runner needs to know of this build
RUN_ENV  := FUSED_BUILD=$(BUILD) FUSED_LIB=$(LIB)

.PHONY: all deps run check check-gpu check-asan check-gpu-sanitize fuzz clean petsc-present viennacl petsc-cuda petsc-nocuda
all: petsc-present $(LIB) $(EXAMPLES) $(TESTS)

petsc-present:
	@test -f "$(PETSC_VARIABLES)" || { echo "No PETSc at PETSC_DIR=$(PETSC_DIR): run 'make deps' first (it installs Debian's petsc-dev), or set PETSC_DIR"; exit 1; }

deps:
	@sh tools/deps.sh "$(PETSC_DIR)" "$(CUDA_HOME)"

# PETSc 3.26.1 with CUDA from PyPI's source distribution (about 15 minutes on
# 2 cores); petsc-nocuda: the same without CUDA, into PETSC_NOCUDA_PREFIX
PETSC_NOCUDA_PREFIX ?= /opt/petsc-3.26.1
petsc-cuda:
	@sh tools/petsc-cuda.sh "$(PETSC_CUDA_PREFIX)" "$(CUDA_HOME)" cuda
petsc-nocuda:
	@sh tools/petsc-cuda.sh "$(PETSC_NOCUDA_PREFIX)" "$(CUDA_HOME)" nocuda

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(PCC) -shared $(SANITIZE) -o $@ $^ $(PETSC_LIB) $(CUDA_LIBS)

$(BUILD)/%.o: src/%.c $(HEADERS) $(STAMP)
	@mkdir -p $(dir $@)
	$(PCC) $(CFLAGS) -c $< -o $@

$(BUILD)/%.cu.o: src/%.cu $(HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -c $< -o $@

$(BUILD)/%.compensated.cu.o: src/%.cu $(HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -DFUSED_COMPENSATED=1 -c $< -o $@

$(BUILD)/examples/solve: examples/solve.c examples/problems.c examples/problems.h examples/partition.c examples/partition.h $(LIB) $(STAMP)
	@mkdir -p $(dir $@)
	$(PCC) $(CFLAGS) -Iexamples examples/solve.c examples/problems.c examples/partition.c -o $@ $(LIB_LINK) $(PETSC_LIB)

$(BUILD)/examples/bench: examples/bench.c examples/problems.c examples/problems.h $(LIB) $(STAMP)
	@mkdir -p $(dir $@)
	$(PCC) $(CFLAGS) -Iexamples examples/bench.c examples/problems.c -o $@ $(LIB_LINK) $(PETSC_LIB)

$(BUILD)/examples/transient: examples/transient.c examples/problems.c examples/problems.h $(LIB) $(STAMP)
	@mkdir -p $(dir $@)
	$(PCC) $(CFLAGS) -Iexamples examples/transient.c examples/problems.c -o $@ $(LIB_LINK) $(PETSC_LIB)

# The SpMV benchmark calls cuSPARSE itself, to time it beside our storage
$(BUILD)/examples/spmv: examples/spmv.c examples/problems.c examples/problems.h $(LIB) $(STAMP)
	@mkdir -p $(dir $@)
	$(PCC) $(CFLAGS) -isystem $(CUDA_HOME)/include -Iexamples examples/spmv.c examples/problems.c -o $@ $(LIB_LINK) $(PETSC_LIB) $(CUDA_LIBS) -lcusparse

# ViennaCL's pipelined solvers on the same Laplacians, for the comparison
# (Debian's libviennacl-dev, header-only; not part of all: make viennacl)
VIENNACL_INCLUDE ?= /usr/include
# the grid barrier and sums microbenchmark (needs no PETSc)
$(BUILD)/examples/grid_sums: examples/grid_sums.cu $(HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) -O3 -std=c++17 -Xcompiler -Wall,-Wextra $(CUDA_ARCH) -Isrc $< -o $@

viennacl: build/examples/viennacl_bench
build/examples/viennacl_bench: examples/viennacl_bench.cu
	@test -f $(VIENNACL_INCLUDE)/viennacl/version.hpp || { echo "make viennacl: no ViennaCL headers in $(VIENNACL_INCLUDE); apt-get install libviennacl-dev" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(NVCC) -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -Xcompiler -Wall,-Wextra $(if $(filter /usr/include,$(VIENNACL_INCLUDE)),,-isystem $(VIENNACL_INCLUDE)) $< -o $@

# Test programs link the library, except the -dll_append test, which must not.
$(BUILD)/tests/dll_append: tests/dll_append.c $(STAMP)
	@mkdir -p $(dir $@)
	$(PCC) $(CFLAGS) $< -o $@ $(PETSC_LIB)

# The halo plan is internal to the library: its test compiles it in.
$(BUILD)/tests/halo: tests/halo.c src/device/fusedhalo.c src/device/fusedhalo.h $(STAMP)
	@mkdir -p $(dir $@)
	$(PCC) $(CFLAGS) $< src/device/fusedhalo.c -o $@ $(PETSC_LIB)

$(BUILD)/tests/%: tests/%.c examples/problems.c examples/problems.h examples/partition.c examples/partition.h $(LIB) $(STAMP)
	@mkdir -p $(dir $@)
	$(PCC) $(CFLAGS) -Iexamples $< examples/problems.c examples/partition.c -o $@ $(LIB_LINK) $(PETSC_LIB)

# The default problem; RUN_ARGS adds options, e.g. RUN_ARGS="-f tests/data/494_bus.mtx -pc_type jacobi"
run: all
	$(BUILD)/examples/solve -pc_type jacobi $(RUN_ARGS)

check: all
	@$(RUN_ENV) sh tests/run.sh

check-gpu: all
	@$(RUN_ENV) FUSED_REQUIRE_GPU=1 sh tests/run.sh

# The sanitized build lives in its own folder; the runner fails a test whose
# log has any sanitizer report. Open MPI's start-up leaks are suppressed
# (tests/sanitize/lsan.supp), nothing else; its plugins stay loaded and
# stacks are unwound in full so that those leaks are recognized as its own.
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g
check-asan:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/asan LIBDIR=$(BUILD)/asan/lib SANITIZE="$(ASAN_FLAGS)" all
	@FUSED_BUILD=$(BUILD)/asan FUSED_LIB=$(BUILD)/asan/lib/libpetscfused.so FUSED_SANITIZE=1 \
	  OMPI_MCA_mca_base_component_disable_dlclose=1 \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:protect_shadow_gap=0 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitize/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0 \
	  UBSAN_OPTIONS=print_stacktrace=1 sh tests/run.sh

# compute-sanitizer's tools over one GPU test of each device path (tools/gpu-sanitize.sh)
GPU_SANITIZE_TOOLS ?= memcheck racecheck initcheck synccheck
check-gpu-sanitize: all
	@$(RUN_ENV) sh tools/gpu-sanitize.sh $(GPU_SANITIZE_TOOLS)

# libFuzzer comes with Debian's clang (make deps installs it where missing)
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
$(BUILD)/fuzz/mm_parse: tests/fuzz/mm_parse.c src/mat/mmparse.c src/mat/mmparse.h
	@mkdir -p $(dir $@)
	OMPI_CC=$(FUZZ_CC) mpicc -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined $(WARN) $(PETSC_INC) -Isrc tests/fuzz/mm_parse.c src/mat/mmparse.c -o $@ -lm
fuzz: $(BUILD)/fuzz/mm_parse
	@sh tests/fuzz/run.sh $(BUILD)/fuzz/mm_parse $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(LIBDIR)
