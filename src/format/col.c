#include "format/col.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/strbuf.h"

/* Writes s escaped as col__sanitize_frame does. */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == ';')
			putc('|', f);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			putc(' ', f);
		else
			putc(*s, f);
	}
}

int col__write(FILE *f, const struct profile *p, bool with_header)
{
	if (with_header) {
		char *json = json_dumps(profile__meta_const(p), JSON_COMPACT);
		if (!json)
			return -ENOMEM;
		fprintf(f, "# %s\n", json);
		free(json);
	}
	for (size_t i = 0; i < profile__nr_stacks(p); i++) {
		struct profile_stack s = profile__stack(p, i);
		const char *process = with_header ? profile__label(p, s.labels, COL_LABEL_PROCESS)
						  : NULL;
		if (!s.count)
			continue;
		if (process) {
			const char *container = profile__label(p, s.labels, COL_LABEL_CONTAINER);
			fputs("0;", f);
			put_escaped(f, container ? container : "");
			putc(';', f);
			put_escaped(f, process);
			if (s.depth)
				putc(';', f);
		}
		for (uint32_t j = 0; j < s.depth; j++) {
			if (j)
				fputc(';', f);
			put_escaped(f, profile__name(p, s.frames[j]));
		}
		fprintf(f, " %llu\n", (unsigned long long)s.count);
	}
	if (fflush(f) || ferror(f))
		return -EIO;
	return 0;
}

static int parse_header(struct profile *p, const char *line, size_t len, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *meta = json_loadb(line, len, 0, &jerr);
	void *iter;

	if (!meta || !json_is_object(meta)) {
		errmsg(err, errlen, "line 1: header is not a JSON object: %s",
		       meta ? "wrong type" : jerr.text);
		json_decref(meta);
		return -EINVAL;
	}
	json_object_clear(profile__meta(p));
	for (iter = json_object_iter(meta); iter; iter = json_object_iter_next(meta, iter))
		json_object_set(profile__meta(p), json_object_iter_key(iter),
				json_object_iter_value(iter));
	json_decref(meta);
	return 0;
}

size_t col__add_stack(struct profile *p, const char *text, size_t len, uint64_t count)
{
	uint32_t buf[256], *ids = buf;
	size_t alloc = sizeof(buf) / sizeof(buf[0]), index;
	uint32_t depth = 0;

	for (const char *f = text, *stop = text + len;;) {
		const char *semi = memchr(f, ';', (size_t)(stop - f));
		const char *fend = semi ? semi : stop;
		if (depth == alloc) {
			alloc *= 2;
			ids = ids == buf ? memcpy(xmalloc(alloc * sizeof(*ids)), buf, sizeof(buf))
					 : xrealloc(ids, alloc * sizeof(*ids));
		}
		ids[depth++] = profile__intern(p, f, (size_t)(fend - f));
		if (!semi)
			break;
		f = semi + 1;
	}
	index = profile__add(p, ids, depth, count);
	if (ids != buf)
		free(ids);
	return index;
}

int col__parse(struct profile *p, const char *text, size_t len, char *err, size_t errlen)
{
	const char *end = text + len, *line = text;
	size_t lineno = 0;
	int ret = 0;

	while (line < end) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		const char *lend = eol ? eol : end, *sp, *c;
		unsigned long long count = 0;

		lineno++;
		if (lend > line && lend[-1] == '\r')
			lend--;
		if (lend == line)
			goto next;
		if (*line == '#') {
			if (lineno == 1 && lend - line >= 2 && line[1] == ' ') {
				ret = parse_header(p, line + 2, (size_t)(lend - line - 2), err, errlen);
				if (ret)
					break;
			}
			goto next;
		}
		for (sp = lend; sp > line && sp[-1] != ' ' && sp[-1] != '\t'; sp--)
			;
		if (sp == line || sp == lend) {
			errmsg(err, errlen, "line %zu: missing sample count", lineno);
			ret = -EINVAL;
			break;
		}
		for (c = sp; c < lend; c++) {
			if (*c < '0' || *c > '9' || count > (~0ULL - 9) / 10) {
				errmsg(err, errlen, "line %zu: sample count '%.*s' is not a number",
				       lineno, (int)(lend - sp > 32 ? 32 : lend - sp), sp);
				ret = -EINVAL;
				goto out;
			}
			count = count * 10 + (unsigned long long)(*c - '0');
		}
		col__add_stack(p, line, (size_t)(sp - 1 - line), count);
next:
		if (!eol)
			break;
		line = eol + 1;
	}
out:
	return ret;
}

char *col__sanitize_frame(char *name)
{
	for (char *c = name; *c; c++) {
		if (*c == ';')
			*c = '|';
		else if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
	}
	return name;
}

/* The first frame of s is an app-metadata index and s has the two prefix fields after it. */
static bool stack_has_prefix(const struct profile *p, const struct profile_stack *s)
{
	const char *idx;

	if (s->depth < COL_PREFIX_FRAMES)
		return false;
	idx = profile__name(p, s->frames[0]);
	return *idx && strspn(idx, "0123456789") == strlen(idx);
}

bool col__has_prefix(const struct profile *p)
{
	size_t n = profile__nr_stacks(p);

	if (!n)
		return false;
	for (size_t i = 0; i < n; i++) {
		struct profile_stack s = profile__stack(p, i);
		if (!stack_has_prefix(p, &s))
			return false;
	}
	return true;
}

/* True when every stack of p without a process label has the prefix (and there is one). */
static bool unlabeled_have_prefix(const struct profile *p)
{
	size_t seen = 0;

	for (size_t i = 0; i < profile__nr_stacks(p); i++) {
		struct profile_stack s = profile__stack(p, i);
		if (profile__label(p, s.labels, COL_LABEL_PROCESS))
			continue;
		if (!stack_has_prefix(p, &s))
			return false;
		seen++;
	}
	return seen > 0;
}

/* col__split_prefix, and col__process_root when labeled_root. */
static struct profile *split(const struct profile *p, bool keep_process, bool labeled_root)
{
	struct profile *q = profile__new();
	struct profile_type *types = xmalloc(profile__nr_types(p) * sizeof(*types));
	struct profile_label *lab = NULL;
	uint32_t *ids = NULL;
	size_t alloc_ids = 0, alloc_lab = 0;
	struct profile_type pt;
	int64_t period;
	const char *key;
	json_t *v;
	bool all = labeled_root ? unlabeled_have_prefix(p) : col__has_prefix(p);

	for (size_t i = 0; i < profile__nr_types(p); i++)
		types[i] = profile__type(p, i);
	profile__set_types(q, types, profile__nr_types(p));
	free(types);
	if (profile__period(p, &pt, &period))
		profile__set_period(q, pt.type, pt.unit, period);
	for (size_t i = 0; i < profile__nr_stacks(p); i++) {
		struct profile_stack s = profile__stack(p, i);
		const char *process = labeled_root ? profile__label(p, s.labels, COL_LABEL_PROCESS)
						   : NULL;
		bool prefix = !process && all;
		uint32_t from = prefix ? COL_PREFIX_FRAMES - keep_process : 0, nl = 0, depth = 0;
		size_t n;
		const struct profile_label *old = profile__labels(p, s.labels, &n);

		if (n + 2 > alloc_lab) {
			alloc_lab = n + 2;
			lab = xrealloc(lab, alloc_lab * sizeof(*lab));
		}
		if (n)
			memcpy(lab, old, n * sizeof(*lab));
		nl = (uint32_t)n;
		if (prefix) {
			const char *container = profile__name(p, s.frames[1]);
			if (*container)
				lab[nl++] = (struct profile_label){ COL_LABEL_CONTAINER, container };
			lab[nl++] = (struct profile_label){ COL_LABEL_PROCESS,
							    profile__name(p, s.frames[2]) };
		}
		if (s.depth + 1 > alloc_ids) {
			alloc_ids = s.depth + 1;
			ids = xrealloc(ids, alloc_ids * sizeof(*ids));
		}
		if (process && keep_process)
			ids[depth++] = profile__intern_str(q, process);
		for (uint32_t j = from; j < s.depth; j++)
			ids[depth++] = profile__intern_str(q, profile__name(p, s.frames[j]));
		profile__add_values(q, ids, depth, profile__labelset(q, lab, nl), s.values);
	}
	json_object_foreach((json_t *)profile__meta_const(p), key, v)
		json_object_set(profile__meta(q), key, v);
	free(ids);
	free(lab);
	return q;
}

struct profile *col__split_prefix(const struct profile *p, bool keep_process)
{
	return split(p, keep_process, false);
}

struct profile *col__process_root(const struct profile *p)
{
	return split(p, true, true);
}
