/* The process table: every process the agent has seen, with its name, namespace pid,
 * container and executable mappings. Seeded by one /proc scan, then kept current by the
 * sampler's COMM, MMAP2, FORK and EXIT records; a process the records missed is read from
 * /proc when its first sample arrives.
 *
 * Lifetime: an exec gives a process a new address space, and a process that exits is only
 * marked; the old address spaces, retired mappings and exited processes stay valid (their
 * pointers too) until proctab__reap(), which the session calls after it has symbolized
 * its stacks. Not thread-safe. */
#ifndef KILN_AGENT_PROCTAB_H
#define KILN_AGENT_PROCTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbols/mapping.h"

struct proc_mm;		/* one address space: the executable mappings of one image */
struct runtime_ops;
struct runtime_proc;

struct proc {
	struct proc_ref ref;	/* pid and nspid */
	char comm[17];
	char container[128];	/* "" when not in a container */
	struct proc_mm *mm;	/* the current address space */
	bool exited;
	bool selected;		/* passes the --pids filter (always true without one) */
	/* Runtime reader state, owned by the session (see runtimes/runtime.h). */
	bool rt_checked;
	const struct runtime_ops *rt_ops;
	struct runtime_proc *rt;
	char skip_reason[128];
};

struct proctab;

/* pids/nr_pids: the --pids filter (NULL/0: every process). The pids are copied. */
struct proctab *proctab__new(const pid_t *pids, size_t nr_pids);
/* Frees every process, address space and mapping. Runtime state must have been detached
 * by its owner first. Accepts NULL. */
void proctab__free(struct proctab *t);

/* Reads every process under /proc. Returns the number of processes read. */
int proctab__scan(struct proctab *t);

/* The process pid, or NULL when unknown. */
struct proc *proctab__find(struct proctab *t, pid_t pid);
/* The process pid, read from /proc when unknown. Returns NULL only for pid <= 0; a
 * process that vanished before it could be read is kept with comm "pid-<pid>". */
struct proc *proctab__get(struct proctab *t, pid_t pid);

/* Record handlers (see agent/sampler.h). */
void proctab__comm(struct proctab *t, pid_t pid, pid_t tid, const char *comm, bool exec);
void proctab__mmap(struct proctab *t, pid_t pid, const struct mapping *m);
/* A new process pid copies its parent's command, container and mappings. time is when
 * the fork happened (CLOCK_MONOTONIC ns, as the sampler's records carry it) or 0 when
 * unknown. A live entry for pid made after time already shows the child (the start-up
 * scan read it from /proc, or records of its own came first because some were lost):
 * it is kept, as copying the parent would undo the child's exec for the rest of its
 * life. An exited entry, or one older than the fork (its EXIT was lost), is a reused pid:
 * replaced, the old one waits for reap. */
void proctab__fork(struct proctab *t, pid_t pid, pid_t ppid, pid_t tid, uint64_t time);
void proctab__exit(struct proctab *t, pid_t pid, pid_t tid);

/* The mapping of mm that holds addr, or NULL. The pointer stays valid until reap. */
const struct mapping *proctab__mapping(const struct proc_mm *mm, uint64_t addr);
/* Number of executable mappings of mm (0 for a kernel thread), and the i-th of them
 * (NULL past the end), valid until reap. */
size_t proctab__nr_mappings(const struct proc_mm *mm);
const struct mapping *proctab__mapping_at(const struct proc_mm *mm, size_t i);
/* Re-reads the executable mappings of a live process from /proc/PID/maps into its current
 * address space (at most once a second per process): the repair for records lost or seen
 * out of order across CPUs. Returns 0, -EAGAIN when too soon, or a negative errno. */
int proctab__reload(struct proctab *t, struct proc *p);

/* True the first time it is called for mapping m (so that the caller pins the binary
 * once). */
bool proctab__first_use(const struct mapping *m);

/* Visits every process (live, exited, and replaced by a reused pid). */
void proctab__for_each(struct proctab *t, void (*fn)(struct proc *p, void *ctx), void *ctx);

/* Frees exited processes, old address spaces and retired mappings. Calls on_free for each
 * process freed (to detach runtime state and forget perf maps) before freeing it. */
void proctab__reap(struct proctab *t, void (*on_free)(struct proc *p, void *ctx), void *ctx);

/* Number of processes held (live and exited). */
size_t proctab__count(const struct proctab *t);

#endif
