#include "agent/sampler.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/log.h"
#include "util/strbuf.h"

#define MAX_CHAIN 512

struct ring {
	int fd;
	unsigned cpu;
	struct perf_event_mmap_page *page;
	uint8_t *data;
	uint64_t mask;
	size_t map_len;
};

struct sampler {
	struct sampler_config cfg;
	struct ring *rings;
	unsigned nr_rings;
	int epfd;
	uint64_t sample_type;
	struct sampler_stats stats;
	uint8_t scratch[1 << 16];	/* a record that wraps the ring end is copied here */
	uint64_t kips[MAX_CHAIN], uips[MAX_CHAIN];
};

static int online_cpus(unsigned **out, unsigned *nr)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned *cpus = NULL, n = 0, alloc = 0;
	int ret = strbuf_read_file(&sb, "/sys/devices/system/cpu/online");
	char *p;

	if (ret < 0)
		goto out;
	p = sb.buf;
	while (*p && *p != '\n') {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;
		if (end == p) {
			ret = -EINVAL;
			goto out;
		}
		p = end;
		if (*p == '-')
			hi = strtoul(p + 1, &p, 10);
		for (unsigned long c = lo; c <= hi && c < 65536; c++) {
			if (n == alloc) {
				alloc = alloc ? alloc * 2 : 16;
				cpus = xrealloc(cpus, alloc * sizeof(*cpus));
			}
			cpus[n++] = (unsigned)c;
		}
		if (*p == ',')
			p++;
	}
	ret = n ? 0 : -ENODEV;
out:
	strbuf_release(&sb);
	if (ret < 0) {
		free(cpus);
		return ret;
	}
	*out = cpus;
	*nr = n;
	return 0;
}

/* Enough to hold about a second of samples of one CPU (the reader may be descheduled on
 * a busy host, or symbolizing at a session's end), within 256 KiB .. 8 MiB; with stack
 * copies at least 1 MiB, which at 11 Hz rides out a pause of several seconds (the first
 * flush of a session parses every binary it met). */
static unsigned default_ring_pages(const struct sampler_config *cfg)
{
	uint64_t per_sample = 1024 + (cfg->user_regs_stack ? cfg->stack_size : 0);
	uint64_t want = (uint64_t)cfg->freq * per_sample / (uint64_t)getpagesize();
	unsigned pages = cfg->user_regs_stack ? 256 : 64;

	while (pages < want && pages < 2048)
		pages *= 2;
	return pages;
}

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int paranoid_level(void)
{
	struct strbuf sb = STRBUF_INIT;
	int level = 99;

	if (strbuf_read_file(&sb, "/proc/sys/kernel/perf_event_paranoid") == 0)
		level = atoi(sb.buf);
	strbuf_release(&sb);
	return level;
}

int sampler__open(const struct sampler_config *cfg, struct sampler **out, char *err,
		  size_t errlen)
{
	struct sampler *s = xcalloc(1, sizeof(*s));
	struct perf_event_attr attr;
	unsigned *cpus = NULL, nr = 0;
	int ret;

	s->cfg = *cfg;
	s->epfd = -1;
	if (!s->cfg.ring_pages)
		s->cfg.ring_pages = default_ring_pages(cfg);
	if (s->cfg.ring_pages & (s->cfg.ring_pages - 1)) {
		errmsg(err, errlen, "ring size of %u pages is not a power of two", s->cfg.ring_pages);
		ret = -EINVAL;
		goto fail;
	}
	ret = online_cpus(&cpus, &nr);
	if (ret < 0) {
		errmsg(err, errlen, "failed to read '/sys/devices/system/cpu/online': %s",
		       strerror(-ret));
		goto fail;
	}

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.freq = 1;
	attr.sample_freq = cfg->freq;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	if (cfg->callchain)
		attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (cfg->user_regs_stack) {
		attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		attr.sample_regs_user = (1ULL << PERF_REG_X86_BP) | (1ULL << PERF_REG_X86_SP) |
					(1ULL << PERF_REG_X86_IP);
		attr.sample_stack_user = cfg->stack_size;
		/* The user part of the kernel's fp chain is useless when we unwind with CFI. */
		attr.exclude_callchain_user = 1;
	}
	attr.disabled = 1;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.comm = 1;
	attr.comm_exec = 1;
	attr.task = 1;
	attr.watermark = 1;
	attr.wakeup_watermark = (uint32_t)(s->cfg.ring_pages * (uint64_t)getpagesize() / 4);
	s->sample_type = attr.sample_type;

	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		ret = -errno;
		errmsg(err, errlen, "failed to create epoll set: %s", strerror(errno));
		goto fail;
	}
	s->rings = xcalloc(nr, sizeof(*s->rings));
	for (unsigned i = 0; i < nr; i++) {
		struct ring *r = &s->rings[i];
		size_t page = (size_t)getpagesize();
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };

		r->cpu = cpus[i];
		r->fd = perf_event_open(&attr, -1, (int)cpus[i]);
		if (r->fd < 0) {
			ret = -errno;
			if (ret == -EACCES || ret == -EPERM)
				errmsg(err, errlen,
				       "failed to open perf events on cpu %u: %s; system-wide "
				       "profiling needs root, or CAP_PERFMON (CAP_SYS_ADMIN before "
				       "Linux 5.8), or kernel.perf_event_paranoid <= 0 (it is %d)",
				       cpus[i], strerror(errno), paranoid_level());
			else
				errmsg(err, errlen, "failed to open perf event on cpu %u: %s",
				       cpus[i], strerror(errno));
			goto fail;
		}
		s->nr_rings = i + 1;
		r->map_len = (s->cfg.ring_pages + 1) * page;
		r->page = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
		if (r->page == MAP_FAILED) {
			ret = -errno;
			r->page = NULL;
			errmsg(err, errlen, "failed to map the ring buffer of cpu %u (%zu KiB): %s",
			       cpus[i], r->map_len / 1024, strerror(errno));
			goto fail;
		}
		r->data = (uint8_t *)r->page + page;
		r->mask = s->cfg.ring_pages * (uint64_t)page - 1;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, r->fd, &ev) < 0) {
			ret = -errno;
			errmsg(err, errlen, "failed to add cpu %u to epoll: %s", cpus[i],
			       strerror(errno));
			goto fail;
		}
	}
	free(cpus);
	*out = s;
	return 0;
fail:
	free(cpus);
	sampler__free(s);
	return ret;
}

void sampler__free(struct sampler *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->nr_rings; i++) {
		if (s->rings[i].page)
			munmap(s->rings[i].page, s->rings[i].map_len);
		if (s->rings[i].fd >= 0)
			close(s->rings[i].fd);
	}
	free(s->rings);
	if (s->epfd >= 0)
		close(s->epfd);
	free(s);
}

static int ioctl_all(struct sampler *s, unsigned long req)
{
	for (unsigned i = 0; i < s->nr_rings; i++)
		if (ioctl(s->rings[i].fd, req, 0) < 0)
			return -errno;
	return 0;
}

int sampler__enable(struct sampler *s)
{
	return ioctl_all(s, PERF_EVENT_IOC_ENABLE);
}

int sampler__disable(struct sampler *s)
{
	return ioctl_all(s, PERF_EVENT_IOC_DISABLE);
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

static void split_callchain(struct sampler *s, struct sampler_sample *out, const uint64_t *ips,
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

static int decode_sample(struct sampler *s, struct cur *c, struct sampler_sample *out)
{
	uint64_t v;

	memset(out, 0, sizeof(*out));
	out->kernel_ips = s->kips;
	out->user_ips = s->uips;
	v = cur_u64(c);
	out->pid = (pid_t)(uint32_t)v;
	out->tid = (pid_t)(uint32_t)(v >> 32);
	out->time = cur_u64(c);
	out->cpu = (uint32_t)cur_u64(c);
	if (s->sample_type & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr = cur_u64(c);
		const uint8_t *ips;
		if (nr > 4096)
			return -EINVAL;
		ips = cur_bytes(c, nr * 8);
		if (!ips)
			return -EINVAL;
		/* ips may be unaligned in the scratch copy; copy through memcpy. */
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

static void handle_record(struct sampler *s, const struct perf_event_header *hdr,
			  const uint8_t *rec, const struct sampler_handlers *h)
{
	struct cur c = { rec + sizeof(*hdr), rec + hdr->size, false };

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
		uint64_t a = cur_u64(&c), b = cur_u64(&c);
		pid_t pid = (pid_t)(uint32_t)a, ppid = (pid_t)(uint32_t)(a >> 32);
		pid_t tid = (pid_t)(uint32_t)b;
		if (c.bad) {
			s->stats.bad++;
			return;
		}
		if (hdr->type == PERF_RECORD_FORK && h->fork)
			h->fork(h->ctx, pid, ppid, tid);
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

/* Reads one ring empty. The kernel publishes data_head with a release; we read it with
 * acquire (the smp_rmb of the UAPI comment), consume, then publish data_tail with a
 * release so that our reads complete before the kernel may overwrite the space. */
static int drain_ring(struct sampler *s, struct ring *r, const struct sampler_handlers *h)
{
	uint64_t head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->page->data_tail;
	uint64_t size = r->mask + 1;
	int n = 0;

	while (tail < head) {
		struct perf_event_header hdr;
		uint64_t off = tail & r->mask;
		const uint8_t *rec;

		if (head - tail < sizeof(hdr))
			break;
		if (off + sizeof(hdr) <= size) {
			memcpy(&hdr, r->data + off, sizeof(hdr));
		} else {
			size_t first = (size_t)(size - off);
			memcpy(&hdr, r->data + off, first);
			memcpy((uint8_t *)&hdr + first, r->data, sizeof(hdr) - first);
		}
		if (hdr.size < sizeof(hdr) || hdr.size > head - tail) {
			/* Corrupt or torn: give up on what is in the ring rather than loop. */
			s->stats.bad++;
			tail = head;
			break;
		}
		if (off + hdr.size <= size) {
			rec = r->data + off;
		} else {
			size_t first = (size_t)(size - off);
			memcpy(s->scratch, r->data + off, first);
			memcpy(s->scratch + first, r->data, hdr.size - first);
			rec = s->scratch;
		}
		handle_record(s, &hdr, rec, h);
		tail += hdr.size;
		n++;
	}
	__atomic_store_n(&r->page->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

int sampler__drain(struct sampler *s, const struct sampler_handlers *h)
{
	int n = 0;

	for (unsigned i = 0; i < s->nr_rings; i++)
		n += drain_ring(s, &s->rings[i], h);
	return n;
}

int sampler__poll(struct sampler *s, int timeout_ms, const struct sampler_handlers *h)
{
	struct epoll_event evs[16];
	int n = epoll_wait(s->epfd, evs, 16, timeout_ms);

	if (n < 0)
		return -errno;
	if (n > 0)
		s->stats.wakeups++;
	return sampler__drain(s, h);
}

struct sampler_stats sampler__stats(const struct sampler *s)
{
	return s->stats;
}

unsigned sampler__nr_cpus(const struct sampler *s)
{
	return s->nr_rings;
}
