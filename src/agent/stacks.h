/* The session's raw stack table: address stacks counted as they are sampled, symbolized
 * once per unique stack when the session ends (DESIGN: aggregate before you symbolize).
 *
 * A stack is keyed by its process, address space, process name, kernel pcs, user pcs with
 * the mappings that held them, and runtime frames. Pointers in the key (process, address
 * space, mappings, runtime state) must stay valid until stacks__symbolize() has run: the
 * process table keeps them until it is reaped. Not thread-safe. */
#ifndef KILN_AGENT_STACKS_H
#define KILN_AGENT_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/proctab.h"
#include "profile/profile.h"
#include "runtimes/runtime.h"
#include "symbols/symbolizer.h"

#define STACKS_MAX_FRAMES 256	/* per part (kernel, user, runtime) */

struct stack_sample {
	struct proc *proc;
	const struct proc_mm *mm;
	const char *comm;			/* up to 16 bytes are kept */
	const uint64_t *kernel_ips;		/* leaf first */
	uint32_t nr_kernel;
	const uint64_t *user_ips;		/* leaf first; [0] is the sampled ip */
	const struct mapping *const *user_maps;	/* the mapping of each, or NULL */
	uint32_t nr_user;
	const struct runtime_ops *rt_ops;	/* NULL when no runtime frames */
	struct runtime_proc *rt;
	const struct rt_frame *rt_frames;	/* root first */
	uint32_t nr_rt;
	bool truncated;				/* the native unwind stopped early */
	pid_t tid;				/* nonzero: counted apart per thread, for
						 * stacks__take_threads(): a process a
						 * replace-kind runtime covers */
};

struct stacks;

struct stacks *stacks__new(void);
/* Frees the table. Accepts NULL. */
void stacks__free(struct stacks *st);

/* Counts one sample. Parts longer than STACKS_MAX_FRAMES are cut on the root side. */
void stacks__add(struct stacks *st, const struct stack_sample *s);

/* Unique stacks and samples counted since the last clear. */
size_t stacks__unique(const struct stacks *st);
uint64_t stacks__samples(const struct stacks *st);

/* Symbolizes every stack once and adds it to p in gProfiler's layout: app-metadata index
 * "0", container, process name, "[Profiling skipped: reason]" when a runtime reader gave
 * one, then the frames root first; kernel frames end in "_[k]"; runtime frames are
 * interleaved at the runtime's interpreter frames (runtimes/runtime.h). Frame names are
 * sanitized for the .col format. Adds each container seen to the JSON array containers
 * (when not NULL) once. */
void stacks__symbolize(struct stacks *st, struct symbolizer *sym, struct profile *p,
		       json_t *containers);

/* Removes the stacks of host process pid that were counted with a tid for which
 * match(ctx, tid) is true, and returns how many samples they held: the threads whose
 * stacks a replace-kind runtime covers (runtimes/runtime.h), replaced by its own. */
uint64_t stacks__take_threads(struct stacks *st, pid_t pid,
			      bool (*match)(const void *ctx, pid_t tid), const void *ctx);

/* Forgets every stack (after symbolizing). */
void stacks__clear(struct stacks *st);

#endif
