/* Decoding of perf records (PERF_RECORD_SAMPLE with the sampler's sample_type, MMAP2,
 * COMM, FORK, EXIT, LOST, THROTTLE) into the sampler's callbacks. Nothing in a record is
 * trusted: lengths are checked against the record's size. Internal to agent/source_perf.c. */
#ifndef KILN_AGENT_RECORDS_H
#define KILN_AGENT_RECORDS_H

#include <linux/perf_event.h>
#include <stdint.h>

#include "agent/sampler.h"

#define RECORDS_MAX_CHAIN 512	/* kernel or user frames kept per sample */

struct record_decoder {
	uint64_t sample_type;		/* as opened */
	struct sampler_stats stats;	/* samples, lost, throttled, bad */
	uint64_t kips[RECORDS_MAX_CHAIN], uips[RECORDS_MAX_CHAIN];
};

/* Decodes the record rec (hdr->size bytes, header included) and calls the matching
 * handler of h, if any. A record that does not decode is counted in stats.bad. */
void records__handle(struct record_decoder *d, const struct perf_event_header *hdr,
		     const uint8_t *rec, const struct sampler_handlers *h);

#endif
