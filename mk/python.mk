# mk/python.mk - the Python package (python/tile: pure Python over the
# shared libraries through ctypes; docs/python.md).
#
# It needs nothing built of its own: libtilert.so, libjfa.so and
# libtilejit.so (mk/install.mk) and JFA's cubins.  For the GPU machine,
# which has no LLVM/MLIR, the JIT is also linked on its own:
# $(B)/lib/standalone/libtilejit.so carries the compiler and LLVM/MLIR
# statically (their symbols hidden: it exports tile_jit_* only) and needs
# libtilert.so.0 from its folder; `make gpu-bundle` puts it into the bundle
# xz-compressed (the carry limit), tests/gpu/python.sh unpacks it.

PY_STANDALONE_JIT := $(B)/lib/standalone/libtilejit.so
$(PY_STANDALONE_JIT): $(JIT_OBJS) $(COMP_OBJS) $(B)/lib/libtilert.so mk/python.mk
	@mkdir -p $(dir $@) $(B)/obj
	@printf '{ global: tile_jit_*; local: *; };\n' > $(B)/obj/libtilejit-standalone.map
	@echo "LD $@ (the JIT with the compiler and LLVM/MLIR inside)"
	@$(CC) $(CFLAGS) -shared -Wl,-soname,libtilejit.so.0 -Wl,--version-script=$(B)/obj/libtilejit-standalone.map \
	  -Wl,--no-undefined -o $@ $(JIT_OBJS) $(COMP_OBJS) $(STATIC_LLVM) -L$(B)/lib -ltilert \
	  -Wl,-rpath,'$$ORIGIN' $(LDLIBS)
	strip --strip-unneeded $@
$(PY_STANDALONE_JIT).xz: $(PY_STANDALONE_JIT)
	xz -T2 -1 -k -f -c $< > $@

# The bundle's part (gpu-bundle runs it after filling $(GPU_B)), plain
# files under their sonames: libtilert.so.0, libjfa.so.0 linked to it (one
# runtime in the process; the bundle's libjfa.so, with a runtime of its
# own inside, stays for the C benchmarks), the standalone JIT compressed.
.PHONY: gpu-bundle-python
gpu-bundle-python: $(B)/lib/libtilert.so $(B)/lib/libjfa.so $(PY_STANDALONE_JIT).xz
	mkdir -p $(GPU_B)/lib
	cp -L $(B)/lib/libtilert.so.0 $(B)/lib/libjfa.so.0 $(GPU_B)/lib/
	cp $(PY_STANDALONE_JIT).xz $(GPU_B)/lib/libtilejit.so.0.xz

# What tests/gpu/train_step.sh needs on the GPU machine (a few MB): the
# two libraries, the JFA cubins and the benchmark suites. Carry build-step.
STEP_B := build-step
.PHONY: train-step-bundle
train-step-bundle: $(B)/lib/libtilert.so $(B)/lib/libjfa.so $(JFA_CUBINS) $(JFA_COMBINE) $(JFA_BWD_CUBINS) $(JFA_BWD_PRE)
	rm -rf $(STEP_B) && mkdir -p $(STEP_B)/lib $(STEP_B)/examples
	cp -L $(B)/lib/libtilert.so.0 $(B)/lib/libjfa.so.0 $(STEP_B)/lib/
	cp $(JFA_CUBINS) $(JFA_COMBINE) $(JFA_BWD_CUBINS) $(JFA_BWD_PRE) $(STEP_B)/examples/
	cp -r $(or $(SUITES),../shared/bench/suites) $(STEP_B)/suites
	@du -sh $(STEP_B)

# make test-python: the package's tests alone (tests/python/run.sh)
.PHONY: test-python
test-python: shared-libs $(JFA_CUBINS) $(JFA_COMBINE) $(JFA_BWD_CUBINS) $(JFA_BWD_PRE)
	B=$(B) sh tests/python/run.sh
