# Spyre: emulated card (QEMU), driver, runtime and tests.
# make          build everything (QEMU, kernel module, libspyre, tools, tests, guest)
# make run      build, boot the guest, load the driver, run spyre-smi and a sample
# make check    every test suite (the distro one installs make deb's packages in a
#               Debian 13 guest); the last line is "N passed, N failed"
# make shell    an interactive guest shell with the card, this directory shared
# make torch    python3-torch-spyre, the PyTorch device (needs root: a chroot)
# make install  libspyre, its headers, spyre.pc and spyre-smi (PREFIX, DESTDIR)
# scripts/spyre-vm -- ./prog   runs a program of one's own in the guest
# SPYRE_CACHE (default ~/.cache/spyre) holds downloads, QEMU and kernels.

B := build
# The library's version comes from its header (SPYRE_VERSION_*), once.
VERSION := $(shell sed -n 's/^\#define SPYRE_VERSION_\(MAJOR\|MINOR\|PATCH\) //p' \
	libspyre/include/spyre/spyre.h | paste -sd.)
SONAME := libspyre.so.0

CC ?= cc
# Where `make install` puts the library, headers, pkg-config file and tools.
PREFIX ?= /usr/local
DESTDIR ?=
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin

# libdrm's and libudev's flags come from packages that scripts/setup.sh
# installs, so they are read after it ran: make builds $(B)/config.mk (running
# setup --packages first) and then re-reads itself with it.
NO_SETUP_GOALS := clean uninstall
ifneq ($(filter-out $(NO_SETUP_GOALS),$(or $(MAKECMDGOALS),all)),)
include $(B)/config.mk
endif
# SPYRE_NO_SETUP=1 (package builds): the build dependencies are there already.
$(B)/config.mk: scripts/setup.sh
	$(if $(SPYRE_NO_SETUP),,scripts/setup.sh --packages)
	@mkdir -p $(@D)
	@cflags=$$(pkg-config --cflags libdrm libudev) && libs=$$(pkg-config --libs libdrm libudev) && \
		printf 'PKG_CFLAGS := %s\nPKG_LIBS := %s\n' "$$cflags" "$$libs" > $@.tmp
	@mv $@.tmp $@

WARN := -Wall -Wextra -Werror
# CPPFLAGS, CFLAGS and LDFLAGS from the environment come last (a package
# build passes Debian's hardening flags this way).
CFLAGS_COMMON := -std=c11 -D_DEFAULT_SOURCE -O2 -g $(WARN) -Iinclude -Ilibspyre/include $(PKG_CFLAGS) \
	$(CPPFLAGS) $(CFLAGS)
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

LIB_SRCS := $(wildcard libspyre/*.c libspyre/ops/*.c)
LIB_HDRS := $(wildcard libspyre/*.h libspyre/ops/*.h libspyre/include/spyre/*.h) include/spyre_regs.h include/spyre_cmd.h \
	include/spyre_engine_status.h \
	include/uapi/drm/spyre_accel.h include/spyre_program.h include/spyre_program_builder.h
LIB_OBJS := $(LIB_SRCS:%.c=$(B)/obj/%.o)
LIB_SAN_OBJS := $(LIB_SRCS:%.c=$(B)/obj-san/%.o)
LIB := $(B)/lib/libspyre.so.$(VERSION)
TOOLS := $(B)/bin/spyre-smi $(B)/bin/spyre-prof $(B)/bin/device_info $(B)/bin/vector_add $(B)/bin/bias_gelu
HOST_TESTS := $(B)/tests/host/test_libspyre $(B)/tests/host/test_libspyre_san

# The dataflow engine (qemu-device/engine/): plain C11, no QEMU headers, so
# it is built and tested on the host like this, and linked into QEMU.
ENGINE_SRCS := $(wildcard qemu-device/engine/*.c)
ENGINE_HDRS := $(wildcard qemu-device/engine/*.h) include/spyre_program.h include/spyre_cmd.h \
	include/spyre_engine_status.h
ENGINE_CFLAGS := -std=c11 -O2 -g $(WARN) -Iinclude -Iqemu-device/engine
ENGINE_OBJS := $(ENGINE_SRCS:%.c=$(B)/obj/%.o)
ENGINE_SAN_OBJS := $(ENGINE_SRCS:%.c=$(B)/obj-san/%.o)
ENGINE_TEST_NAMES := test_engine_ops test_engine_loader test_engine_run test_engine_corpus \
	test_engine_broken
ENGINE_TEST_HDRS := tests/lib/tap.h include/spyre_program_builder.h tests/host/engine_testlib.h \
	tests/lib/broken_kernels.h tests/lib/compute_kernel.h
ENGINE_TESTS := $(ENGINE_TEST_NAMES:%=$(B)/tests/host/%) $(ENGINE_TEST_NAMES:%=$(B)/tests/host/%_san)
HOST_TESTS += $(ENGINE_TESTS)
# The op library's program generators (not its launch wrappers) run on the
# host engine: test_ops links them with the engine objects.
OPS_GEN_SRCS := $(filter-out libspyre/ops/launch.c,$(wildcard libspyre/ops/*.c)) libspyre/error.c \
	libspyre/log.c
HOST_TESTS += $(B)/tests/host/test_ops $(B)/tests/host/test_ops_san
# The kernel-authoring API against the card's own loader and engine (rules below).
HOST_TESTS += $(B)/tests/host/test_kernel_builder $(B)/tests/host/test_kernel_builder_san
# Kernel names and SPYRE_TRACE's JSON, read back by spyre-prof (rule below).
HOST_TESTS += $(B)/tests/host/test_trace_san
# spyre-smi's fdinfo reading, on a fixture /proc (rule below).
HOST_TESTS += $(B)/tests/host/test_smi_fdinfo
.SECONDARY: $(ENGINE_OBJS) $(ENGINE_SAN_OBJS)
VM_TESTS := $(B)/tests/vm/test_query $(B)/tests/vm/test_submit $(B)/tests/vm/test_recovery \
	$(B)/tests/vm/test_reset \
	$(B)/tests/vm/test_runtime $(B)/tests/vm/test_errors $(B)/tests/vm/test_clock \
	$(B)/tests/vm/test_trace \
	$(B)/tests/vm/runtime_bench \
	$(B)/tests/vm/test_badinput $(B)/tests/vm/fuzz_ioctl $(B)/tests/vm/test_ops \
	$(B)/tests/vm/test_debugfs $(B)/tests/vm/test_stress $(B)/tests/vm/test_lifecycle \
	$(B)/tests/vm/test_bigmem $(B)/tests/vm/test_unmap \
	$(B)/tests/vm/test_prime2 $(B)/tests/vm/test_peer \
	$(B)/tests/vm/test_isolation $(B)/tests/vm/test_card_reset $(B)/tests/vm/test_gone \
	$(B)/tests/vm/bench_null_job $(B)/tests/vm/smi_helper \
	$(B)/tests/vm/run-vm-tests.sh \
	$(B)/tests/vm/dmesg-check.sh
TEST_HDRS := tests/lib/tap.h

.PHONY: all setup qemu qtest driver lib tools tests initramfs debug run check bench shell shell-debug clean fuzz-seeds
all: qemu driver lib tools tests initramfs

setup:
	scripts/setup.sh

qemu: setup
	scripts/build-qemu.sh

# QEMU's qos-test (with tests/qtest/spyre-test.c) and device-introspect-test.
qtest: setup
	scripts/build-qemu.sh --qtest

driver: setup
	scripts/build-driver.sh stock

lib: $(LIB) $(B)/lib/pkgconfig/spyre.pc
# The op library's examples (libspyre/examples/matmul.c, decoder.c).
OPS_EXAMPLES := $(B)/bin/matmul $(B)/bin/decoder
tools: $(TOOLS) $(OPS_EXAMPLES)
tests: $(HOST_TESTS) $(VM_TESTS)

$(B)/obj/%.o: %.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -fPIC -fvisibility=hidden -c $< -o $@

$(B)/obj-san/%.o: %.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SAN) -fvisibility=hidden -c $< -o $@

$(LIB): $(LIB_OBJS) libspyre/libspyre.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=libspyre/libspyre.map \
		-Wl,--no-undefined $(LDFLAGS) -o $@ $(LIB_OBJS) $(PKG_LIBS)
	ln -sf libspyre.so.$(VERSION) $(B)/lib/$(SONAME)
	ln -sf $(SONAME) $(B)/lib/libspyre.so

# The public headers, as installed under include/spyre/: the runtime, the op
# library, the kernel-authoring API and the kernel image format it uses
# (include/spyre_program.h, the one copy the card's loader also reads), and
# the engine's status codes a failed kernel reports (spyre_engine_status.h).
PUBLIC_HDRS := libspyre/include/spyre/spyre.h libspyre/include/spyre/spyre_ops.h \
	libspyre/include/spyre/spyre_kernel_builder.h include/spyre_program.h \
	include/spyre_engine_status.h
STAGED_HDRS := $(addprefix $(B)/include/spyre/,$(notdir $(PUBLIC_HDRS)))

# In-tree, $(B) is laid out like an installed prefix: lib/, include/spyre/,
# lib/pkgconfig/spyre.pc, so PKG_CONFIG_PATH=$(B)/lib/pkgconfig works as the
# README says.
$(B)/include/spyre/%.h: libspyre/include/spyre/%.h
	@mkdir -p $(@D)
	install -m 644 $< $@
$(B)/include/spyre/spyre_program.h: include/spyre_program.h
	@mkdir -p $(@D)
	install -m 644 $< $@
$(B)/include/spyre/spyre_engine_status.h: include/spyre_engine_status.h
	@mkdir -p $(@D)
	install -m 644 $< $@

PC_SUBST = sed -e 's|@LIBDIR@|$(1)|' -e 's|@INCLUDEDIR@|$(2)|' -e 's|@VERSION@|$(VERSION)|'
$(B)/lib/pkgconfig/spyre.pc: libspyre/spyre.pc.in libspyre/include/spyre/spyre.h $(STAGED_HDRS)
	@mkdir -p $(@D)
	$(call PC_SUBST,$(abspath $(B))/lib,$(abspath $(B))/include) $< > $@

# make install [PREFIX=/usr/local] [DESTDIR=]: the library with its
# symlinks, the public headers, spyre.pc with the installed paths, the tools
# (spyre-smi ...), the sample programs under lib/spyre/examples, and the
# udev rule that gives Spyre accel nodes to group render (docs/packages.md).
.PHONY: install uninstall install-dkms-source deb
UDEVDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/udev,/etc/udev)
EXAMPLEDIR ?= $(PREFIX)/lib/spyre/examples
MANDIR ?= $(PREFIX)/share/man
MAN_PAGES := $(patsubst $(B)/bin/%,docs/man/%.1,$(filter $(B)/bin/spyre-%,$(TOOLS)))
INSTALL_TOOLS := $(filter $(B)/bin/spyre-%,$(TOOLS))
INSTALL_EXAMPLES := $(B)/bin/device_info $(B)/bin/vector_add $(B)/bin/bias_gelu $(OPS_EXAMPLES)
install: $(LIB) $(B)/lib/pkgconfig/spyre.pc tools
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/spyre $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(EXAMPLEDIR) $(DESTDIR)$(UDEVDIR)/rules.d $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/
	ln -sfn libspyre.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sfn $(SONAME) $(DESTDIR)$(LIBDIR)/libspyre.so
	install -m 644 $(PUBLIC_HDRS) $(DESTDIR)$(INCLUDEDIR)/spyre/
	$(call PC_SUBST,$(LIBDIR),$(INCLUDEDIR)) libspyre/spyre.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/spyre.pc
	install -m 755 $(INSTALL_TOOLS) $(DESTDIR)$(BINDIR)/
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man1/
	install -m 755 $(INSTALL_EXAMPLES) $(DESTDIR)$(EXAMPLEDIR)/
	install -m 644 packaging/70-spyre.rules $(DESTDIR)$(UDEVDIR)/rules.d/
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig; \
		udevadm control --reload 2>/dev/null || true; fi

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libspyre.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME) \
		$(DESTDIR)$(LIBDIR)/libspyre.so $(DESTDIR)$(LIBDIR)/pkgconfig/spyre.pc \
		$(addprefix $(DESTDIR)$(INCLUDEDIR)/spyre/,$(notdir $(PUBLIC_HDRS))) \
		$(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(INSTALL_TOOLS))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN_PAGES))) \
		$(addprefix $(DESTDIR)$(EXAMPLEDIR)/,$(notdir $(INSTALL_EXAMPLES))) \
		$(DESTDIR)$(UDEVDIR)/rules.d/70-spyre.rules
	-rmdir $(DESTDIR)$(INCLUDEDIR)/spyre $(DESTDIR)$(EXAMPLEDIR) 2>/dev/null
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig; fi

# The driver's sources as DKMS builds them: DKMS_SRC/{Kbuild,driver,include}.
DKMS_SRC ?= /usr/src/spyre-$(VERSION)
install-dkms-source:
	install -d $(DESTDIR)$(DKMS_SRC)/driver/tests $(DESTDIR)$(DKMS_SRC)/include/uapi/drm
	install -m 644 Kbuild $(DESTDIR)$(DKMS_SRC)/
	install -m 644 driver/Kbuild driver/*.c driver/*.h $(DESTDIR)$(DKMS_SRC)/driver/
	install -m 644 driver/tests/*.c $(DESTDIR)$(DKMS_SRC)/driver/tests/
	install -m 644 include/spyre_regs.h include/spyre_cmd.h $(DESTDIR)$(DKMS_SRC)/include/
	install -m 644 include/uapi/drm/spyre_accel.h $(DESTDIR)$(DKMS_SRC)/include/uapi/drm/

# Debian packages (docs/packages.md) into $(B)/deb: the sources staged with
# packaging/debian and a changelog carrying $(VERSION), built by
# dpkg-buildpackage, checked by lintian.
deb:
	scripts/build-deb.sh $(VERSION)

# python3-torch-spyre (docs/torch.md) into $(B)/deb-torch: torch_spyre built in
# a cached Debian 13 root with PyTorch 2.6, against make deb's libspyre.
.PHONY: torch
torch: deb
	scripts/build-torch-deb.sh $(VERSION)

# Programs in $(B)/bin find the library in $(B)/lib; a package build sets
# RPATH empty (the library is then where the system looks).
RPATH ?= -Wl,-rpath,'$$ORIGIN/../lib'
LINK_LIB = -L$(B)/lib -lspyre $(RPATH) $(LDFLAGS)

# spyre-smi: one file per concern under libspyre/tools/smi/.
SMI_SRCS := $(wildcard libspyre/tools/smi/*.c)
$(B)/bin/spyre-smi: $(SMI_SRCS) libspyre/tools/smi/smi.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SMI_SRCS) -o $@ $(LINK_LIB) -lm

# spyre-prof reads trace files only: plain C, no libspyre.
$(B)/bin/spyre-prof: libspyre/tools/spyre-prof.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $< -o $@ $(LDFLAGS)

$(OPS_EXAMPLES): $(B)/bin/%: libspyre/examples/%.c libspyre/include/spyre/spyre_ops.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $< -o $@ $(LINK_LIB) -lm

$(B)/bin/device_info: libspyre/examples/device_info.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $< -o $@ $(LINK_LIB)

# A kernel of one's own (docs/kernels.md), built as a user builds it: with
# the staged public headers that spyre.pc names, nothing from the tree.
$(B)/bin/bias_gelu: libspyre/examples/bias_gelu.c $(STAGED_HDRS) $(LIB)
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -g $(WARN) -I$(B)/include $< -o $@ $(LINK_LIB) -lm

$(B)/bin/vector_add: libspyre/examples/vector_add.c include/spyre_program_builder.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $< -o $@ $(LINK_LIB)

$(B)/tests/host/test_libspyre: tests/host/test_libspyre.c $(TEST_HDRS) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -Itests/lib -pthread $< -o $@ -L$(B)/lib -lspyre \
		-Wl,-rpath,'$$ORIGIN/../../lib'

# The same tests against the library built with ASan and UBSan.
$(B)/tests/host/test_libspyre_san: tests/host/test_libspyre.c $(TEST_HDRS) $(LIB_SAN_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SAN) -DSPYRE_TEST_INTERNALS -Ilibspyre -Itests/lib -pthread $< \
		$(LIB_SAN_OBJS) -o $@ $(PKG_LIBS)

# Kernel names and traces against the library's objects, read back by spyre-prof.
$(B)/tests/host/test_trace_san: tests/host/test_trace.c $(TEST_HDRS) $(LIB_SAN_OBJS) $(B)/bin/spyre-prof
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SAN) -Ilibspyre -Ilibspyre/ops -Itests/lib -pthread $< $(LIB_SAN_OBJS) \
		-o $@ $(PKG_LIBS)

$(B)/obj/qemu-device/engine/%.o: qemu-device/engine/%.c $(ENGINE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ENGINE_CFLAGS) -c $< -o $@

$(B)/obj-san/qemu-device/engine/%.o: qemu-device/engine/%.c $(ENGINE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ENGINE_CFLAGS) $(SAN) -c $< -o $@

$(B)/tests/host/test_engine_%: tests/host/test_engine_%.c $(ENGINE_TEST_HDRS) $(ENGINE_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ENGINE_CFLAGS) -Itests/lib -Itests/host $< $(ENGINE_OBJS) -o $@ -lm -pthread

# The same engine tests with ASan and UBSan, engine included.
$(B)/tests/host/test_engine_%_san: tests/host/test_engine_%.c $(ENGINE_TEST_HDRS) $(ENGINE_SAN_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ENGINE_CFLAGS) $(SAN) -Itests/lib -Itests/host $< $(ENGINE_SAN_OBJS) -o $@ -lm -pthread

OPS_TEST_FLAGS := $(CFLAGS_COMMON) -Iqemu-device/engine -Ilibspyre/ops -Itests/lib -Itests/host
$(B)/tests/host/test_ops: tests/host/test_ops.c $(ENGINE_TEST_HDRS) $(OPS_GEN_SRCS:%.c=$(B)/obj/%.o) \
		$(ENGINE_OBJS)
	@mkdir -p $(@D)
	$(CC) $(OPS_TEST_FLAGS) $< $(OPS_GEN_SRCS:%.c=$(B)/obj/%.o) $(ENGINE_OBJS) -o $@ -lm -pthread

$(B)/tests/host/test_ops_san: tests/host/test_ops.c $(ENGINE_TEST_HDRS) \
		$(OPS_GEN_SRCS:%.c=$(B)/obj-san/%.o) $(ENGINE_SAN_OBJS)
	@mkdir -p $(@D)
	$(CC) $(OPS_TEST_FLAGS) $(SAN) $< $(OPS_GEN_SRCS:%.c=$(B)/obj-san/%.o) $(ENGINE_SAN_OBJS) \
		-o $@ -lm -pthread

# The kernel-authoring API against the card's own loader and engine.
KB_TEST_FLAGS := -Itests/lib -Iqemu-device/engine -I$(B)/include
$(B)/tests/host/test_kernel_builder: tests/host/test_kernel_builder.c $(TEST_HDRS) $(STAGED_HDRS) \
		$(ENGINE_OBJS) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(KB_TEST_FLAGS) $< $(ENGINE_OBJS) -o $@ -L$(B)/lib -lspyre \
		-Wl,-rpath,'$$ORIGIN/../../lib' -lm -pthread

$(B)/tests/host/test_kernel_builder_san: tests/host/test_kernel_builder.c $(TEST_HDRS) \
		$(STAGED_HDRS) $(ENGINE_SAN_OBJS) $(LIB_SAN_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SAN) $(KB_TEST_FLAGS) $< $(ENGINE_SAN_OBJS) $(LIB_SAN_OBJS) -o $@ \
		$(PKG_LIBS) -lm -pthread

# The corpus replay also links the fuzz target's one-input function.
FUZZ_ONE := tests/fuzz/fuzz_engine_loader.c tests/fuzz/fuzz_engine_loader.h
$(B)/tests/host/test_engine_corpus: tests/host/test_engine_corpus.c $(FUZZ_ONE) $(ENGINE_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ENGINE_CFLAGS) -D_DEFAULT_SOURCE -Itests/fuzz $< tests/fuzz/fuzz_engine_loader.c \
		$(ENGINE_OBJS) -o $@ -lm

$(B)/tests/host/test_engine_corpus_san: tests/host/test_engine_corpus.c $(FUZZ_ONE) $(ENGINE_SAN_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ENGINE_CFLAGS) $(SAN) -D_DEFAULT_SOURCE -Itests/fuzz $< tests/fuzz/fuzz_engine_loader.c \
		$(ENGINE_SAN_OBJS) -o $@ -lm

# Fuzzing the engine's loader with libFuzzer (clang): `make fuzz-engine` runs it
# for FUZZ_SECONDS and merges what it found into tests/fuzz/corpus;
# `make fuzz-seeds` rewrites the seed programs.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
$(B)/fuzz/fuzz_engine_loader: $(FUZZ_ONE) $(ENGINE_SRCS) $(ENGINE_HDRS)
	@mkdir -p $(@D)
	scripts/setup.sh --fuzz
	$(FUZZ_CC) $(ENGINE_CFLAGS) -O1 -DFUZZ_LIBFUZZER -Itests/fuzz \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		tests/fuzz/fuzz_engine_loader.c $(ENGINE_SRCS) -o $@ -lm

$(B)/fuzz/make-seeds: tests/fuzz/make-seeds.c include/spyre_program_builder.h
	@mkdir -p $(@D)
	$(CC) $(ENGINE_CFLAGS) -Itests/host $< -o $@

fuzz-seeds: $(B)/fuzz/make-seeds
	$< tests/fuzz/corpus

# `make fuzz` runs both fuzzers, each for FUZZ_SECONDS: the engine's loader
# (fuzz-engine) and the driver's ioctls in the debug guest (fuzz-driver).
.PHONY: fuzz fuzz-engine
fuzz: fuzz-engine fuzz-driver

fuzz-engine: $(B)/fuzz/fuzz_engine_loader
	@mkdir -p $(B)/fuzz/found
	$< -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 $(B)/fuzz/found tests/fuzz/corpus
	$< -merge=1 tests/fuzz/corpus $(B)/fuzz/found

# spyre-smi's fdinfo reading (libspyre/tools/smi/fdinfo.c) on a fixture /proc, with ASan and UBSan.
$(B)/tests/host/test_smi_fdinfo: tests/host/test_smi_fdinfo.c libspyre/tools/smi/fdinfo.c \
		libspyre/tools/smi/smi.h $(TEST_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SAN) -Ilibspyre/tools/smi -Itests/lib $< libspyre/tools/smi/fdinfo.c -o $@

# The vm suite's spyre-smi helper: a busy process, a JSON checker.
$(B)/tests/vm/smi_helper: tests/vm/smi_helper.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $< -o $@ $(LINK_LIB)

$(B)/tests/vm/test_query: tests/vm/test_query.c $(TEST_HDRS) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -Itests/lib $< -o $@ $(LINK_LIB)

# Eight cards and peer copies between them (scripts/check.sh eight_card_suite).
$(B)/tests/vm/test_peer: tests/vm/test_peer.c $(TEST_HDRS) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -Itests/lib $< -o $@ $(LINK_LIB)

$(B)/tests/vm/test_runtime: tests/vm/test_runtime.c $(TEST_HDRS) include/spyre_program_builder.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -Itests/lib -pthread $< -o $@ $(LINK_LIB)

$(B)/tests/vm/test_clock: tests/vm/test_clock.c $(TEST_HDRS) include/spyre_program_builder.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -Itests/lib $< -o $@ $(LINK_LIB)

$(B)/tests/vm/test_errors: tests/vm/test_errors.c $(TEST_HDRS) include/spyre_program_builder.h \
	tests/vm/spyre_vm.h tests/lib/broken_kernels.h include/spyre_engine_status.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -Itests/lib $< -o $@ $(LINK_LIB)

$(B)/tests/vm/test_unmap: tests/vm/test_unmap.c $(TEST_HDRS) tests/vm/spyre_vm.h \
	include/spyre_program_builder.h include/uapi/drm/spyre_accel.h include/spyre_cmd.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -Itests/lib -pthread $< -o $@

$(B)/tests/vm/runtime_bench: tests/vm/test_runtime_bench.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $< -o $@ $(LINK_LIB)

$(B)/tests/vm/test_ops: tests/vm/test_ops.c $(TEST_HDRS) libspyre/include/spyre/spyre_ops.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -Itests/lib -pthread $< -o $@ $(LINK_LIB) -lm

$(B)/tests/vm/test_trace: tests/vm/test_trace.c $(TEST_HDRS) libspyre/include/spyre/spyre_ops.h \
		libspyre/include/spyre/spyre_kernel_builder.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -Itests/lib $< -o $@ $(LINK_LIB)

$(B)/tests/vm/test_%: tests/vm/test_%.c $(TEST_HDRS) tests/vm/spyre_vm.h include/uapi/drm/spyre_accel.h \
	include/spyre_cmd.h tests/lib/compute_kernel.h include/spyre_program_builder.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -Itests/lib $< -o $@

$(B)/tests/vm/bench_null_job: tests/vm/bench_null_job.c tests/vm/spyre_vm.h include/uapi/drm/spyre_accel.h \
	include/spyre_cmd.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $< -o $@

$(B)/tests/vm/fuzz_ioctl: tests/vm/fuzz_ioctl.c include/uapi/drm/spyre_accel.h include/spyre_regs.h \
	include/spyre_cmd.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -pthread $< -o $@

# The driver's ioctls under a seeded random and mutating fuzzer, in the
# debug-kernel guest (KASAN, lockdep, kmemleak), then a kernel-log scan.
# Two runs of FUZZ_SECONDS (default 300 here) each with FUZZ_SEED (default 1):
# two single-threaded workers, then two workers of FUZZ_THREADS (default 4)
# threads racing on shared files.
FUZZ_SEED ?= 1
FUZZ_THREADS ?= 4
DRIVER_FUZZ_SECONDS := $(if $(filter command line environment,$(origin FUZZ_SECONDS)),$(FUZZ_SECONDS),300)
.PHONY: fuzz-driver
fuzz-driver: debug
	scripts/vm-run.sh --kernel debug --mem-size 3G --timeout $$(( 2 * $(DRIVER_FUZZ_SECONDS) + 600 )) -- \
		'modprobe spyre || exit 1; \
		 /usr/share/spyre/tests/fuzz_ioctl $(FUZZ_SEED) $(DRIVER_FUZZ_SECONDS); rc=$$?; \
		 /usr/share/spyre/tests/fuzz_ioctl $(FUZZ_SEED) $(DRIVER_FUZZ_SECONDS) 2 $(FUZZ_THREADS) || rc=1; \
		 dmesg | /usr/share/spyre/tests/dmesg-check.sh || rc=1; exit $$rc'

# Engine host speed (1024^3 fp16 matmul kernel against OpenBLAS sgemm, run
# as a child process) and the timing model's published cases.
$(B)/bench/engine-bench: tests/bench/engine-bench.c $(ENGINE_TEST_HDRS) $(ENGINE_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ENGINE_CFLAGS) -D_DEFAULT_SOURCE -Itests/host $< $(ENGINE_OBJS) -o $@ -lm -pthread

$(B)/bench/openblas-ref: tests/bench/openblas-ref.c
	@mkdir -p $(@D)
	$(CC) $(ENGINE_CFLAGS) -D_DEFAULT_SOURCE $(shell pkg-config --cflags openblas) $< -o $@ \
		$(shell pkg-config --libs openblas)

$(B)/bench/model-bench: tests/bench/model-bench.c $(ENGINE_TEST_HDRS) $(ENGINE_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ENGINE_CFLAGS) -D_DEFAULT_SOURCE -Itests/host $< $(ENGINE_OBJS) -o $@ -lm -pthread

# Host cost of emulating the decoder example's kernels (op library + engine).
$(B)/bench/ops-bench: tests/bench/ops-bench.c tests/bench/qtest-card.c tests/bench/qtest-card.h \
		include/spyre_cmd.h $(ENGINE_TEST_HDRS) $(OPS_GEN_SRCS:%.c=$(B)/obj/%.o) $(ENGINE_OBJS)
	@mkdir -p $(@D)
	$(CC) $(OPS_TEST_FLAGS) -Itests/bench $< tests/bench/qtest-card.c \
		$(OPS_GEN_SRCS:%.c=$(B)/obj/%.o) $(ENGINE_OBJS) -o $@ -lm -pthread

$(B)/bench/launch-bench: tests/bench/launch-bench.c tests/bench/qtest-card.c \
		tests/bench/qtest-card.h include/spyre_cmd.h $(ENGINE_TEST_HDRS) $(ENGINE_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ENGINE_CFLAGS) -D_DEFAULT_SOURCE -Itests/host -Itests/bench $< \
		tests/bench/qtest-card.c $(ENGINE_OBJS) -o $@ -lm -pthread

$(B)/bench/dma-bench: tests/bench/dma-bench.c tests/bench/qtest-card.c tests/bench/qtest-card.h \
		include/spyre_regs.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -Itests/bench $< tests/bench/qtest-card.c -o $@

$(B)/tests/vm/%.sh: tests/vm/%.sh
	@mkdir -p $(@D)
	install -m 755 $< $@

initramfs: driver lib tools tests
	scripts/build-initramfs.sh stock

# The debug kernel (KUnit, KASAN, lockdep, kmemleak), the driver built
# against it, and its guest.
debug: setup lib tools tests
	scripts/build-debug-kernel.sh
	scripts/build-driver.sh debug
	scripts/build-initramfs.sh debug

run: all
	@scripts/run-demo.sh

# The benchmarks are built by make check too, so a change that breaks one
# fails there rather than at the next make bench.
BENCH_BINS := $(B)/bench/dma-bench $(B)/bench/engine-bench $(B)/bench/openblas-ref \
	$(B)/bench/model-bench $(B)/bench/ops-bench $(B)/bench/launch-bench

check: all debug qtest deb torch $(BENCH_BINS)
	@scripts/check.sh

# Benchmarks: a table on stdout, results in build/bench/results.json.
bench: all torch $(BENCH_BINS)
	@scripts/bench.sh

# The guest shell starts in this directory, shared from the host.
shell: all
	scripts/vm-run.sh --shell --share $(CURDIR) --workdir $(CURDIR)

shell-debug: all debug
	scripts/vm-run.sh --kernel debug --shell --share $(CURDIR) --workdir $(CURDIR)

# The Debian 13 guest (systemd, udev, Debian's kernel and headers, DKMS):
# its disk image, kernel and initrd, cached in $SPYRE_CACHE/debian-guest-<key>
# (needs root); scripts/distro-run.sh boots it and runs a command.
.PHONY: debian-guest
debian-guest:
	scripts/build-debian-guest.sh

clean:
	rm -rf $(B)
