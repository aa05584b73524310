/* The runtimes one agent runs (runtimes/runtime.h, runtimes/registry.h), seen from the
 * pipeline: which are on, the collectors they started, the readers attached to
 * processes, and the two merges. The agent's stages call it and never name a runtime:
 * the per-sample path (agent/sample_path.h) attaches readers, tells the collectors what
 * processes exec and map, and asks whether a sample must be counted per thread; the
 * flush (agent/flush.h) merges the collectors' stacks and their header keys.
 * Not thread-safe: the agent's one thread calls it. */
#ifndef KILN_AGENT_RUNTIME_SET_H
#define KILN_AGENT_RUNTIME_SET_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "agent/proctab.h"
#include "agent/stacks.h"
#include "profile/profile.h"
#include "runtimes/registry.h"
#include "runtimes/runtime.h"

struct runtime_set;

/* A set of the runtimes ops[] (NULL-terminated; NULL: the registry's) that choices turn
 * on (NULL: each in its default mode), started with env's freq and pids (each runtime
 * gets its own mode and flags). Collectors are not started yet. */
struct runtime_set *runtime_set__new(const struct runtime_ops *const *ops,
				     const struct runtime_choices *choices,
				     const struct runtime_env *env);
/* Stops the collectors and frees the readers retired by exec. Readers still attached to
 * processes must have been detached (runtime_set__detach) first. Accepts NULL. */
void runtime_set__free(struct runtime_set *rs);

/* Starts every enabled runtime's collector (a runtime that cannot start logs why and
 * stays off). */
void runtime_set__start(struct runtime_set *rs);

/* Whether an enabled runtime reads stacks at the moment of the sample (interleave), so
 * that the sampler must be able to wake the agent per sample. */
bool runtime_set__reads_per_sample(const struct runtime_set *rs);

/* Process p maps path (an MMAP record, or a mapping found by the start-up scan): every
 * enabled runtime whose likely() accepts the file is told. An interleave reader looks at
 * the process again at its next sample (p->rt_checked is cleared); a collector's seen()
 * is called. */
void runtime_set__seen(struct runtime_set *rs, struct proc *p, const char *path);
/* Process pid has exec'd: the collectors are told. */
void runtime_set__exec(struct runtime_set *rs, pid_t pid);

/* Attaches the first enabled reader that recognizes p, once per image (p->rt_checked
 * is set); a reader of p's previous image is kept until the next flush. Returns true
 * when a reader now follows p. */
bool runtime_set__attach(struct runtime_set *rs, struct proc *p);
/* Frees p's reader now (the process is gone, or the agent stops). */
void runtime_set__detach(struct runtime_set *rs, struct proc *p);

/* Whether a collector may replace the stacks of process pid's threads at the flush (its
 * samples must then be counted per thread). */
bool runtime_set__covers(struct runtime_set *rs, pid_t pid);

/* The replace merge of a flush: asks every collector for its stacks and, per process,
 * takes the covered threads' stacks out of st and adds the collector's, scaled to their
 * sample count, to p; a process a collector could not profile gets its reason in
 * proc->skip_reason. Processes are looked up in procs. */
void runtime_set__merge(struct runtime_set *rs, struct stacks *st, struct proctab *procs,
			struct profile *p);
/* Adds the collectors' header keys for the last merge to meta. */
void runtime_set__header(struct runtime_set *rs, json_t *meta);
/* Frees the readers retired by exec since the last flush (their frames are named). */
void runtime_set__release_retired(struct runtime_set *rs);

#endif
