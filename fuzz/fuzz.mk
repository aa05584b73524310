# libFuzzer harnesses (fuzz/fuzz_*.c), included by the Makefile. libkiln is compiled
# again by clang with coverage and ASan/UBSan into build/fuzz/libkiln-fuzz.a.
#   make fuzz [FUZZ_SECONDS=600] [FUZZ=pattern]   each harness for FUZZ_SECONDS, one at a time
#   make fuzz-smoke                                ~60 s in all, and every kept crash input
FUZZ_CC      ?= clang
FUZZ_CXX     ?= clang++
FUZZ_SECONDS ?= 600
FUZZ         ?=
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $(FUZZ_SAN) -std=c11 \
	-D_GNU_SOURCE -Isrc -I$(BUILD)/gen -Ifuzz $(PKG_CFLAGS) -include src/util/banned.h -w
FUZZ_HARNESS := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_BINS    := $(FUZZ_HARNESS:fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_OBJS    := $(LIB_SRCS:%.c=$(BUILD)/fuzz/obj/%.o) $(CXX_SRCS:%.cc=$(BUILD)/fuzz/obj/%.o) \
	$(PROTO_C:$(BUILD)/gen/%.c=$(BUILD)/fuzz/obj/gen/%.o) $(BUILD)/obj/assets.o

.PHONY: fuzz fuzz-smoke fuzz-build
$(BUILD)/fuzz/obj/%.o: %.c $(PROTO_C)
	@mkdir -p $(dir $@)
	@echo "  CC-FUZZ $<"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<
$(BUILD)/fuzz/obj/%.o: %.cc
	@mkdir -p $(dir $@)
	@echo "  CXX-FUZZ $<"
	$(Q)$(FUZZ_CXX) -O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN) -std=c++17 -Isrc $(PKG_CFLAGS) -w -c -o $@ $<
$(BUILD)/fuzz/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) -O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN) -I$(BUILD)/gen $(PKG_CFLAGS) -w -c -o $@ $<
$(BUILD)/fuzz/libkiln-fuzz.a: $(FUZZ_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^
$(BUILD)/fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz.h $(BUILD)/fuzz/libkiln-fuzz.a
	@echo "  FUZZ-LD $@"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@.o $<
	$(Q)$(FUZZ_CXX) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $@.o $(BUILD)/fuzz/libkiln-fuzz.a $(LDLIBS)

fuzz-build: $(FUZZ_BINS)
fuzz: $(FUZZ_BINS)
	$(Q)FUZZ_SECONDS=$(FUZZ_SECONDS) ./fuzz/run.sh $(if $(FUZZ),--only $(FUZZ)) $(FUZZ_BINS)
fuzz-smoke: $(FUZZ_BINS)
	$(Q)./fuzz/run.sh --smoke $(FUZZ_BINS)
