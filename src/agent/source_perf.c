#include "agent/source_perf.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent/records.h"
#include "agent/recqueue.h"
#include "agent/ringmerge.h"
#include "util/log.h"
#include "util/strbuf.h"

#define READER_POLL_MS 1000	/* the reader thread drains at least this often */
#define READER_MIN_POLL_MS 10	/* and a lazy reader at most this often */
#define READER_LAZY_MS 50	/* a lazy reader at least this often: a process's first samples
				 * wait this long for it (see RT_LATE_NS in agent/sample_path.c) */
#define READER_HELD_MS 1	/* a record held for the order is merged this soon */
#define KICK_TOKEN UINT32_MAX	/* epoll data of the kick eventfd */

struct ring {
	int fd;
	unsigned cpu;
	struct perf_event_mmap_page *page;
	size_t map_len;
};

struct perf_source {
	struct sampler_config cfg;	/* its perf field is NULL: see ring_pages */
	unsigned ring_pages;
	struct ring *rings;
	struct merge_ring *mrings;	/* the same rings, as the merge reads them */
	struct ringmerge *merge;
	unsigned nr_rings;
	int epfd;
	struct record_decoder dec;	/* the consumer's decoder and counters */

	/* The reader thread moves records from the kernel's rings into the queue; the
	 * consumer (the caller of sampler__poll) decodes them. Shared fields are atomics. */
	struct recqueue *queue;
	pthread_t reader;
	bool reader_started;
	int kick_fd;		/* consumer -> reader: drain now (or stop) */
	int notify_fd;		/* reader -> consumer: records queued */
	uint64_t drain_req, drain_done;
	int stop;
	int eager;		/* wake_per_sample: the rings are in the epoll set now */
	int lazy_ms;		/* wake_per_sample, not eager: drain this often */
	uint64_t queue_full, reader_bad, wakeups;
};

/* Bytes one sample takes in a ring, about: header, callchain, and the stack copy. */
static uint64_t sample_bytes(const struct sampler_config *cfg)
{
	return 1024 + (cfg->user_regs_stack ? cfg->stack_size : 0);
}

/* Enough to hold about a second of samples of one CPU (the reader may be descheduled on
 * a busy host, or symbolizing at a session's end), within 256 KiB .. 8 MiB; with stack
 * copies at least 1 MiB, which at 11 Hz rides out a pause of several seconds (the first
 * flush of a session parses every binary it met). */
static unsigned default_ring_pages(const struct sampler_config *cfg)
{
	uint64_t want = (uint64_t)cfg->freq * sample_bytes(cfg) / (uint64_t)getpagesize();
	unsigned pages = cfg->user_regs_stack ? 256 : 64;

	while (pages < want && pages < 2048)
		pages *= 2;
	return pages;
}

/* How often a reader that no ring wakes drains: every READER_LAZY_MS, so that the first
 * samples of a runtime that starts mid-session are read soon enough to be read at all (20
 * wakeups a second, a few microseconds each), and at least every quarter of the time a CPU
 * sampling at full rate takes to fill its ring. */
static int lazy_poll_ms(const struct perf_source *s)
{
	const struct sampler_config *cfg = &s->cfg;
	uint64_t fill_ms = (uint64_t)s->ring_pages * (uint64_t)getpagesize() * 1000 /
			   ((uint64_t)(cfg->freq ? cfg->freq : 1) * sample_bytes(cfg));

	fill_ms /= 4;
	if (fill_ms < READER_MIN_POLL_MS)
		fill_ms = READER_MIN_POLL_MS;
	return fill_ms > READER_LAZY_MS ? READER_LAZY_MS : (int)fill_ms;
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

static int start_reader(struct perf_source *s, char *err, size_t errlen);
static void perf_close(void *src);

static int perf_open(const struct sampler_config *cfg, void **out, char *err, size_t errlen)
{
	struct perf_source *s = xcalloc(1, sizeof(*s));
	struct perf_event_attr attr;
	unsigned *cpus = NULL, nr = 0;
	int ret;

	s->cfg = *cfg;
	s->cfg.perf = NULL;
	s->epfd = s->kick_fd = s->notify_fd = -1;
	s->ring_pages = cfg->perf ? cfg->perf->ring_pages : 0;
	if (!s->ring_pages)
		s->ring_pages = default_ring_pages(cfg);
	if (s->ring_pages & (s->ring_pages - 1) || s->ring_pages > (1u << 20)) {
		errmsg(err, errlen, "ring size of %u pages is not a power of two up to 2^20",
		       s->ring_pages);
		ret = -EINVAL;
		goto fail;
	}
	ret = sample_source__online_cpus(&cpus, &nr);
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
	/* Every record carries its time, in a clock the reader can read too: the rings
	 * are merged in time order (agent/ringmerge.h). */
	attr.sample_id_all = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	if (cfg->wake_per_sample) {
		attr.wakeup_events = 1;
	} else {
		attr.watermark = 1;
		attr.wakeup_watermark = (uint32_t)(s->ring_pages * (uint64_t)getpagesize() / 4);
	}
	s->dec.sample_type = attr.sample_type;
	s->dec.sample_id_all = true;

	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		ret = -errno;
		errmsg(err, errlen, "failed to create epoll set: %s", strerror(errno));
		goto fail;
	}
	s->rings = xcalloc(nr, sizeof(*s->rings));
	s->mrings = xcalloc(nr, sizeof(*s->mrings));
	for (unsigned i = 0; i < nr; i++) {
		struct ring *r = &s->rings[i];
		size_t page = (size_t)getpagesize();
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };

		r->cpu = cpus[i];
		r->fd = perf_event_open(&attr, -1, (int)cpus[i]);
		if (r->fd < 0 && errno == EINVAL && i == 0 && attr.use_clockid) {
			/* Before Linux 4.1: the kernel's own clock, which the reader cannot
			 * read, so a pass merges everything it read, without a bound. */
			log_warn("perf events take no clock id on this kernel: records are "
				 "ordered within each read of the rings only");
			attr.use_clockid = 0;
			attr.clockid = 0;
			r->fd = perf_event_open(&attr, -1, (int)cpus[i]);
		}
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
		r->map_len = (s->ring_pages + 1) * page;
		r->page = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
		if (r->page == MAP_FAILED) {
			ret = -errno;
			r->page = NULL;
			errmsg(err, errlen, "failed to map the ring buffer of cpu %u (%zu KiB): %s",
			       cpus[i], r->map_len / 1024, strerror(errno));
			goto fail;
		}
		s->mrings[i].page = r->page;
		s->mrings[i].data = (uint8_t *)r->page + page;
		s->mrings[i].size = s->ring_pages * (uint64_t)page;
		if (!cfg->wake_per_sample && epoll_ctl(s->epfd, EPOLL_CTL_ADD, r->fd, &ev) < 0) {
			ret = -errno;
			errmsg(err, errlen, "failed to add cpu %u to epoll: %s", cpus[i],
			       strerror(errno));
			goto fail;
		}
	}
	s->dec.mono_clock = attr.use_clockid;
	s->merge = ringmerge__new(nr);
	s->lazy_ms = lazy_poll_ms(s);
	ret = start_reader(s, err, errlen);
	if (ret < 0)
		goto fail;
	free(cpus);
	*out = s;
	return 0;
fail:
	free(cpus);
	perf_close(s);
	return ret;
}

static void perf_close(void *src)
{
	struct perf_source *s = src;

	if (s->reader_started) {
		uint64_t one = 1;
		__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
		if (write(s->kick_fd, &one, sizeof(one)) < 0)
			log_debug("failed to wake the reader thread: %s", strerror(errno));
		pthread_join(s->reader, NULL);
	}
	recqueue__free(s->queue);
	if (s->kick_fd >= 0)
		close(s->kick_fd);
	if (s->notify_fd >= 0)
		close(s->notify_fd);
	for (unsigned i = 0; i < s->nr_rings; i++) {
		if (s->rings[i].page)
			munmap(s->rings[i].page, s->rings[i].map_len);
		if (s->rings[i].fd >= 0)
			close(s->rings[i].fd);
	}
	free(s->rings);
	free(s->mrings);
	ringmerge__free(s->merge);
	if (s->epfd >= 0)
		close(s->epfd);
	free(s);
}

static int ioctl_all(struct perf_source *s, unsigned long req)
{
	for (unsigned i = 0; i < s->nr_rings; i++)
		if (ioctl(s->rings[i].fd, req, 0) < 0)
			return -errno;
	return 0;
}

static int perf_enable(void *src, bool on)
{
	return ioctl_all(src, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE);
}

/* The bound of a pass (agent/ringmerge.h): its start, in the records' clock. */
static uint64_t pass_bound(const struct perf_source *s)
{
	struct timespec ts;

	if (!s->dec.mono_clock)
		return UINT64_MAX;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The reader thread: woken by a ring (watermark, or every sample while eager), by a kick,
 * or every READER_POLL_MS (lazy_ms when the rings cannot wake it), and READER_HELD_MS
 * after a pass that left records for the order. Each pass moves what the rings hold into
 * the queue in time order (a record that fills the queue waits in its ring for the next
 * pass; if the ring fills meanwhile the kernel counts what it drops in a LOST record). */
static void *reader_main(void *arg)
{
	struct perf_source *s = arg;
	struct epoll_event evs[16];
	uint64_t last_req = 0;
	bool held = false;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		uint64_t req, v, one = 1;
		struct merge_result res;
		bool lazy = s->cfg.wake_per_sample && !__atomic_load_n(&s->eager, __ATOMIC_ACQUIRE);
		int n = epoll_wait(s->epfd, evs, 16,
				   held ? READER_HELD_MS : lazy ? s->lazy_ms : READER_POLL_MS);

		if (n > 0)
			__atomic_fetch_add(&s->wakeups, 1, __ATOMIC_RELAXED);
		if (read(s->kick_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			break;
		req = __atomic_load_n(&s->drain_req, __ATOMIC_ACQUIRE);
		ringmerge__pass(s->merge, s->mrings, &s->dec, s->queue, pass_bound(s), &res);
		recqueue__commit(s->queue);
		__atomic_store_n(&s->drain_done, req, __ATOMIC_RELEASE);
		if (res.bad)
			__atomic_fetch_add(&s->reader_bad, res.bad, __ATOMIC_RELAXED);
		if (res.queue_full)
			__atomic_fetch_add(&s->queue_full, 1, __ATOMIC_RELAXED);
		held = res.held;
		/* The consumer is woken for new records, or for the drain it asked for. */
		if ((res.moved || req != last_req) && write(s->notify_fd, &one, sizeof(one)) < 0 &&
		    errno != EAGAIN)
			break;
		last_req = req;
	}
	return NULL;
}

static int start_reader(struct perf_source *s, char *err, size_t errlen)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = KICK_TOKEN };
	uint64_t ring_bytes = (uint64_t)s->nr_rings * s->ring_pages * (uint64_t)getpagesize();
	sigset_t all, old;
	int ret;

	/* The queue absorbs pauses of the consumer: twice the rings, 2 .. 32 MiB. */
	ring_bytes *= 2;
	if (ring_bytes < (2u << 20))
		ring_bytes = 2u << 20;
	if (ring_bytes > (32u << 20))
		ring_bytes = 32u << 20;
	s->queue = recqueue__new((size_t)ring_bytes);
	s->kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	s->notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->kick_fd < 0 || s->notify_fd < 0 ||
	    epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->kick_fd, &ev) < 0) {
		ret = -errno;
		errmsg(err, errlen, "failed to create the reader's event fds: %s", strerror(errno));
		return ret;
	}
	/* Signals (SIGINT, SIGTERM) go to the consumer, whose poll they interrupt. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&s->reader, NULL, reader_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret < 0) {
		errmsg(err, errlen, "failed to start the reader thread: %s", strerror(-ret));
		return ret;
	}
	s->reader_started = true;
	return 0;
}

/* Decodes every queued record. */
static int consume(struct perf_source *s, const struct sampler_handlers *h)
{
	const uint8_t *rec;
	size_t len;
	int n = 0;

	while ((rec = recqueue__peek(s->queue, &len))) {
		struct perf_event_header hdr;
		memcpy(&hdr, rec, sizeof(hdr));
		if (hdr.size == len)
			records__handle(&s->dec, &hdr, rec, h);
		else
			s->dec.stats.bad++;
		recqueue__pop(s->queue);
		n++;
	}
	return n;
}

static int wait_notify(struct perf_source *s, int timeout_ms)
{
	struct pollfd pfd = { .fd = s->notify_fd, .events = POLLIN };
	uint64_t v;

	if (poll(&pfd, 1, timeout_ms) < 0)
		return -errno;
	if (read(s->notify_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

static int perf_drain(void *src, const struct sampler_handlers *h)
{
	struct perf_source *s = src;
	uint64_t req = __atomic_add_fetch(&s->drain_req, 1, __ATOMIC_ACQ_REL), one = 1;
	int n = 0;

	if (write(s->kick_fd, &one, sizeof(one)) < 0)
		return -errno;
	/* Wait (2 s at most) for a reader pass that began after the request. */
	for (int i = 0; i < 100; i++) {
		n += consume(s, h);
		if (__atomic_load_n(&s->drain_done, __ATOMIC_ACQUIRE) >= req)
			break;
		wait_notify(s, 20);
	}
	return n + consume(s, h);
}

static int perf_poll(void *src, int timeout_ms, const struct sampler_handlers *h)
{
	struct perf_source *s = src;
	int n = consume(s, h), ret;

	if (n)
		return n;
	ret = wait_notify(s, timeout_ms);
	if (ret < 0)
		return ret;
	return consume(s, h);
}

static int perf_set_eager(void *src, bool eager)
{
	struct perf_source *s = src;
	uint64_t one = 1;

	if (!s->cfg.wake_per_sample || __atomic_load_n(&s->eager, __ATOMIC_ACQUIRE) == eager)
		return 0;
	for (unsigned i = 0; i < s->nr_rings; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };
		if (epoll_ctl(s->epfd, eager ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, s->rings[i].fd,
			      &ev) < 0 && errno != EEXIST && errno != ENOENT)
			return -errno;
	}
	__atomic_store_n(&s->eager, eager, __ATOMIC_RELEASE);
	/* a lazy reader may be in a long wait: let it pick up its new timeout */
	if (write(s->kick_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

static struct sampler_stats perf_stats(const void *src)
{
	const struct perf_source *s = src;
	struct sampler_stats st = s->dec.stats;

	st.bad += __atomic_load_n(&s->reader_bad, __ATOMIC_RELAXED);
	st.queue_full = __atomic_load_n(&s->queue_full, __ATOMIC_RELAXED);
	st.wakeups = __atomic_load_n(&s->wakeups, __ATOMIC_RELAXED);
	return st;
}

static unsigned perf_nr_cpus(const void *src)
{
	return ((const struct perf_source *)src)->nr_rings;
}

const struct sample_source_ops perf_source_ops = {
	.name = "perf",
	.open = perf_open,
	.enable = perf_enable,
	.poll = perf_poll,
	.drain = perf_drain,
	.set_eager = perf_set_eager,
	.stats = perf_stats,
	.nr_cpus = perf_nr_cpus,
	.close = perf_close,
};
