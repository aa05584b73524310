#include "format/detect.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "format/col.h"
#include "format/jfr.h"
#include "format/perfscript.h"
#include "format/pprof.h"
#include "util/log.h"
#include "util/strbuf.h"

/* Control bytes that no text profile holds (tab, newlines and CR excepted). */
static bool looks_binary(const unsigned char *d, size_t len)
{
	for (size_t i = 0; i < len && i < 4096; i++)
		if (d[i] < 0x09 || (d[i] > 0x0d && d[i] < 0x20 && d[i] != 0x1b))
			return true;
	return false;
}

/* Every one of the first 64 stack lines ends in whitespace and a decimal count. */
static bool looks_folded(const char *text, size_t len)
{
	const char *end = text + len, *line = text;
	int seen = 0;

	while (line < end && seen < 64) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		const char *le = eol ? eol : end, *c = le;
		if (le > line && le[-1] == '\r')
			c = --le;
		if (le > line && *line != '#') {
			while (c > line && c[-1] >= '0' && c[-1] <= '9')
				c--;
			if (c == le || c == line || (c[-1] != ' ' && c[-1] != '\t'))
				return false;
			seen++;
		}
		if (!eol)
			break;
		line = eol + 1;
	}
	return seen > 0;
}

enum input_format input__detect(const void *data, size_t len)
{
	const unsigned char *d = data;

	if (len >= 4 && !memcmp(d, "FLR", 4))
		return INPUT_JFR;
	if (len >= 2 && d[0] == 0x1f && d[1] == 0x8b)
		return INPUT_PPROF;
	if (!len)
		return INPUT_UNKNOWN;
	if (looks_binary(d, len))
		return INPUT_PPROF;
	if (len >= 3 && !memcmp(d, "# {", 3))
		return INPUT_COL;
	if (perfscript__detect(data, len))
		return INPUT_PERF_SCRIPT;
	if (looks_folded(data, len))
		return INPUT_FOLDED;
	return INPUT_UNKNOWN;
}

const char *input__name(enum input_format fmt)
{
	switch (fmt) {
	case INPUT_COL: return "col";
	case INPUT_FOLDED: return "folded";
	case INPUT_PPROF: return "pprof";
	case INPUT_PERF_SCRIPT: return "perf-script";
	case INPUT_JFR: return "jfr";
	default: return "unknown";
	}
}

/* One sample type of a JFR recording into p. */
static int load_jfr(struct profile *p, const void *data, size_t len, const char *sample_type,
		    char *err, size_t errlen)
{
	struct profile *all = profile__new();
	int pick = -1, ret;

	ret = jfr__parse(all, data, len, NULL, 10000000, NULL, err, errlen);
	for (size_t i = 0; !ret && i < profile__nr_types(all) && pick < 0; i++) {
		struct profile_type t = profile__type(all, i);
		if (sample_type ? !strcmp(t.type, sample_type) : profile__type_total(all, i) > 0)
			pick = (int)i;
	}
	if (!ret && pick < 0) {
		errmsg(err, errlen, sample_type ? "the JFR recording has no sample type '%s'" :
		       "the JFR recording has no samples%s", sample_type ? sample_type : "");
		ret = -EINVAL;
	}
	if (!ret) {
		struct profile_type t = profile__type(all, (size_t)pick);
		ret = profile__set_types(p, &t, 1);
		if (ret)
			errmsg(err, errlen, "the profile to read the JFR recording into is not empty");
	}
	for (size_t i = 0; !ret && i < profile__nr_stacks(all); i++) {
		struct profile_stack s = profile__stack(all, i);
		if (!s.values[pick])
			continue;
		uint32_t *frames = xmalloc((s.depth ? s.depth : 1) * sizeof(*frames));
		for (uint32_t d = 0; d < s.depth; d++)
			frames[d] = profile__intern_str(p, profile__name(all, s.frames[d]));
		profile__add(p, frames, s.depth, s.values[pick]);
		free(frames);
	}
	profile__free(all);
	return ret;
}

int input__load(struct profile *p, const void *data, size_t len, enum input_format fmt,
		const char *sample_type, char *err, size_t errlen)
{
	struct perfscript_options po = { .annotate_kernel = true, .annotate_jit = true };

	if (fmt == INPUT_UNKNOWN)
		fmt = input__detect(data, len);
	switch (fmt) {
	case INPUT_COL:
	case INPUT_FOLDED:
		return col__parse(p, data, len, err, errlen);
	case INPUT_PPROF:
		return pprof__parse(p, data, len, sample_type, err, errlen);
	case INPUT_PERF_SCRIPT:
		return perfscript__parse(p, data, len, &po, NULL, err, errlen);
	case INPUT_JFR:
		return load_jfr(p, data, len, sample_type, err, errlen);
	default:
		errmsg(err, errlen, "%s: not .col, folded stacks, pprof, perf script output or JFR",
		       len ? "unknown format" : "empty input");
		return -EINVAL;
	}
}

unsigned input__col_prefix(const struct profile *p)
{
	return col__has_prefix(p) ? COL_PREFIX_FRAMES - 1 : 0;
}
