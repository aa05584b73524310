/* The runtimes one agent runs: see runtime_set.h. */
#include "agent/runtime_set.h"
#include "runtimes/procmaps.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

struct retired_rt {
	const struct runtime_ops *ops;
	struct runtime_proc *rt;
};

struct runtime_set {
	const struct runtime_ops *const *ops;	/* NULL-terminated */
	size_t nr;
	struct runtime_choices choices;
	struct runtime_env env;
	bool *enabled;				/* per ops[] */
	struct runtime_collector **collectors;	/* per ops[]; NULL: none, or off */
	size_t *merged;				/* per ops[]: processes merged by the last
						 * runtime_set__merge() */
	struct retired_rt *retired;		/* readers of images replaced by exec */
	size_t nr_retired, alloc_retired;
};

struct runtime_set *runtime_set__new(const struct runtime_ops *const *ops,
				     const struct runtime_choices *choices,
				     const struct runtime_env *env)
{
	struct runtime_set *rs = xcalloc(1, sizeof(*rs));

	rs->ops = ops ? ops : runtime_registry__ops();
	while (rs->ops[rs->nr])
		rs->nr++;
	runtime_choices_copy(&rs->choices, choices);
	rs->env = *env;
	rs->enabled = xcalloc(rs->nr + 1, sizeof(*rs->enabled));
	rs->collectors = xcalloc(rs->nr + 1, sizeof(*rs->collectors));
	rs->merged = xcalloc(rs->nr + 1, sizeof(*rs->merged));
	for (size_t i = 0; i < rs->nr; i++)
		rs->enabled[i] = runtime_choices__enabled(&rs->choices, rs->ops[i]->name);
	return rs;
}

void runtime_set__start(struct runtime_set *rs)
{
	for (size_t i = 0; i < rs->nr; i++) {
		const struct runtime_ops *r = rs->ops[i];
		struct runtime_env env = rs->env;
		if (!rs->enabled[i] || !r->start || rs->collectors[i])
			continue;
		env.mode = runtime_choices__mode(&rs->choices, r->name);
		env.flags = rs->choices.given;
		env.values = rs->choices.values;
		rs->collectors[i] = r->start(&env);	/* NULL: logged, runtime off */
	}
}

void runtime_set__release_retired(struct runtime_set *rs)
{
	for (size_t i = 0; i < rs->nr_retired; i++)
		rs->retired[i].ops->detach(rs->retired[i].rt);
	rs->nr_retired = 0;
}

void runtime_set__free(struct runtime_set *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->nr; i++)
		if (rs->collectors[i] && rs->ops[i]->stop)
			rs->ops[i]->stop(rs->collectors[i]);
	runtime_set__release_retired(rs);
	free(rs->retired);
	free(rs->enabled);
	free(rs->collectors);
	free(rs->merged);
	runtime_choices_release(&rs->choices);
	free(rs);
}

bool runtime_set__reads_per_sample(const struct runtime_set *rs)
{
	for (size_t i = 0; i < rs->nr; i++)
		if (rs->enabled[i] && rs->ops[i]->merge == RUNTIME_INTERLEAVE &&
		    (rs->ops[i]->sample || rs->ops[i]->sample_native))
			return true;
	return false;
}

void runtime_set__seen(struct runtime_set *rs, struct proc *p, const char *path)
{
	for (size_t i = 0; path && i < rs->nr; i++) {
		const struct runtime_ops *r = rs->ops[i];
		if (!rs->enabled[i] || !r->likely || !r->likely(path))
			continue;
		if (r->merge == RUNTIME_INTERLEAVE && r->attach && !p->rt)
			p->rt_checked = false;
		if (rs->collectors[i] && r->seen)
			r->seen(rs->collectors[i], p->ref.pid);
	}
}

void runtime_set__exec(struct runtime_set *rs, pid_t pid)
{
	for (size_t i = 0; i < rs->nr; i++)
		if (rs->collectors[i] && rs->ops[i]->exec)
			rs->ops[i]->exec(rs->collectors[i], pid);
}

bool runtime_set__attach(struct runtime_set *rs, struct proc *p)
{
	if (p->rt) {	/* the process exec'd: its old reader waits for the flush */
		if (rs->nr_retired == rs->alloc_retired) {
			rs->alloc_retired = rs->alloc_retired ? rs->alloc_retired * 2 : 8;
			rs->retired = xrealloc(rs->retired, rs->alloc_retired * sizeof(*rs->retired));
		}
		rs->retired[rs->nr_retired++] = (struct retired_rt){ p->rt_ops, p->rt };
		p->rt = NULL;
		p->rt_ops = NULL;
	}
	p->rt_checked = true;
	p->skip_reason[0] = '\0';
	procmaps__hold();	/* every reader looks at one read of the process's maps */
	for (size_t i = 0; i < rs->nr; i++) {
		const struct runtime_ops *r = rs->ops[i];
		char reason[128] = "";
		if (!rs->enabled[i] || !r->attach)
			continue;
		p->rt = r->attach(&p->ref, reason);
		if (p->rt) {
			p->rt_ops = r;
			break;
		}
		if (reason[0]) {
			snprintf(p->skip_reason, sizeof(p->skip_reason), "%s", reason);
			break;
		}
	}
	procmaps__release();
	return p->rt != NULL;
}

void runtime_set__detach(struct runtime_set *rs, struct proc *p)
{
	(void)rs;
	if (p->rt)
		p->rt_ops->detach(p->rt);
	p->rt = NULL;
	p->rt_ops = NULL;
}

bool runtime_set__covers(struct runtime_set *rs, pid_t pid)
{
	for (size_t i = 0; i < rs->nr; i++)
		if (rs->collectors[i] && rs->ops[i]->merge == RUNTIME_REPLACE && rs->ops[i]->covers &&
		    rs->ops[i]->covers(rs->collectors[i], pid))
			return true;
	return false;
}

static bool is_covered_tid(const void *ctx, pid_t tid)
{
	return runtime_stacks__has_tid(ctx, tid);
}

/* One collector's part of the merge. Returns the number of processes merged. */
static size_t merge_one(struct runtime_set *rs, size_t i, struct stacks *st,
			struct proctab *procs, struct profile *p)
{
	const struct runtime_stacks *r = NULL;
	size_t nr = rs->ops[i]->collect(rs->collectors[i], &r), merged = 0;

	for (size_t k = 0; k < nr; k++) {
		struct proc *proc = proctab__get(procs, r[k].pid);
		if (!proc)
			continue;
		if (r[k].skip_reason && r[k].skip_reason[0]) {
			snprintf(proc->skip_reason, sizeof(proc->skip_reason), "%s", r[k].skip_reason);
			continue;
		}
		uint64_t total = stacks__take_threads(st, r[k].pid, is_covered_tid, &r[k]);
		/* the labels stacks.c gives the process's native stacks */
		struct profile_label lab[2] = { { "process", proc->comm },
						{ "container", proc->container } };
		uint32_t labels = profile__labelset(p, lab, proc->container[0] ? 2 : 1);
		if (runtime_stacks__merge(&r[k], p, NULL, 0, labels, total))
			merged++;
	}
	return merged;
}

void runtime_set__merge(struct runtime_set *rs, struct stacks *st, struct proctab *procs,
			struct profile *p)
{
	for (size_t i = 0; i < rs->nr; i++) {
		rs->merged[i] = 0;
		if (rs->collectors[i] && rs->ops[i]->merge == RUNTIME_REPLACE && rs->ops[i]->collect)
			rs->merged[i] = merge_one(rs, i, st, procs, p);
	}
}

void runtime_set__header(struct runtime_set *rs, json_t *meta)
{
	for (size_t i = 0; i < rs->nr; i++)
		if (rs->collectors[i] && rs->ops[i]->header)
			rs->ops[i]->header(rs->collectors[i], meta, rs->merged[i]);
}
