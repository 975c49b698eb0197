# mk/fuzz_host.mk - libFuzzer targets for the host code that takes hostile
# input and needs no GPU (tests/fuzz/README.md):
#
#   fuzz_jfa_args  the JFA host API's argument checks (jfa.h)
#   fuzz_loader    the runtime's cubin/ELF and metadata loader
#   fuzz_ptx       the emulator's PTX parser, and what it accepts run briefly
#
#   make fuzz-host FUZZ_SECONDS=120   build both, run each for FUZZ_SECONDS
#   make fuzz-host-bins               build only
#
# Built with Debian 12's clang (clang 14; FUZZ_HOST_CC=clang-22 works too)
# and -fsanitize=fuzzer,address,undefined, the runtime recompiled with the
# same sanitizers, into $(FUZZ_HOST_B). Each run reads its seeds
# (tests/fuzz/seeds_NAME, NAME without "fuzz_") and keeps what it finds in
# $(FUZZ_HOST_B)/corpus/NAME; crashes, leaks, timeouts and out-of-memory
# inputs go to $(FUZZ_HOST_B)/artifacts/NAME/, and the target fails (with
# the reproduce command) when one appeared. The log of each run is
# $(FUZZ_HOST_B)/NAME.log. Extra libFuzzer flags: FUZZ_HOST_ARGS="...".

FUZZ_HOST_CC      ?= clang
FUZZ_HOST_B       ?= build-fuzz/host
FUZZ_SECONDS      ?= 60
FUZZ_HOST_ARGS    ?=
FUZZ_HOST_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_HOST_CFLAGS  := -std=c11 -D_GNU_SOURCE -g -O1 $(FUZZ_HOST_SAN) -Iinclude -Iruntime
FUZZ_HOST_TARGETS := fuzz_jfa_args fuzz_loader fuzz_ptx
FUZZ_HOST_EMU_OBJS := $(EMU_SRCS:%.c=$(FUZZ_HOST_B)/obj/%.o)
FUZZ_HOST_RT_OBJS := $(RT_SRCS:%.c=$(FUZZ_HOST_B)/obj/%.o) $(FUZZ_HOST_EMU_OBJS)
FUZZ_HOST_JFA     := examples/jagged_attention/jfa.c examples/jagged_attention/jfa_bwd.c \
                     examples/jagged_attention/jfa_check.c examples/jagged_attention/jfa.h \
                     examples/jagged_attention/jfa_int.h

.PHONY: fuzz-host fuzz-host-bins fuzz-host-probe

# Does this clang link libFuzzer? (Debian 12: apt-get install clang
# libclang-rt-14-dev)
fuzz-host-probe:
	@mkdir -p $(FUZZ_HOST_B)
	@printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n){(void)d;(void)n;return 0;}\n' \
	  > $(FUZZ_HOST_B)/probe.c
	@$(FUZZ_HOST_CC) -fsanitize=fuzzer,address,undefined $(FUZZ_HOST_B)/probe.c -o $(FUZZ_HOST_B)/probe \
	  2> $(FUZZ_HOST_B)/probe.log || { cat $(FUZZ_HOST_B)/probe.log >&2; \
	  echo "fuzz-host: $(FUZZ_HOST_CC) cannot link -fsanitize=fuzzer: apt-get install clang libclang-rt-14-dev" \
	  "(or set FUZZ_HOST_CC)" >&2; exit 2; }
	@rm -f $(FUZZ_HOST_B)/probe $(FUZZ_HOST_B)/probe.c $(FUZZ_HOST_B)/probe.log

$(FUZZ_HOST_B)/obj/runtime/%.o: runtime/%.c $(wildcard include/tile/*.h) $(wildcard runtime/*.h) emu/emu.h | fuzz-host-probe
	@mkdir -p $(dir $@)
	$(FUZZ_HOST_CC) $(FUZZ_HOST_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_HOST_B)/obj/emu/%.o: emu/%.c $(wildcard emu/*.h) | fuzz-host-probe
	@mkdir -p $(dir $@)
	$(FUZZ_HOST_CC) $(FUZZ_HOST_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_HOST_B)/fuzz_ptx: tests/fuzz/fuzz_ptx.c $(FUZZ_HOST_EMU_OBJS)
	$(FUZZ_HOST_CC) $(FUZZ_HOST_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_HOST_EMU_OBJS) -o $@ -lm

$(FUZZ_HOST_B)/fuzz_jfa_args: tests/fuzz/fuzz_jfa_args.c $(FUZZ_HOST_JFA) $(FUZZ_HOST_RT_OBJS)
	$(FUZZ_HOST_CC) $(FUZZ_HOST_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_HOST_RT_OBJS) -o $@ -ldl -lpthread -lm

$(FUZZ_HOST_B)/fuzz_loader: tests/fuzz/fuzz_loader.c $(FUZZ_HOST_RT_OBJS)
	$(FUZZ_HOST_CC) $(FUZZ_HOST_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_HOST_RT_OBJS) -o $@ -ldl -lpthread -lm

fuzz-host-bins: $(FUZZ_HOST_TARGETS:%=$(FUZZ_HOST_B)/%)

# Each target for FUZZ_SECONDS, one after the other (each a single process;
# the longest input 20000 bytes for the loader, whose seeds hold a cubin).
fuzz-host: fuzz-host-bins
	@rc=0; \
	for t in $(FUZZ_HOST_TARGETS); do \
	  seeds=tests/fuzz/seeds_$${t#fuzz_}; art=$(FUZZ_HOST_B)/artifacts/$$t; log=$(FUZZ_HOST_B)/$$t.log; \
	  mkdir -p $(FUZZ_HOST_B)/corpus/$$t $$art; \
	  before=$$(ls $$art | wc -l); \
	  case $$t in fuzz_loader|fuzz_ptx) max=20000;; *) max=1024;; esac; \
	  echo "fuzz-host: $$t for $(FUZZ_SECONDS) s (log: $$log)"; \
	  ASAN_OPTIONS=$${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
	  UBSAN_OPTIONS=$${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
	  $(FUZZ_HOST_B)/$$t -max_total_time=$(FUZZ_SECONDS) -max_len=$$max -timeout=10 -rss_limit_mb=2048 \
	    -artifact_prefix=$$art/ -print_final_stats=1 $(FUZZ_HOST_ARGS) $(FUZZ_HOST_B)/corpus/$$t $$seeds \
	    > $$log 2>&1; st=$$?; \
	  execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $$log | tail -n 1); \
	  cov=$$(grep -o 'cov: [0-9]*' $$log | tail -n 1); \
	  after=$$(ls $$art | wc -l); \
	  if [ $$st -ne 0 ] || [ $$after -gt $$before ]; then \
	    rc=1; tail -n 30 $$log; \
	    echo "fuzz-host: $$t FAILED (exit $$st, $$((after - before)) new artifacts in $$art/)"; \
	    echo "  reproduce: $(FUZZ_HOST_B)/$$t $$art/<file>"; \
	  else \
	    echo "fuzz-host: $$t ok: $${execs:-?} executions, $$cov, no crashes"; \
	  fi; \
	done; exit $$rc
