/* What every runtime shares: the replace merge (runtime.h) and the environment's flags. */
#include "runtimes/runtime.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

bool runtime_env__flag(const struct runtime_env *env, const char *key)
{
	for (const char *const *f = env->flags; f && *f; f++)
		if (!strcmp(*f, key))
			return true;
	return false;
}

const char *runtime_env__value(const struct runtime_env *env, const char *key)
{
	for (const char *const *v = env->values; v && v[0] && v[1]; v += 2)
		if (!strcmp(v[0], key))
			return v[1];
	return NULL;
}

bool runtime_stacks__has_tid(const struct runtime_stacks *r, pid_t tid)
{
	for (size_t i = 0; i < r->nr_tids; i++)
		if (r->tids[i] == tid)
			return true;
	return false;
}

struct share {
	size_t index;
	uint64_t count;
	uint64_t rem;	/* remainder of count * total / samples, for rounding */
};

static int by_rem_desc(const void *a, const void *b)
{
	const struct share *x = a, *y = b;

	if (x->rem != y->rem)
		return x->rem < y->rem ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index;
}

uint64_t runtime_stacks__merge(const struct runtime_stacks *r, struct profile *dst,
			       const char *const *prefix, size_t nr_prefix, uint32_t labels,
			       uint64_t total)
{
	size_t n = r->stacks ? profile__nr_stacks(r->stacks) : 0;
	struct share *sh;
	uint64_t given = 0;
	uint32_t *ids = NULL;
	size_t cap = 0;

	if (!n || !r->samples || !total)
		return 0;
	sh = xcalloc(n, sizeof(*sh));
	for (size_t i = 0; i < n; i++) {
		struct profile_stack st = profile__stack(r->stacks, i);
		unsigned __int128 x = (unsigned __int128)st.count * total;
		sh[i].index = i;
		sh[i].count = (uint64_t)(x / r->samples);
		sh[i].rem = (uint64_t)(x % r->samples);
		given += sh[i].count;
	}
	qsort(sh, n, sizeof(*sh), by_rem_desc);
	for (size_t i = 0; given < total && i < n; i++, given++)
		sh[i].count++;
	for (size_t i = 0; i < n; i++) {
		struct profile_stack st = profile__stack(r->stacks, sh[i].index);
		if (!sh[i].count)
			continue;
		if (cap < nr_prefix + st.depth) {
			cap = nr_prefix + st.depth;
			ids = xrealloc(ids, cap * sizeof(*ids));
		}
		for (size_t k = 0; k < nr_prefix; k++)
			ids[k] = profile__intern_str(dst, prefix[k]);
		for (uint32_t k = 0; k < st.depth; k++)
			ids[nr_prefix + k] =
				profile__intern_str(dst, profile__name(r->stacks, st.frames[k]));
		profile__add_labeled(dst, ids, (uint32_t)(nr_prefix + st.depth), labels,
				     sh[i].count);
	}
	free(ids);
	free(sh);
	return total;
}
