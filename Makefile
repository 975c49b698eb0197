# Tile: compiler (tilec, libtilec), runtime (libtilert), JIT (libtilejit),
# examples and tests.
#
#   make            build everything into build/
#   make test       build and run the tests that need no GPU (CI)
#   make demo       install missing packages, build, compile the examples,
#                   run them on a GPU when there is one
#   make san        the compiler and tests under ASan+UBSan (build-san/)
#   make fuzz       run the frontend fuzzer for FUZZ_SECONDS (clang, libFuzzer)
#   make install PREFIX=/usr/local   (DESTDIR honoured; make uninstall: mk/install.mk)

LLVM_DIR   ?= /usr/lib/llvm-22
CC         ?= cc
RE2C       ?= re2c
PREFIX     ?= /usr/local
B          ?= build
OPT        ?= -O2
SAN        ?=

ifeq ($(origin CC),default)
CC := gcc
endif

WARN     := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wshadow=local
CFLAGS   += -std=c11 -D_GNU_SOURCE -g $(OPT) $(WARN) -fPIC $(SAN) -Iinclude -Icompiler -I$(B)/gen
MLIR_INC := -isystem $(LLVM_DIR)/include
MLIR_LIBS := -L$(LLVM_DIR)/lib -lMLIRCAPIRegisterEverything -lMLIRCAPIConversion -lMLIRCAPITransforms -lMLIRCAPITarget \
             -lMLIRCAPILLVM -lMLIRCAPINVVM -lMLIRCAPIArith -lMLIRCAPISCF -lMLIRCAPIControlFlow -lMLIRCAPIIR -lMLIR -lLLVM-22 -lstdc++ \
             -Wl,-rpath,$(LLVM_DIR)/lib
LDLIBS   := -ldl -lpthread -lm

# --- sources -------------------------------------------------------------
COMP_SRCS := $(filter-out compiler/main.c,$(wildcard compiler/*.c))
COMP_OBJS := $(COMP_SRCS:%.c=$(B)/obj/%.o) $(B)/obj/gen/lexer.o $(B)/obj/gen/stdlib.o $(B)/obj/gen/build_id.o
EMU_SRCS  := $(wildcard emu/*.c)
EMU_OBJS  := $(EMU_SRCS:%.c=$(B)/obj/%.o)
JIT_SRCS  := runtime/jit.c runtime/cache.c runtime/autotune.c
JIT_OBJS  := $(JIT_SRCS:%.c=$(B)/obj/%.o)
RT_SRCS   := $(filter-out $(JIT_SRCS),$(wildcard runtime/*.c))
# the runtime carries the emulator (its driver under TILE_INTERPRET=1)
RT_OBJS   := $(RT_SRCS:%.c=$(B)/obj/%.o) $(EMU_OBJS)
DSL_FILES := $(sort $(wildcard dsl/std/*.tile))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)

.PHONY: all test demo san fuzz fuzz-regress fuzz-adversarial clean examples deps deps-check test-run san-run
all: $(B)/bin/tilec $(B)/lib/libtilec.a $(B)/lib/libtilert.a $(B)/lib/libtilejit.a unit-bins examples

# --- generated -------------------------------------------------------------
$(B)/gen/lexer.c: compiler/lexer.re compiler/tilec_int.h
	@mkdir -p $(dir $@)
	$(RE2C) -W --no-generation-date -o $@ $<

# The standard library is embedded in the compiler (the JIT needs no files).
$(B)/gen/stdlib.c: $(DSL_FILES) scripts/embed.sh
	@mkdir -p $(dir $@)
	sh scripts/embed.sh $@ $(DSL_FILES)

# The compiler's build identity (in tilec_version(), so in the JIT's cache
# keys): a hash of everything that decides the code it emits.
$(B)/gen/build_id.c: $(COMP_SRCS) $(wildcard compiler/*.h) compiler/lexer.re include/tile/tilec.h $(DSL_FILES) \
		     scripts/build_id.sh
	@mkdir -p $(dir $@)
	sh scripts/build_id.sh $@ $(COMP_SRCS) $(wildcard compiler/*.h) compiler/lexer.re include/tile/tilec.h $(DSL_FILES)

# --- objects ------------------------------------------------------------------
$(B)/obj/compiler/%.o: compiler/%.c $(wildcard compiler/*.h) include/tile/tilec.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(MLIR_INC) -c $< -o $@
$(B)/obj/gen/%.o: $(B)/gen/%.c compiler/tilec_int.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-unused-function -c $< -o $@
$(B)/obj/runtime/%.o: runtime/%.c $(wildcard include/tile/*.h) $(wildcard runtime/*.h) emu/emu.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/obj/emu/%.o: emu/%.c $(wildcard emu/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/lib/libtilec.a: $(COMP_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(B)/lib/libtilert.a: $(RT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(B)/lib/libtilejit.a: $(JIT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^


$(B)/bin/tilec: compiler/main.c $(B)/lib/libtilec.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< -o $@ $(B)/lib/libtilec.a $(MLIR_LIBS) $(LDLIBS)

# --- tests ----------------------------------------------------------------
.PHONY: unit-bins
unit-bins: $(UNIT_BINS) $(B)/tests/jit_tilec
$(B)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(B)/lib/libtilejit.a $(B)/lib/libtilert.a $(B)/lib/libtilec.a \
	      emu/emu.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(MLIR_INC) -DTILE_SRC_DIR='"$(CURDIR)"' -DTILE_BUILD_DIR='"$(abspath $(B))"' $< -o $@ \
	  $(B)/lib/libtilejit.a $(B)/lib/libtilert.a $(B)/lib/libtilec.a -lcmocka $(MLIR_LIBS) $(LDLIBS)

# tilec's command line through the JIT (tests/jit/run.sh)
$(B)/tests/jit_tilec: tests/jit/jit_tilec.c $(B)/lib/libtilejit.a $(B)/lib/libtilert.a $(B)/lib/libtilec.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< -o $@ $(B)/lib/libtilejit.a $(B)/lib/libtilert.a $(B)/lib/libtilec.a $(MLIR_LIBS) $(LDLIBS)

# --- benchmarks (host only) ---------------------------------------------------
# make bench-sched: what JFA's tile scheduling costs on ../shared/bench/suites
# (bench/jagged_sched.c; its figures are in docs/perf.md)
.PHONY: bench-sched
$(B)/bench/jagged_sched: bench/jagged_sched.c include/tile/jagged.h $(B)/lib/libtilert.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< -o $@ $(B)/lib/libtilert.a $(LDLIBS)
bench-sched: $(B)/bench/jagged_sched
	$(B)/bench/jagged_sched --suites ../shared/bench/suites

# make bench-report (on a GPU machine): every benchmark beside its peers
# (bench/run_all.sh: JFA forward/backward/variants beside FlashAttention-4,
# FA2 varlen, FlexAttention, nested SDPA and cuDNN; gemm.tile beside cuBLAS;
# the Triton-style tutorials beside Triton), its raw JSON in docs/bench/raw,
# then the tables and PNG plots into docs/bench/ and docs/perf.md
# (bench/report.py). `make bench-render` redoes only the second half.
BENCH_RAW ?= docs/bench/raw
.PHONY: bench-report bench-render
bench-report: gpu-bundle
	B=$(GPU_B) OUT=$(BENCH_RAW) bash bench/run_all.sh $(BENCH_STEPS)
	$(MAKE) --no-print-directory bench-render
bench-render:
	python3 bench/report.py $(BENCH_RAW) docs/bench --perf docs/perf.md

include mk/examples.mk
include mk/install.mk
include mk/python.mk
include mk/fuzz_host.mk
# --- Triton's tutorials (issue 10): layernorm_bwd, matmul_lrelu, fused_attention ---
include mk/tutorials.mk

# ptxas found by scripts/install-deps.sh (a PyPI copy when there is no CUDA toolkit)
ifneq ($(origin TILE_PTXAS),environment)
-include build/toolchain.env
endif
ifdef TILE_PTXAS
export TILE_PTXAS
endif

deps-check:
	@sh scripts/install-deps.sh --quiet

deps:
	sh scripts/install-deps.sh

# make test: install what is missing (the fuzzing toolchain included), build
# (one job per core), run every test that needs no GPU (the frontend fuzzer
# for TILE_FUZZ_SECONDS among them), then the sanitizer stage (san-run), then
# the host fuzzers (JFA arguments, cubin loader) briefly. CI gives it 2 cores
# and 90 minutes; each test script prints its seconds.
FUZZ_TEST_SECONDS ?= 30
NPROC ?= $(shell nproc 2>/dev/null || echo 1)
test:
	@sh scripts/install-deps.sh --quiet --fuzz
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@$(MAKE) --no-print-directory test-run
	@$(MAKE) --no-print-directory san-run
	@$(MAKE) --no-print-directory -j$(NPROC) fuzz-host FUZZ_SECONDS=$(FUZZ_TEST_SECONDS) FUZZ_HOST_CC=clang-22
test-run: all
	B=$(B) sh tests/run.sh

# Broken lowerings must fail the emulator's checks (tests/emu/mutants.sh:
# each tests/emu/mutants/*.patch applied to a scratch copy of the compiler,
# the cubins rebuilt, tests/emu/run.sh run on them). Minutes: not in `make test`.
.PHONY: test-mutants emu-cubins
test-mutants: all
	B=$(B) sh tests/emu/mutants.sh
# the cubins tests/emu/run.sh runs
emu-cubins: $(foreach e,$(EXAMPLES),$(B)/examples/$(e).sm_90a.cubin) $(JFA_CUBINS) $(JFA_COMBINE) $(JFA_BWD_CUBINS) \
  $(JFA_BWD_PRE) $(B)/examples/gemm_sm100.sm_100a.cubin $(B)/examples/gemm_sm100_2cta.sm_100a.cubin $(JFA_SM100) \
  $(JFA_BWD_SM100) $(B)/examples/matmul.sm_100a.cubin $(B)/examples/gemm_sm100_2cta_mc.sm_100a.cubin $(JFA_VAR_DET) \
  $(JFA_SM100_PAIR_MORE)

# The sanitizer stage: the compiler, runtime, emulator, unit tests and hosts
# built with ASan+UBSan into build-san/, then the unit, golden, CLI, limits
# and reproducer tests and a short emulator run of each family of kernels
# (tests/emu/san.sh) on the release build's cubins (the compiler's output
# does not depend on how it was built; san.sh checks that on a sample). The
# release build's full runs cover the rest.
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
.PHONY: san-bins
san-bins: $(B)/bin/tilec $(B)/lib/libtilec.a $(B)/lib/libtilert.a $(B)/lib/libtilejit.a unit-bins $(EX_HOSTS) \
  $(B)/examples/jfa_host $(B)/examples/jfa_bwd_host $(B)/examples/gemm.sm_90a.cubin
san: deps-check
	@$(MAKE) --no-print-directory san-run
san-run:
	$(MAKE) -j$(NPROC) all
	$(MAKE) -j$(NPROC) B=build-san SAN="$(SAN_FLAGS)" OPT=-O1 san-bins
	B=build-san TILE_SAN=1 CUBINS=$(B)/examples TILEC_RELEASE=$(B)/bin/tilec sh tests/run.sh

FUZZ_SECONDS ?= 60
fuzz:
	sh scripts/install-deps.sh --fuzz
	FUZZ_JOBS=$(FUZZ_JOBS) sh tests/fuzz/run.sh $(FUZZ_SECONDS)
fuzz-regress: $(B)/bin/tilec
	TILEC=$(B)/bin/tilec sh tests/fuzz/regress.sh
fuzz-adversarial: $(B)/bin/tilec
	python3 tests/fuzz/adversarial.py $(B)/bin/tilec

demo: deps
	$(MAKE) all
	B=$(B) sh scripts/demo.sh

clean:
	rm -rf build build-san build-fuzz

# the JFA host API's checks are unit-tested from its source (no GPU)
$(B)/tests/test_jfa_api $(B)/tests/test_jfa_bwd_items: examples/jagged_attention/jfa.c examples/jagged_attention/jfa_bwd.c examples/jagged_attention/jfa_check.c examples/jagged_attention/jfa.h examples/jagged_attention/jfa_int.h
