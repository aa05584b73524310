#include "agent/recqueue.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

/* Each record is an 8-byte length, then its bytes padded to 8. A length of WRAP says
 * that the rest of the buffer is unused and the next record starts at offset 0. */
#define WRAP UINT64_MAX

struct recqueue {
	uint8_t *buf;
	size_t cap;
	size_t head;		/* published by the producer (atomic) */
	size_t tail;		/* published by the consumer (atomic) */
	size_t phead;		/* producer's private write position */
	size_t peeked;		/* consumer: bytes the peeked record occupies */
};

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

struct recqueue *recqueue__new(size_t cap)
{
	struct recqueue *q = xcalloc(1, sizeof(*q));

	q->cap = align8(cap < 64 ? 64 : cap);
	q->buf = xmalloc(q->cap);
	return q;
}

void recqueue__free(struct recqueue *q)
{
	if (!q)
		return;
	free(q->buf);
	free(q);
}

void *recqueue__reserve(struct recqueue *q, size_t len)
{
	size_t need = 8 + align8(len);
	size_t tail = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
	size_t free_bytes = q->cap - (q->phead - tail);
	size_t pos = q->phead % q->cap, to_end = q->cap - pos;
	uint64_t n = len;

	if (to_end < need) {
		/* Skip the end of the buffer: a marker, then the record at offset 0. */
		if (to_end + need > free_bytes)
			return NULL;
		uint64_t wrap = WRAP;
		memcpy(q->buf + pos, &wrap, 8);
		q->phead += to_end;
		pos = 0;
	} else if (need > free_bytes) {
		return NULL;
	}
	memcpy(q->buf + pos, &n, 8);
	q->phead += need;
	return q->buf + pos + 8;
}

void recqueue__commit(struct recqueue *q)
{
	__atomic_store_n(&q->head, q->phead, __ATOMIC_RELEASE);
}

const void *recqueue__peek(struct recqueue *q, size_t *len)
{
	size_t head = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE);
	size_t tail = q->tail;

	while (tail != head) {
		size_t pos = tail % q->cap;
		uint64_t n;

		memcpy(&n, q->buf + pos, 8);
		if (n == WRAP) {
			tail += q->cap - pos;
			continue;
		}
		if (tail != q->tail)
			__atomic_store_n(&q->tail, tail, __ATOMIC_RELEASE);
		q->peeked = 8 + align8((size_t)n);
		*len = (size_t)n;
		return q->buf + pos + 8;
	}
	if (tail != q->tail)
		__atomic_store_n(&q->tail, tail, __ATOMIC_RELEASE);
	return NULL;
}

void recqueue__pop(struct recqueue *q)
{
	__atomic_store_n(&q->tail, q->tail + q->peeked, __ATOMIC_RELEASE);
	q->peeked = 0;
}

size_t recqueue__used(const struct recqueue *q)
{
	return __atomic_load_n(&q->head, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
}
