#include "format/col.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/strbuf.h"

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
		if (!s.count)
			continue;
		for (uint32_t j = 0; j < s.depth; j++) {
			if (j)
				fputc(';', f);
			fputs(profile__name(p, s.frames[j]), f);
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
