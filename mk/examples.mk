# mk/examples.mk - the examples: each kernel compiled by tilec for sm_90a and
# sm_100a (cubin + PTX), and its C host program in two builds: one that loads
# the cubin (runtime only) and one that JIT-compiles the source.

EXAMPLES  := vector_add softmax layernorm matmul
EX_ARCHS  := sm_90a sm_100a
EX_CUBINS := $(foreach e,$(EXAMPLES),$(foreach a,$(EX_ARCHS),$(B)/examples/$(e).$(a).cubin $(B)/examples/$(e).$(a).ptx))
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
$(foreach e,$(EXAMPLES),$(foreach a,$(EX_ARCHS),$(eval $(call example_rules,$(e),$(a)))))

$(B)/examples/%_host: examples/%/*_host.c examples/common/host.h $(B)/lib/libtilert.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(filter %.c,$^) -o $@ $(B)/lib/libtilert.a $(LDLIBS)

$(B)/examples/%_host_jit: examples/%/*_host.c examples/common/host.h $(B)/lib/libtilejit.a $(B)/lib/libtilert.a $(B)/lib/libtilec.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DTILE_WITH_JIT $(filter %.c,$^) -o $@ $(B)/lib/libtilejit.a $(B)/lib/libtilert.a \
	  $(B)/lib/libtilec.a $(MLIR_LIBS) $(LDLIBS)
