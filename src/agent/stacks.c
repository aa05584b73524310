#include "agent/stacks.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"
#include "util/strbuf.h"

/* Key layout, in 64-bit words. */
enum { K_PROC, K_MM, K_RT_OPS, K_RT, K_COUNTS, K_COMM0, K_COMM1, K_TID, K_HEADER };
#define KEY_MAX_WORDS (K_HEADER + STACKS_MAX_FRAMES * 5)

struct stacks {
	struct hashmap *table;	/* packed key -> (void *)(uintptr_t)count */
	uint64_t samples;
	uint64_t key[KEY_MAX_WORDS];
};

struct stacks *stacks__new(void)
{
	struct stacks *st = xcalloc(1, sizeof(*st));

	st->table = hashmap__new();
	return st;
}

void stacks__free(struct stacks *st)
{
	if (!st)
		return;
	hashmap__free(st->table);
	free(st);
}

size_t stacks__unique(const struct stacks *st)
{
	return hashmap__count(st->table);
}

uint64_t stacks__samples(const struct stacks *st)
{
	return st->samples;
}

void stacks__clear(struct stacks *st)
{
	hashmap__clear(st->table);
	st->samples = 0;
}

void stacks__add(struct stacks *st, const struct stack_sample *s)
{
	uint64_t *k = st->key;
	uint32_t nk = s->nr_kernel, nu = s->nr_user, nr = s->nr_rt;
	size_t n = K_HEADER;
	char comm[16] = { 0 };
	bool created;
	void **slot;

	/* Leaf-first parts keep their leaf; root-first runtime frames keep their leaves too. */
	if (nk > STACKS_MAX_FRAMES)
		nk = STACKS_MAX_FRAMES;
	if (nu > STACKS_MAX_FRAMES)
		nu = STACKS_MAX_FRAMES;
	if (nr > STACKS_MAX_FRAMES)
		nr = STACKS_MAX_FRAMES;
	memset(k, 0, K_HEADER * sizeof(*k));
	k[K_PROC] = (uintptr_t)s->proc;
	k[K_MM] = (uintptr_t)s->mm;
	k[K_RT_OPS] = nr ? (uintptr_t)s->rt_ops : 0;
	k[K_RT] = nr ? (uintptr_t)s->rt : 0;
	k[K_COUNTS] = nk | (uint64_t)nu << 16 | (uint64_t)nr << 32 |
		      (uint64_t)(s->truncated || nu < s->nr_user) << 48;
	if (s->comm)
		memcpy(comm, s->comm, strnlen(s->comm, sizeof(comm)));
	memcpy(&k[K_COMM0], comm, sizeof(comm));
	k[K_TID] = (uint64_t)(uint32_t)s->tid;
	for (uint32_t i = 0; i < nk; i++)
		k[n++] = s->kernel_ips[i];
	for (uint32_t i = 0; i < nu; i++) {
		k[n++] = (uintptr_t)s->user_maps[i];
		k[n++] = s->user_ips[i];
	}
	for (uint32_t i = s->nr_rt - nr; i < s->nr_rt; i++) {
		k[n++] = s->rt_frames[i].id;
		k[n++] = s->rt_frames[i].aux | (uint64_t)s->rt_frames[i].flags << 32;
	}
	slot = hashmap__insert(st->table, k, n * sizeof(*k), &created);
	*slot = (void *)((uintptr_t)*slot + 1);
	st->samples++;
}

uint64_t stacks__take_threads(struct stacks *st, pid_t pid,
			      bool (*match)(const void *ctx, pid_t tid), const void *ctx)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	const void *key;
	size_t len, nr = 0, alloc = 0;
	void *v;
	uint64_t taken = 0;
	struct { void *key; size_t len; } *gone = NULL;

	while (hashmap__next(st->table, &it, &key, &len, &v)) {
		const uint64_t *k = key;
		const struct proc *proc = (const struct proc *)(uintptr_t)k[K_PROC];
		pid_t tid = (pid_t)(uint32_t)k[K_TID];
		if (!tid || proc->ref.pid != pid || !match(ctx, tid))
			continue;
		if (nr == alloc) {
			alloc = alloc ? alloc * 2 : 16;
			gone = xrealloc(gone, alloc * sizeof(*gone));
		}
		gone[nr].key = xmalloc(len);	/* the map owns its key: copy before removing */
		memcpy(gone[nr].key, key, len);
		gone[nr++].len = len;
		taken += (uintptr_t)v;
	}
	for (size_t i = 0; i < nr; i++) {
		hashmap__remove(st->table, gone[i].key, gone[i].len);
		free(gone[i].key);
	}
	free(gone);
	return taken;
}

/* Per-symbolize state: frame-name caches so that a frame shared by many stacks is
 * symbolized once. */
struct symctx {
	struct symbolizer *sym;
	struct profile *p;
	struct hashmap *kcache, *ucache;	/* (key words) -> id + 1 */
	struct strbuf sb;
	uint32_t *ids;
	size_t nr_ids, alloc_ids;
	struct hashmap *icache;	/* (key words) -> uint32_t [n, ids...] of inlined frames */
};

static uint32_t intern_sb(struct symctx *c)
{
	return profile__intern(c->p, c->sb.buf, strlen(c->sb.buf));
}

static void push(struct symctx *c, uint32_t id)
{
	if (c->nr_ids == c->alloc_ids) {
		c->alloc_ids = c->alloc_ids ? c->alloc_ids * 2 : 256;
		c->ids = xrealloc(c->ids, c->alloc_ids * sizeof(*c->ids));
	}
	c->ids[c->nr_ids++] = id;
}

static uint32_t kernel_frame(struct symctx *c, uint64_t pc)
{
	bool created;
	void **slot = hashmap__insert(c->kcache, &pc, sizeof(pc), &created);

	if (created) {
		strbuf_reset(&c->sb);
		symbolizer__kernel(c->sym, pc, &c->sb);
		strbuf_addstr(&c->sb, "_[k]");
		*slot = (void *)(uintptr_t)(intern_sb(c) + 1);
	}
	return (uint32_t)((uintptr_t)*slot - 1);
}

/* Symbolizes a user pc. *interp is set when the name is one of the runtime's interpreter
 * frames. */
static uint32_t user_frame(struct symctx *c, struct proc *proc, const struct proc_mm *mm,
			   const struct mapping *m, uint64_t pc, bool *is_interp,
			   const struct runtime_ops *ops)
{
	uint64_t key[2] = { m ? (uintptr_t)m : (uintptr_t)proc | 1, pc };
	bool created;
	void **slot = hashmap__insert(c->ucache, key, sizeof(key), &created);
	uint32_t id;

	if (created) {
		strbuf_reset(&c->sb);
		if (!m)	/* the mapping arrived after the sample (records of another CPU) */
			m = proctab__mapping(mm, pc);
		if (m)
			symbolizer__user(c->sym, &proc->ref, m, pc, &c->sb);
		else if (symbolizer__perfmap(c->sym, &proc->ref, pc, &c->sb) < 0)
			strbuf_addf(&c->sb, "(unknown+0x%" PRIx64 ")", pc);
		*slot = (void *)(uintptr_t)(intern_sb(c) + 1);
	}
	id = (uint32_t)((uintptr_t)*slot - 1);
	*is_interp = false;
	if (ops && ops->interp_symbols) {
		const char *name = profile__name(c->p, id);
		for (const char *const *s = ops->interp_symbols; *s; s++)
			if (!strcmp(name, *s))
				*is_interp = true;
	}
	return id;
}

/* Pushes the frames inlined at a user pc (Go's inline tree, DWARF inline subroutines),
 * outermost first, annotated "_[i]"; cached per mapping and pc. */
static void push_inlined(struct symctx *c, struct proc *proc, const struct proc_mm *mm,
			 const struct mapping *m, uint64_t pc)
{
	uint64_t key[2] = { m ? (uintptr_t)m : (uintptr_t)proc | 1, pc };
	bool created;
	void **slot;
	uint32_t *v;

	if (!c->icache)
		c->icache = hashmap__new();
	slot = hashmap__insert(c->icache, key, sizeof(key), &created);
	if (created) {
		struct strbuf names = STRBUF_INIT;
		uint32_t n = 0;

		if (!m)
			m = proctab__mapping(mm, pc);
		if (m)
			symbolizer__inlined(c->sym, &proc->ref, m, pc, &names);
		v = xmalloc(sizeof(*v));
		for (char *at = names.buf, *nl; at && (nl = strchr(at, '\n')); at = nl + 1) {
			strbuf_reset(&c->sb);
			strbuf_add(&c->sb, at, (size_t)(nl - at));
			strbuf_addstr(&c->sb, "_[i]");
			v = xrealloc(v, (n + 2) * sizeof(*v));
			v[1 + n++] = intern_sb(c);
		}
		v[0] = n;
		strbuf_release(&names);
		*slot = v;
	}
	v = *slot;
	for (uint32_t i = 0; i < v[0]; i++)
		push(c, v[1 + i]);
}

/* Emits runtime frames [from, to) of the key's runtime part; a read that stopped early
 * (RT_FRAME_TRUNCATED on its outermost frame) shows "[truncated]" where the frames it
 * could not read would be. */
static void emit_rt(struct symctx *c, const struct runtime_ops *ops, struct runtime_proc *rt,
		    const uint64_t *w, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to; i++) {
		struct rt_frame f = { w[2 * i], (uint32_t)w[2 * i + 1],
				      (uint32_t)(w[2 * i + 1] >> 32) };
		if (f.flags & RT_FRAME_TRUNCATED)
			push(c, profile__intern_str(c->p, "[truncated]"));
		strbuf_reset(&c->sb);
		ops->frame_name(rt, &f, &c->sb);
		push(c, intern_sb(c));
	}
}

/* The end of the runtime activation that starts at frame i. */
static uint32_t rt_group_end(const uint64_t *w, uint32_t i, uint32_t nr)
{
	for (i++; i < nr; i++)
		if ((uint32_t)(w[2 * i + 1] >> 32) & RT_FRAME_ENTRY)
			break;
	return i;
}

static void symbolize_one(struct symctx *c, const uint64_t *k, uint64_t count)
{
	struct proc *proc = (struct proc *)(uintptr_t)k[K_PROC];
	const struct proc_mm *mm = (const struct proc_mm *)(uintptr_t)k[K_MM];
	const struct runtime_ops *ops = (const struct runtime_ops *)(uintptr_t)k[K_RT_OPS];
	struct runtime_proc *rt = (struct runtime_proc *)(uintptr_t)k[K_RT];
	uint32_t nk = k[K_COUNTS] & 0xffff, nu = (k[K_COUNTS] >> 16) & 0xffff;
	uint32_t nr = (k[K_COUNTS] >> 32) & 0xffff;
	bool truncated = (k[K_COUNTS] >> 48) & 1;
	const uint64_t *kips = k + K_HEADER, *upairs = kips + nk, *rtw = upairs + 2 * nu;
	uint32_t uids[STACKS_MAX_FRAMES];
	bool interp[STACKS_MAX_FRAMES];
	uint32_t nr_interp = 0, seen = 0, rt_pos = 0;
	char comm[17] = { 0 };

	c->nr_ids = 0;
	memcpy(comm, &k[K_COMM0], 16);
	struct profile_label lab[2] = { { "process", comm }, { "container", proc->container } };
	uint32_t labels = profile__labelset(c->p, lab, proc->container[0] ? 2 : 1);
	if (proc->skip_reason[0]) {
		strbuf_reset(&c->sb);
		strbuf_addf(&c->sb, "[Profiling skipped: %s]", proc->skip_reason);
		push(c, intern_sb(c));
	}
	if (truncated)
		push(c, profile__intern_str(c->p, "[truncated]"));

	/* User frames come leaf first; symbolize them root first. Return addresses (all but
	 * the leaf) point after their call: look up pc - 1 so a call at a function's end is
	 * not named after the next function. */
	for (uint32_t i = 0; i < nu; i++) {
		uint32_t leaf_idx = nu - 1 - i;
		const struct mapping *m = (const struct mapping *)(uintptr_t)upairs[2 * leaf_idx];
		uint64_t pc = upairs[2 * leaf_idx + 1];
		if (leaf_idx > 0 && pc)
			pc--;
		uids[i] = user_frame(c, proc, mm, m, pc, &interp[i], nr ? ops : NULL);
		nr_interp += interp[i];
	}
	if (nr && !nr_interp) {
		emit_rt(c, ops, rt, rtw, 0, nr);
		rt_pos = nr;
	}
	for (uint32_t i = 0; i < nu; i++) {
		uint32_t leaf_idx = nu - 1 - i;
		uint64_t pc = upairs[2 * leaf_idx + 1];

		if (seen && ops && ops->native_hidden && !interp[i] &&
		    ops->native_hidden(profile__name(c->p, uids[i])))
			continue;	/* the runtime's frames stand for it */
		push(c, uids[i]);
		if (!interp[i])
			push_inlined(c, proc, mm,
				     (const struct mapping *)(uintptr_t)upairs[2 * leaf_idx],
				     leaf_idx > 0 && pc ? pc - 1 : pc);
		if (!interp[i] || rt_pos >= nr)
			continue;
		seen++;
		uint32_t end = seen == nr_interp ? nr : rt_group_end(rtw, rt_pos, nr);
		emit_rt(c, ops, rt, rtw, rt_pos, end);
		rt_pos = end;
	}
	for (uint32_t i = 0; i < nk; i++) {
		uint64_t pc = kips[nk - 1 - i];
		push(c, kernel_frame(c, nk - 1 - i > 0 && pc ? pc - 1 : pc));
	}
	profile__add_labeled(c->p, c->ids, (uint32_t)c->nr_ids, labels, count);
}

void stacks__symbolize(struct stacks *st, struct symbolizer *sym, struct profile *p,
		       json_t *containers)
{
	struct symctx c = { sym, p, hashmap__new(), hashmap__new(), STRBUF_INIT, NULL, 0, 0, NULL };
	struct hashmap *seen = hashmap__new();
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	const void *key;
	size_t len;
	void *v;

	while (hashmap__next(st->table, &it, &key, &len, &v)) {
		const uint64_t *k = key;
		const struct proc *proc = (const struct proc *)(uintptr_t)k[K_PROC];
		bool created;

		symbolize_one(&c, k, (uintptr_t)v);
		if (containers && proc->container[0]) {
			hashmap__insert(seen, proc->container, strlen(proc->container), &created);
			if (created)
				json_array_append_new(containers, json_string(proc->container));
		}
	}
	hashmap__free(seen);
	hashmap__free(c.kcache);
	hashmap__free(c.ucache);
	for (struct hashmap_iter i = HASHMAP_ITER_INIT; c.icache && hashmap__next(c.icache, &i,
									 &key, &len, &v);)
		free(v);
	hashmap__free(c.icache);
	strbuf_release(&c.sb);
	free(c.ids);
}
