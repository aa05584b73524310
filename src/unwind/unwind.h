/* Native user-stack unwinding for --perf-mode dwarf and smart.
 *
 * The sampler hands over what PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER carried:
 * the user registers at the sample and a copy of the stack from SP upwards. The unwinder
 * walks it with each binary's call-frame information (.eh_frame, .debug_frame, also from
 * separate debug files), compiled lazily into a compact table and cached: a binary's FDEs
 * are listed when it is first met, each FDE's rows compiled the first time a sample
 * needs them. It falls back to frame pointers where a binary has no CFI (JIT code,
 * perf-map regions).
 *
 * The unwinder asks the caller for the mapping of each pc (the process table owns them). */
#ifndef KILN_UNWIND_UNWIND_H
#define KILN_UNWIND_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/mapping.h"

/* x86_64 user registers the unwinder needs (PERF_REG_X86_IP, SP, BP). */
struct unwind_regs {
	uint64_t ip, sp, bp;
};

/* The sample as the kernel gave it. */
struct unwind_sample {
	struct unwind_regs regs;
	const uint8_t *stack;	/* copy of [regs.sp, regs.sp + stack_len) */
	size_t stack_len;	/* dyn_size: bytes actually copied */
};

/* Returns the mapping that holds addr in the sampled process, or NULL. */
typedef const struct mapping *(*unwind_find_mapping_fn)(void *ctx, uint64_t addr);

/* UNWIND_DWARF: CFI for every binary that has it; frame pointers only for code without
 * any CFI (JIT and anonymous memory, binaries built without unwind tables).
 * UNWIND_SMART: frame pointers for the callers in binaries that keep them
 * (-fno-omit-frame-pointer builds; only the FDEs of their leaf frames are compiled), CFI
 * for the others and for every leaf frame, and frame pointers wherever CFI is missing or
 * unsupported; one stack may mix both.
 * Both modes unwind Go code by its .gopclntab SP deltas (pcsp), never its debug info. */
enum unwind_mode { UNWIND_DWARF, UNWIND_SMART };

struct unwinder;

/* cache_bytes bounds the memory of unwind tables and of the CFI kept open to compile them
 * (0 picks 32 MiB); a binary's FDEs are listed when it is first met in a sample (about a
 * millisecond for libc), an FDE is compiled when a sample first needs it (microseconds),
 * and tables are evicted least-recently-used. Not thread-safe: one unwinder per thread.
 * Never fails (allocation failure aborts). */
struct unwinder *unwinder__new(enum unwind_mode mode, uint64_t cache_bytes);
void unwinder__free(struct unwinder *u);	/* accepts NULL */

/* Bytes held by the unwinder and its cached tables, for the session header and tests. */
uint64_t unwinder__memory(const struct unwinder *u);

/* Unwinds one sample of process p. Writes up to max return addresses, leaf first (pcs[0]
 * is regs.ip), into pcs: symbolize pcs[i] - 1 for i >= 1 (a call may end a function).
 * find is asked for the mapping of each pc; the binaries are read through /proc/<pid>
 * (map_files, root) the first time they are met. Returns the number written (>= 1), or
 * -EINVAL for a NULL argument or max < 1. *truncated is set when the walk stopped before
 * the outermost frame (_start, a thread's clone, rbp == 0 at the end of a frame-pointer
 * chain): the stack copy ended, max was reached, or a frame could not be unwound. The
 * stack copy is untrusted: garbage yields a short stack, never a crash. One read of the
 * process's memory is made, with process_vm_readv, where a Go cgo call's C frames lead
 * out of the copy (the g0 stack) into the calling goroutine's stack (at most 64 KiB). */
int unwinder__unwind(struct unwinder *u, const struct proc_ref *p,
		     const struct unwind_sample *sample, unwind_find_mapping_fn find, void *ctx,
		     uint64_t *pcs, int max, bool *truncated);

#endif
