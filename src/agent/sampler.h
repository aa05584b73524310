/* The sampler: the agent's source of samples and of the sideband records (COMM, MMAP2,
 * FORK, EXIT) that keep the process table right, behind one interface. Which source runs
 * is the config's kind: perf_event rings (agent/source_perf.c, the default) today; a BPF
 * program can be another source next to it (agent/sample_source.h is their contract).
 *
 * The consumer (the thread calling sampler__poll/drain) gets the records decoded into the
 * structures below through callbacks, whatever the source, in the order in which they
 * happened across CPUs: the COMM and MMAP2 records of an exec come before the samples of
 * the new image, wherever each was taken. Pointers in them are valid only during the
 * callback. The sampler is used by one consumer thread. */
#ifndef KILN_AGENT_SAMPLER_H
#define KILN_AGENT_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbols/mapping.h"

/* Largest user stack copy the kernel accepts (u16 size, 8-byte aligned). */
#define SAMPLER_MAX_STACK_SIZE 65528u

/* Where the samples come from. 0 is the default, so that a zeroed config is valid. */
enum sampler_kind {
	SAMPLER_PERF = 0,	/* one cpu-clock perf_event per online CPU (source_perf.h) */
	SAMPLER_NR_KINDS
};

struct perf_source_opts;	/* agent/source_perf.h */

struct sampler_config {
	enum sampler_kind kind;
	unsigned freq;		/* samples per second per CPU (at least 1) */
	bool callchain;		/* kernel (+ user unless user_regs_stack) callchains */
	bool user_regs_stack;	/* user registers (ip, sp, bp) and a stack copy for CFI
				 * unwinding */
	uint32_t stack_size;	/* bytes of user stack copied per sample (multiple of 8, at
				 * most SAMPLER_MAX_STACK_SIZE; with user_regs_stack only) */
	bool wake_per_sample;	/* samples can be delivered as they happen (see
				 * sampler__set_eager) instead of in batches: a runtime reader
				 * (interleave kind) reads a thread's stack when its sample is decoded,
				 * so the sample must reach it at once */
	/* The source's own settings (ring sizes and the like), NULL for its defaults. Only
	 * the one of kind is read; the sampler copies what it keeps. */
	const struct perf_source_opts *perf;
};

struct sampler_sample {
	pid_t pid, tid;
	uint32_t cpu;
	uint64_t time;			/* the source's clock (perf: CLOCK_MONOTONIC ns) */
	bool time_mono;			/* time is CLOCK_MONOTONIC: its age can be told */
	const uint64_t *kernel_ips;	/* leaf first, context markers removed */
	uint32_t nr_kernel;
	const uint64_t *user_ips;	/* leaf first (fp walk by the kernel) */
	uint32_t nr_user;
	bool has_regs;			/* user registers and stack copy present */
	uint64_t ip, sp, bp;
	const uint8_t *stack;
	uint64_t stack_len;		/* bytes actually copied (dyn_size) */
};

struct sampler_handlers {
	void *ctx;
	void (*sample)(void *ctx, const struct sampler_sample *s);
	void (*comm)(void *ctx, pid_t pid, pid_t tid, const char *comm, bool exec);
	/* m->path points into the record; copy what must be kept. */
	void (*mmap)(void *ctx, pid_t pid, pid_t tid, const struct mapping *m);
	/* time: when the fork happened, in CLOCK_MONOTONIC ns, or 0 when the source cannot
	 * say in that clock. */
	void (*fork)(void *ctx, pid_t pid, pid_t ppid, pid_t tid, uint64_t time);
	void (*exit)(void *ctx, pid_t pid, pid_t tid);
};

struct sampler_stats {
	uint64_t samples;	/* sample records read */
	uint64_t lost;		/* records the kernel dropped (PERF_RECORD_LOST) */
	uint64_t throttled;	/* throttle events */
	uint64_t bad;		/* records that failed to decode */
	uint64_t wakeups;	/* times the source woke its reader (perf: by watermark) */
	uint64_t queue_full;	/* times the reader found its queue full (records waited) */
};

struct sampler;

/* Opens the source cfg->kind names (perf: one event per online CPU and its ring), disabled
 * until sampler__enable. Returns 0 and *out, or a negative errno with a message in err:
 * -EINVAL for a config the source refuses (an unknown kind, no frequency, a bad stack
 * size), -EACCES/-EPERM when not privileged. */
int sampler__open(const struct sampler_config *cfg, struct sampler **out, char *err,
		  size_t errlen);
/* Stops the source and frees everything it holds (events, rings, threads). Accepts NULL. */
void sampler__free(struct sampler *s);

/* Starts and stops sampling (sideband records are only guaranteed while enabled).
 * Return 0 or a negative errno. */
int sampler__enable(struct sampler *s);
int sampler__disable(struct sampler *s);

/* Decodes the queued records, calling h; when none are queued, first waits up to
 * timeout_ms for the reader to queue some. Returns the number of records decoded, -EINTR
 * when a signal interrupted the wait, or another negative errno. */
int sampler__poll(struct sampler *s, int timeout_ms, const struct sampler_handlers *h);
/* Decodes everything the source holds now, the kernel's buffers included (waits 2 s at
 * most). Returns the number of records decoded, or a negative errno. */
int sampler__drain(struct sampler *s, const struct sampler_handlers *h);

/* With wake_per_sample: whether every sample is delivered at once (eager: while a process
 * a runtime reader follows is alive) or in batches often enough that the source loses
 * nothing (lazy, the start: a wakeup per sample costs CPU nobody needs then). No-op
 * without wake_per_sample. Returns 0 or a negative errno. */
int sampler__set_eager(struct sampler *s, bool eager);

/* Counters since sampler__open. */
struct sampler_stats sampler__stats(const struct sampler *s);
/* The number of CPUs sampled. */
unsigned sampler__nr_cpus(const struct sampler *s);
/* The source's name ("perf"). */
const char *sampler__kind_name(const struct sampler *s);

#endif
