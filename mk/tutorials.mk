# mk/tutorials.mk - Triton's tutorials in Tile's Triton-style subset (issue
# 10's proof) that examples.mk does not already build: the layer-norm
# backward, matmul with the fused leaky_relu epilogue, the fused-attention
# forward and backward. Each kernel for sm_90a and sm_100a (cubin + PTX), its
# C host checker (the pattern rules of examples.mk), run on the emulator by
# tests/emu/tutorials.sh; and, for the GPU benchmark beside Triton
# (tests/gpu/bench_triton.sh), the sm_90a variants at the tutorials' block
# sizes (`make tutorials-bench`, which `make gpu-bundle` includes).

TUT_ARCHS := sm_90a sm_100a
TUT_HOSTS := $(B)/examples/layernorm_bwd_host $(B)/examples/fused_attention_host
TUT_FA_SRC := examples/fused_attention/fused_attention.tile
TUT_LNB_SRC := examples/layernorm_bwd/layernorm_bwd.tile

# NAME|SOURCE|DEFS: one cubin + PTX per arch, $(B)/examples/NAME.ARCH.{cubin,ptx},
# DEFS the tilec -D values, NAME=VALUE+NAME=VALUE...
# - layernorm_bwd.T.bBLOCK: element type T, rows up to BLOCK; warps as the
#   tutorial's heuristic, min(max(BLOCK / 256, 1), 8); .split: dw and db
#   by a kernel of their own (DWDB=false, what the f32 16384 build uses); .wrow:
#   w loaded again each row (W_ONCE=false, what the 4096 and 8192 builds use)
# - matmul_lrelu: matmul.tile with the activation epilogue
# - layernorm.b1024.one: the whole row in one block, read once (ONE_BLOCK)
# - fused_attention.dD.MASK.T: head dim D, causal or not (full), f16 or bf16;
#   the backward's 128-row dK/dV and dQ blocks on 8 warps at both head dims
#   on sm_90a (wgmma, no spills), 64-row ones at head dim 128 on sm_100a
#   (tut_arch_flags: its dots are on mma.sync, 128 rows spill there); on
#   sm_90a the causal dK/dV kernel at head dim 64 capped at 128 registers
#   (REGS: two programs an SM)
TUT_KERNELS := \
  layernorm_bwd.f32.b1024|$(TUT_LNB_SRC)|T=f32 \
  layernorm_bwd.f16.b1024|$(TUT_LNB_SRC)|T=f16 \
  layernorm_bwd.f16.b1024.split|$(TUT_LNB_SRC)|T=f16+DWDB=false \
  layernorm_bwd.f16.b1024.wrow|$(TUT_LNB_SRC)|T=f16+W_ONCE=false \
  matmul_lrelu|examples/matmul/matmul.tile|LEAKY_RELU=true \
  layernorm.b1024.one|examples/layernorm/layernorm.tile|BLOCK=1024+ONE_BLOCK=true \
  $(foreach d,64 128,$(foreach c,full causal,$(foreach t,f16 bf16,\
    fused_attention.d$(d).$(c).$(t)|$(TUT_FA_SRC)|HEAD_DIM=$(d)+CAUSAL=$(if $(filter causal,$(c)),true,false)+T=$(t))))

tut_name = $(word 1,$(subst |, ,$(1)))
tut_src = $(word 2,$(subst |, ,$(1)))
tut_flags_of = $(foreach d,$(subst +, ,$(word 3,$(subst |, ,$(1)))),-D '$(d)')
# KERNEL ARCH: the -D values one arch adds
tut_arch_flags = $(if $(and $(filter sm_100a,$(2)),$(filter fused_attention.d128.%,$(call tut_name,$(1)))),-D BN1=64 -D BM2=64 -D BN=64 -D STAGES=4)\
  $(if $(and $(filter sm_90a,$(2)),$(filter fused_attention.d64.causal.%,$(call tut_name,$(1)))),-D REGS=128)

define tut_rules
$(B)/examples/$(call tut_name,$(1)).$(2).cubin: $(call tut_src,$(1)) $(B)/bin/tilec mk/tutorials.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=$(2) $(call tut_flags_of,$(1)) $(call tut_arch_flags,$(1),$(2)) -o $$@ $(call tut_src,$(1))
$(B)/examples/$(call tut_name,$(1)).$(2).ptx: $(call tut_src,$(1)) $(B)/bin/tilec mk/tutorials.mk
	@mkdir -p $$(dir $$@)
	$(B)/bin/tilec --arch=$(2) $(call tut_flags_of,$(1)) $(call tut_arch_flags,$(1),$(2)) --emit=ptx -o $$@ $(call tut_src,$(1))
endef
$(foreach k,$(TUT_KERNELS),$(foreach a,$(TUT_ARCHS),$(eval $(call tut_rules,$(k),$(a)))))
TUT_CUBINS := $(foreach k,$(TUT_KERNELS),$(foreach a,$(TUT_ARCHS),\
  $(B)/examples/$(call tut_name,$(k)).$(a).cubin $(B)/examples/$(call tut_name,$(k)).$(a).ptx))

.PHONY: tutorials tutorials-bench
tutorials: $(TUT_CUBINS) $(TUT_HOSTS)
examples: tutorials

# The benchmark's extra variants (sm_90a only; not in `examples`, so that
# tests/jit/run.sh does not build them twice): the layer-norm backward for
# each power-of-two row length of the tutorial's sweep (N = 1024 .. 15872),
# f16 as in the tutorial and f32 as tests/gpu/run.sh's layernorm; matmul at
# 128 x 128 x 64 blocks (beside the default 128 x 256 x 64), with and without
# the epilogue, each also built as tile.Kernel's JIT builds it for arguments
# divisible by 16 (.s16: every integer parameter multiple_of(16), Triton's
# specialization; the benchmark uses them only on such shapes); vector_add
# with n, softmax, layernorm and layernorm_bwd likewise with the row length and stride;
# layernorm also with the whole row in one block (BLOCK = the row length
# rounded up to a power of two), read once (ONE_BLOCK), as Triton's tutorial
# launches its fused forward; on 8 warps, 4 at 8192 (measured best of 4, 8
# and 16 on the H200, docs/perf.md).
TUT_S16 := M=multiple_of(16)+N=multiple_of(16)+K=multiple_of(16)+lda=multiple_of(16)+ldb=multiple_of(16)+ldc=multiple_of(16)
TUT_ROW16 := n_cols=multiple_of(16)+stride=multiple_of(16)
tut_lnb_warps = $(if $(filter 8192 16384,$(1)),16,$(if $(filter 1024,$(1)),4,8))
# rows of 16384: f16 keeps dw and db's partial sums in the row kernel,
# homed in shared memory by the compiler (compiler/home.c: the row kernel
# at 128 registers, 24 bytes spilled; w reloaded each row), 1.38x the
# three-kernel form on an H100 (docs/perf.md, twentieth session); f32 sums
# them by a kernel of their own (DWDB=false), not measured homed
tut_lnb_split = $(if $(filter 16384,$(2)),$(if $(filter f16,$(1)),+W_ONCE=false,+DWDB=false),)
# Registers (docs/perf.md 2026-12-04, fourteenth session): f16 rows of 4096
# capped at 128 a thread (165 uncapped: one program of 8 warps an SM;
# capped, two: 12-15% faster), w reloaded each row (W_ONCE=false: no spill
# under the cap); rows of 8192 on 16 warps with w reloaded, and the next
# row prefetched in f16 (128 registers, no spill: two rows in flight, 18%
# faster than 8 warps without)
tut_lnb_regs = $(if $(filter f16.4096,$(1).$(2)),+REGS=128+W_ONCE=false,)$(if $(filter 8192,$(2)),+W_ONCE=false$(if $(filter f16,$(1)),+PREFETCH=true,),)
# the specialized f16 1024-, 2048- and 8192-column builds' row loads
# through rings (RING=4; measured below, at TUT_LNB_RING)
tut_lnb_ring = $(if $(filter f16.1024 f16.2048 f16.8192,$(1).$(2)),+RING=4,)
TUT_BENCH := \
  $(foreach t,f16 f32,$(foreach b,1024 2048 4096 8192 16384,\
    layernorm_bwd.$(t).b$(b)|$(TUT_LNB_SRC)|T=$(t)+BLOCK=$(b)+WARPS=$(call tut_lnb_warps,$(b))$(call tut_lnb_split,$(t),$(b))$(call tut_lnb_regs,$(t),$(b)))) \
  matmul.b128|examples/matmul/matmul.tile|BM=128+BN=128+BK=64 \
  matmul_lrelu.b128|examples/matmul/matmul.tile|BM=128+BN=128+BK=64+LEAKY_RELU=true \
  $(foreach v,matmul|BM=128 matmul.b128|BN=128 matmul_lrelu|LEAKY_RELU=true matmul_lrelu.b128|BN=128+LEAKY_RELU=true,\
    $(word 1,$(subst |, ,$(v))).s16|examples/matmul/matmul.tile|$(word 2,$(subst |, ,$(v)))+$(TUT_S16)) \
  vector_add.s16|examples/vector_add/vector_add.tile|n=multiple_of(16) \
  softmax.s16|examples/softmax/softmax.tile|$(TUT_ROW16) \
  layernorm.s16|examples/layernorm/layernorm.tile|$(TUT_ROW16) \
  $(foreach b,4096 8192,layernorm.b$(b).s16|examples/layernorm/layernorm.tile|BLOCK=$(b)+WARPS=$(if $(filter 8192,$(b)),4,8)+ONE_BLOCK=true+$(TUT_ROW16)) \
  $(foreach t,f16 f32,$(foreach b,1024 2048 4096 8192 16384,\
    layernorm_bwd.$(t).b$(b).s16|$(TUT_LNB_SRC)|T=$(t)+BLOCK=$(b)+WARPS=$(call tut_lnb_warps,$(b))$(call tut_lnb_split,$(t),$(b))$(call tut_lnb_regs,$(t),$(b))$(call tut_lnb_ring,$(t),$(b))+$(TUT_ROW16)))
# The attention forward's block-size variants (bench_triton.py reports the
# faster, as Triton's tutorial autotunes): .fb32 128 x 32 blocks on 8 warps
# (126 registers at head dim 128, 96 KiB: two programs an SM), .fm64 64 x 64
# on 4 warps and 3 stages (112 KiB: two an SM). The default 128 x 64 on 8
# warps takes 136 registers and 160 KiB at head dim 128: one an SM, its two
# warpgroups in step at the ring's CTA barrier. Head dim 128 now defaults to
# 128 x 128 blocks on 3 stages (the only 8-warp shape Triton's tutorial
# keeps on Hopper; 217 registers, 224 KiB; 5-8% faster than 128 x 64 at
# 4096 tokens and more): .fb64 keeps the 128 x 64 blocks on 4 stages there.
# .fs3 (head dim 64): the default blocks on 3 stages (copies two blocks
# ahead, not three).
TUT_FWD := $(foreach d,64 128,$(foreach c,full causal,$(foreach v,fb32|BM=128+BN=32 fm64|BM=64+BN=64+FWARPS=4+STAGES=3 \
  $(if $(filter 128,$(d)),fb64|BN=64+STAGES=4,fs3|STAGES=3),\
  fused_attention.d$(d).$(c).f16.$(word 1,$(subst |, ,$(v)))|$(TUT_FA_SRC)|HEAD_DIM=$(d)+CAUSAL=$(if $(filter causal,$(c)),true,false)+T=f16+$(word 2,$(subst |, ,$(v))))))
TUT_BENCH += $(TUT_FWD)
# The backward's: .bq32 (head dim 64) dQ over 32-key steps (BN2 = 32, the
# tutorial's; the default there is 64 since 2026-12-04: 5-8% faster).
# Retired 2026-12-05 after losing on every shape (docs/perf.md, nineteenth
# session): .btma (the backward's rings by TMA, --tma-rings=all: 3-14%
# slower) and layernorm_bwd's .w32 (rows of 16384 on 32 warps: 2% slower).
TUT_BWD := $(foreach c,full causal,\
  fused_attention.d64.$(c).f16.bq32|$(TUT_FA_SRC)|HEAD_DIM=64+CAUSAL=$(if $(filter causal,$(c)),true,false)+T=f16+BN2=32)
TUT_BENCH += $(TUT_BWD)
# layernorm_bwd's f16 rows of 16384 in the three-kernel form (DWDB=false:
# the shipped build until the homed one measured 1.38x it), kept as an A/B
# row: bench_triton.py times it beside the default (LNB_VARIANTS)
TUT_LNB_SPLIT := $(foreach s,| .s16|+$(TUT_ROW16),layernorm_bwd.f16.b16384.split$(word 1,$(subst |, ,$(s)))|$(TUT_LNB_SRC)|T=f16+BLOCK=16384+WARPS=16+DWDB=false$(word 2,$(subst |, ,$(s))))
TUT_BENCH += $(TUT_LNB_SPLIT)
# layernorm_bwd's f16 rows with the row loads through cp.async rings
# (stages(RING), compiler/pipeline_rows.c: the next rows in shared memory
# instead of registers). Measured (docs/perf.md, thirty-fourth session, an
# H100): RING=3 1.12x the register prefetch at 1024 columns and 1.05x at
# 2048, even at 4096 and 8192, 0.93x at 15872 (one slot beside the homed
# dw/db). Thirty-fifth session, the H200, three rounds against RING=3 (and
# at 8192 the register prefetch): RING=4 +2-5 % at 1024, -0.4 to +5 % at
# 2048, +1.4-2.2 % at 8192, -3 to +2 % at 4096: the specialized 1024, 2048
# and 8192 builds take RING=4, 4096 keeps its 128 registers and no ring.
# A/B rows beside each default: .plain (RING=0: the register prefetch or
# none), .ring (RING=3), .ring2, and .ring4 at 4096
tut_lnb_s16 = T=$(1)+BLOCK=$(2)+WARPS=$(call tut_lnb_warps,$(2))$(call tut_lnb_split,$(1),$(2))$(call tut_lnb_regs,$(1),$(2))
TUT_LNB_RING := $(foreach b,1024 2048 8192,layernorm_bwd.f16.b$(b).plain.s16|$(TUT_LNB_SRC)|$(call tut_lnb_s16,f16,$(b))+$(TUT_ROW16)) \
  $(foreach r,2 3,$(foreach b,1024 2048 4096 8192,\
    layernorm_bwd.f16.b$(b).ring$(subst 3,,$(r)).s16|$(TUT_LNB_SRC)|$(call tut_lnb_s16,f16,$(b))+RING=$(r)+$(TUT_ROW16))) \
  layernorm_bwd.f16.b4096.ring4.s16|$(TUT_LNB_SRC)|$(call tut_lnb_s16,f16,4096)+RING=4+$(TUT_ROW16)
TUT_BENCH += $(TUT_LNB_RING)
# layernorm_bwd_dwdb over column blocks of 8 (BN=8) instead of 16: twice the programs (at 1024 columns 64 programs
# on 132 SMs, each loading 32 KB of partial sums), for the specialized f16 1024 and 2048 builds: A/B row .dw8
TUT_LNB_DW8 := $(foreach b,1024 2048,layernorm_bwd.f16.b$(b).dw8.s16|$(TUT_LNB_SRC)|$(call tut_lnb_s16,f16,$(b))$(call tut_lnb_ring,f16,$(b))+BN=8+$(TUT_ROW16))
TUT_BENCH += $(TUT_LNB_DW8)
$(foreach k,$(filter-out layernorm_bwd.f16.b1024|% layernorm_bwd.f32.b1024|%,$(TUT_BENCH)),$(eval $(call tut_rules,$(k),sm_90a)))
TUT_BENCH_CUBINS := $(foreach k,$(TUT_BENCH),$(B)/examples/$(call tut_name,$(k)).sm_90a.cubin)
tutorials-bench: $(TUT_BENCH_CUBINS) tutorials $(B)/lib/libtilert.so
gpu-bundle: tutorials-bench

# What tests/gpu/bench_triton.sh needs on the GPU machine and nothing more
# (a few MB, where gpu-bundle carries everything): the sm_90a cubins of the
# tutorials and libtilert.so.0. Carry build-tut and run
#   B=build-tut OUT=$OUT sh tests/gpu/bench_triton.sh
TUT_B := build-tut
.PHONY: tutorials-bundle
tutorials-bundle: tutorials-bench $(foreach e,vector_add softmax layernorm matmul gemm,$(B)/examples/$(e).sm_90a.cubin)
	rm -rf $(TUT_B) && mkdir -p $(TUT_B)/examples $(TUT_B)/lib
	cp $(foreach e,vector_add softmax layernorm matmul gemm,$(B)/examples/$(e).sm_90a.cubin) $(TUT_BENCH_CUBINS) \
	  $(filter %.sm_90a.cubin,$(TUT_CUBINS)) $(TUT_B)/examples/
	cp -L $(B)/lib/libtilert.so.0 $(TUT_B)/lib/
	@du -sh $(TUT_B)
