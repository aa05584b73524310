// Compile-time check (make runs it with -fsyntax-only before it builds
// libkiln-nodeperf.so, never links it) that struct jit_event in nodeperf.c matches
// v8::JitCodeEvent of the node headers installed (NODE_INCLUDE): a node whose V8 lays the
// event out otherwise breaks the build rather than the target.
#include <cstddef>

#include <v8-callbacks.h>

static_assert(offsetof(v8::JitCodeEvent, type) == 0, "type");
static_assert(offsetof(v8::JitCodeEvent, code_type) == 4, "code_type");
static_assert(offsetof(v8::JitCodeEvent, code_start) == 8, "code_start");
static_assert(offsetof(v8::JitCodeEvent, code_len) == 16, "code_len");
static_assert(offsetof(v8::JitCodeEvent, name) == 48, "name");
static_assert(offsetof(v8::JitCodeEvent, new_code_start) == 48, "new_code_start");
static_assert(offsetof(v8::JitCodeEvent, isolate) == 72, "isolate");
static_assert(sizeof(v8::JitCodeEvent) == 80, "size");
static_assert(v8::JitCodeEvent::CODE_ADDED == 0 && v8::JitCodeEvent::CODE_MOVED == 1, "types");
static_assert(v8::JitCodeEvent::BYTE_CODE == 0, "code types");
static_assert(v8::kJitCodeEventEnumExisting == 1, "options");
