#include "agent/proctab.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/procfs.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

/* A mapping with the agent's bookkeeping; the public part comes first so that a
 * const struct mapping * handed out can be turned back into it. */
struct pmap {
	struct mapping m;
	bool used;
};

struct proc_mm {
	struct pmap **active;	/* sorted by start, non-overlapping */
	size_t nr_active, alloc_active;
	struct pmap **all;	/* every mapping ever added (active or retired) */
	size_t nr_all, alloc_all;
	struct proc_mm *older;	/* the address space this one replaced at exec */
};

struct proc_entry {
	struct proc p;
	uint64_t reloaded_ns;
	uint64_t created_ns;	/* when this entry was made (entry__add), CLOCK_MONOTONIC */
};

struct proctab {
	struct hashmap *procs;	/* pid -> struct proc_entry * */
	struct hashmap *paths;	/* interned mapping paths -> char * */
	struct hashmap *filter;	/* --pids: pid -> (void *)1, NULL when none */
	struct proc_entry **grave;	/* replaced by a reused pid, freed at reap */
	size_t nr_grave, alloc_grave;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *intern_path(struct proctab *t, const char *path)
{
	size_t len = strlen(path);
	bool created;
	void **slot = hashmap__insert(t->paths, path, len, &created);

	if (created)
		*slot = xstrndup(path, len);
	return *slot;
}

static struct proc_mm *mm__new(void)
{
	return xcalloc(1, sizeof(struct proc_mm));
}

static void mm__free(struct proc_mm *mm)
{
	while (mm) {
		struct proc_mm *older = mm->older;
		for (size_t i = 0; i < mm->nr_all; i++)
			free(mm->all[i]);
		free(mm->all);
		free(mm->active);
		free(mm);
		mm = older;
	}
}

static struct pmap *mm__alloc(struct proc_mm *mm, const struct mapping *m)
{
	struct pmap *pm = xcalloc(1, sizeof(*pm));

	pm->m = *m;
	if (mm->nr_all == mm->alloc_all) {
		mm->alloc_all = mm->alloc_all ? mm->alloc_all * 2 : 16;
		mm->all = xrealloc(mm->all, mm->alloc_all * sizeof(*mm->all));
	}
	mm->all[mm->nr_all++] = pm;
	return pm;
}

static void mm__insert_active(struct proc_mm *mm, size_t pos, struct pmap *pm)
{
	if (mm->nr_active == mm->alloc_active) {
		mm->alloc_active = mm->alloc_active ? mm->alloc_active * 2 : 16;
		mm->active = xrealloc(mm->active, mm->alloc_active * sizeof(*mm->active));
	}
	memmove(mm->active + pos + 1, mm->active + pos,
		(mm->nr_active - pos) * sizeof(*mm->active));
	mm->active[pos] = pm;
	mm->nr_active++;
}

/* Adds m (path already interned), retiring or trimming what it overlaps. */
static void mm__add(struct proc_mm *mm, const struct mapping *m)
{
	size_t i = 0;

	if (m->end <= m->start)
		return;
	while (i < mm->nr_active && mm->active[i]->m.end <= m->start)
		i++;
	/* Every active mapping from i on that starts before m->end overlaps it. */
	while (i < mm->nr_active && mm->active[i]->m.start < m->end) {
		struct mapping old = mm->active[i]->m;
		memmove(mm->active + i, mm->active + i + 1,
			(mm->nr_active - i - 1) * sizeof(*mm->active));
		mm->nr_active--;
		if (old.start < m->start) {
			struct mapping left = old;
			left.end = m->start;
			mm__insert_active(mm, i++, mm__alloc(mm, &left));
		}
		if (old.end > m->end) {
			struct mapping right = old;
			right.start = m->end;
			right.pgoff = old.pgoff + (m->end - old.start);
			mm__insert_active(mm, i, mm__alloc(mm, &right));
			break;
		}
	}
	mm__insert_active(mm, i, mm__alloc(mm, m));
}

const struct mapping *proctab__mapping(const struct proc_mm *mm, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!mm)
		return NULL;
	hi = mm->nr_active;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct mapping *m = &mm->active[mid]->m;
		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

size_t proctab__nr_mappings(const struct proc_mm *mm)
{
	return mm ? mm->nr_active : 0;
}

const struct mapping *proctab__mapping_at(const struct proc_mm *mm, size_t i)
{
	return mm && i < mm->nr_active ? &mm->active[i]->m : NULL;
}

bool proctab__first_use(const struct mapping *m)
{
	struct pmap *pm = (struct pmap *)m;

	if (pm->used)
		return false;
	pm->used = true;
	return true;
}

struct proctab *proctab__new(const pid_t *pids, size_t nr_pids)
{
	struct proctab *t = xcalloc(1, sizeof(*t));

	t->procs = hashmap__new();
	t->paths = hashmap__new();
	if (nr_pids) {
		t->filter = hashmap__new();
		for (size_t i = 0; i < nr_pids; i++) {
			bool created;
			*hashmap__insert(t->filter, &pids[i], sizeof(pid_t), &created) = (void *)1;
		}
	}
	return t;
}

static void entry__free(struct proc_entry *e)
{
	mm__free(e->p.mm);
	free(e);
}

void proctab__free(struct proctab *t)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	const void *key;
	size_t len;
	void *v;

	if (!t)
		return;
	while (hashmap__next(t->procs, &it, &key, &len, &v))
		entry__free(v);
	for (size_t i = 0; i < t->nr_grave; i++)
		entry__free(t->grave[i]);
	free(t->grave);
	it = (struct hashmap_iter)HASHMAP_ITER_INIT;
	while (hashmap__next(t->paths, &it, &key, &len, &v))
		free(v);
	hashmap__free(t->procs);
	hashmap__free(t->paths);
	hashmap__free(t->filter);
	free(t);
}

struct proc *proctab__find(struct proctab *t, pid_t pid)
{
	void **slot = hashmap__find(t->procs, &pid, sizeof(pid));

	return slot ? &((struct proc_entry *)*slot)->p : NULL;
}

static struct proc_entry *entry__add(struct proctab *t, pid_t pid)
{
	bool created;
	void **slot = hashmap__insert(t->procs, &pid, sizeof(pid), &created);
	struct proc_entry *e;

	if (!created) {
		/* A pid reused: the old process may still be referenced by the session's
		 * stacks, so it waits for reap. */
		if (t->nr_grave == t->alloc_grave) {
			t->alloc_grave = t->alloc_grave ? t->alloc_grave * 2 : 16;
			t->grave = xrealloc(t->grave, t->alloc_grave * sizeof(*t->grave));
		}
		t->grave[t->nr_grave++] = *slot;
	}
	e = xcalloc(1, sizeof(*e));
	e->p.ref.pid = pid;
	e->p.ref.nspid = pid;
	e->p.mm = mm__new();
	e->p.selected = !t->filter || hashmap__find(t->filter, &pid, sizeof(pid));
	e->created_ns = now_ns();
	*slot = e;
	return e;
}

struct maps_ctx {
	struct proctab *t;
	struct proc_mm *mm;
};

static void add_map(void *ctx, const struct mapping *m)
{
	struct maps_ctx *c = ctx;
	struct mapping copy = *m;

	copy.path = intern_path(c->t, m->path);
	mm__add(c->mm, &copy);
}

static void load_from_proc(struct proctab *t, struct proc_entry *e)
{
	pid_t pid = e->p.ref.pid;
	struct maps_ctx c = { t, e->p.mm };

	if (procfs__comm(pid, e->p.comm, sizeof(e->p.comm)) < 0) {
		snprintf(e->p.comm, sizeof(e->p.comm), "pid-%d", (int)pid);
		return;
	}
	e->p.ref.nspid = procfs__nspid(pid);
	procfs__container(pid, e->p.container, sizeof(e->p.container));
	procfs__maps(pid, add_map, &c);
	e->reloaded_ns = now_ns();
}

struct proc *proctab__get(struct proctab *t, pid_t pid)
{
	struct proc *p;
	struct proc_entry *e;

	if (pid <= 0)
		return NULL;
	p = proctab__find(t, pid);
	if (p)
		return p;
	e = entry__add(t, pid);
	load_from_proc(t, e);
	return &e->p;
}

int proctab__scan(struct proctab *t)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid > 0x7fffffff)
			continue;
		if (!proctab__find(t, (pid_t)pid)) {
			load_from_proc(t, entry__add(t, (pid_t)pid));
			n++;
		}
	}
	closedir(d);
	return n;
}

int proctab__reload(struct proctab *t, struct proc *p)
{
	struct proc_entry *e = (struct proc_entry *)p;
	uint64_t now = now_ns();
	struct maps_ctx c = { t, p->mm };
	int ret;

	if (p->exited)
		return -ESRCH;
	if (now - e->reloaded_ns < 1000000000ull)
		return -EAGAIN;
	e->reloaded_ns = now;
	ret = procfs__maps(p->ref.pid, add_map, &c);
	return ret < 0 ? ret : 0;
}

void proctab__comm(struct proctab *t, pid_t pid, pid_t tid, const char *comm, bool exec)
{
	struct proc *p = proctab__get(t, pid);

	if (!p)
		return;
	if (exec) {
		struct proc_mm *mm = mm__new();
		mm->older = p->mm;
		p->mm = mm;
		p->exited = false;
		/* The runtime reader of the old image no longer applies. */
		p->rt_checked = false;
		/* A container's first process joins its cgroup between fork and exec (runc
		 * init): what it inherited from its parent is the runtime's, not the
		 * container's. */
		procfs__container(pid, p->container, sizeof(p->container));
	}
	if (exec || tid == pid)
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
}

void proctab__mmap(struct proctab *t, pid_t pid, const struct mapping *m)
{
	struct proc *p = proctab__get(t, pid);
	struct mapping copy = *m;

	if (!p)
		return;
	copy.path = intern_path(t, m->path);
	mm__add(p->mm, &copy);
}

void proctab__fork(struct proctab *t, pid_t pid, pid_t ppid, pid_t tid, uint64_t time)
{
	struct proc *parent, *child;
	struct proc_entry *e;

	if (pid == ppid)
		return;	/* a new thread */
	parent = proctab__get(t, ppid);
	child = proctab__find(t, pid);
	if (child && !child->exited && time && ((struct proc_entry *)child)->created_ns > time) {
		/* Made after the fork, from /proc or the child's own records: newer than
		 * the parent's state. */
		child->selected = child->selected || (parent && parent->selected);
		return;
	}
	e = entry__add(t, pid);
	child = &e->p;
	e->reloaded_ns = now_ns();
	if (!parent) {
		load_from_proc(t, e);
		return;
	}
	memcpy(child->comm, parent->comm, sizeof(child->comm));
	memcpy(child->container, parent->container, sizeof(child->container));
	child->ref.nspid = parent->ref.nspid == parent->ref.pid ? pid : procfs__nspid(pid);
	child->selected = child->selected || parent->selected;
	for (size_t i = 0; i < parent->mm->nr_active; i++)
		mm__add(child->mm, &parent->mm->active[i]->m);
}

void proctab__exit(struct proctab *t, pid_t pid, pid_t tid)
{
	struct proc *p;

	if (pid != tid)
		return;	/* a thread ended */
	p = proctab__find(t, pid);
	if (p)
		p->exited = true;
}

void proctab__for_each(struct proctab *t, void (*fn)(struct proc *p, void *ctx), void *ctx)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	const void *key;
	size_t len;
	void *v;

	while (hashmap__next(t->procs, &it, &key, &len, &v))
		fn(&((struct proc_entry *)v)->p, ctx);
	for (size_t i = 0; i < t->nr_grave; i++)
		fn(&t->grave[i]->p, ctx);
}

/* Frees the retired mappings of a live address space and the ones it replaced. */
static void mm__compact(struct proc_mm *mm)
{
	size_t n = 0;

	mm__free(mm->older);
	mm->older = NULL;
	for (size_t i = 0; i < mm->nr_all; i++) {
		struct pmap *pm = mm->all[i];
		bool active = proctab__mapping(mm, pm->m.start) == &pm->m;
		if (active)
			mm->all[n++] = pm;
		else
			free(pm);
	}
	mm->nr_all = n;
}

void proctab__reap(struct proctab *t, void (*on_free)(struct proc *p, void *ctx), void *ctx)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	const void *key;
	size_t len, nr_dead = 0, alloc = 0;
	pid_t *dead = NULL;
	void *v;

	while (hashmap__next(t->procs, &it, &key, &len, &v)) {
		struct proc_entry *e = v;
		if (e->p.exited) {
			if (nr_dead == alloc) {
				alloc = alloc ? alloc * 2 : 64;
				dead = xrealloc(dead, alloc * sizeof(*dead));
			}
			dead[nr_dead++] = e->p.ref.pid;
		} else {
			mm__compact(e->p.mm);
		}
	}
	for (size_t i = 0; i < nr_dead; i++) {
		struct proc_entry *e = hashmap__remove(t->procs, &dead[i], sizeof(pid_t));
		if (on_free)
			on_free(&e->p, ctx);
		entry__free(e);
	}
	free(dead);
	for (size_t i = 0; i < t->nr_grave; i++) {
		if (on_free)
			on_free(&t->grave[i]->p, ctx);
		entry__free(t->grave[i]);
	}
	t->nr_grave = 0;
}

size_t proctab__count(const struct proctab *t)
{
	return hashmap__count(t->procs);
}
