/* The time-ordered merge of the perf rings: see ringmerge.h. */
#include "agent/ringmerge.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

/* A ring's read position during a pass, and the record waiting at it. */
struct cursor {
	uint64_t tail, head;	/* bytes read, bytes the kernel has written */
	uint64_t time;		/* of the next record */
	uint32_t size;		/* of the next record */
};

struct ringmerge {
	unsigned nr;
	struct cursor *cur;
	unsigned *heap;		/* rings with a record due, by (time, ring) */
	unsigned nheap;
};

struct ringmerge *ringmerge__new(unsigned nr)
{
	struct ringmerge *m = xcalloc(1, sizeof(*m));

	m->nr = nr ? nr : 1;
	m->cur = xcalloc(m->nr, sizeof(*m->cur));
	m->heap = xcalloc(m->nr, sizeof(*m->heap));
	return m;
}

void ringmerge__free(struct ringmerge *m)
{
	if (!m)
		return;
	free(m->cur);
	free(m->heap);
	free(m);
}

/* Copies len bytes at stream position pos of ring r, across its end if need be. */
static void ring_read(const struct merge_ring *r, uint64_t pos, void *dst, size_t len)
{
	uint64_t off = pos & (r->size - 1);
	size_t first = (size_t)(r->size - off);

	if (first >= len) {
		memcpy(dst, r->data + off, len);
	} else {
		memcpy(dst, r->data + off, first);
		memcpy((uint8_t *)dst + first, r->data, len - first);
	}
}

/* Reads the header and time of ring i's next record. Returns true when one is due (at
 * most bound); false when the ring is empty, its next record is later than bound, or the
 * record is corrupt (the rest of the ring is then skipped). */
static bool peek(struct ringmerge *m, struct merge_ring *rings, unsigned i,
		 const struct record_decoder *d, uint64_t bound, struct merge_result *res)
{
	struct cursor *c = &m->cur[i];
	struct perf_event_header hdr;
	long off;

	if (c->head - c->tail < sizeof(hdr))
		return false;
	ring_read(&rings[i], c->tail, &hdr, sizeof(hdr));
	if (hdr.size < sizeof(hdr) || hdr.size > c->head - c->tail) {
		/* Corrupt or torn: give up on what is in the ring rather than loop. */
		res->bad++;
		c->tail = c->head;
		return false;
	}
	c->size = hdr.size;
	c->time = 0;
	off = records__time_offset(d, hdr.type, hdr.size);
	if (off >= 0)
		ring_read(&rings[i], c->tail + (uint64_t)off, &c->time, sizeof(c->time));
	if (c->time > bound) {
		res->held = true;
		return false;
	}
	return true;
}

static bool before(const struct ringmerge *m, unsigned a, unsigned b)
{
	const struct cursor *x = &m->cur[a], *y = &m->cur[b];

	return x->time < y->time || (x->time == y->time && a < b);
}

static void sift_down(struct ringmerge *m, unsigned pos)
{
	for (;;) {
		unsigned l = 2 * pos + 1, r = l + 1, min = pos, tmp;
		if (l < m->nheap && before(m, m->heap[l], m->heap[min]))
			min = l;
		if (r < m->nheap && before(m, m->heap[r], m->heap[min]))
			min = r;
		if (min == pos)
			return;
		tmp = m->heap[pos];
		m->heap[pos] = m->heap[min];
		m->heap[min] = tmp;
		pos = min;
	}
}

static void push(struct ringmerge *m, unsigned ring)
{
	unsigned pos = m->nheap++;

	m->heap[pos] = ring;
	while (pos > 0) {
		unsigned parent = (pos - 1) / 2, tmp;
		if (!before(m, m->heap[pos], m->heap[parent]))
			break;
		tmp = m->heap[pos];
		m->heap[pos] = m->heap[parent];
		m->heap[parent] = tmp;
		pos = parent;
	}
}

void ringmerge__pass(struct ringmerge *m, struct merge_ring *rings,
		     const struct record_decoder *d, struct recqueue *q, uint64_t bound,
		     struct merge_result *res)
{
	memset(res, 0, sizeof(*res));
	m->nheap = 0;
	for (unsigned i = 0; i < m->nr; i++) {
		struct cursor *c = &m->cur[i];
		/* The kernel publishes data_head with a release; reading it with acquire (the
		 * smp_rmb of the UAPI comment) makes the records before it visible. */
		c->head = __atomic_load_n(&rings[i].page->data_head, __ATOMIC_ACQUIRE);
		c->tail = rings[i].page->data_tail;
		if (peek(m, rings, i, d, bound, res))
			push(m, i);
	}
	while (m->nheap) {
		unsigned i = m->heap[0];
		struct cursor *c = &m->cur[i];
		uint8_t *dst = recqueue__reserve(q, c->size);

		if (!dst) {
			res->queue_full = true;
			break;
		}
		ring_read(&rings[i], c->tail, dst, c->size);
		c->tail += c->size;
		res->moved++;
		if (!peek(m, rings, i, d, bound, res))
			m->heap[0] = m->heap[--m->nheap];
		sift_down(m, 0);
	}
	/* Our reads complete before the kernel may overwrite what they read. */
	for (unsigned i = 0; i < m->nr; i++)
		__atomic_store_n(&rings[i].page->data_tail, m->cur[i].tail, __ATOMIC_RELEASE);
}
