/* The perf_event sample source: one software cpu-clock event per online CPU, sampling at a
 * frequency, whose mmap ring buffers carry the samples and the sideband records (COMM,
 * MMAP2, FORK, EXIT) that keep the process table right. One reader thread waits on all
 * rings through one epoll set (the kernel wakes it by watermark, not per sample, or at
 * least every second) and moves their records into a queue in memory (agent/recqueue.h),
 * so that the kernel's rings stay drained while the consumer unwinds, symbolizes or is
 * descheduled; the consumer decodes them (agent/records.h).
 *
 * Chosen by kind SAMPLER_PERF of struct sampler_config (agent/sampler.h), through which
 * it is used; the options below go in its perf field. */
#ifndef KILN_AGENT_SOURCE_PERF_H
#define KILN_AGENT_SOURCE_PERF_H

#include "agent/sample_source.h"

struct perf_source_opts {
	unsigned ring_pages;	/* data pages per CPU ring (a power of two); 0: enough for
				 * about a second of samples at the config's frequency */
};

extern const struct sample_source_ops perf_source_ops;

#endif
