# mk/install.mk - the shared libraries beside the static ones, Jagged Flash
# Attention's host API as a library, and `make install` / `make uninstall`.
#
# Every object is compiled with -fPIC (CFLAGS), so each archive and its
# shared library are made from the same objects: no second object tree.
# A shared library is lib<name>.so.<version> (TILEC_VERSION_STRING), its
# soname lib<name>.so.$(SO_MAJOR), with lib<name>.so.$(SO_MAJOR) and
# lib<name>.so links to it; it exports its public prefix only (a version
# script): tilec_* (libtilec), tile_* (libtilert), tile_jit_* (libtilejit),
# jfa_* (libjfa).  libtilec.so carries the MLIR C API archives and needs
# libMLIR and libLLVM (found through its RUNPATH, $(LLVM_DIR)/lib);
# libtilejit.so and libjfa.so need libtilert.so (and libtilec.so) from the
# same folder (RUNPATH $ORIGIN).

TILE_VERSION := $(shell sed -n 's/.*TILEC_VERSION_STRING "\([^"]*\)".*/\1/p' include/tile/tilec.h)
SO_MAJOR     := 0
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
DATADIR      ?= $(PREFIX)/share
DOCDIR       ?= $(DATADIR)/doc/tile

, := ,
JFA_OBJS  := $(JFA_HOST_SRC:%.c=$(B)/obj/%.o)
SHARED_LIBS := $(foreach l,tilec tilert tilejit jfa,$(B)/lib/lib$(l).so)
.PHONY: shared-libs
shared-libs: $(SHARED_LIBS) $(B)/lib/libjfa.a
all: shared-libs

$(B)/obj/$(JFA_DIR)/%.o: $(JFA_DIR)/%.c $(JFA_DIR)/jfa.h $(JFA_DIR)/jfa_int.h $(wildcard include/tile/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@
$(B)/lib/libjfa.a: $(JFA_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# $(call so_link,NAME,EXPORTED,LINK INPUTS): lib<NAME>.so.<version> and its links
so_link = mkdir -p $(B)/lib $(B)/obj && printf '{ global: %s; local: *; };\n' '$(2)' > $(B)/obj/lib$(1).map && \
  $(CC) $(CFLAGS) -shared -Wl,-soname,lib$(1).so.$(SO_MAJOR) -Wl,--version-script=$(B)/obj/lib$(1).map \
    -Wl,--no-undefined -o $(B)/lib/lib$(1).so.$(TILE_VERSION) $(3) && \
  ln -sf lib$(1).so.$(TILE_VERSION) $(B)/lib/lib$(1).so.$(SO_MAJOR) && \
  ln -sf lib$(1).so.$(SO_MAJOR) $(B)/lib/lib$(1).so

$(B)/lib/libtilec.so: $(COMP_OBJS) mk/install.mk
	$(call so_link,tilec,tilec_*,$(COMP_OBJS) $(MLIR_LIBS) $(LDLIBS))
$(B)/lib/libtilert.so: $(RT_OBJS) mk/install.mk
	$(call so_link,tilert,tile_*,$(RT_OBJS) $(LDLIBS))
$(B)/lib/libtilejit.so: $(JIT_OBJS) $(B)/lib/libtilert.so $(B)/lib/libtilec.so mk/install.mk
	$(call so_link,tilejit,tile_jit_*,$(JIT_OBJS) -L$(B)/lib -ltilert -ltilec -Wl$(,)-rpath$(,)'$$ORIGIN' $(LDLIBS))
$(B)/lib/libjfa.so: $(JFA_OBJS) $(B)/lib/libtilert.so mk/install.mk
	$(call so_link,jfa,jfa_*,$(JFA_OBJS) -L$(B)/lib -ltilert -Wl$(,)-rpath$(,)'$$ORIGIN' $(LDLIBS))

# make install PREFIX=/usr/local (DESTDIR honoured; BINDIR, LIBDIR, INCLUDEDIR,
# DATADIR, DOCDIR follow PREFIX unless given):
#   BINDIR       tilec
#   LIBDIR       libtilec, libtilert, libtilejit, libjfa: .a, .so and links;
#                tile/jfa/*.cubin (JFA's kernels); pkgconfig/*.pc
#   INCLUDEDIR   tile/tilec.h tile/runtime.h tile/jagged.h tile/jfa.h
#   DATADIR/tile the Tile standard library (std/*.tile; tilec embeds it too)
#   DOCDIR       README.md, docs/*.md, and the benchmark report (docs/bench: tables and plots)
BENCH_DOCS := docs/bench/README.md $(wildcard docs/bench/*.png)
JFA_INSTALL_CUBINS := $(JFA_CUBINS) $(JFA_COMBINE) $(JFA_BWD_CUBINS) $(JFA_BWD_PRE) $(filter %.sm_90a.cubin,$(JFA_VAR_DET))
.PHONY: install uninstall
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(LIBDIR)/tile/jfa $(DESTDIR)$(INCLUDEDIR)/tile \
	  $(DESTDIR)$(DATADIR)/tile/std $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DOCDIR)/docs/bench
	install -m 755 $(B)/bin/tilec $(DESTDIR)$(BINDIR)/tilec
	install -m 644 $(foreach l,tilec tilert tilejit jfa,$(B)/lib/lib$(l).a) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(foreach l,tilec tilert tilejit jfa,$(B)/lib/lib$(l).so.$(TILE_VERSION)) $(DESTDIR)$(LIBDIR)/
	cd $(DESTDIR)$(LIBDIR) && for l in tilec tilert tilejit jfa; do \
	  ln -sf lib$$l.so.$(TILE_VERSION) lib$$l.so.$(SO_MAJOR) && ln -sf lib$$l.so.$(SO_MAJOR) lib$$l.so; done
	install -m 644 $(JFA_INSTALL_CUBINS) $(DESTDIR)$(LIBDIR)/tile/jfa/
	install -m 644 include/tile/*.h $(JFA_DIR)/jfa.h $(DESTDIR)$(INCLUDEDIR)/tile/
	install -m 644 $(DSL_FILES) $(DESTDIR)$(DATADIR)/tile/std/
	install -m 644 README.md $(DESTDIR)$(DOCDIR)/
	install -m 644 docs/*.md $(DESTDIR)$(DOCDIR)/docs/
	install -m 644 $(BENCH_DOCS) $(DESTDIR)$(DOCDIR)/docs/bench/
	PC_PREFIX='$(PREFIX)' PC_LIBDIR='$(LIBDIR)' PC_INCLUDEDIR='$(INCLUDEDIR)' PC_BINDIR='$(BINDIR)' \
	  PC_DATADIR='$(DATADIR)' PC_VERSION='$(TILE_VERSION)' PC_MLIR_LIBS='$(MLIR_LIBS)' PC_LDLIBS='$(LDLIBS)' \
	  sh scripts/pkgconfig.sh $(DESTDIR)$(LIBDIR)/pkgconfig

# what install wrote (the folders it made are removed when left empty)
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/tilec
	for l in tilec tilert tilejit jfa; do rm -f $(DESTDIR)$(LIBDIR)/lib$$l.a $(DESTDIR)$(LIBDIR)/lib$$l.so \
	  $(DESTDIR)$(LIBDIR)/lib$$l.so.$(SO_MAJOR) $(DESTDIR)$(LIBDIR)/lib$$l.so.$(TILE_VERSION); done
	for p in tile tilert tilec jfa; do rm -f $(DESTDIR)$(LIBDIR)/pkgconfig/$$p.pc $(DESTDIR)$(LIBDIR)/pkgconfig/$$p-static.pc; done
	rm -f $(addprefix $(DESTDIR)$(LIBDIR)/tile/jfa/,$(notdir $(JFA_INSTALL_CUBINS)))
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/tile/,$(notdir $(wildcard include/tile/*.h)) jfa.h)
	rm -f $(addprefix $(DESTDIR)$(DATADIR)/tile/std/,$(notdir $(DSL_FILES)))
	rm -f $(DESTDIR)$(DOCDIR)/README.md $(addprefix $(DESTDIR)$(DOCDIR)/docs/,$(notdir $(wildcard docs/*.md)))
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/docs/bench/,$(notdir $(BENCH_DOCS)))
	rmdir $(DESTDIR)$(DOCDIR)/docs/bench 2> /dev/null || true
	rmdir $(DESTDIR)$(LIBDIR)/tile/jfa $(DESTDIR)$(LIBDIR)/tile $(DESTDIR)$(INCLUDEDIR)/tile $(DESTDIR)$(DATADIR)/tile/std \
	  $(DESTDIR)$(DATADIR)/tile $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DOCDIR) 2> /dev/null || true
