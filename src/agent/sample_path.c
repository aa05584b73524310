/* The per-sample stage: see sample_path.h. */
#include "agent/sample_path.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/strbuf.h"

#define MAX_USER 256
#define MAX_RT 256
/* A runtime reader reads the thread as it is when the sample is handled, not as it was when
 * the sample was taken. Handled this much later, the thread may be in another function: the
 * batch a process's first samples arrive in (before it is followed, the rings are drained
 * every 50 ms), or a consumer busy attaching to a new runtime, gave hundreds of samples the
 * stack of one moment and moved a 70/30 share by 4 points. Such a sample keeps its native
 * stack only. On a quiet host a sample is handled within a millisecond or two; on a 2-CPU
 * host with a load of 25, a 10 ms bound dropped 7% of the reads. */
#define RT_LATE_NS (50 * 1000000ull)

struct sample_path {
	struct sample_path_config cfg;
	struct sample_path_counters n;

	/* Scratch for one sample. */
	uint64_t upcs[MAX_USER];
	const struct mapping *umaps[MAX_USER];
	struct rt_frame rt[MAX_RT];
};

struct sample_path *sample_path__new(const struct sample_path_config *cfg)
{
	struct sample_path *sp = xcalloc(1, sizeof(*sp));

	sp->cfg = *cfg;
	return sp;
}

void sample_path__free(struct sample_path *sp)
{
	free(sp);
}

struct sample_path_counters sample_path__counters(const struct sample_path *sp)
{
	return sp->n;
}

void sample_path__reset_counters(struct sample_path *sp)
{
	memset(&sp->n, 0, sizeof(sp->n));
}

/* Attaches a reader to p and says so when one now follows it. */
static void attach(struct sample_path *sp, struct proc *p)
{
	if (runtime_set__attach(sp->cfg.runtimes, p) && sp->cfg.on_follow)
		sp->cfg.on_follow(sp->cfg.ctx);
}

static void attach_found(struct proc *p, void *ctx)
{
	struct sample_path *sp = ctx;

	if (!p->selected || p->exited || p->rt_checked)
		return;
	p->rt_checked = true;	/* runtime_set__seen() clears it when a reader wants a look */
	for (size_t i = 0; i < proctab__nr_mappings(p->mm); i++)
		runtime_set__seen(sp->cfg.runtimes, p, proctab__mapping_at(p->mm, i)->path);
	if (!p->rt_checked)
		attach(sp, p);
	else
		p->rt_checked = false;	/* no reader's: its first sample looks */
}

void sample_path__attach_found(struct sample_path *sp)
{
	proctab__for_each(sp->cfg.procs, attach_found, sp);
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

static uint32_t unwind_user(struct sample_path *sp, struct proc *p,
			    const struct sampler_sample *smp, bool *truncated)
{
	struct unwind_sample us = {
		.regs = { smp->ip, smp->sp, smp->bp },
		.stack = smp->stack,
		.stack_len = smp->stack_len,
	};
	struct find_ctx fc = { sp->cfg.procs, p, false };
	int n;

	if (!smp->has_regs)
		return 0;	/* a kernel thread: no user stack */
	n = unwinder__unwind(sp->cfg.unwinder, &p->ref, &us, find_mapping, &fc, sp->upcs,
			     MAX_USER, truncated);
	if (n < 0) {
		sp->n.unwind_errors++;
		sp->upcs[0] = smp->ip;
		*truncated = true;
		return 1;
	}
	return (uint32_t)n;
}

/* The user stack of smp into sp->upcs, cut at the first address that is not code. */
static uint32_t user_stack(struct sample_path *sp, struct proc *p,
			   const struct sampler_sample *smp, bool *truncated)
{
	uint32_t nu;

	if (sp->cfg.unwinder) {
		nu = unwind_user(sp, p, smp, truncated);
	} else {
		nu = smp->nr_user < MAX_USER ? smp->nr_user : MAX_USER;
		memcpy(sp->upcs, smp->user_ips, nu * sizeof(*sp->upcs));
	}
	/* A frame-pointer walk through code built without them ends in garbage; an address
	 * in the first page is never code, so the walk is cut there. */
	for (uint32_t i = 1; i < nu; i++)
		if (sp->upcs[i] < 4096) {
			*truncated = sp->cfg.unwinder != NULL;
			return i;
		}
	return nu;
}

/* The mapping of each user frame into sp->umaps; a binary is pinned at its first use. */
static void find_maps(struct sample_path *sp, struct proc *p, uint32_t nu)
{
	for (uint32_t i = 0; i < nu; i++) {
		const struct mapping *m = proctab__mapping(p->mm, sp->upcs[i]);
		if (!m && i == 0 && !p->exited) {
			/* The sampled ip is code for sure (deeper fp frames may be garbage): the
			 * records were lost, or seen out of order across CPUs. Read /proc again. */
			if (proctab__reload(sp->cfg.procs, p) == 0)
				m = proctab__mapping(p->mm, sp->upcs[i]);
		}
		if (m && proctab__first_use(m))
			symbolizer__pin(sp->cfg.sym, &p->ref, m);
		sp->umaps[i] = m;
	}
}

/* Whether smp reaches us too late for its runtime stack to be read (see RT_LATE_NS). */
static bool late(const struct sampler_sample *smp)
{
	struct timespec ts;
	uint64_t now;

	if (!smp->time_mono)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return now > smp->time && now - smp->time > RT_LATE_NS;
}

void sample_path__sample(struct sample_path *sp, const struct sampler_sample *smp)
{
	struct stack_sample ss = { 0 };
	struct proc *p;
	uint32_t nu;

	if (smp->pid <= 0) {
		sp->n.idle++;
		return;
	}
	p = proctab__get(sp->cfg.procs, smp->pid);
	if (!p || !p->selected) {
		sp->n.filtered++;
		return;
	}
	nu = user_stack(sp, p, smp, &ss.truncated);
	find_maps(sp, p, nu);
	/* Kernel threads (no mappings) run no runtime: not worth a look. */
	if (!p->rt_checked && proctab__nr_mappings(p->mm))
		attach(sp, p);
	/* A reader of the sample's own stack copy (sample_native) reads the moment of the
	 * sample whenever it runs; one that reads the live process must run in time. */
	if (p->rt && !p->rt_ops->sample_native && late(smp)) {
		sp->n.runtime_late++;
	} else if (p->rt) {
		struct rt_native nat = { smp->ip, smp->sp, smp->bp,
					 smp->has_regs ? smp->stack : NULL,
					 smp->has_regs ? smp->stack_len : 0,
					 sp->upcs, sp->umaps, nu };
		int n = p->rt_ops->sample_native
				? p->rt_ops->sample_native(p->rt, smp->tid, &nat, sp->rt, MAX_RT)
				: p->rt_ops->sample(p->rt, smp->tid, sp->rt, MAX_RT);
		if (n > 0) {
			ss.rt_ops = p->rt_ops;
			ss.rt = p->rt;
			ss.rt_frames = sp->rt;
			ss.nr_rt = (uint32_t)n;
		}
	}
	if (runtime_set__covers(sp->cfg.runtimes, smp->pid))
		ss.tid = smp->tid;	/* a collector may replace this thread's stack */
	ss.proc = p;
	ss.mm = p->mm;
	ss.comm = p->comm;
	ss.kernel_ips = smp->kernel_ips;
	ss.nr_kernel = smp->nr_kernel;
	ss.user_ips = sp->upcs;
	ss.user_maps = sp->umaps;
	ss.nr_user = nu;
	stacks__add(sp->cfg.stacks, &ss);
}

static void on_sample(void *ctx, const struct sampler_sample *smp)
{
	sample_path__sample(ctx, smp);
}

static void on_comm(void *ctx, pid_t pid, pid_t tid, const char *comm, bool exec)
{
	struct sample_path *sp = ctx;

	proctab__comm(sp->cfg.procs, pid, tid, comm, exec);
	if (exec)
		runtime_set__exec(sp->cfg.runtimes, pid);
}

static void on_mmap(void *ctx, pid_t pid, pid_t tid, const struct mapping *m)
{
	struct sample_path *sp = ctx;
	struct proc *p;

	proctab__mmap(sp->cfg.procs, pid, m);
	/* A runtime is recognized by what the process maps, whatever it is called, and
	 * also when it is loaded late (dlopen into a plugin host). */
	if ((p = proctab__find(sp->cfg.procs, pid)) && p->selected)
		runtime_set__seen(sp->cfg.runtimes, p, m->path);
}

static void on_fork(void *ctx, pid_t pid, pid_t ppid, pid_t tid, uint64_t time)
{
	proctab__fork(((struct sample_path *)ctx)->cfg.procs, pid, ppid, tid, time);
}

static void on_exit_rec(void *ctx, pid_t pid, pid_t tid)
{
	proctab__exit(((struct sample_path *)ctx)->cfg.procs, pid, tid);
}

struct sampler_handlers sample_path__handlers(struct sample_path *sp)
{
	return (struct sampler_handlers){ sp, on_sample, on_comm, on_mmap, on_fork, on_exit_rec };
}
