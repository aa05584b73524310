/* The render's .col export (format=collapsed or col): gProfiler's layout, each stack
 * "0;<container>;<process>;<frames>", so that `kiln report` or a re-upload to
 * /api/v2/profiles keeps the container and the process. The .col route stores the
 * process as each stack's root frame and the container as a label only; a merged
 * selection has no labels, so the container comes from one selection per container
 * value of the query's series, and a root frame that is one of the series' process
 * values is the process. Other stacks (a push's, without such a root) stay frames only,
 * as folded text. */
#include "server/http.h"

#include <stdlib.h>
#include <string.h>

#include "format/col.h"

static bool in(char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

/* Adds the stacks of part to out, each under container c and its process. */
static void add_part(struct profile *out, const struct profile *part, const char *c,
		     char **procs, size_t nprocs)
{
	for (size_t i = 0; i < profile__nr_stacks(part); i++) {
		struct profile_stack s = profile__stack(part, i);
		const char *root = s.depth ? profile__name(part, s.frames[0]) : NULL;
		bool is_proc = root && in(procs, nprocs, root);
		struct profile_label l[2] = { { COL_LABEL_CONTAINER, c },
					      { COL_LABEL_PROCESS, is_proc ? root : "" } };
		uint32_t ids[256], *f = s.depth <= 256 ? ids : xmalloc(s.depth * sizeof(*f));
		uint32_t skip = is_proc ? 1 : 0;

		for (uint32_t j = skip; j < s.depth; j++)
			f[j - skip] = profile__intern_str(out, profile__name(part, s.frames[j]));
		/* a stack without its process keeps no prefix: col__write writes one for a
		 * process label only */
		uint32_t set = is_proc ? profile__labelset(out, l, 2)
				       : *c ? profile__labelset(out, l, 1) : 0;
		profile__add_labeled(out, f, s.depth - skip, set, s.count);
		if (f != ids)
			free(f);
	}
}

int query__select_col(struct server *srv, const struct store_query *q, int64_t from,
		      int64_t until, struct profile *out, char *err, size_t errlen)
{
	char **conts = NULL, **procs = NULL;
	size_t nconts = 0, nprocs = 0;
	int ret;

	if ((ret = store__label_values(srv->store, q, COL_LABEL_CONTAINER, from, until, &conts,
				       &nconts, err, errlen)) ||
	    (ret = store__label_values(srv->store, q, COL_LABEL_PROCESS, from, until, &procs,
				       &nprocs, err, errlen)))
		goto out;
	if (!nprocs) {	/* nothing came with a process: the merged stacks as they are */
		ret = store__select(srv->store, q, from, until, out, err, errlen);
		goto out;
	}
	struct matcher *m = xcalloc(q->n + 1, sizeof(*m));
	struct store_query one = *q;
	if (q->n)
		memcpy(m, q->m, q->n * sizeof(*m));
	one.m = m;
	one.n = q->n + 1;
	/* each container, then the series without one ("" matches a missing label) */
	for (size_t i = 0; i <= nconts && !ret; i++) {
		struct profile *part = profile__new();
		const char *c = i < nconts ? conts[i] : "";
		m[q->n] = (struct matcher){ .name = (char *)COL_LABEL_CONTAINER, .value = (char *)c,
					    .op = MATCH_EQ };
		ret = store__select(srv->store, &one, from, until, part, err, errlen);
		if (!ret)
			add_part(out, part, c, procs, nprocs);
		profile__free(part);
	}
	free(m);
out:
	store__free_strings(conts, nconts);
	store__free_strings(procs, nprocs);
	return ret;
}
