/* Decoding of perf records (PERF_RECORD_SAMPLE with the sampler's sample_type, MMAP2,
 * COMM, FORK, EXIT, LOST, THROTTLE) into the sampler's callbacks, and where each record
 * keeps its timestamp (for the time-ordered merge of the rings, agent/ringmerge.h).
 * Nothing in a record is trusted: lengths are checked against the record's size.
 * Internal to agent/: the perf source and the ring merge. */
#ifndef KILN_AGENT_RECORDS_H
#define KILN_AGENT_RECORDS_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/sampler.h"

#define RECORDS_MAX_CHAIN 512	/* kernel or user frames kept per sample */

struct record_decoder {
	uint64_t sample_type;		/* as opened */
	bool sample_id_all;		/* as opened: every other record ends with the
					 * sample_type's TID, TIME, ID, STREAM_ID, CPU and
					 * IDENTIFIER fields (struct sample_id) */
	bool mono_clock;		/* times are CLOCK_MONOTONIC (use_clockid): the FORK
					 * handler gets them, else 0 */
	struct sampler_stats stats;	/* samples, lost, throttled, bad */
	uint64_t kips[RECORDS_MAX_CHAIN], uips[RECORDS_MAX_CHAIN];
};

/* Decodes the record rec (hdr->size bytes, header included) and calls the matching
 * handler of h, if any. A record that does not decode is counted in stats.bad. */
void records__handle(struct record_decoder *d, const struct perf_event_header *hdr,
		     const uint8_t *rec, const struct sampler_handlers *h);

/* Where the timestamp of a record of the given type and size (bytes, header included)
 * lies: its offset from the record's start, or -1 when the record carries none (no
 * PERF_SAMPLE_TIME, a record other than a sample without sample_id_all, or one too short
 * to hold it). */
long records__time_offset(const struct record_decoder *d, uint32_t type, size_t size);

#endif
