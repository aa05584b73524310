#include "format/top.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

static int row_cmp(const void *x, const void *y, void *arg)
{
	const struct top_row *a = x, *b = y;
	const struct profile *p = arg;

	if (a->self != b->self)
		return a->self < b->self ? 1 : -1;
	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	return strcmp(profile__name(p, a->name), profile__name(p, b->name));
}

size_t top__compute(const struct profile *p, unsigned skip, struct top_row **rows)
{
	size_t nn = profile__nr_names(p), nr = 0;
	uint64_t *self = xcalloc(nn ? nn : 1, sizeof(*self));
	uint64_t *total = xcalloc(nn ? nn : 1, sizeof(*total));
	size_t *last = xcalloc(nn ? nn : 1, sizeof(*last));	/* stack index + 1 last counted */
	struct top_row *out;

	for (size_t i = 0; i < profile__nr_stacks(p); i++) {
		struct profile_stack s = profile__stack(p, i);
		if (s.depth <= skip || !s.count)
			continue;
		for (uint32_t j = skip; j < s.depth; j++) {
			uint32_t id = s.frames[j];
			if (last[id] == i + 1)	/* recursion: a stack counts once */
				continue;
			last[id] = i + 1;
			total[id] += s.count;
		}
		self[s.frames[s.depth - 1]] += s.count;
	}
	for (size_t i = 0; i < nn; i++)
		nr += total[i] > 0;
	out = nr ? xmalloc(nr * sizeof(*out)) : NULL;
	nr = 0;
	for (size_t i = 0; i < nn; i++)
		if (total[i])
			out[nr++] = (struct top_row){ .name = (uint32_t)i, .self = self[i],
						      .total = total[i] };
	if (nr)
		qsort_r(out, nr, sizeof(*out), row_cmp, (void *)p);
	free(self);
	free(total);
	free(last);
	*rows = out;
	return nr;
}

int top__write(FILE *f, const struct profile *p, unsigned skip, size_t limit)
{
	struct top_row *rows;
	size_t n = top__compute(p, skip, &rows);
	uint64_t sum = 0;

	for (size_t i = 0; i < profile__nr_stacks(p); i++) {
		struct profile_stack s = profile__stack(p, i);
		if (s.depth > skip)
			sum += s.count;
	}
	fprintf(f, "total: %llu\n", (unsigned long long)sum);
	fprintf(f, "%12s %7s %12s %7s  %s\n", "self", "self%", "total", "total%", "function");
	for (size_t i = 0; i < n && (!limit || i < limit); i++)
		fprintf(f, "%12llu %6.2f%% %12llu %6.2f%%  %s\n", (unsigned long long)rows[i].self,
			sum ? 100.0 * (double)rows[i].self / (double)sum : 0.0,
			(unsigned long long)rows[i].total,
			sum ? 100.0 * (double)rows[i].total / (double)sum : 0.0,
			profile__name(p, rows[i].name));
	free(rows);
	if (fflush(f) || ferror(f))
		return -EIO;
	return 0;
}
