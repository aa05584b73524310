/* Java frames for kiln: attaches libkiln-jvm.so to every HotSpot JVM of the host (and to
 * JVMs that start during the session), collects the Java stacks the agent counted and
 * hands them to the session.
 *
 * Java is runtime.h's replace kind (java_runtime.c puts this session behind the
 * contract): the agent samples Java threads itself, with AsyncGetCallTrace, so its stacks
 * are complete Java stacks without native frames. For the Java threads it reports
 * (java_result.tids), the agent's stacks replace the process's perf stacks, scaled so
 * that they sum to the perf samples of those threads: the process's total stays what the
 * system-wide sampler counted. Other threads of the JVM (GC, JIT compiler) keep their
 * native perf stacks.
 *
 * A background thread does the /proc scans and the attaches, so that a slow or refusing
 * JVM never stalls the session loop; every wait is bounded. */
#ifndef KILN_RUNTIMES_JAVA_H
#define KILN_RUNTIMES_JAVA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/profile.h"
#include "runtimes/java_attach.h"
#include "runtimes/runtime.h"

struct java_opts {
	unsigned frequency;		/* samples per second of CPU time per thread */
	bool thread_names;		/* --java-collect-thread-names: a "[name tid=N]" root */
	const char *lib_path;		/* libkiln-jvm.so; NULL: next to the running binary */
	const pid_t *pids;		/* when nr_pids > 0, only these processes */
	size_t nr_pids;
	int attach_timeout_ms;		/* 0: 10000 */
	int poll_ms;			/* how often to look for new JVMs; 0: 1000 */
	bool exec_events;		/* the caller reports every exec (note_exec): each poll
					 * checks only those, and /proc is scanned every 30 s */
};

/* What one JVM gave for the period that java_session__collect() ended. */
struct java_result {
	pid_t pid;				/* host pid */
	char skip_reason[JVM_REASON_MAX];	/* non-empty: not profiled, and why */
	struct profile *stacks;			/* Java stacks, root first; NULL when none */
	uint64_t samples;			/* sum of the stacks' counts */
	uint64_t lost;				/* samples the agent dropped (ring full) */
	uint64_t agent_cpu_us;			/* CPU time of the agent's thread so far */
	pid_t *tids;				/* host tids of the threads that ran Java */
	size_t nr_tids;
};

struct java_session;

/* Starts looking for JVMs (at once, then every poll_ms) and attaching to them. Returns
 * NULL with a message logged when the agent library cannot be found. */
struct java_session *java_session__start(const struct java_opts *opts);

/* Process pid has exec'd: with exec_events, it is looked at by the next poll (a JVM is
 * always started by an exec). Thread-safe, cheap; accepts NULL. */
void java_session__note_exec(struct java_session *s, pid_t pid);

/* Process pid has mapped a JVM library (libjvm.so: a launcher of any name, a JVM
 * embedded through JNI): the background thread looks at it at once rather than at its
 * next poll, and retries it quickly while it starts, so that a short-lived JVM is
 * attached early in its life. Thread-safe, cheap; accepts NULL. */
void java_session__note_seen(struct java_session *s, pid_t pid);

/* Ends the period: asks every attached agent for its stacks (and, when final, to stop
 * sampling), waits for them at most 2 s, and replaces the previous results. JVMs that
 * exited during the period give what they last wrote when it is still readable.
 * Returns the number of results. */
size_t java_session__collect(struct java_session *s, bool final);

/* The results of the last collect, valid until the next collect or stop. */
const struct java_result *java_session__results(const struct java_session *s, size_t *nr);
/* The result for host pid, or NULL when kiln knows no JVM with that pid. */
const struct java_result *java_session__result(const struct java_session *s, pid_t pid);

/* Whether host process pid is a JVM the agent is loaded into (so its samples must be
 * counted per thread). Thread-safe; cheap enough to call per sample. */
bool java_session__attached(struct java_session *s, pid_t pid);

/* Stops every agent (a final collect when none was done), the background thread, and
 * frees the session. Accepts NULL. */
void java_session__stop(struct java_session *s);

/* Whether host thread tid ran Java code according to r. */
bool java_result__has_tid(const struct java_result *r, pid_t tid);

/* Adds r's stacks to dst, each after the prefix frames prefix[0..nr_prefix) (gProfiler's
 * app-metadata index, container and process name), with counts scaled to sum to exactly
 * total (largest remainder; stacks that round to 0 are left out). Returns the samples
 * added: total, or 0 when r has no stacks. */
uint64_t java_result__merge(const struct java_result *r, struct profile *dst,
			    const char *const *prefix, size_t nr_prefix, uint64_t total);

#endif
