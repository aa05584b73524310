#include "agent/records.h"

#include <errno.h>
#include <string.h>

#define MAX_CHAIN RECORDS_MAX_CHAIN

/* Bytes of the struct sample_id that ends every record but samples with sample_id_all. */
static size_t id_size(const struct record_decoder *d)
{
	static const uint64_t fields[] = { PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
					   PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
					   PERF_SAMPLE_IDENTIFIER };
	size_t n = 0;

	if (!d->sample_id_all)
		return 0;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		n += d->sample_type & fields[i] ? 8 : 0;
	return n;
}

long records__time_offset(const struct record_decoder *d, uint32_t type, size_t size)
{
	const size_t hdr = sizeof(struct perf_event_header);
	uint64_t t = d->sample_type;
	size_t off;

	if (!(t & PERF_SAMPLE_TIME))
		return -1;
	if (type == PERF_RECORD_SAMPLE) {
		/* IDENTIFIER, IP and TID come before TIME in a sample */
		off = hdr + (t & PERF_SAMPLE_IDENTIFIER ? 8 : 0) + (t & PERF_SAMPLE_IP ? 8 : 0) +
		      (t & PERF_SAMPLE_TID ? 8 : 0);
		return off + 8 <= size ? (long)off : -1;
	}
	if (!d->sample_id_all || size < hdr + id_size(d))
		return -1;
	/* in the sample_id at the end, TIME is followed by ID, STREAM_ID, CPU, IDENTIFIER */
	off = size - 8 - (t & PERF_SAMPLE_ID ? 8 : 0) - (t & PERF_SAMPLE_STREAM_ID ? 8 : 0) -
	      (t & PERF_SAMPLE_CPU ? 8 : 0) - (t & PERF_SAMPLE_IDENTIFIER ? 8 : 0);
	return (long)off;
}

/* A cursor over one record, refusing to read past its end. */
struct cur {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t cur_u64(struct cur *c)
{
	uint64_t v = 0;

	if (c->end - c->p < 8) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static const uint8_t *cur_bytes(struct cur *c, uint64_t n)
{
	const uint8_t *p = c->p;

	if ((uint64_t)(c->end - c->p) < n) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	return p;
}

static void split_callchain(struct record_decoder *s, struct sampler_sample *out, const uint64_t *ips,
			    uint64_t nr)
{
	enum { CTX_NONE, CTX_KERNEL, CTX_USER } ctx = CTX_NONE;

	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip = ips[i];
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			if (ip == (uint64_t)PERF_CONTEXT_KERNEL)
				ctx = CTX_KERNEL;
			else if (ip == (uint64_t)PERF_CONTEXT_USER)
				ctx = CTX_USER;
			else
				ctx = CTX_NONE;	/* guest or hypervisor frames: not ours */
			continue;
		}
		if (ctx == CTX_KERNEL && out->nr_kernel < MAX_CHAIN)
			s->kips[out->nr_kernel++] = ip;
		else if (ctx == CTX_USER && out->nr_user < MAX_CHAIN)
			s->uips[out->nr_user++] = ip;
	}
}

static int decode_sample(struct record_decoder *s, struct cur *c, struct sampler_sample *out)
{
	uint64_t v;

	memset(out, 0, sizeof(*out));
	out->kernel_ips = s->kips;
	out->user_ips = s->uips;
	v = cur_u64(c);
	out->pid = (pid_t)(uint32_t)v;
	out->tid = (pid_t)(uint32_t)(v >> 32);
	out->time = cur_u64(c);
	out->time_mono = s->mono_clock;
	out->cpu = (uint32_t)cur_u64(c);
	if (s->sample_type & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr = cur_u64(c);
		const uint8_t *ips;
		if (nr > 4096)
			return -EINVAL;
		ips = cur_bytes(c, nr * 8);
		if (!ips)
			return -EINVAL;
		/* Copied through memcpy: ips need not be aligned. */
		uint64_t tmp[MAX_CHAIN * 2];
		if (nr > sizeof(tmp) / sizeof(tmp[0]))
			nr = sizeof(tmp) / sizeof(tmp[0]);
		memcpy(tmp, ips, nr * 8);
		split_callchain(s, out, tmp, nr);
	}
	if (s->sample_type & PERF_SAMPLE_REGS_USER) {
		uint64_t abi = cur_u64(c);
		if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
			/* Registers come in increasing bit order: BP, SP, IP. */
			out->bp = cur_u64(c);
			out->sp = cur_u64(c);
			out->ip = cur_u64(c);
			out->has_regs = true;
		}
	}
	if (s->sample_type & PERF_SAMPLE_STACK_USER) {
		uint64_t size = cur_u64(c);
		if (size) {
			const uint8_t *data = cur_bytes(c, size);
			uint64_t dyn = cur_u64(c);
			out->stack = data;
			out->stack_len = dyn < size ? dyn : size;
		}
	}
	return c->bad ? -EINVAL : 0;
}

void records__handle(struct record_decoder *s, const struct perf_event_header *hdr,
		     const uint8_t *rec, const struct sampler_handlers *h)
{
	struct cur c = { rec + sizeof(*hdr), rec + hdr->size, false };

	if (hdr->size < sizeof(*hdr)) {
		s->stats.bad++;
		return;
	}
	if (hdr->type != PERF_RECORD_SAMPLE) {
		/* the sample_id at the end is not part of the record's own fields */
		size_t ids = id_size(s);
		if (hdr->size < sizeof(*hdr) + ids) {
			s->stats.bad++;
			return;
		}
		c.end -= ids;
	}
	switch (hdr->type) {
	case PERF_RECORD_SAMPLE: {
		struct sampler_sample smp;
		s->stats.samples++;
		if (decode_sample(s, &c, &smp) < 0) {
			s->stats.bad++;
			return;
		}
		if (h->sample)
			h->sample(h->ctx, &smp);
		break;
	}
	case PERF_RECORD_MMAP2: {
		struct mapping m = { 0 };
		uint64_t v = cur_u64(&c);
		const uint8_t *ids;
		pid_t pid = (pid_t)(uint32_t)v, tid = (pid_t)(uint32_t)(v >> 32);

		m.start = cur_u64(&c);
		m.end = m.start + cur_u64(&c);
		m.pgoff = cur_u64(&c);
		ids = cur_bytes(&c, 24);
		v = cur_u64(&c);
		m.prot = (uint32_t)v;
		if (c.bad || !ids || c.p >= c.end || c.end[-1] != '\0') {
			s->stats.bad++;
			return;
		}
		if (hdr->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			m.build_id_len = ids[0] > MAPPING_BUILD_ID_MAX ? MAPPING_BUILD_ID_MAX : ids[0];
			memcpy(m.build_id, ids + 4, m.build_id_len);
		} else {
			memcpy(&m.maj, ids, 4);
			memcpy(&m.min, ids + 4, 4);
			memcpy(&m.ino, ids + 8, 8);
		}
		m.path = (const char *)c.p;
		if (h->mmap)
			h->mmap(h->ctx, pid, tid, &m);
		break;
	}
	case PERF_RECORD_COMM: {
		uint64_t v = cur_u64(&c);
		if (c.bad || c.p >= c.end || !memchr(c.p, '\0', (size_t)(c.end - c.p))) {
			s->stats.bad++;
			return;
		}
		if (h->comm)
			h->comm(h->ctx, (pid_t)(uint32_t)v, (pid_t)(uint32_t)(v >> 32),
				(const char *)c.p, hdr->misc & PERF_RECORD_MISC_COMM_EXEC);
		break;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		uint64_t a = cur_u64(&c), b = cur_u64(&c), time = cur_u64(&c);
		pid_t pid = (pid_t)(uint32_t)a, ppid = (pid_t)(uint32_t)(a >> 32);
		pid_t tid = (pid_t)(uint32_t)b;
		if (c.bad) {
			s->stats.bad++;
			return;
		}
		if (hdr->type == PERF_RECORD_FORK && h->fork)
			h->fork(h->ctx, pid, ppid, tid, s->mono_clock ? time : 0);
		else if (hdr->type == PERF_RECORD_EXIT && h->exit)
			h->exit(h->ctx, pid, tid);
		break;
	}
	case PERF_RECORD_LOST: {
		cur_u64(&c);	/* id */
		s->stats.lost += cur_u64(&c);
		break;
	}
	case PERF_RECORD_THROTTLE:
		s->stats.throttled++;
		break;
	default:
		break;
	}
}

