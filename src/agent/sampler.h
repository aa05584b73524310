/* The sampler: one perf_event per online CPU (software cpu-clock at a frequency) whose
 * mmap ring buffers carry the samples and the sideband records (COMM, MMAP2, FORK, EXIT)
 * that keep the process table right. One reader thread waits on all rings through one
 * epoll set (the kernel wakes it by watermark, not per sample, or at least every second)
 * and moves their records into a queue in memory, so that the kernel's rings stay drained while the
 * consumer unwinds, symbolizes or is descheduled.
 *
 * The consumer (the thread calling sampler__poll/drain) gets the records decoded into the
 * structures below through callbacks. Pointers in them are valid only during the
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

struct sampler_config {
	unsigned freq;		/* samples per second per CPU */
	bool callchain;		/* kernel (+ user unless user_regs_stack) callchains */
	bool user_regs_stack;	/* PERF_SAMPLE_REGS_USER + STACK_USER for CFI unwinding */
	uint32_t stack_size;	/* bytes of user stack copied per sample (multiple of 8) */
	unsigned ring_pages;	/* data pages per CPU ring (power of two); 0: about a second of samples */
	bool wake_per_sample;	/* the reader can be woken for every sample (see
				 * sampler__set_eager) instead of by watermark: a runtime
				 * reader (Python) reads a thread's stack when its sample is
				 * decoded, so the sample must reach it at once */
};

struct sampler_sample {
	pid_t pid, tid;
	uint32_t cpu;
	uint64_t time;
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
	void (*fork)(void *ctx, pid_t pid, pid_t ppid, pid_t tid);
	void (*exit)(void *ctx, pid_t pid, pid_t tid);
};

struct sampler_stats {
	uint64_t samples;	/* sample records read */
	uint64_t lost;		/* records the kernel dropped (PERF_RECORD_LOST) */
	uint64_t throttled;	/* throttle events */
	uint64_t bad;		/* records that failed to decode */
	uint64_t wakeups;	/* reader-thread wakeups by watermark or kick */
	uint64_t queue_full;	/* times the reader found the queue full (records waited) */
};

struct sampler;

/* Opens one event per online CPU and maps its ring. The events start disabled.
 * Returns 0 and *out, or a negative errno (-EACCES/-EPERM: not privileged) with a message
 * in err. */
int sampler__open(const struct sampler_config *cfg, struct sampler **out, char *err,
		  size_t errlen);
/* Closes the events and unmaps the rings. Accepts NULL. */
void sampler__free(struct sampler *s);

int sampler__enable(struct sampler *s);
int sampler__disable(struct sampler *s);

/* Decodes the queued records, calling h; when none are queued, first waits up to
 * timeout_ms for the reader to queue some. Returns the number of records decoded, -EINTR
 * when a signal interrupted the wait, or another negative errno. */
int sampler__poll(struct sampler *s, int timeout_ms, const struct sampler_handlers *h);
/* Has the reader move everything the kernel's rings hold now, and decodes it all (waits
 * 2 s at most). Returns the number of records decoded, or a negative errno. */
int sampler__drain(struct sampler *s, const struct sampler_handlers *h);

/* With wake_per_sample: whether every sample wakes the reader (eager: while a process a
 * runtime reader follows is alive) or the reader drains on a timer short enough that no
 * ring fills (lazy, the start: a wakeup per sample costs CPU nobody needs then). No-op
 * without wake_per_sample. Returns 0 or a negative errno. */
int sampler__set_eager(struct sampler *s, bool eager);

/* Counters since sampler__open. */
struct sampler_stats sampler__stats(const struct sampler *s);
unsigned sampler__nr_cpus(const struct sampler *s);

#endif
