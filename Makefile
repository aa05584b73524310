# kiln — one non-recursive Makefile. Quiet unless V=1.
#   make            install deps, build build/kiln (and build/libkiln-jvm.so when a JDK is present)
#   make run        install deps, build, profile this machine
#   make test       install deps, build, run unit tests (ASan/UBSan) and end-to-end tests
#   make unit       unit tests only;  make e2e [E2E=pattern]  end-to-end tests only
#   make bpf        BPF programs and their skeletons only (needs clang and bpftool)
#   make fuzz       libFuzzer harnesses, FUZZ_SECONDS each;  make fuzz-smoke  a minute in all

CC      ?= cc
V       ?= 0
Q       := $(if $(filter 1,$(V)),,@)
BUILD   := build
PKGS    := libelf libdw libdebuginfod liblzma zlib jansson libcurl libmicrohttpd sqlite3 libprotobuf-c libxxhash libbpf re2 libnghttp2 gnutls libwebsockets
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN    := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter -Wstrict-prototypes -Wmissing-prototypes
CFLAGS_COMMON := -std=c11 -D_GNU_SOURCE -g -fno-omit-frame-pointer $(WARN) -Isrc -I$(BUILD)/gen $(PKG_CFLAGS) -include src/util/banned.h
CFLAGS  ?= -O2
SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all
LDLIBS  := $(PKG_LIBS) -lstdc++ -lpthread -lm

# Every .c under src/ is part of libkiln except main.c, the JVM agent, the node module and
# BPF programs.
LIB_SRCS := $(sort $(shell find src -name '*.c' ! -name '*.bpf.c' ! -path 'src/jvm/*' ! -path 'src/nodeperf/*' ! -path 'src/main.c'))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/assets.o
SAN_OBJS := $(LIB_SRCS:%.c=$(BUILD)/san/%.o) $(BUILD)/san/assets.o
# C++ only where a library has no C interface (util/re.cc: RE2), behind a C header.
CXX_SRCS := $(sort $(shell find src -name '*.cc' ! -path 'src/nodeperf/*'))
LIB_OBJS += $(CXX_SRCS:%.cc=$(BUILD)/obj/%.o)
SAN_OBJS += $(CXX_SRCS:%.cc=$(BUILD)/san/%.o)
CXXFLAGS_COMMON := -std=c++17 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -Wno-unused-parameter -Isrc $(PKG_CFLAGS)
UI_FILES := $(sort $(wildcard src/ui/*.js src/ui/*.css src/ui/*.html))
PROTO    := $(wildcard src/format/*.proto)
PROTO_C  := $(PROTO:src/format/%.proto=$(BUILD)/gen/%.pb-c.c)
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
NODE_INCLUDE ?= /usr/include/node	# node_api.h, for libkiln-nodeperf.so (see scripts/deps/node.txt)
JAVA_HOME ?= $(shell dirname $$(dirname $$(readlink -f $$(command -v javac 2>/dev/null) 2>/dev/null)) 2>/dev/null)

.PHONY: all run test unit e2e deps clean bench
# From nothing: these goals install the Debian packages first, then run again as a sub-make,
# whose PKG_CFLAGS and PKG_LIBS are read once pkg-config and the -dev packages are there.
ifndef KILN_DEPS_DONE
.NOTPARALLEL:	# one sub-make at a time (`make -j2 unit e2e`); each one still builds with -j
all run test unit e2e: deps
	$(Q)$(MAKE) --no-print-directory KILN_DEPS_DONE=1 $@
else
all: $(BUILD)/kiln $(if $(wildcard src/jvm/*.c),$(BUILD)/libkiln-jvm.so) \
	$(if $(wildcard $(NODE_INCLUDE)/node_api.h),$(BUILD)/libkiln-nodeperf.so)
endif

deps:
	$(Q)./scripts/install-deps.sh

# `make -s print-LDLIBS`: a variable's value, for the bench programs linked against libkiln
print-%:
	@echo $($*)

$(BUILD)/kiln: $(BUILD)/obj/src/main.o $(BUILD)/libkiln.a
	@echo "  LD      $@"
	$(Q)$(CC) -o $@ $^ $(LDLIBS)

# The same program under ASan/UBSan, for running the e2e tests against it:
# `make build/kiln-san && KILN_BIN=$PWD/build/kiln-san make e2e E2E=server_`.
$(BUILD)/kiln-san: $(BUILD)/san/src/main.o $(BUILD)/libkiln-san.a
	@echo "  LD-SAN  $@"
	$(Q)$(CC) $(SAN) -o $@ $^ $(LDLIBS)

$(BUILD)/libkiln.a: $(LIB_OBJS) $(PROTO_C:%.c=%.o)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/libkiln-san.a: $(SAN_OBJS) $(PROTO_C:%.c=%.san.o)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/obj/%.o: %.c $(PROTO_C)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(CFLAGS_COMMON) -MMD -MP -c -o $@ $<

$(BUILD)/san/%.o: %.c $(PROTO_C)
	@mkdir -p $(dir $@)
	@echo "  CC-SAN  $<"
	$(Q)$(CC) -O1 $(SAN) $(CFLAGS_COMMON) -MMD -MP -c -o $@ $<

$(BUILD)/obj/%.o: %.cc
	@mkdir -p $(dir $@)
	@echo "  CXX     $<"
	$(Q)$(CXX) -O2 $(CXXFLAGS_COMMON) -MMD -MP -c -o $@ $<

$(BUILD)/san/%.o: %.cc
	@mkdir -p $(dir $@)
	@echo "  CXX-SAN $<"
	$(Q)$(CXX) -O1 $(SAN) $(CXXFLAGS_COMMON) -MMD -MP -c -o $@ $<

# pprof and other protobuf schemas, compiled by protoc-c (kept: they are not intermediate)
.SECONDARY: $(PROTO_C)
$(BUILD)/gen/%.pb-c.c: src/format/%.proto
	@mkdir -p $(dir $@)
	@echo "  PROTOC  $<"
	$(Q)protoc-c --proto_path=src/format --c_out=$(BUILD)/gen $<
$(BUILD)/gen/%.pb-c.o: $(BUILD)/gen/%.pb-c.c
	$(Q)$(CC) -O2 -g -I$(BUILD)/gen $(PKG_CFLAGS) -c -o $@ $<
$(BUILD)/gen/%.pb-c.san.o: $(BUILD)/gen/%.pb-c.c
	$(Q)$(CC) -O1 -g $(SAN) -I$(BUILD)/gen $(PKG_CFLAGS) -c -o $@ $<

# UI assets (flamegraph renderer, web UI) are linked into the binary: see src/ui/assets.h
$(BUILD)/gen/assets.S: $(UI_FILES) scripts/gen-assets.sh
	@mkdir -p $(dir $@)
	$(Q)./scripts/gen-assets.sh $@ $(UI_FILES)
$(BUILD)/obj/assets.o: $(BUILD)/gen/assets.S
	@mkdir -p $(dir $@)
	$(Q)$(CC) -c -o $@ $<
$(BUILD)/san/assets.o: $(BUILD)/gen/assets.S
	@mkdir -p $(dir $@)
	$(Q)$(CC) -c -o $@ $<

# BPF programs: src/D/N.bpf.c is compiled by clang for the BPF target against the running
# kernel's types (build/gen/vmlinux.h, dumped from its BTF by bpftool) into
# build/gen/D/N.bpf.o, which bpftool wraps into the libbpf skeleton build/gen/D/N.skel.h
# (struct N_bpf, N_bpf__open/load/attach/destroy; include it as "D/N.skel.h"). They are not
# part of libkiln: a target that includes a skeleton lists it as a prerequisite.
CLANG    ?= clang
BPFTOOL  ?= bpftool
BPF_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' -e 's/ppc64le/powerpc/')
BPF_SRCS := $(sort $(shell find src -name '*.bpf.c'))
BPF_SKELS := $(BPF_SRCS:src/%.bpf.c=$(BUILD)/gen/%.skel.h)
.SECONDARY: $(BPF_SRCS:src/%.bpf.c=$(BUILD)/gen/%.bpf.o)
.PHONY: bpf
bpf: $(BPF_SKELS)
need-tool = command -v $(1) >/dev/null 2>&1 || { echo "error: '$(1)' not found: building $@ needs it ($(2), see scripts/deps/build.txt)" >&2; exit 1; }

$(BUILD)/gen/vmlinux.h:
	@$(call need-tool,$(BPFTOOL),bpftool)
	@test -r /sys/kernel/btf/vmlinux || { echo "error: '/sys/kernel/btf/vmlinux' is not readable: building $@ needs a kernel with BTF (CONFIG_DEBUG_INFO_BTF=y)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@
$(BUILD)/gen/%.bpf.o: src/%.bpf.c $(BUILD)/gen/vmlinux.h
	@$(call need-tool,$(CLANG),clang)
	@mkdir -p $(dir $@)
	@echo "  BPF     $<"
	$(Q)$(CLANG) -target bpf -g -O2 -Wall -Werror -D__TARGET_ARCH_$(BPF_ARCH) -I$(BUILD)/gen -MMD -MP -c -o $@ $<
$(BUILD)/gen/%.skel.h: $(BUILD)/gen/%.bpf.o
	@$(call need-tool,$(BPFTOOL),bpftool)
	@echo "  SKEL    $@"
	$(Q)$(BPFTOOL) gen skeleton $< name $(notdir $*)_bpf > $@.tmp && mv $@.tmp $@
$(BUILD)/tests/test_bpf_probe: $(BUILD)/gen/bpf/probe.skel.h

# The JVMTI agent is a separate shared library loaded into target JVMs.
$(BUILD)/libkiln-jvm.so: $(wildcard src/jvm/*.c src/jvm/*.h)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -fPIC -shared $(WARN) -isystem $(JAVA_HOME)/include -isystem $(JAVA_HOME)/include/linux \
		-o $@ $(filter %.c,$^) -lpthread -ldl

# The N-API module --nodejs-mode attach-maps loads into running node processes (C; it
# reaches V8's C++ API through dlsym), built when node's headers are there.
$(BUILD)/libkiln-nodeperf.so: $(wildcard src/nodeperf/*.c src/nodeperf/*.h src/nodeperf/*.cc)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CXX) -std=c++17 -fsyntax-only -Wall -Werror -isystem $(NODE_INCLUDE) src/nodeperf/layout_check.cc
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -fPIC -shared $(WARN) -isystem $(NODE_INCLUDE) \
		-o $@ $(filter %.c,$^) -lpthread -ldl

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libkiln-san.a
	@mkdir -p $(dir $@)
	@echo "  CC-TEST $<"
	$(Q)$(CC) -O1 $(SAN) $(CFLAGS_COMMON) -Itests/unit -o $@ $< $(BUILD)/libkiln-san.a $(LDLIBS) -lcmocka

ifdef KILN_DEPS_DONE
run: all
	$(Q)./scripts/run.sh

unit: $(UNIT_BINS)
	$(Q)./tests/run-unit.sh $(UNIT_BINS)

e2e: all
	$(Q)./tests/run-e2e.sh $(E2E)

test: all $(UNIT_BINS)
	$(Q)./tests/run-all.sh $(UNIT_BINS)
endif

include fuzz/fuzz.mk

# --one-file-system: never into what a tests/fresh/run.sh chroot (build/fresh) has mounted
clean:
	rm -rf --one-file-system $(BUILD)

-include $(shell find $(BUILD) -path $(BUILD)/fresh -prune -o -name '*.d' -type f -print 2>/dev/null)
