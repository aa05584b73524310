/* The contract of a runtime (Python, Java, Ruby, PHP, Node.js, .NET, ...): how the agent
 * gets the frames of an interpreted or JIT-compiled language, and how they join the
 * native stacks the sampler records. One contract, two merge kinds:
 *
 * RUNTIME_INTERLEAVE (Python today; Ruby, PHP later): a reader is consulted in the
 * sampler thread at the moment of the sample, so it must be fast and bounded in time; it
 * captures compact frames (rt_frame: ids the reader understands) and caches whatever it
 * needs to name them, because the process may be gone when the session ends and the
 * agent symbolizes. Naming must not read the process again. The frames are interleaved
 * into the native stack at the native frames that run the interpreter (interp_symbols,
 * e.g. _PyEval_EvalFrameDefault): each such activation is followed by the runtime frames
 * it runs, marked by RT_FRAME_ENTRY on the outermost frame of each activation. When the
 * native stack has no such frame (perf-mode fp stopped early, or none) the runtime
 * frames go right after the process name.
 *
 * RUNTIME_REPLACE (Java's JVMTI agent today; any agent-based collector later): a
 * collector produces whole stacks of its own for some threads of the processes it
 * covers. The agent counts the samples of a covered process per thread; at the flush
 * the collector names the threads its stacks describe, and those threads' native stacks
 * are replaced by the collector's, scaled so that they sum to the samples the sampler
 * counted for those threads (the process's total stays what the system-wide sampler
 * saw). Other threads (a JVM's GC and compiler threads) keep their native stacks.
 *
 * Both kinds may use the lifecycle hooks (start, exec, seen, collect, stop); every hook
 * is optional. A runtime is recognized by what a process maps (likely()), never by its
 * command name alone. */
#ifndef KILN_RUNTIMES_RUNTIME_H
#define KILN_RUNTIMES_RUNTIME_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/profile.h"
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

enum runtime_merge {
	RUNTIME_INTERLEAVE,	/* frames read per sample, placed at the interpreter frames */
	RUNTIME_REPLACE,	/* a collector's stacks replace some threads' native stacks */
};

/* What the sampler saw of the sampled thread, for a reader that walks the native stack
 * itself (Node.js: JIT frames found by their frame pointers): its registers, the stack
 * copy from sp up, and the return addresses the native unwinder found, leaf first, with
 * their mappings (an entry is NULL when unknown). stack is NULL when the sample had no
 * copy (--perf-mode fp). */
struct rt_native {
	uint64_t ip, sp, bp;
	const uint8_t *stack;
	uint64_t stack_len;
	const uint64_t *pcs;
	const struct mapping *const *maps;
	uint32_t nr_pcs;
};

struct runtime_proc;		/* an interleave reader's state for one process */
struct runtime_collector;	/* a runtime's session-wide state (start .. stop) */

/* What a runtime is started with: the session's settings and the options the user gave
 * it on the command line (runtimes/registry.h). */
struct runtime_env {
	unsigned freq;			/* the session's samples per second per CPU */
	const pid_t *pids;		/* --pids (NULL/0: every process) */
	size_t nr_pids;
	const char *mode;		/* its --<name>-mode value ("auto", "ap", ...) */
	const char *const *flags;	/* the run_arguments keys of the flags it declared
					 * that were given, NULL-terminated; may be NULL */
	const char *const *values;	/* key, value pairs of the value options given
					 * (registry.h), NULL-terminated; may be NULL */
};

/* Whether key is one of env's flags. */
bool runtime_env__flag(const struct runtime_env *env, const char *key);
/* The value given for value option key ("php_proc_filter"), or NULL when not given. */
const char *runtime_env__value(const struct runtime_env *env, const char *key);

/* What a replace-kind collector gives for one process at a flush. */
struct runtime_stacks {
	pid_t pid;			/* host pid */
	const char *skip_reason;	/* non-empty: not profiled, and why; stacks are ignored */
	const struct profile *stacks;	/* root first, no process prefix; NULL when none */
	uint64_t samples;		/* the sum of the stacks' counts */
	const pid_t *tids;		/* host tids whose native stacks these replace */
	size_t nr_tids;
};

struct runtime_ops {
	const char *name;			/* "python": the registry's and the CLI's name */
	enum runtime_merge merge;

	/* Whether a process that maps file path (an executable mapping) probably runs this
	 * runtime: a cheap test of the file's name (libjvm.so, libpython3.11.so, python3),
	 * used on every MMAP record and on every mapping of the start-up scan. */
	bool (*likely)(const char *path);

	/* --- interleave kind --- */
	const char *const *interp_symbols;	/* NULL-terminated native merge points */
	/* Optional: whether a native frame after the first merge point of a sample with
	 * runtime frames is one that those frames stand for (a JIT's code, its
	 * trampolines), and is left out. */
	bool (*native_hidden)(const char *name);
	/* Returns the reader's state for process p when it runs this runtime, NULL when it
	 * does not. On a process it recognizes but cannot profile, returns NULL and writes a
	 * reason ("unsupported CPython 3.5") into skip_reason (size 128). */
	struct runtime_proc *(*attach)(const struct proc_ref *p, char *skip_reason);
	/* Captures the frames of thread tid (host tid), root first, into frames[0..max).
	 * Returns the number written (0: the thread runs no runtime code now), or a negative
	 * errno. Never blocks; gives up with RT_FRAME_TRUNCATED rather than read too long. */
	int (*sample)(struct runtime_proc *rp, pid_t tid, struct rt_frame *frames, int max);
	/* Optional, used instead of sample() when set: the same, given what the sampler saw
	 * of the thread (n). */
	int (*sample_native)(struct runtime_proc *rp, pid_t tid, const struct rt_native *n,
			     struct rt_frame *frames, int max);
	/* Appends the annotated name of f ("alpha (app.py:12)_[p]") to out, from caches only. */
	void (*frame_name)(struct runtime_proc *rp, const struct rt_frame *f, struct strbuf *out);
	/* The process exec'd or its session ended: free the state. Accepts NULL. */
	void (*detach)(struct runtime_proc *rp);

	/* --- lifecycle (collectors; any kind) --- */
	/* Starts the collector when the agent starts. Returns NULL (with a message logged)
	 * when the runtime cannot work on this host: its other hooks are then not called. */
	struct runtime_collector *(*start)(const struct runtime_env *env);
	/* Process pid has exec'd. Called in the sampler thread: cheap, never blocks. */
	void (*exec)(struct runtime_collector *c, pid_t pid);
	/* Process pid maps a file likely() accepted (a late dlopen, an embedded VM, a
	 * launcher with another name, or found by the start-up scan): look at it. Called in
	 * the sampler thread: cheap, never blocks. */
	void (*seen)(struct runtime_collector *c, pid_t pid);
	/* Replace kind: whether the samples of process pid must be counted per thread,
	 * because the collector may replace some of its threads' stacks at the flush. Called
	 * per sample: cheap, thread-safe. */
	bool (*covers)(struct runtime_collector *c, pid_t pid);
	/* Ends the period at a flush: writes into *out the collector's stacks per process
	 * (valid until the next collect or stop) and returns how many. */
	size_t (*collect)(struct runtime_collector *c, const struct runtime_stacks **out);
	/* After the merge of the last collect: adds the collector's own keys to the profile
	 * header meta ("jvms_profiled"); merged is the number of processes whose stacks
	 * were merged. */
	void (*header)(struct runtime_collector *c, json_t *meta, size_t merged);
	/* Stops the collector (a final collect when it needs one) and frees it. Accepts
	 * NULL. */
	void (*stop)(struct runtime_collector *c);
};

/* Adds the stacks of r to dst with label set labels (an id of dst: the process's
 * labels), each after the frames prefix[0..nr_prefix) (may be 0), with counts scaled to
 * sum to exactly total (largest remainder; stacks that round to 0 are left out): the
 * replace merge. Returns the samples added: total, or 0 when r has no stacks or total is
 * 0. */
uint64_t runtime_stacks__merge(const struct runtime_stacks *r, struct profile *dst,
			       const char *const *prefix, size_t nr_prefix, uint32_t labels,
			       uint64_t total);

/* Whether host thread tid is one of r's threads. */
bool runtime_stacks__has_tid(const struct runtime_stacks *r, pid_t tid);

extern const struct runtime_ops python_runtime;
extern const struct runtime_ops java_runtime;
extern const struct runtime_ops php_runtime;
extern const struct runtime_ops node_runtime;
extern const struct runtime_ops dotnet_runtime;

#endif
