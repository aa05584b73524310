#include "agent/session.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "agent/flush.h"
#include "agent/proctab.h"
#include "agent/runtime_set.h"
#include "agent/sample_path.h"
#include "agent/sampler.h"
#include "agent/stacks.h"
#include "symbols/symbolizer.h"
#include "unwind/unwind.h"
#include "util/log.h"
#include "util/strbuf.h"

#define POLL_MS 1000	/* signals interrupt the wait; the duration ends it */

struct session {
	struct session_config cfg;
	enum perf_mode mode;
	json_t *run_arguments;
	struct sampler *sampler;
	struct proctab *procs;
	struct symbolizer *sym;
	struct unwinder *unwinder;
	struct stacks *stacks;
	struct runtime_set *runtimes;
	struct sample_path *path;	/* the per-sample stage */
	struct sampler_handlers handlers;

	/* This session's start. */
	struct timespec start_wall, start_mono;
	struct rusage start_usage;
	struct sampler_stats start_stats;
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

/* A runtime reader follows a process now: every sample must wake the agent. */
static void on_follow(void *ctx)
{
	struct session *s = ctx;
	int ret = sampler__set_eager(s->sampler, true);

	if (ret < 0)
		log_warn("failed to wake the reader per sample: %s", strerror(-ret));
}

static void begin(struct session *s)
{
	clock_gettime(CLOCK_REALTIME, &s->start_wall);
	clock_gettime(CLOCK_MONOTONIC, &s->start_mono);
	getrusage(RUSAGE_SELF, &s->start_usage);
	s->start_stats = sampler__stats(s->sampler);
	if (s->path)
		sample_path__reset_counters(s->path);
}

int session__open(const struct session_config *cfg, struct session **out, char *err,
		  size_t errlen)
{
	struct session *s = xcalloc(1, sizeof(*s));
	struct sampler_config sc = { 0 };
	struct runtime_env env = { 0 };
	int ret;

	s->cfg = *cfg;
	s->cfg.runtimes = NULL;	/* copied by the runtime set */
	s->mode = cfg->mode;
	s->run_arguments = cfg->run_arguments ? json_deep_copy(cfg->run_arguments) : json_object();
	env.freq = cfg->freq;
	env.pids = cfg->pids;
	env.nr_pids = cfg->nr_pids;
	s->runtimes = runtime_set__new(NULL, cfg->runtimes, &env);
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
	 * burst's end and a reader's shares were off by 5-10 points. One wakeup per sample
	 * costs 22 wakeups a second at 11 Hz on 2 CPUs, far less than polling. */
	sc.wake_per_sample = runtime_set__reads_per_sample(s->runtimes);
	ret = sampler__open(&sc, &s->sampler, err, errlen);
	if (ret < 0)
		goto fail;
	s->procs = proctab__new(cfg->pids, cfg->nr_pids);
	s->sym = symbolizer__new(0);
	symbolizer__set_debuginfod(s->sym, cfg->debuginfod);
	s->stacks = stacks__new();
	s->path = sample_path__new(&(struct sample_path_config){
		.procs = s->procs, .sym = s->sym, .unwinder = s->unwinder, .stacks = s->stacks,
		.runtimes = s->runtimes, .on_follow = on_follow, .ctx = s });
	s->handlers = sample_path__handlers(s->path);
	/* Enable first, then scan: a process that starts in between is seen by both, never
	 * by neither. */
	ret = sampler__enable(s->sampler);
	if (ret < 0) {
		errmsg(err, errlen, "failed to enable perf events: %s", strerror(-ret));
		goto fail;
	}
	proctab__scan(s->procs);
	runtime_set__start(s->runtimes);
	/* Runtimes already running are followed from the first sample on: found at their
	 * first sample instead, that sample's batch would be read late (lazy drain). */
	sample_path__attach_found(s->path);
	begin(s);
	*out = s;
	return 0;
fail:
	session__free(s);
	return ret;
}

static void detach_all(struct proc *p, void *ctx)
{
	runtime_set__detach(ctx, p);
}

void session__free(struct session *s)
{
	if (!s)
		return;
	if (s->sampler)
		sampler__disable(s->sampler);
	if (s->procs)
		proctab__for_each(s->procs, detach_all, s->runtimes);
	runtime_set__free(s->runtimes);
	sample_path__free(s->path);
	proctab__free(s->procs);
	sampler__free(s->sampler);
	stacks__free(s->stacks);
	unwinder__free(s->unwinder);
	symbolizer__free(s->sym);
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

struct profile *session__flush(struct session *s)
{
	struct sampler_stats st;
	struct profile *p;

	sampler__drain(s->sampler, &s->handlers);
	st = sampler__stats(s->sampler);
	p = flush__session(&(struct flush_parts){ s->stacks, s->sym, s->procs, s->runtimes },
			   &(struct flush_info){
				   .start_wall = s->start_wall, .start_usage = s->start_usage,
				   .freq = s->cfg.freq, .nr_cpus = sampler__nr_cpus(s->sampler),
				   .perf_mode = perf_mode__name(s->mode),
				   .lost = st.lost - s->start_stats.lost,
				   .counters = sample_path__counters(s->path),
				   .run_arguments = s->run_arguments });
	begin(s);
	return p;
}
