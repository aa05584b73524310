/* The contract of a runtime reader (Python, Ruby, PHP, ...): how the agent gets the frames
 * of an interpreted or JIT-compiled language for a sample, and where they go in the stack.
 *
 * A reader is consulted in the sampler thread, at the moment of the sample, so it must be
 * fast and bounded in time; it captures compact frames (rt_frame: ids the reader
 * understands) and caches whatever it needs to name them, because the process may be gone
 * when the session ends and the agent symbolizes. Naming must not read the process again.
 *
 * Merging: a runtime's frames are interleaved into the native stack at the native frames
 * that run the interpreter (interp_symbols, e.g. _PyEval_EvalFrameDefault): each such
 * activation is followed by the runtime frames it runs, marked by RT_FRAME_ENTRY on the
 * outermost frame of each activation. When the native stack has no such frame (perf-mode
 * fp stopped early, or none) the runtime frames go right after the process name. */
#ifndef KILN_RUNTIMES_RUNTIME_H
#define KILN_RUNTIMES_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbols/mapping.h"
#include "util/strbuf.h"

#define RT_FRAME_ENTRY 0x1	/* first (outermost) frame of one interpreter activation */
#define RT_FRAME_TRUNCATED 0x2	/* the read stopped here: the stack above is incomplete */

/* One runtime frame, opaque to the agent: e.g. a code object address and a line. */
struct rt_frame {
	uint64_t id;
	uint32_t aux;
	uint32_t flags;
};

struct runtime_proc;	/* a reader's state for one process */

struct runtime_ops {
	const char *name;			/* "python" */
	const char *const *interp_symbols;	/* NULL-terminated native merge points */
	/* Returns the reader's state for process p when it runs this runtime, NULL when it
	 * does not. On a process it recognizes but cannot profile, returns NULL and writes a
	 * reason ("unsupported CPython 3.5") into skip_reason (size 128). */
	struct runtime_proc *(*attach)(const struct proc_ref *p, char *skip_reason);
	/* Whether a process that maps file path (an executable mapping) probably runs this
	 * runtime: a cheap test by name, so that runtimes already running when the agent
	 * starts are attached at once rather than at their first sample. */
	bool (*likely)(const char *path);
	/* Captures the frames of thread tid (host tid), root first, into frames[0..max).
	 * Returns the number written (0: the thread runs no runtime code now), or a negative
	 * errno. Never blocks; gives up with RT_FRAME_TRUNCATED rather than read too long. */
	int (*sample)(struct runtime_proc *rp, pid_t tid, struct rt_frame *frames, int max);
	/* Appends the annotated name of f ("alpha (app.py:12)_[p]") to out, from caches only. */
	void (*frame_name)(struct runtime_proc *rp, const struct rt_frame *f, struct strbuf *out);
	/* The process exec'd or its session ended: free the state. Accepts NULL. */
	void (*detach)(struct runtime_proc *rp);
};

extern const struct runtime_ops python_runtime;

#endif
