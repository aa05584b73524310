/* A single-producer single-consumer queue of variable-length records in one byte ring:
 * the sampler's reader thread moves perf records out of the kernel's rings into it, so
 * that the kernel's rings stay drained while the consumer unwinds, symbolizes or is
 * descheduled. Records are contiguous in memory (the queue wraps between records, never
 * inside one). Lock-free: head and tail are published with release/acquire. */
#ifndef KILN_AGENT_RECQUEUE_H
#define KILN_AGENT_RECQUEUE_H

#include <stddef.h>

struct recqueue;

/* cap: bytes of queue memory (rounded up to 8; at least 64). Allocation failure aborts. */
struct recqueue *recqueue__new(size_t cap);
/* Accepts NULL. */
void recqueue__free(struct recqueue *q);

/* Producer: room for a record of len bytes, or NULL when the queue is too full. The
 * record becomes visible to the consumer at the next recqueue__commit(). */
void *recqueue__reserve(struct recqueue *q, size_t len);
/* Producer: publishes every record reserved so far. */
void recqueue__commit(struct recqueue *q);

/* Consumer: the oldest published record and its length, or NULL when there is none. */
const void *recqueue__peek(struct recqueue *q, size_t *len);
/* Consumer: releases the record peek returned. */
void recqueue__pop(struct recqueue *q);

/* Bytes in use (published records, with their framing). */
size_t recqueue__used(const struct recqueue *q);

#endif
