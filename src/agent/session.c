#include "agent/session.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "agent/proctab.h"
#include "agent/sampler.h"
#include "agent/stacks.h"
#include "cmd/cmd.h"
#include "runtimes/registry.h"
#include "symbols/symbolizer.h"
#include "unwind/unwind.h"
#include "util/log.h"
#include "util/strbuf.h"

#define MAX_USER 256
#define MAX_RT 256
#define POLL_MS 1000	/* signals interrupt the wait; the duration ends it */

struct retired_rt {
	const struct runtime_ops *ops;
	struct runtime_proc *rt;
};

struct session {
	struct session_config cfg;
	enum perf_mode mode;
	json_t *run_arguments;
	struct runtime_choices runtimes;	/* a copy of cfg.runtimes */
	struct sampler *sampler;
	struct proctab *procs;
	struct symbolizer *sym;
	struct unwinder *unwinder;
	struct stacks *stacks;
	struct sampler_handlers handlers;
	/* Per runtime of the registry (same index): its collector, NULL when it has none,
	 * is disabled or could not start. */
	struct runtime_collector **collectors;
	size_t nr_runtimes;

	struct retired_rt *retired;	/* runtime state of images replaced by exec */
	size_t nr_retired, alloc_retired;

	/* This session's counters. */
	struct timespec start_wall, start_mono;
	struct rusage start_usage;
	struct sampler_stats start_stats;
	uint64_t idle, filtered, unwind_errors;

	/* Scratch for one sample. */
	uint64_t upcs[MAX_USER];
	const struct mapping *umaps[MAX_USER];
	struct rt_frame rt[MAX_RT];
};

const char *perf_mode__name(enum perf_mode mode)
{
	static const char *const names[] = { "fp", "dwarf", "smart", "disabled" };
	return mode <= PERF_MODE_DISABLED ? names[mode] : "?";
}

int perf_mode__parse(const char *name, enum perf_mode *mode)
{
	for (int m = PERF_MODE_FP; m <= PERF_MODE_DISABLED; m++)
		if (!strcmp(name, perf_mode__name((enum perf_mode)m))) {
			*mode = (enum perf_mode)m;
			return 0;
		}
	return -EINVAL;
}

enum perf_mode session__mode(const struct session *s)
{
	return s->mode;
}

static bool runtime_disabled(const struct session *s, const char *name)
{
	return !runtime_choices__enabled(&s->runtimes, name);
}

/* Process p maps path: tells every enabled runtime that recognizes the file. An
 * interleave reader looks at the process again at its next sample (a runtime loaded late,
 * by dlopen: libpython into uwsgi or a plugin host); a collector is told it was seen. */
static void runtime_seen(struct session *s, struct proc *p, const char *path)
{
	for (size_t i = 0; path && i < s->nr_runtimes; i++) {
		const struct runtime_ops *r = runtime_registry[i];
		if (!r->likely || runtime_disabled(s, r->name) || !r->likely(path))
			continue;
		if (r->merge == RUNTIME_INTERLEAVE && r->attach && !p->rt)
			p->rt_checked = false;
		if (s->collectors[i] && r->seen)
			r->seen(s->collectors[i], p->ref.pid);
	}
}

/* Attaches the first runtime reader that recognizes p, once per image. */
static void attach_runtime(struct session *s, struct proc *p)
{
	if (p->rt) {	/* the process exec'd: its old reader waits for the flush */
		if (s->nr_retired == s->alloc_retired) {
			s->alloc_retired = s->alloc_retired ? s->alloc_retired * 2 : 8;
			s->retired = xrealloc(s->retired, s->alloc_retired * sizeof(*s->retired));
		}
		s->retired[s->nr_retired++] = (struct retired_rt){ p->rt_ops, p->rt };
		p->rt = NULL;
		p->rt_ops = NULL;
	}
	p->rt_checked = true;
	p->skip_reason[0] = '\0';
	for (const struct runtime_ops *const *r = runtime_registry; *r; r++) {
		char reason[128] = "";
		if (!(*r)->attach || runtime_disabled(s, (*r)->name))
			continue;
		p->rt = (*r)->attach(&p->ref, reason);
		if (p->rt) {
			int ret = sampler__set_eager(s->sampler, true);
			p->rt_ops = *r;
			if (ret < 0)
				log_warn("failed to wake the reader per sample: %s", strerror(-ret));
			return;
		}
		if (reason[0]) {
			snprintf(p->skip_reason, sizeof(p->skip_reason), "%s", reason);
			return;
		}
	}
}

/* Attaches the runtime of a process found at start-up that one probably runs, and tells
 * the collectors about it. */
static void attach_found(struct proc *p, void *ctx)
{
	struct session *s = ctx;

	if (!p->selected || p->exited || p->rt_checked)
		return;
	p->rt_checked = true;	/* runtime_seen() clears it when a reader recognizes a file */
	for (size_t i = 0; i < proctab__nr_mappings(p->mm); i++)
		runtime_seen(s, p, proctab__mapping_at(p->mm, i)->path);
	if (!p->rt_checked)
		attach_runtime(s, p);
	else
		p->rt_checked = false;	/* no reader's: its first sample looks */
}

struct find_ctx {
	struct proctab *procs;
	struct proc *proc;
	bool reloaded;
};

/* The unwinder's view of the process's mappings; a miss re-reads /proc once. */
static const struct mapping *find_mapping(void *ctx, uint64_t addr)
{
	struct find_ctx *c = ctx;
	const struct mapping *m = proctab__mapping(c->proc->mm, addr);

	if (!m && !c->reloaded && !c->proc->exited) {
		c->reloaded = true;
		if (proctab__reload(c->procs, c->proc) == 0)
			m = proctab__mapping(c->proc->mm, addr);
	}
	return m;
}

static uint32_t unwind_user(struct session *s, struct proc *p, const struct sampler_sample *smp,
			    bool *truncated)
{
	struct unwind_sample us = {
		.regs = { smp->ip, smp->sp, smp->bp },
		.stack = smp->stack,
		.stack_len = smp->stack_len,
	};
	struct find_ctx fc = { s->procs, p, false };
	int n;

	if (!smp->has_regs)
		return 0;	/* a kernel thread: no user stack */
	n = unwinder__unwind(s->unwinder, &p->ref, &us, find_mapping, &fc, s->upcs, MAX_USER,
			     truncated);
	if (n < 0) {
		s->unwind_errors++;
		s->upcs[0] = smp->ip;
		*truncated = true;
		return 1;
	}
	return (uint32_t)n;
}

static void on_sample(void *ctx, const struct sampler_sample *smp)
{
	struct session *s = ctx;
	struct stack_sample ss = { 0 };
	struct proc *p;
	uint32_t nu = 0;

	if (smp->pid <= 0) {
		s->idle++;
		return;
	}
	p = proctab__get(s->procs, smp->pid);
	if (!p || !p->selected) {
		s->filtered++;
		return;
	}
	if (s->unwinder) {
		nu = unwind_user(s, p, smp, &ss.truncated);
	} else {
		nu = smp->nr_user < MAX_USER ? smp->nr_user : MAX_USER;
		memcpy(s->upcs, smp->user_ips, nu * sizeof(*s->upcs));
	}
	/* A frame-pointer walk through code built without them ends in garbage; an address
	 * in the first page is never code, so the walk is cut there. */
	for (uint32_t i = 1; i < nu; i++)
		if (s->upcs[i] < 4096) {
			nu = i;
			ss.truncated = s->unwinder != NULL;
			break;
		}
	for (uint32_t i = 0; i < nu; i++) {
		const struct mapping *m = proctab__mapping(p->mm, s->upcs[i]);
		if (!m && i == 0 && !p->exited) {
			/* The sampled ip is code for sure (deeper fp frames may be garbage): the
			 * records were lost, or seen out of order across CPUs. Read /proc again. */
			if (proctab__reload(s->procs, p) == 0)
				m = proctab__mapping(p->mm, s->upcs[i]);
		}
		if (m && proctab__first_use(m))
			symbolizer__pin(s->sym, &p->ref, m);
		s->umaps[i] = m;
	}
	/* Kernel threads (no mappings) run no runtime: not worth a look. */
	if (!p->rt_checked && proctab__nr_mappings(p->mm))
		attach_runtime(s, p);
	if (p->rt) {
		int n = p->rt_ops->sample(p->rt, smp->tid, s->rt, MAX_RT);
		if (n > 0) {
			ss.rt_ops = p->rt_ops;
			ss.rt = p->rt;
			ss.rt_frames = s->rt;
			ss.nr_rt = (uint32_t)n;
		}
	}
	for (size_t i = 0; i < s->nr_runtimes; i++) {
		const struct runtime_ops *r = runtime_registry[i];
		if (s->collectors[i] && r->merge == RUNTIME_REPLACE &&
		    r->covers(s->collectors[i], smp->pid)) {
			ss.tid = smp->tid;	/* a collector may replace this thread's stack */
			break;
		}
	}
	ss.proc = p;
	ss.mm = p->mm;
	ss.comm = p->comm;
	ss.kernel_ips = smp->kernel_ips;
	ss.nr_kernel = smp->nr_kernel;
	ss.user_ips = s->upcs;
	ss.user_maps = s->umaps;
	ss.nr_user = nu;
	stacks__add(s->stacks, &ss);
}

static void on_comm(void *ctx, pid_t pid, pid_t tid, const char *comm, bool exec)
{
	struct session *s = ctx;

	proctab__comm(s->procs, pid, tid, comm, exec);
	for (size_t i = 0; exec && i < s->nr_runtimes; i++)
		if (s->collectors[i] && runtime_registry[i]->exec)
			runtime_registry[i]->exec(s->collectors[i], pid);
}

static void on_mmap(void *ctx, pid_t pid, pid_t tid, const struct mapping *m)
{
	struct session *s = ctx;
	struct proc *p;

	proctab__mmap(s->procs, pid, m);
	/* A runtime is recognized by what the process maps, whatever it is called. */
	if ((p = proctab__find(s->procs, pid)) && p->selected)
		runtime_seen(s, p, m->path);
}

static void on_fork(void *ctx, pid_t pid, pid_t ppid, pid_t tid)
{
	proctab__fork(((struct session *)ctx)->procs, pid, ppid, tid);
}

static void on_exit_rec(void *ctx, pid_t pid, pid_t tid)
{
	proctab__exit(((struct session *)ctx)->procs, pid, tid);
}

static void begin(struct session *s)
{
	clock_gettime(CLOCK_REALTIME, &s->start_wall);
	clock_gettime(CLOCK_MONOTONIC, &s->start_mono);
	getrusage(RUSAGE_SELF, &s->start_usage);
	s->start_stats = sampler__stats(s->sampler);
	s->idle = s->filtered = s->unwind_errors = 0;
}

/* Starts the lifecycle of every enabled runtime that has one. */
static void start_collectors(struct session *s)
{
	for (size_t i = 0; i < s->nr_runtimes; i++) {
		const struct runtime_ops *r = runtime_registry[i];
		struct runtime_env env = { .freq = s->cfg.freq, .pids = s->cfg.pids,
					   .nr_pids = s->cfg.nr_pids,
					   .mode = runtime_choices__mode(&s->runtimes, r->name),
					   .flags = s->runtimes.given };
		if (r->start && !runtime_disabled(s, r->name))
			s->collectors[i] = r->start(&env);	/* NULL: logged, runtime off */
	}
}

int session__open(const struct session_config *cfg, struct session **out, char *err,
		  size_t errlen)
{
	struct session *s = xcalloc(1, sizeof(*s));
	struct sampler_config sc = { 0 };
	int ret;

	s->cfg = *cfg;
	s->mode = cfg->mode;
	s->run_arguments = cfg->run_arguments ? json_deep_copy(cfg->run_arguments) : json_object();
	runtime_choices_copy(&s->runtimes, cfg->runtimes);
	while (runtime_registry[s->nr_runtimes])
		s->nr_runtimes++;
	s->collectors = xcalloc(s->nr_runtimes + 1, sizeof(*s->collectors));
	if (s->mode == PERF_MODE_DWARF || s->mode == PERF_MODE_SMART) {
		s->unwinder = unwinder__new(s->mode == PERF_MODE_DWARF ? UNWIND_DWARF : UNWIND_SMART, 0);
		if (!s->unwinder) {
			log_warn("no CFI unwinder is available: --perf-mode %s falls back to fp",
				 perf_mode__name(s->mode));
			s->mode = PERF_MODE_FP;
		}
	}
	sc.freq = cfg->freq;
	sc.callchain = s->mode != PERF_MODE_DISABLED;
	sc.user_regs_stack = s->unwinder != NULL;
	sc.stack_size = cfg->stack_size;
	/* A runtime reader must see the thread at the moment of its sample: drained by
	 * watermark, or even every millisecond, a burst of samples all got the stack of the
	 * burst's end and Python shares were off by 5-10 points. One wakeup per sample costs
	 * 22 wakeups a second at 11 Hz on 2 CPUs, far less than polling. */
	for (const struct runtime_ops *const *r = runtime_registry; *r; r++)
		sc.wake_per_sample |= (*r)->merge == RUNTIME_INTERLEAVE && (*r)->sample &&
				      !runtime_disabled(s, (*r)->name);
	ret = sampler__open(&sc, &s->sampler, err, errlen);
	if (ret < 0)
		goto fail;
	s->procs = proctab__new(cfg->pids, cfg->nr_pids);
	s->sym = symbolizer__new(0);
	s->stacks = stacks__new();
	s->handlers = (struct sampler_handlers){ s, on_sample, on_comm, on_mmap, on_fork,
						 on_exit_rec };
	/* Enable first, then scan: a process that starts in between is seen by both, never
	 * by neither. */
	ret = sampler__enable(s->sampler);
	if (ret < 0) {
		errmsg(err, errlen, "failed to enable perf events: %s", strerror(-ret));
		goto fail;
	}
	proctab__scan(s->procs);
	start_collectors(s);
	/* Runtimes already running are followed from the first sample on: found at their
	 * first sample instead, that sample's batch would be read late (lazy drain). */
	proctab__for_each(s->procs, attach_found, s);
	begin(s);
	*out = s;
	return 0;
fail:
	session__free(s);
	return ret;
}

static void forget_proc(struct proc *p, void *ctx)
{
	struct session *s = ctx;

	if (p->rt)
		p->rt_ops->detach(p->rt);
	p->rt = NULL;
	symbolizer__forget_process(s->sym, p->ref.pid);
}

static void detach_all(struct proc *p, void *ctx)
{
	(void)ctx;
	if (p->rt)
		p->rt_ops->detach(p->rt);
	p->rt = NULL;
}

static void release_retired(struct session *s)
{
	for (size_t i = 0; i < s->nr_retired; i++)
		s->retired[i].ops->detach(s->retired[i].rt);
	s->nr_retired = 0;
}

void session__free(struct session *s)
{
	if (!s)
		return;
	if (s->sampler)
		sampler__disable(s->sampler);
	for (size_t i = 0; i < s->nr_runtimes; i++)
		if (s->collectors[i])
			runtime_registry[i]->stop(s->collectors[i]);
	free(s->collectors);
	if (s->procs)
		proctab__for_each(s->procs, detach_all, s);
	release_retired(s);
	free(s->retired);
	proctab__free(s->procs);
	sampler__free(s->sampler);
	stacks__free(s->stacks);
	unwinder__free(s->unwinder);
	symbolizer__free(s->sym);
	runtime_choices_release(&s->runtimes);
	json_decref(s->run_arguments);
	free(s);
}

static uint64_t elapsed_ms(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)(now.tv_sec - since->tv_sec) * 1000 +
	       (uint64_t)((now.tv_nsec - since->tv_nsec) / 1000000);
}

static void count_followed(struct proc *p, void *ctx)
{
	*(size_t *)ctx += p->rt && !p->exited;
}

/* Every sample wakes the agent while, and only while, a runtime reader follows a live
 * process: it reads the thread's stack then. */
static void update_eager(struct session *s)
{
	size_t followed = 0;
	int ret;

	proctab__for_each(s->procs, count_followed, &followed);
	ret = sampler__set_eager(s->sampler, followed > 0);
	if (ret < 0)
		log_warn("failed to change how the reader wakes: %s", strerror(-ret));
}

int session__run(struct session *s, uint64_t duration_ms, volatile sig_atomic_t *stop)
{
	uint64_t checked = elapsed_ms(&s->start_mono);

	while (!(stop && *stop)) {
		uint64_t done = elapsed_ms(&s->start_mono);
		uint64_t wait = POLL_MS;
		int ret;

		if (done >= duration_ms)
			break;
		if (duration_ms - done < wait)
			wait = duration_ms - done;
		if (done - checked >= POLL_MS) {
			update_eager(s);
			checked = done;
		}
		ret = sampler__poll(s->sampler, (int)wait, &s->handlers);
		if (ret < 0 && ret != -EINTR)
			return ret;
	}
	return 0;
}

static json_t *iso_time(const struct timespec *ts)
{
	struct tm tm;
	char buf[64];

	gmtime_r(&ts->tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ".%06ld+00:00",
		 ts->tv_nsec / 1000);
	return json_string(buf);
}

static double tv_sec(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

static void fill_header(struct session *s, struct profile *p, json_t *containers)
{
	json_t *h = profile__meta(p), *md = json_object();
	struct timespec end;
	struct rusage ru;
	struct utsname un;
	struct sampler_stats st = sampler__stats(s->sampler);
	char host[256] = "";
	double cpu;

	clock_gettime(CLOCK_REALTIME, &end);
	getrusage(RUSAGE_SELF, &ru);
	uname(&un);
	gethostname(host, sizeof(host) - 1);
	cpu = tv_sec(&ru.ru_utime) + tv_sec(&ru.ru_stime) - tv_sec(&s->start_usage.ru_utime) -
	      tv_sec(&s->start_usage.ru_stime);

	json_object_set_new(h, "start_time", iso_time(&s->start_wall));
	json_object_set_new(h, "end_time", iso_time(&end));
	json_object_set_new(h, "hostname", json_string(host));
	json_object_set_new(h, "kernel_release", json_string(un.release));
	json_object_set_new(h, "kernel_version", json_string(un.version));
	json_object_set_new(h, "cpu_count", json_integer(sampler__nr_cpus(s->sampler)));
	json_object_set_new(h, "frequency", json_integer(s->cfg.freq));
	/* what a sample stands for: samples/count (the default type), cpu time per sample */
	profile__set_period(p, "cpu", "nanoseconds", s->cfg.freq ? (1000000000 + s->cfg.freq / 2) / s->cfg.freq : 0);
	json_object_set_new(h, "perf_mode", json_string(perf_mode__name(s->mode)));
	json_object_set_new(h, "agent_version", json_string(KILN_VERSION));
	json_object_set_new(h, "samples", json_integer((json_int_t)stacks__samples(s->stacks)));
	json_object_set_new(h, "lost", json_integer((json_int_t)(st.lost - s->start_stats.lost)));
	json_object_set_new(h, "idle_samples", json_integer((json_int_t)s->idle));
	json_object_set_new(h, "filtered_samples", json_integer((json_int_t)s->filtered));
	json_object_set_new(h, "unique_stacks", json_integer((json_int_t)stacks__unique(s->stacks)));
	json_object_set_new(h, "unwind_errors", json_integer((json_int_t)s->unwind_errors));
	json_object_set_new(h, "processes", json_integer((json_int_t)proctab__count(s->procs)));
	json_object_set_new(h, "agent_cpu_seconds", json_real(cpu));
	json_object_set_new(h, "agent_peak_rss_kb", json_integer(ru.ru_maxrss));
	json_object_set_new(h, "symbolizer_bytes",
			    json_integer((json_int_t)symbolizer__memory(s->sym)));
	json_object_set_new(h, "containers", containers);
	json_object_set_new(h, "run_arguments", json_deep_copy(s->run_arguments));
	/* gProfiler's own keys, so that its tools read the file. */
	json_object_set_new(h, "container_names_enabled", json_true());
	json_object_set_new(h, "application_metadata", json_pack("[n]"));
	json_object_set_new(h, "application_metadata_enabled", json_true());
	json_object_set_new(h, "profiling_mode", json_string("cpu"));
	json_object_set_new(md, "hostname", json_string(host));
	json_object_set_new(md, "system_name", json_string(un.sysname));
	json_object_set_new(md, "kernel_release", json_string(un.release));
	json_object_set_new(md, "kernel_version", json_string(un.version));
	json_object_set_new(md, "processors", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
	json_object_set_new(md, "agent_version", json_string(KILN_VERSION));
	json_object_set_new(md, "pid", json_integer(getpid()));
	json_object_set_new(md, "run_arguments", json_deep_copy(s->run_arguments));
	json_object_set_new(md, "profiling_mode", json_string("cpu"));
	json_object_set_new(md, "sampling_event", json_string("cpu-clock"));
	json_object_set_new(md, "sampling_frequency", json_integer(s->cfg.freq));
	json_object_set_new(h, "metadata", md);
}

static bool is_covered_tid(const void *ctx, pid_t tid)
{
	return runtime_stacks__has_tid(ctx, tid);
}

/* Replaces the native stacks of the threads a collector covers with the stacks it
 * counted, scaled to the same number of samples (runtimes/runtime.h); a process it could
 * not profile gets its reason as a pseudo-frame. Returns the number of processes merged. */
static size_t merge_replaced(struct session *s, struct runtime_collector *c,
			     const struct runtime_ops *ops, struct profile *p)
{
	const struct runtime_stacks *r;
	size_t nr = ops->collect(c, &r), merged = 0;

	for (size_t i = 0; i < nr; i++) {
		struct proc *proc = proctab__get(s->procs, r[i].pid);
		if (!proc)
			continue;
		if (r[i].skip_reason && r[i].skip_reason[0]) {
			snprintf(proc->skip_reason, sizeof(proc->skip_reason), "%s", r[i].skip_reason);
			continue;
		}
		uint64_t total = stacks__take_threads(s->stacks, r[i].pid, is_covered_tid, &r[i]);
		const char *prefix[] = { "0", proc->container, proc->comm };
		if (runtime_stacks__merge(&r[i], p, prefix, 3, total))
			merged++;
	}
	return merged;
}

struct profile *session__flush(struct session *s)
{
	struct profile *p = profile__new();
	json_t *containers = json_array();
	size_t merged[s->nr_runtimes + 1];

	sampler__drain(s->sampler, &s->handlers);
	for (size_t i = 0; i < s->nr_runtimes; i++) {
		const struct runtime_ops *r = runtime_registry[i];
		merged[i] = 0;
		if (s->collectors[i] && r->merge == RUNTIME_REPLACE && r->collect)
			merged[i] = merge_replaced(s, s->collectors[i], r, p);
	}
	stacks__symbolize(s->stacks, s->sym, p, containers);
	for (size_t i = 0; i < s->nr_runtimes; i++)
		if (s->collectors[i] && runtime_registry[i]->header)
			runtime_registry[i]->header(s->collectors[i], profile__meta(p), merged[i]);
	fill_header(s, p, containers);
	stacks__clear(s->stacks);
	release_retired(s);
	proctab__reap(s->procs, forget_proc, s);
	begin(s);
	return p;
}
