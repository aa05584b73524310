/* The contract of a sample source: what agent/sampler.c dispatches to. A source produces
 * samples and sideband records and hands them to the consumer decoded into the sampler's
 * structures (struct sampler_sample and the sampler_handlers callbacks), so that the
 * agent does not know where they came from. perf_event rings are one source
 * (agent/source_perf.c); a BPF program that samples in the kernel and writes into a BPF
 * ring buffer fits the same table.
 *
 * Adding a source: a file pair agent/source_<name>.{c,h} that defines its ops and its own
 * options struct, a kind in enum sampler_kind, an options pointer in sampler_config, and
 * one line in the table of agent/sampler.c.
 *
 * sampler.c has already checked the generic config (kind, freq >= 1, stack_size) when it
 * calls open. Every function is called from the consumer thread only; a source that runs
 * threads of its own hides them. Internal to agent/: the rest of the agent uses
 * agent/sampler.h. */
#ifndef KILN_AGENT_SAMPLE_SOURCE_H
#define KILN_AGENT_SAMPLE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/sampler.h"

struct sample_source_ops {
	const char *name;	/* "perf": for messages */
	/* Opens the source for cfg, disabled. Returns 0 and its state in *src, or a negative
	 * errno with a message in err (which names what failed). */
	int (*open)(const struct sampler_config *cfg, void **src, char *err, size_t errlen);
	/* Starts (on) or stops sampling. Returns 0 or a negative errno. */
	int (*enable)(void *src, bool on);
	/* As sampler__poll and sampler__drain: decode into h, return the record count or a
	 * negative errno (-EINTR: a signal interrupted the wait). */
	int (*poll)(void *src, int timeout_ms, const struct sampler_handlers *h);
	int (*drain)(void *src, const struct sampler_handlers *h);
	/* As sampler__set_eager; only called with cfg->wake_per_sample and a change of mode.
	 * May be NULL when the source always delivers at once. */
	int (*set_eager)(void *src, bool eager);
	/* Counters since open (fields a source has no notion of stay 0). */
	struct sampler_stats (*stats)(const void *src);
	unsigned (*nr_cpus)(const void *src);
	/* Stops everything and frees src. Never called with NULL. */
	void (*close)(void *src);
};

/* The online CPUs, from /sys/devices/system/cpu/online ("0-3,8"): a source that opens
 * something per CPU needs them. Returns 0 with a malloc'ed array in *cpus (the caller
 * frees it) and its length in *nr, or a negative errno (-ENODEV: the list is empty,
 * -EINVAL: it does not parse). */
int sample_source__online_cpus(unsigned **cpus, unsigned *nr);

#endif
