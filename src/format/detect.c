#include "format/detect.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "format/col.h"
#include "format/perfscript.h"
#include "format/pprof.h"
#include "util/log.h"

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
	default: return "unknown";
	}
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
	default:
		errmsg(err, errlen, "%s: not .col, folded stacks, pprof or perf script output",
		       len ? "unknown format" : "empty input");
		return -EINVAL;
	}
}

unsigned input__col_prefix(const struct profile *p)
{
	return col__has_prefix(p) ? COL_PREFIX_FRAMES - 1 : 0;
}
