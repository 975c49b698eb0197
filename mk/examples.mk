# mk/examples.mk - the examples: each kernel compiled by tilec for sm_90a and
# sm_100a (cubin + PTX), and its C host program in two builds: one that loads
# the cubin (runtime only) and one that JIT-compiles the source.

EXAMPLES  := vector_add softmax layernorm matmul gemm
EX_ARCHS  := sm_90a sm_100a
# gemm uses wgmma (Hopper only; gemm_sm100 below is Blackwell's); the others build for both targets
archs_of = $(if $(filter gemm,$(1)),sm_90a,$(EX_ARCHS))
EX_CUBINS := $(foreach e,$(EXAMPLES),$(foreach a,$(call archs_of,$(e)),$(B)/examples/$(e).$(a).cubin $(B)/examples/$(e).$(a).ptx))
EX_HOSTS  := $(foreach e,$(EXAMPLES),$(B)/examples/$(e)_host $(B)/examples/$(e)_host_jit)

.PHONY: examples
examples: $(EX_CUBINS) $(EX_HOSTS)

define example_rules
$(B)/examples/$(1).$(2).cubin: examples/$(1)/$(1).tile $(B)/bin/tilec
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=$(2) -o $$@ $$<
$(B)/examples/$(1).$(2).ptx: examples/$(1)/$(1).tile $(B)/bin/tilec
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=$(2) --emit=ptx -o $$@ $$<
endef
$(foreach e,$(EXAMPLES),$(foreach a,$(call archs_of,$(e)),$(eval $(call example_rules,$(e),$(a)))))

$(B)/examples/%_host: examples/%/*_host.c examples/common/host.h $(B)/lib/libtilert.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(filter %.c,$^) -o $@ $(B)/lib/libtilert.a $(LDLIBS)

$(B)/examples/%_host_jit: examples/%/*_host.c examples/common/host.h $(B)/lib/libtilejit.a $(B)/lib/libtilert.a $(B)/lib/libtilec.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DTILE_WITH_JIT $(filter %.c,$^) -o $@ $(B)/lib/libtilejit.a $(B)/lib/libtilert.a \
	  $(B)/lib/libtilec.a $(MLIR_LIBS) $(LDLIBS)

# One statically linked program with every host's JIT build, for the GPU
# machine (which has no LLVM/MLIR): `make jit-static` (needs libzstd-dev).
STATIC_LLVM = -Wl,--start-group $(wildcard $(LLVM_DIR)/lib/libMLIRCAPI*.a) \
  $(filter-out $(wildcard $(LLVM_DIR)/lib/libMLIRCAPI*.a),$(wildcard $(LLVM_DIR)/lib/libMLIR*.a)) \
  $(wildcard $(LLVM_DIR)/lib/libLLVM*.a) -Wl,--end-group -Wl,--gc-sections \
  -Wl,-Bstatic -lz -lzstd -Wl,-Bdynamic -lstdc++
EX_MULTI_OBJS := $(foreach e,$(EXAMPLES),$(B)/obj/examples/$(e)_jit.o)

$(B)/obj/examples/%_jit.o: examples/%/*_host.c examples/common/host.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DTILE_WITH_JIT -Dmain=$*_main -c $(filter %.c,$^) -o $@

.PHONY: jit-static
jit-static: $(B)/examples/examples_jit_static.xz
$(B)/examples/examples_jit_static: examples/common/jit_multi.c $(EX_MULTI_OBJS) $(B)/lib/libtilejit.a $(B)/lib/libtilert.a $(B)/lib/libtilec.a
	$(CC) $(CFLAGS) $< $(EX_MULTI_OBJS) -o $@ $(B)/lib/libtilejit.a $(B)/lib/libtilert.a $(B)/lib/libtilec.a \
	  $(STATIC_LLVM) $(LDLIBS)
	strip $@
$(B)/examples/examples_jit_static.xz: $(B)/examples/examples_jit_static
	xz -T2 -1 -k -f -c $< > $@

# What the GPU machine needs, and nothing more (the carry limit is 64 MiB):
# `make gpu-bundle`, then run tests/gpu/run.sh with B=build-gpu, carrying build-gpu.
GPU_B := build-gpu
.PHONY: gpu-bundle
gpu-bundle: examples jit-static prims jfa-ab jfa-bwd-ab
	rm -rf $(GPU_B) && mkdir -p $(GPU_B)/examples $(GPU_B)/tests $(GPU_B)/bin
	cp $(B)/examples/*_host $(B)/examples/*.sm_90a.cubin $(B)/examples/examples_jit_static.xz $(GPU_B)/examples/
	mkdir -p $(GPU_B)/examples/ab $(foreach a,$(JFA_AB),&& cp -r $(B)/examples/ab/$(call jfa_ab_name,$(a)) $(GPU_B)/examples/ab/)
	mkdir -p $(GPU_B)/examples/ab_bwd $(foreach a,$(JFA_BWD_AB),&& cp -r $(B)/examples/ab_bwd/$(call jfa_ab_name,$(a)) $(GPU_B)/examples/ab_bwd/)
	mkdir -p $(GPU_B)/shared-bench && cp -r ../shared/bench/. $(GPU_B)/shared-bench/ 2>/dev/null || true
	mkdir -p $(GPU_B)/lib $(GPU_B)/tests/prims && cp -L /usr/lib/x86_64-linux-gnu/libcmocka.so.0 $(GPU_B)/lib/
	cp $(B)/gpu/test_prims $(GPU_B)/tests/ && cp $(B)/tests/prims/*.cubin $(GPU_B)/tests/prims/
	mkdir -p $(GPU_B)/tests/rate && cp $(B)/tests/rate/* $(GPU_B)/tests/rate/
	$(CC) $(CFLAGS) -shared $(JFA_HOST_SRC) -o $(GPU_B)/lib/libjfa.so $(B)/lib/libtilert.a $(LDLIBS) -lm
	$(CC) $(CFLAGS) -DTILE_SRC_DIR='"."' tests/unit/test_runtime.c -o $(GPU_B)/tests/test_runtime \
	  $(B)/lib/libtilert.a -lcmocka -Wl,-rpath,'$$ORIGIN/../lib' $(LDLIBS)
	$(MAKE) --no-print-directory gpu-bundle-python GPU_B=$(GPU_B)
	@du -sh $(GPU_B)

# GPU checks of the explicit primitives (tests/gpu/prims): cubins + host
PRIM_TILES := $(wildcard tests/gpu/prims/*.tile)
PRIM_CUBINS := $(patsubst tests/gpu/prims/%.tile,$(B)/tests/prims/%.cubin,$(filter-out %smem_roundtrip.tile,$(PRIM_TILES))) \
  $(foreach sw,0 32 64 128,$(B)/tests/prims/smem_roundtrip.$(sw).cubin)
$(B)/tests/prims/%.cubin: tests/gpu/prims/%.tile $(B)/bin/tilec
	@mkdir -p $(dir $@)
	$(B)/bin/tilec -o $@ $<
$(B)/tests/prims/smem_roundtrip.%.cubin: tests/gpu/prims/smem_roundtrip.tile $(B)/bin/tilec
	@mkdir -p $(dir $@)
	$(B)/bin/tilec -D SW=$* -o $@ $<
$(B)/gpu/test_prims: tests/gpu/prims/test_prims.c $(B)/lib/libtilert.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< -o $@ $(B)/lib/libtilert.a $(LDLIBS) -lm
# the wgmma rate of the KV-loop products per KV block size
# (tests/gpu/rate: 128 + BX keys; both products, S = Q K^T alone, P V alone)
rate_defs = $(if $(filter qk,$(1)),-D PV=false,)$(if $(filter pv,$(1)),-D QK=false,)
RATE_CUBINS := $(foreach bx,0 16 32 64,$(foreach m,both qk pv,$(B)/tests/rate/wgmma_rate.d128.bx$(bx).$(m).cubin)) \
  $(foreach bx,0 32,$(B)/tests/rate/wgmma_rate.d64.bx$(bx).both.cubin)
define rate_rules
$(B)/tests/rate/wgmma_rate.d$(1).bx$(2).$(3).cubin: tests/gpu/rate/wgmma_rate.tile $(B)/bin/tilec
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec -D D=$(1) -D BX=$(2) $(call rate_defs,$(3)) -o $$@ $$<
endef
$(foreach d,64 128,$(foreach bx,0 16 32 64,$(foreach m,both qk pv,$(eval $(call rate_rules,$(d),$(bx),$(m))))))
$(B)/tests/rate/wgmma_rate: tests/gpu/rate/wgmma_rate.c $(B)/lib/libtilert.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< -o $@ $(B)/lib/libtilert.a $(LDLIBS) -lm
.PHONY: rate
rate: $(RATE_CUBINS) $(B)/tests/rate/wgmma_rate
prims: rate

# the Blackwell GEMM (issue 18; docs/blackwell.md): sm_100a only, the same
# kernel signature as gemm.tile, so gemm_host runs it:
#   TILE_INTERPRET=1 $(B)/examples/gemm_host --cubin $(B)/examples/gemm_sm100.sm_100a.cubin
$(B)/examples/gemm_sm100.sm_100a.cubin: examples/gemm/gemm_sm100.tile $(B)/bin/tilec
	@mkdir -p $(dir $@)
	$(B)/bin/tilec --arch=sm_100a -o $@ $<
$(B)/examples/gemm_sm100.sm_100a.ptx: examples/gemm/gemm_sm100.tile $(B)/bin/tilec
	@mkdir -p $(dir $@)
	$(B)/bin/tilec --arch=sm_100a --emit=ptx -o $@ $<
# the 2-CTA Blackwell GEMM (tcgen05.mma.cta_group::2 on a cluster of 2): kernel gemm_pair, the same host
$(B)/examples/gemm_sm100_2cta.sm_100a.cubin: examples/gemm/gemm_sm100_2cta.tile $(B)/bin/tilec
	@mkdir -p $(dir $@)
	$(B)/bin/tilec --arch=sm_100a -o $@ $<
$(B)/examples/gemm_sm100_2cta.sm_100a.ptx: examples/gemm/gemm_sm100_2cta.tile $(B)/bin/tilec
	@mkdir -p $(dir $@)
	$(B)/bin/tilec --arch=sm_100a --emit=ptx -o $@ $<
examples: $(B)/examples/gemm_sm100_2cta.sm_100a.cubin $(B)/examples/gemm_sm100_2cta.sm_100a.ptx
# ... in clusters of 4 (two pairs along N, A multicast to both): -D PAIRS=2, the same kernel name and host
$(B)/examples/gemm_sm100_2cta_mc.sm_100a.cubin: examples/gemm/gemm_sm100_2cta.tile $(B)/bin/tilec
	@mkdir -p $(dir $@)
	$(B)/bin/tilec --arch=sm_100a -D PAIRS=2 -o $@ $<
$(B)/examples/gemm_sm100_2cta_mc.sm_100a.ptx: examples/gemm/gemm_sm100_2cta.tile $(B)/bin/tilec
	@mkdir -p $(dir $@)
	$(B)/bin/tilec --arch=sm_100a -D PAIRS=2 --emit=ptx -o $@ $<
examples: $(B)/examples/gemm_sm100_2cta_mc.sm_100a.cubin $(B)/examples/gemm_sm100_2cta_mc.sm_100a.ptx
examples: $(B)/examples/gemm_sm100.sm_100a.cubin $(B)/examples/gemm_sm100.sm_100a.ptx

# the tutorial's middle step (docs/tutorial-gemm.md)
$(B)/examples/gemm_simple.sm_90a.cubin: examples/gemm/gemm_simple.tile $(B)/bin/tilec
	$(B)/bin/tilec -o $@ $<
examples: $(B)/examples/gemm_simple.sm_90a.cubin

.PHONY: prims
prims: $(PRIM_CUBINS) $(B)/gpu/test_prims
examples: prims

# Jagged Flash Attention (examples/jagged_attention): one cubin per head dim
# and variant (self, causal, broadcast-Q), all Hopper; the host API (jfa.c)
# and its check/benchmark program.
JFA_DIR := examples/jagged_attention
JFA_SRC := $(JFA_DIR)/jfa_fwd.tile $(JFA_DIR)/jfa_common.tile
JFA_VARIANTS := self causal bcast
jfa_defs = $(if $(filter causal,$(1)),-D CAUSAL=true,)$(if $(filter bcast,$(1)),-D BCAST=true,)
# The source's defaults are the shipped pipeline (docs/jfa.md: the options
# measured and retired); D = 64 adds balanced-tree reductions (J3 +2.2%;
# D = 128 keeps one chain, 1.8-3.3% faster on J1/D8k).
jfa_pipe = $(if $(filter 64,$(1)),--tree-reductions,)
# the shipped flags, for the PTX/SASS property tests: make -s jfa-flags D=128
.PHONY: jfa-flags
jfa-flags:
	@echo "$(call jfa_pipe,$(D))"
JFA_CUBINS := $(foreach d,64 128,$(foreach v,$(JFA_VARIANTS),$(B)/examples/jfa_fwd.d$(d).$(v).sm_90a.cubin))
define jfa_rules
$(B)/examples/jfa_fwd.d$(1).$(2).sm_90a.cubin: $(JFA_SRC) $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec -D D=$(1) $(call jfa_defs,$(2)) $(call jfa_pipe,$(1)) -o $$@ $(JFA_DIR)/jfa_fwd.tile
$(B)/examples/jfa_fwd.d$(1).$(2).sm_90a.ptx: $(JFA_SRC) $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec -D D=$(1) $(call jfa_defs,$(2)) $(call jfa_pipe,$(1)) --emit=ptx -o $$@ $(JFA_DIR)/jfa_fwd.tile
endef
$(foreach d,64 128,$(foreach v,$(JFA_VARIANTS),$(eval $(call jfa_rules,$(d),$(v)))))
# attention variants (issue 17): a small file each under variants/ that
# imports jfa_kernels.tile (the target's kernels) and overrides their hooks;
# the cubin is named after it. One source for every target: these rules
# build it for sm_90a (forward and backward in one cubin), the sm_100a ones
# below for Blackwell.
JFA_FWD_VARIANTS := window softcap alibi prefix_lm blocksparse
# soft-capping, ALiBi and block-sparse over causal attention too: the same files, CAUSAL on
JFA_CAUSAL_VARIANTS := softcap alibi blocksparse
JFA_VAR_SRC := $(JFA_DIR)/jfa_kernels.tile $(JFA_DIR)/jfa_variant.tile $(JFA_DIR)/jfa_dyn.tile
JFA_VAR_CUBINS := $(foreach d,64 128,$(foreach v,$(JFA_FWD_VARIANTS),$(B)/examples/jfa_fwd.d$(d).$(v).sm_90a.cubin))
define jfa_var_rules
$(B)/examples/jfa_fwd.d$(1).$(2).sm_90a.cubin: $(JFA_DIR)/variants/$(2).tile $(JFA_SRC) $(JFA_VAR_SRC) $(JFA_DIR)/jfa_bwd.tile $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec -D D=$(1) $(call jfa_pipe,$(1)) -o $$@ $(JFA_DIR)/variants/$(2).tile
$(B)/examples/jfa_fwd.d$(1).$(2).sm_90a.ptx: $(JFA_DIR)/variants/$(2).tile $(JFA_SRC) $(JFA_VAR_SRC) $(JFA_DIR)/jfa_bwd.tile $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec -D D=$(1) $(call jfa_pipe,$(1)) --emit=ptx -o $$@ $(JFA_DIR)/variants/$(2).tile
endef
$(foreach d,64 128,$(foreach v,$(JFA_FWD_VARIANTS),$(eval $(call jfa_var_rules,$(d),$(v)))))
define jfa_var_causal_rules
$(B)/examples/jfa_fwd.d$(1).$(2)_causal.sm_90a.cubin: $(JFA_DIR)/variants/$(2).tile $(JFA_SRC) $(JFA_VAR_SRC) $(JFA_DIR)/jfa_bwd.tile $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec -D D=$(1) -D CAUSAL=true $(call jfa_pipe,$(1)) -o $$@ $(JFA_DIR)/variants/$(2).tile
$(B)/examples/jfa_fwd.d$(1).$(2)_causal.sm_90a.ptx: $(JFA_DIR)/variants/$(2).tile $(JFA_SRC) $(JFA_VAR_SRC) $(JFA_DIR)/jfa_bwd.tile $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec -D D=$(1) -D CAUSAL=true $(call jfa_pipe,$(1)) --emit=ptx -o $$@ $(JFA_DIR)/variants/$(2).tile
endef
$(foreach d,64 128,$(foreach v,$(JFA_CAUSAL_VARIANTS),$(eval $(call jfa_var_causal_rules,$(d),$(v)))))
JFA_VAR_CUBINS += $(foreach d,64 128,$(foreach v,$(JFA_CAUSAL_VARIANTS),$(B)/examples/jfa_fwd.d$(d).$(v)_causal.sm_90a.cubin))
JFA_CUBINS += $(JFA_VAR_CUBINS)
# the second kernel of a split forward pass (jfa_combine.tile): self and
# broadcast-Q layouts (causal schedules are never split)
JFA_COMBINE := $(foreach d,64 128,$(foreach v,self bcast,$(B)/examples/jfa_combine.d$(d).$(v).sm_90a.cubin))
define jfa_combine_rules
$(B)/examples/jfa_combine.d$(1).$(2).sm_90a.cubin: $(JFA_DIR)/jfa_combine.tile $(JFA_DIR)/jfa_common.tile $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec -D D=$(1) $(call jfa_defs,$(2)) -o $$@ $(JFA_DIR)/jfa_combine.tile
$(B)/examples/jfa_combine.d$(1).$(2).sm_90a.ptx: $(JFA_DIR)/jfa_combine.tile $(JFA_DIR)/jfa_common.tile $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec -D D=$(1) $(call jfa_defs,$(2)) --emit=ptx -o $$@ $(JFA_DIR)/jfa_combine.tile
endef
$(foreach d,64 128,$(foreach v,self bcast,$(eval $(call jfa_combine_rules,$(d),$(v)))))
# the backward pass (jfa_bwd.tile): head dim x variant x (deterministic or
# not), and its small kernels before and after (jfa_bwd_pre.tile, one cubin
# with jfa_bwd_pre and jfa_bwd_post per head dim and layout)
JFA_BWD_CUBINS := $(foreach d,64 128,$(foreach v,$(JFA_VARIANTS),$(foreach t,$(v) $(v).det,$(B)/examples/jfa_bwd.d$(d).$(t).sm_90a.cubin)))
JFA_BWD_PRE := $(foreach d,64 128,$(foreach v,self bcast,$(B)/examples/jfa_bwd_pre.d$(d).$(v).sm_90a.cubin)) \
  $(B)/examples/jfa_bwd_pre.d128.self80.sm_90a.cubin
jfa_det = $(if $(findstring .det,$(1)),-D DET=true,)
# 80-row query steps (jfa_bwd.tile's Q80) for self-attention without a causal
# mask at head dim 128: J1 1.12x, D8k 1.08x over 64 (docs/perf.md, twenty-third
# session); not the kernel's default, since a variant's block mask is by 128 rows
jfa_q80 = $(if $(and $(filter 128,$(1)),$(filter self self.det,$(2))),-D Q80=true,)
JFA_BWD_SRC := $(JFA_DIR)/jfa_bwd.tile $(JFA_DIR)/jfa_variant.tile $(JFA_DIR)/jfa_dyn.tile
define jfa_bwd_rules
$(B)/examples/jfa_bwd.d$(1).$(2).sm_90a.cubin: $(JFA_BWD_SRC) $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec -D D=$(1) $(call jfa_defs,$(basename $(2))) $(call jfa_det,$(2)) $(call jfa_q80,$(1),$(2)) -o $$@ $(JFA_DIR)/jfa_bwd.tile
$(B)/examples/jfa_bwd.d$(1).$(2).sm_90a.ptx: $(JFA_BWD_SRC) $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec -D D=$(1) $(call jfa_defs,$(basename $(2))) $(call jfa_det,$(2)) $(call jfa_q80,$(1),$(2)) --emit=ptx -o $$@ $(JFA_DIR)/jfa_bwd.tile
endef
$(foreach d,64 128,$(foreach v,$(JFA_VARIANTS),$(foreach t,$(v) $(v).det,$(eval $(call jfa_bwd_rules,$(d),$(t))))))
define jfa_bwd_pre_rules
$(B)/examples/jfa_bwd_pre.d$(1).$(2).sm_90a.cubin: $(JFA_DIR)/jfa_bwd_pre.tile $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec -D D=$(1) $(call jfa_defs,$(2)) $(if $(filter self80,$(2)),-D QB=80,) -o $$@ $(JFA_DIR)/jfa_bwd_pre.tile
$(B)/examples/jfa_bwd_pre.d$(1).$(2).sm_90a.ptx: $(JFA_DIR)/jfa_bwd_pre.tile $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec -D D=$(1) $(call jfa_defs,$(2)) $(if $(filter self80,$(2)),-D QB=80,) --emit=ptx -o $$@ $(JFA_DIR)/jfa_bwd_pre.tile
endef
# (self80: the small kernels of the 80-row backward, jfa_bwd.tile's Q80)
$(foreach d,64 128,$(foreach v,self bcast,$(eval $(call jfa_bwd_pre_rules,$(d),$(v)))))
$(eval $(call jfa_bwd_pre_rules,128,self80))
JFA_HOST_SRC := $(JFA_DIR)/jfa.c $(JFA_DIR)/jfa_bwd.c $(JFA_DIR)/jfa_check.c
JFA_HOST_DEPS := $(JFA_HOST_SRC) $(JFA_DIR)/jfa.h $(JFA_DIR)/jfa_int.h $(JFA_DIR)/jfa_test.h
$(B)/examples/jfa_host: $(JFA_DIR)/jfa_host.c $(JFA_HOST_DEPS) examples/common/host.h $(B)/lib/libtilert.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(JFA_DIR)/jfa_host.c $(JFA_HOST_SRC) -o $@ $(B)/lib/libtilert.a $(LDLIBS) -lm
$(B)/examples/jfa_bwd_host: $(JFA_DIR)/jfa_bwd_host.c $(JFA_HOST_DEPS) examples/common/host.h $(B)/lib/libtilert.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(JFA_DIR)/jfa_bwd_host.c $(JFA_HOST_SRC) -o $@ $(B)/lib/libtilert.a $(LDLIBS) -lm
.PHONY: jfa
jfa: $(JFA_CUBINS) $(JFA_CUBINS:.cubin=.ptx) $(JFA_COMBINE) $(JFA_COMBINE:.cubin=.ptx) $(B)/examples/jfa_host \
  $(B)/examples/jfa_bwd_host \
  $(JFA_BWD_CUBINS) $(JFA_BWD_CUBINS:.cubin=.ptx) $(JFA_BWD_PRE) $(JFA_BWD_PRE:.cubin=.ptx)
examples: jfa

# Blackwell's forward (jfa_fwd_sm100.tile; docs/blackwell.md "The JFA
# forward"): the same kernel name, signature and cubin names as Hopper's
# with sm_100a, so the library (jfa.c) picks them on a compute capability
# 10.x device (the emulator's with TILE_EMU_ARCH=sm_100a); with the split
# path's jfa_combine, built for sm_100a unchanged.
JFA_SM100_SRC := $(JFA_DIR)/jfa_fwd_sm100.tile $(JFA_DIR)/jfa_common.tile $(JFA_DIR)/jfa_variant.tile
JFA_SM100 := $(foreach d,64 128,$(foreach v,$(JFA_VARIANTS),$(B)/examples/jfa_fwd.d$(d).$(v).sm_100a.cubin)) \
  $(foreach d,64 128,$(foreach v,self bcast,$(B)/examples/jfa_combine.d$(d).$(v).sm_100a.cubin))
define jfa_sm100_rules
$(B)/examples/jfa_fwd.d$(1).$(2).sm_100a.cubin: $(JFA_SM100_SRC) $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=sm_100a -D D=$(1) $(call jfa_defs,$(2)) -o $$@ $(JFA_DIR)/jfa_fwd_sm100.tile
$(B)/examples/jfa_fwd.d$(1).$(2).sm_100a.ptx: $(JFA_SM100_SRC) $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=sm_100a -D D=$(1) $(call jfa_defs,$(2)) --emit=ptx -o $$@ $(JFA_DIR)/jfa_fwd_sm100.tile
endef
$(foreach d,64 128,$(foreach v,$(JFA_VARIANTS),$(eval $(call jfa_sm100_rules,$(d),$(v)))))
define jfa_combine_sm100_rules
$(B)/examples/jfa_combine.d$(1).$(2).sm_100a.cubin: $(JFA_DIR)/jfa_combine.tile $(JFA_DIR)/jfa_common.tile $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=sm_100a -D D=$(1) $(call jfa_defs,$(2)) -o $$@ $(JFA_DIR)/jfa_combine.tile
endef
$(foreach d,64 128,$(foreach v,self bcast,$(eval $(call jfa_combine_sm100_rules,$(d),$(v)))))
# the variants on Blackwell: the same variants/*.tile, --arch=sm_100a (their
# jfa_kernels.tile import takes the target's kernels), named as Hopper's with
# sm_100a, so jfa.c finds them by target. The forward only until
# jfa_bwd_sm100.tile is imported there (a dependency here once it exists).
JFA_SM100_VAR_SRC := $(JFA_VAR_SRC) $(JFA_SM100_SRC) $(wildcard $(JFA_DIR)/jfa_bwd_sm100.tile) $(JFA_DIR)/jfa_dyn.tile
JFA_SM100_VAR := $(foreach d,64 128,$(foreach v,$(JFA_FWD_VARIANTS),$(B)/examples/jfa_fwd.d$(d).$(v).sm_100a.cubin)) \
  $(foreach d,64 128,$(foreach v,$(JFA_CAUSAL_VARIANTS),$(B)/examples/jfa_fwd.d$(d).$(v)_causal.sm_100a.cubin))
define jfa_var_sm100_rules
$(B)/examples/jfa_fwd.d$(1).$(2)$(3).sm_100a.cubin: $(JFA_DIR)/variants/$(2).tile $(JFA_SM100_VAR_SRC) $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=sm_100a -D D=$(1) $(if $(3),-D CAUSAL=true,) -o $$@ $(JFA_DIR)/variants/$(2).tile
$(B)/examples/jfa_fwd.d$(1).$(2)$(3).sm_100a.ptx: $(JFA_DIR)/variants/$(2).tile $(JFA_SM100_VAR_SRC) $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=sm_100a -D D=$(1) $(if $(3),-D CAUSAL=true,) --emit=ptx -o $$@ $(JFA_DIR)/variants/$(2).tile
endef
$(foreach d,64 128,$(foreach v,$(JFA_FWD_VARIANTS),$(eval $(call jfa_var_sm100_rules,$(d),$(v),))))
$(foreach d,64 128,$(foreach v,$(JFA_CAUSAL_VARIANTS),$(eval $(call jfa_var_sm100_rules,$(d),$(v),_causal))))
JFA_SM100 += $(JFA_SM100_VAR)
# the variants' deterministic backward (jfa_params.deterministic): each
# variant file built with DET = true, named NAME.det (its forward is the
# same), for both targets; jfa_check.c loads it for a deterministic plan
define jfa_var_det_rules
$(B)/examples/jfa_fwd.d$(1).$(2)$(3).det.$(4).cubin: $(JFA_DIR)/variants/$(2).tile $(JFA_SRC) $(JFA_SM100_VAR_SRC) $(JFA_DIR)/jfa_bwd.tile $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=$(4) -D D=$(1) $(if $(3),-D CAUSAL=true,) -D DET=true $(if $(filter sm_90a,$(4)),$(call jfa_pipe,$(1)),) -o $$@ $(JFA_DIR)/variants/$(2).tile
endef
JFA_VAR_DET := $(foreach a,sm_90a sm_100a,$(foreach d,64 128,\
  $(foreach v,$(JFA_FWD_VARIANTS),$(B)/examples/jfa_fwd.d$(d).$(v).det.$(a).cubin) \
  $(foreach v,$(JFA_CAUSAL_VARIANTS),$(B)/examples/jfa_fwd.d$(d).$(v)_causal.det.$(a).cubin)))
$(foreach a,sm_90a sm_100a,$(foreach d,64 128,$(foreach v,$(JFA_FWD_VARIANTS),$(eval $(call jfa_var_det_rules,$(d),$(v),,$(a))))))
$(foreach a,sm_90a sm_100a,$(foreach d,64 128,$(foreach v,$(JFA_CAUSAL_VARIANTS),$(eval $(call jfa_var_det_rules,$(d),$(v),_causal,$(a))))))
examples: $(JFA_VAR_DET)
# the CTA pair's forward (jfa_params.cta_pair; docs/blackwell.md "The CTA
# pair"): jfa_fwd_sm100.tile with CTAS = 2, head dim 128, self-attention
# (causal or not) and broadcast-Q, named VARIANT.pair
JFA_SM100_PAIR := $(foreach v,self causal bcast,$(B)/examples/jfa_fwd.d128.$(v).pair.sm_100a.cubin)
define jfa_pair_sm100_rules
$(B)/examples/jfa_fwd.d128.$(1).pair.sm_100a.cubin: $(JFA_SM100_SRC) $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=sm_100a -D D=128 -D CTAS=2 $(call jfa_defs,$(1)) -o $$@ $(JFA_DIR)/jfa_fwd_sm100.tile
$(B)/examples/jfa_fwd.d128.$(1).pair.sm_100a.ptx: $(JFA_SM100_SRC) $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=sm_100a -D D=128 -D CTAS=2 $(call jfa_defs,$(1)) --emit=ptx -o $$@ $(JFA_DIR)/jfa_fwd_sm100.tile
endef
$(foreach v,self causal bcast,$(eval $(call jfa_pair_sm100_rules,$(v))))
JFA_SM100 += $(JFA_SM100_PAIR)
# and the variants on the pair (the same variant files, CTAS = 2: NAME.pair;
# not block-sparse), and the split items' jfa_combine of 256-row slots
define jfa_var_pair_rules
$(B)/examples/jfa_fwd.d128.$(1)$(2).pair.sm_100a.cubin: $(JFA_DIR)/variants/$(1).tile $(JFA_SM100_VAR_SRC) $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=sm_100a -D D=128 -D CTAS=2 $(if $(2),-D CAUSAL=true,) -o $$@ $(JFA_DIR)/variants/$(1).tile
endef
JFA_PAIR_VARIANTS := window softcap alibi prefix_lm
$(foreach v,$(JFA_PAIR_VARIANTS),$(eval $(call jfa_var_pair_rules,$(v),)))
$(foreach v,softcap alibi,$(eval $(call jfa_var_pair_rules,$(v),_causal)))
define jfa_combine_pair_rules
$(B)/examples/jfa_combine.d128.$(1).pair.sm_100a.cubin: $(JFA_DIR)/jfa_combine.tile $(JFA_DIR)/jfa_common.tile $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=sm_100a -D D=128 -D ROWS=256 $(call jfa_defs,$(1)) -o $$@ $(JFA_DIR)/jfa_combine.tile
endef
$(foreach v,self bcast,$(eval $(call jfa_combine_pair_rules,$(v))))
JFA_SM100_PAIR_MORE := $(foreach v,$(JFA_PAIR_VARIANTS),$(B)/examples/jfa_fwd.d128.$(v).pair.sm_100a.cubin) \
  $(foreach v,softcap alibi,$(B)/examples/jfa_fwd.d128.$(v)_causal.pair.sm_100a.cubin) \
  $(foreach v,self bcast,$(B)/examples/jfa_combine.d128.$(v).pair.sm_100a.cubin)
examples: $(JFA_SM100_PAIR_MORE)
# Blackwell's backward (jfa_bwd_sm100.tile; docs/blackwell.md "The JFA
# backward"): the Hopper backward's set (head dim x variant x deterministic
# or not) with sm_100a, and its small kernels before and after
# (jfa_bwd_pre.tile), built for sm_100a unchanged
JFA_BWD_SM100_SRC := $(JFA_DIR)/jfa_bwd_sm100.tile $(JFA_DIR)/jfa_variant.tile $(JFA_DIR)/jfa_dyn.tile
JFA_BWD_SM100 := $(foreach d,64 128,$(foreach v,$(JFA_VARIANTS),$(foreach t,$(v) $(v).det,$(B)/examples/jfa_bwd.d$(d).$(t).sm_100a.cubin))) \
  $(foreach d,64 128,$(foreach v,self bcast,$(B)/examples/jfa_bwd_pre.d$(d).$(v).sm_100a.cubin))
define jfa_bwd_sm100_rules
$(B)/examples/jfa_bwd.d$(1).$(2).sm_100a.cubin: $(JFA_BWD_SM100_SRC) $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=sm_100a -D D=$(1) $(call jfa_defs,$(basename $(2))) $(call jfa_det,$(2)) -o $$@ $(JFA_DIR)/jfa_bwd_sm100.tile
$(B)/examples/jfa_bwd.d$(1).$(2).sm_100a.ptx: $(JFA_BWD_SM100_SRC) $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=sm_100a -D D=$(1) $(call jfa_defs,$(basename $(2))) $(call jfa_det,$(2)) --emit=ptx -o $$@ $(JFA_DIR)/jfa_bwd_sm100.tile
endef
$(foreach d,64 128,$(foreach v,$(JFA_VARIANTS),$(foreach t,$(v) $(v).det,$(eval $(call jfa_bwd_sm100_rules,$(d),$(t))))))
# the CTA pair's backward (jfa_params.cta_pair; docs/blackwell.md "The JFA
# backward on the CTA pair"): jfa_bwd_sm100_pair.tile, head dim 128, self
# (causal or not) and broadcast-Q, deterministic or not, named VARIANT.pair
JFA_BWD_PAIR_SRC := $(JFA_DIR)/jfa_bwd_sm100_pair.tile $(JFA_DIR)/jfa_variant.tile
define jfa_bwd_pair_rules
$(B)/examples/jfa_bwd.d128.$(1).pair.sm_100a.cubin: $(JFA_BWD_PAIR_SRC) $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=sm_100a -D D=128 $(call jfa_defs,$(basename $(1))) $(call jfa_det,$(1)) -o $$@ $(JFA_DIR)/jfa_bwd_sm100_pair.tile
$(B)/examples/jfa_bwd.d128.$(1).pair.sm_100a.ptx: $(JFA_BWD_PAIR_SRC) $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=sm_100a -D D=128 $(call jfa_defs,$(basename $(1))) $(call jfa_det,$(1)) --emit=ptx -o $$@ $(JFA_DIR)/jfa_bwd_sm100_pair.tile
endef
$(foreach v,self causal bcast,$(foreach t,$(v) $(v).det,$(eval $(call jfa_bwd_pair_rules,$(t)))))
JFA_BWD_SM100 += $(foreach v,self causal bcast,$(foreach t,$(v) $(v).det,$(B)/examples/jfa_bwd.d128.$(t).pair.sm_100a.cubin))
define jfa_bwd_pre_sm100_rules
$(B)/examples/jfa_bwd_pre.d$(1).$(2).sm_100a.cubin: $(JFA_DIR)/jfa_bwd_pre.tile $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=sm_100a -D D=$(1) $(call jfa_defs,$(2)) -o $$@ $(JFA_DIR)/jfa_bwd_pre.tile
endef
$(foreach d,64 128,$(foreach v,self bcast,$(eval $(call jfa_bwd_pre_sm100_rules,$(d),$(v)))))
.PHONY: jfa-sm100
jfa-sm100: $(JFA_SM100) $(patsubst %.cubin,%.ptx,$(filter $(B)/examples/jfa_fwd.%,$(JFA_SM100))) \
  $(JFA_BWD_SM100) $(patsubst %.cubin,%.ptx,$(filter $(B)/examples/jfa_bwd.%,$(JFA_BWD_SM100)))
examples: jfa-sm100

# Kernel options not on by default, built for an A/B run beside the default
# kernel (tests/gpu/jfa.sh ab): $(B)/examples/ab/NAME/ holds all six cubins.
JFA_AB := tree128:--tree-reductions@128 stages3_d64:STAGES=3@64
jfa_ab_name = $(word 1,$(subst :, ,$(1)))
# NAME:FLAG+FLAG...; FLAG@64 applies at head dim 64 only
# (a FLAG starting with -- is a tilec option, passed as it is)
jfa_ab_flags = $(foreach f,$(foreach f,$(subst +, ,$(word 2,$(subst :, ,$(1)))),$(if $(findstring @,$(f)),$(if $(filter $(2),$(word 2,$(subst @, ,$(f)))),$(word 1,$(subst @, ,$(f)))),$(f))),$(if $(filter --%,$(f)),$(f),-D $(f)))
define jfa_ab_rules
$(B)/examples/ab/$(call jfa_ab_name,$(1))/jfa_fwd.d$(2).$(3).sm_90a.cubin: $(JFA_SRC) $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec -D D=$(2) $(call jfa_defs,$(3)) $(call jfa_pipe,$(2)) $(call jfa_ab_flags,$(1),$(2)) -o $$@ $(JFA_DIR)/jfa_fwd.tile
endef
$(foreach a,$(JFA_AB),$(foreach d,64 128,$(foreach v,$(JFA_VARIANTS),$(eval $(call jfa_ab_rules,$(a),$(d),$(v))))))
JFA_AB_CUBINS := $(foreach a,$(JFA_AB),$(foreach d,64 128,$(foreach v,$(JFA_VARIANTS),$(B)/examples/ab/$(call jfa_ab_name,$(a))/jfa_fwd.d$(d).$(v).sm_90a.cubin))) \
  $(foreach a,$(JFA_AB),$(patsubst $(B)/examples/%,$(B)/examples/ab/$(call jfa_ab_name,$(a))/%,$(JFA_COMBINE)))
define jfa_ab_copy
$(B)/examples/ab/$(1)/$(notdir $(2)): $(2)
	@mkdir -p $$(dir $$@)
	cp $$< $$@
endef
$(foreach a,$(JFA_AB),$(foreach c,$(JFA_COMBINE),$(eval $(call jfa_ab_copy,$(call jfa_ab_name,$(a)),$(c)))))
.PHONY: jfa-ab
jfa-ab: $(JFA_AB_CUBINS)

# backward kernel options for an A/B (tests/gpu/jfa_bwd.sh ab): NAME:FLAG+FLAG,
# built into $(B)/examples/ab_bwd/NAME/ beside copies of the other JFA cubins
# (the options whose A/Bs lost are retired: docs/jfa.md)
JFA_BWD_AB := nostsm:--no-stmatrix atomic:DQ_ATOMIC=true+Q80=false dsbf16:DS_BF16=true dsf32:DS_BF16=false noearly:DKV_EARLY=false \
  static:DYN=false+DET_FIN=false q64:Q80=false q80c:Q80=true nobulk:BULK=false b64:Q80=false+BULK=true nodqt:DQT=false kvb1:KVB=1 \
  nogroup:GROUP=0 group:GROUP128=true nofp:FUSE_POST=false noown:DQ_OWNER=false fin:DQ_FINAL=true \
  finlazy:DQ_FINAL=true+FIN_LAZY=true finahead:DQ_FINAL=true+FIN_AHEAD=true finboth:DQ_FINAL=true+FIN_LAZY=true+FIN_AHEAD=true \
  tl:TIMELINE=true
define jfa_bwd_ab_rules
$(B)/examples/ab_bwd/$(call jfa_ab_name,$(1))/jfa_bwd.d$(2).$(3).sm_90a.cubin: $(JFA_BWD_SRC) $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec -D D=$(2) $(call jfa_defs,$(basename $(3))) $(call jfa_det,$(3)) $(call jfa_q80,$(2),$(3)) $(call jfa_ab_flags,$(1),$(2)) -o $$@ $(JFA_DIR)/jfa_bwd.tile
endef
$(foreach a,$(JFA_BWD_AB),$(foreach d,64 128,$(foreach v,$(JFA_VARIANTS),$(foreach t,$(v) $(v).det,$(eval $(call jfa_bwd_ab_rules,$(a),$(d),$(t)))))))
JFA_BWD_AB_CUBINS := $(foreach a,$(JFA_BWD_AB),$(patsubst $(B)/examples/%,$(B)/examples/ab_bwd/$(call jfa_ab_name,$(a))/%,$(JFA_BWD_CUBINS)))
# The window variant's backward with other kernel options (NAME:FLAG+FLAG, as
# JFA_BWD_AB): its cubin in $(B)/examples/ab_var/NAME/ beside copies of the
# shipped ones, for side_by_side.py --variant window:256 --bwd-variants --cubins DIR
# (q80 lost: window J1 0.95x, J2 0.94x of the default; bulk won, J1 1.088x,
# J2 1.054x, and is now jfa_bwd.tile's default: docs/perf.md, 2026-12-06)
JFA_VAR_AB := q80:Q80=true nobulk:BULK=false noown:DQ_OWNER=false fin:DQ_FINAL=true finlazy:DQ_FINAL=true+FIN_LAZY=true \
  finahead:DQ_FINAL=true+FIN_AHEAD=true finboth:DQ_FINAL=true+FIN_LAZY=true+FIN_AHEAD=true \
  tl:TIMELINE=true
JFA_VAR_AB_CUBINS := $(foreach a,$(JFA_VAR_AB),$(B)/examples/ab_var/$(call jfa_ab_name,$(a))/jfa_fwd.d128.window.sm_90a.cubin)
define jfa_var_ab_rules
$(B)/examples/ab_var/$(call jfa_ab_name,$(1))/jfa_fwd.d128.window.sm_90a.cubin: $(JFA_DIR)/variants/window.tile $(JFA_SRC) $(JFA_VAR_SRC) $(JFA_DIR)/jfa_bwd.tile $(B)/bin/tilec mk/examples.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec -D D=128 $(call jfa_ab_flags,$(1),128) -o $$@ $(JFA_DIR)/variants/window.tile
endef
$(foreach a,$(JFA_VAR_AB),$(eval $(call jfa_var_ab_rules,$(a))))
.PHONY: jfa-var-ab
jfa-var-ab: $(JFA_VAR_AB_CUBINS) $(JFA_CUBINS) $(JFA_COMBINE) $(JFA_BWD_CUBINS) $(JFA_BWD_PRE)
	$(foreach a,$(JFA_VAR_AB),cp $(filter-out %/jfa_fwd.d128.window.sm_90a.cubin,$(JFA_CUBINS)) $(JFA_COMBINE) $(JFA_BWD_CUBINS) \
	  $(JFA_BWD_PRE) $(B)/examples/ab_var/$(call jfa_ab_name,$(a))/ &&) true
.PHONY: jfa-bwd-ab
jfa-bwd-ab: $(JFA_BWD_AB_CUBINS) $(JFA_CUBINS) $(JFA_COMBINE) $(JFA_BWD_PRE)
	$(foreach a,$(JFA_BWD_AB),cp $(JFA_CUBINS) $(JFA_COMBINE) $(JFA_BWD_PRE) $(B)/examples/ab_bwd/$(call jfa_ab_name,$(a))/ &&) true
