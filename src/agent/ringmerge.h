/* The time-ordered merge of the per-CPU perf rings into the record queue, as perf's
 * ordered events: the consumer must apply an exec's COMM and MMAP2 (written into the ring
 * of the CPU that ran the exec) before the samples of the new image, which may be taken
 * on another CPU as soon as the process migrates. Copied ring after ring, those samples
 * came first and were unwound against the old address space under the old name.
 *
 * Every record carries its time (PERF_SAMPLE_TIME, and sample_id_all for the records
 * other than samples). One pass reads each ring up to the head it sees and copies its
 * records into the queue in time order (a k-way merge over a heap of rings: each ring is
 * already in the order its CPU wrote it), but only those up to a bound: a record written
 * while the pass runs may be older than one of another ring the pass has already passed,
 * so it waits in its ring, where the kernel keeps it, for the next pass. With times in
 * CLOCK_MONOTONIC the bound is the time at which the pass began: every record stamped
 * before it has been written by then (a task's own records are written before it can run
 * anywhere else, which is all the order the process table needs). Nothing is copied
 * twice and nothing is held in memory of ours. Internal to agent/source_perf.c. */
#ifndef KILN_AGENT_RINGMERGE_H
#define KILN_AGENT_RINGMERGE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/records.h"
#include "agent/recqueue.h"

/* One CPU's ring as the kernel maps it. */
struct merge_ring {
	struct perf_event_mmap_page *page;	/* the control page (data_head, data_tail) */
	const uint8_t *data;			/* the data pages that follow it */
	uint64_t size;				/* bytes of data, a power of two */
};

/* What one pass did. */
struct merge_result {
	unsigned moved;		/* records copied into the queue */
	unsigned bad;		/* rings whose unread part was dropped: a record whose size does
				 * not fit (corrupt or torn) */
	bool held;		/* a record later than the bound waits in its ring */
	bool queue_full;	/* the queue had no room: the rest waits in the rings */
};

struct ringmerge;

/* A merge over nr rings (at least 1). Allocation failure aborts. */
struct ringmerge *ringmerge__new(unsigned nr);
/* Accepts NULL. */
void ringmerge__free(struct ringmerge *m);

/* One pass over rings (the nr given to ringmerge__new): copies every record whose time is
 * at most bound into q (reserved, not committed: the caller commits), oldest first, ties
 * in ring order; a record without a time (see records__time_offset) counts as time 0.
 * Each ring's data_tail is then advanced past what was copied (with release semantics,
 * so the kernel may reuse the space only after the copy). d gives the record layout.
 * Fills *res. */
void ringmerge__pass(struct ringmerge *m, struct merge_ring *rings,
		     const struct record_decoder *d, struct recqueue *q, uint64_t bound,
		     struct merge_result *res);

#endif
