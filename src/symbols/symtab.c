#include "symbols/symtab.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

#define NAME_MAX_LEN 4096
#define LAST_UNSIZED 4096

void symtab_init(struct symtab *t)
{
	memset(t, 0, sizeof(*t));
}

void symtab_release(struct symtab *t)
{
	free(t->syms);
	free(t->names);
	symtab_init(t);
}

static void push(struct symtab *t, uint64_t addr, uint64_t size, uint32_t name)
{
	if (t->nr == t->alloc) {
		t->alloc = t->alloc ? t->alloc * 2 : 256;
		t->syms = xrealloc(t->syms, t->alloc * sizeof(*t->syms));
	}
	t->syms[t->nr++] = (struct sym){ addr, size > UINT32_MAX ? UINT32_MAX : (uint32_t)size,
					 name };
}

void symtab__add(struct symtab *t, uint64_t addr, uint64_t size, const char *name, size_t len)
{
	if (t->finished)
		return;
	if (len > NAME_MAX_LEN)
		len = NAME_MAX_LEN;
	if (t->names_len + len + 1 >= SYM_BARRIER)
		return;		/* 4 GiB of names: refuse rather than wrap */
	if (t->names_len + len + 1 > t->names_alloc) {
		t->names_alloc = t->names_alloc ? t->names_alloc * 2 : 4096;
		while (t->names_alloc < t->names_len + len + 1)
			t->names_alloc *= 2;
		t->names = xrealloc(t->names, t->names_alloc);
	}
	memcpy(t->names + t->names_len, name, len);
	t->names[t->names_len + len] = '\0';
	/* size 0 is the barrier marker internally; an unsized symbol is kept as size 0 with
	 * a real name until finish() sizes it. */
	push(t, addr, size, (uint32_t)t->names_len);
	t->names_len += len + 1;
}

void symtab__add_barrier(struct symtab *t, uint64_t addr)
{
	if (!t->finished)
		push(t, addr, 0, SYM_BARRIER);
}

void symtab__rollback(struct symtab *t, size_t nr)
{
	while (!t->finished && t->nr > nr) {
		t->nr--;
		if (t->syms[t->nr].name != SYM_BARRIER)
			t->names_len = t->syms[t->nr].name;
	}
	if (t->sorted > t->nr)
		t->sorted = t->nr;
}

/* Ordering for the sort: address, then the better entry first. Names are appended in
 * insertion order, so the name offset is the insertion rank. */
static int cmp_first(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	bool xb = x->name == SYM_BARRIER, yb = y->name == SYM_BARRIER;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (xb != yb)
		return xb ? 1 : -1;	/* real entries before barriers */
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;	/* sized before unsized */
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return 0;
}

static int cmp_last(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	bool xb = x->name == SYM_BARRIER, yb = y->name == SYM_BARRIER;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (xb != yb)
		return xb ? 1 : -1;
	if (x->name != y->name)
		return x->name > y->name ? -1 : 1;
	return 0;
}

/* Whether syms are sorted already (kallsyms is, and a sort of it costs milliseconds). */
static bool in_order(const struct sym *syms, size_t nr, int (*cmp)(const void *, const void *))
{
	for (size_t i = 1; i < nr; i++)
		if (cmp(&syms[i - 1], &syms[i]) > 0)
			return false;
	return true;
}

/* Sorts the entries: only those added since the last finish() when the rest are in
 * order already, then one merge. The order is total (names are unique offsets), so the
 * result is what one sort of everything gives. */
static void sort(struct symtab *t, int (*cmp)(const void *, const void *))
{
	size_t old = t->sorted <= t->nr ? t->sorted : 0, i = 0, j = old, k = 0;
	struct sym *merged;

	if (!old || old == t->nr) {
		if (!old && !in_order(t->syms, t->nr, cmp))
			qsort(t->syms, t->nr, sizeof(*t->syms), cmp);
		return;
	}
	qsort(t->syms + old, t->nr - old, sizeof(*t->syms), cmp);
	merged = xmalloc(t->nr * sizeof(*merged));
	while (i < old && j < t->nr)
		merged[k++] = cmp(&t->syms[j], &t->syms[i]) < 0 ? t->syms[j++] : t->syms[i++];
	while (i < old)
		merged[k++] = t->syms[i++];
	while (j < t->nr)
		merged[k++] = t->syms[j++];
	free(t->syms);
	t->syms = merged;
	t->alloc = t->nr;
}

void symtab__finish(struct symtab *t, enum symtab_dup dup, uint64_t max_unsized)
{
	size_t i, n = 0;
	uint64_t cover;

	if (t->finished)
		return;
	t->finished = true;
	if (!t->nr)
		return;
	sort(t, dup == SYMTAB_FIRST_WINS ? cmp_first : cmp_last);
	for (i = 0; i < t->nr; i++) {
		if (n && t->syms[n - 1].addr == t->syms[i].addr)
			continue;	/* the first of a run is the one to keep */
		t->syms[n++] = t->syms[i];
	}
	t->nr = n;
	/* An unsized entry inside a sized one (a label inside a function) would cut it
	 * short: the sized one names those addresses. */
	for (i = 0, n = 0, cover = 0; i < t->nr; i++) {
		struct sym *s = &t->syms[i];

		if (!s->size && s->name != SYM_BARRIER && s->addr < cover)
			continue;
		if (s->size && s->addr + s->size > cover)
			cover = s->addr + s->size;
		t->syms[n++] = *s;
	}
	t->nr = n;
	for (i = 0; i < n; i++) {
		struct sym *s = &t->syms[i];
		uint64_t size;

		if (s->size || s->name == SYM_BARRIER)
			continue;
		size = i + 1 < n ? t->syms[i + 1].addr - s->addr : LAST_UNSIZED;
		if (max_unsized && size > max_unsized)
			size = max_unsized;
		s->size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	}
	if (n < t->alloc / 2) {
		t->alloc = n;
		t->syms = xrealloc(t->syms, n * sizeof(*t->syms));
	}
	if (t->names_len < t->names_alloc) {
		t->names_alloc = t->names_len ? t->names_len : 1;
		t->names = xrealloc(t->names, t->names_alloc);
	}
	t->sorted = t->nr;
}

void symtab__reopen(struct symtab *t)
{
	t->finished = false;
}

const char *symtab__find(const struct symtab *t, uint64_t addr, uint64_t *start)
{
	size_t lo = 0, hi = t->nr, i, stop;

	if (!t->finished || !t->nr)
		return NULL;
	/* the last entry starting at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* A sized symbol may enclose later, smaller ones (a function and its local labels);
	 * look a few entries back for the innermost that covers addr. */
	stop = lo > 8 ? lo - 8 : 0;
	for (i = lo; i-- > stop;) {
		const struct sym *s = &t->syms[i];

		if (s->name == SYM_BARRIER) {
			if (i == lo - 1)
				return NULL;
			continue;
		}
		if (addr - s->addr < s->size) {
			if (start)
				*start = s->addr;
			return t->names + s->name;
		}
	}
	return NULL;
}

size_t symtab__count(const struct symtab *t)
{
	return t->nr;
}

size_t symtab__memory(const struct symtab *t)
{
	return t->alloc * sizeof(*t->syms) + t->names_alloc;
}
