#include "server/selector.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/log.h"
#include "util/re.h"
#include "util/strbuf.h"

#define MAX_SELECTOR_LEN 4096
#define MAX_MATCHERS 64

static bool service_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-' || c == '/';
}

/* Label names: [A-Za-z_][A-Za-z0-9_.]* */
static bool label_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool label_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.';
}

bool selector__valid_label_name(const char *name)
{
	if (!label_start(*name))
		return false;
	while (label_char(*++name))
		;
	return !*name;
}

bool selector__valid_service(const char *name)
{
	if (!*name || strlen(name) > 256)
		return false;
	for (const char *c = name; *c; c++)
		if (!service_char(*c))
			return false;
	return true;
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* Reads a value: "quoted" (with \" and \\ escapes) or, for ingest, up to ',' or '}'. */
static const char *read_value(const char *p, bool ingest, struct strbuf *out, char *err,
			      size_t errlen)
{
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++) {
			if (*p == '\\' && p[1])
				p++;
			strbuf_addch(out, *p);
		}
		if (*p != '"') {
			errmsg(err, errlen, "unterminated quoted value");
			return NULL;
		}
		return p + 1;
	}
	if (!ingest) {
		errmsg(err, errlen, "label values must be quoted");
		return NULL;
	}
	while (*p && *p != ',' && *p != '}')
		strbuf_addch(out, *p++);
	while (out->len && (out->buf[out->len - 1] == ' ' || out->buf[out->len - 1] == '\t'))
		strbuf_setlen(out, out->len - 1);
	return p;
}

static int add_matcher(struct store_query *q, struct strbuf *name, struct strbuf *value,
		       enum match_op op, char *err, size_t errlen)
{
	struct matcher *m;

	for (size_t i = 0; i < q->n; i++) {
		if (!strcmp(q->m[i].name, name->buf)) {
			errmsg(err, errlen, "label '%s' appears twice", name->buf);
			return -EINVAL;
		}
	}
	if (q->n == MAX_MATCHERS) {
		errmsg(err, errlen, "more than %d labels", MAX_MATCHERS);
		return -EINVAL;
	}
	q->m = xrealloc(q->m, (q->n + 1) * sizeof(*q->m));
	m = &q->m[q->n];
	m->op = op;
	m->re = NULL;
	/* RE2, not regcomp: chained repetition is exponential there (util/re.h) */
	if ((op == MATCH_RE || op == MATCH_NRE) && !(m->re = re__compile(value->buf, err, errlen)))
		return -EINVAL;
	m->name = xstrdup(name->buf);
	m->value = xstrdup(value->buf);
	q->n++;
	return 0;
}

int selector__parse(struct store_query *q, const char *text, bool ingest, char *err,
		    size_t errlen)
{
	struct strbuf name = STRBUF_INIT, value = STRBUF_INIT;
	const char *p = skip_ws(text), *start = p;
	int ret = -EINVAL;

	store_query_release(q);
	if (strlen(text) > MAX_SELECTOR_LEN) {
		errmsg(err, errlen, "selector is longer than %d bytes", MAX_SELECTOR_LEN);
		return -EINVAL;
	}
	while (service_char(*p))
		p++;
	q->service = xstrndup(start, (size_t)(p - start));
	if (!*q->service) {
		errmsg(err, errlen, "missing application name in '%.64s'", text);
		goto out;
	}
	p = skip_ws(p);
	if (*p == '{') {
		p = skip_ws(p + 1);
		while (*p != '}') {
			enum match_op op;
			strbuf_reset(&name);
			strbuf_reset(&value);
			if (!label_start(*p)) {
				errmsg(err, errlen, "invalid label name at '%.32s'", p);
				goto out;
			}
			while (label_char(*p))
				strbuf_addch(&name, *p++);
			p = skip_ws(p);
			if (p[0] == '=' && p[1] == '~')
				op = MATCH_RE, p += 2;
			else if (p[0] == '!' && p[1] == '~')
				op = MATCH_NRE, p += 2;
			else if (p[0] == '!' && p[1] == '=')
				op = MATCH_NE, p += 2;
			else if (p[0] == '=')
				op = MATCH_EQ, p += 1;
			else {
				errmsg(err, errlen, "expected '=' after label '%s'", name.buf);
				goto out;
			}
			if (ingest && op != MATCH_EQ) {
				errmsg(err, errlen, "label '%s': only '=' is allowed here", name.buf);
				goto out;
			}
			p = read_value(skip_ws(p), ingest, &value, err, errlen);
			if (!p || add_matcher(q, &name, &value, op, err, errlen))
				goto out;
			p = skip_ws(p);
			if (*p == ',')
				p = skip_ws(p + 1);
			else if (*p != '}') {
				errmsg(err, errlen, "expected ',' or '}' after label '%s'", name.buf);
				goto out;
			}
		}
		p = skip_ws(p + 1);
	}
	if (*p) {
		errmsg(err, errlen, "unexpected '%.32s' in name '%.64s'", p, text);
		goto out;
	}
	ret = 0;
out:
	strbuf_release(&name);
	strbuf_release(&value);
	if (ret)
		store_query_release(q);
	return ret;
}

void selector__to_labels(const struct store_query *q, struct labels *l)
{
	for (size_t i = 0; i < q->n; i++)
		labels__set(l, q->m[i].name, q->m[i].value);
	labels__sort(l);
}

static bool all_digits(const char *s, size_t *len)
{
	size_t n = 0;

	while (s[n] >= '0' && s[n] <= '9')
		n++;
	*len = n;
	return n && !s[n];
}

static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

int attime__parse(const char *text, int64_t now, int64_t *out)
{
	size_t len;

	if (all_digits(text, &len)) {
		if (len > 19)
			return -EINVAL;
		int64_t v = strtoll(text, NULL, 10);
		if (len == 8) {
			int64_t y = v / 10000, m = v / 100 % 100, d = v % 100;
			if (m < 1 || m > 12 || d < 1 || d > 31)
				return -EINVAL;
			*out = days_from_civil(y, m, d) * 86400;
		} else {
			*out = len == 13 ? v / 1000 : len == 16 ? v / 1000000 : len == 19 ? v / 1000000000 : v;
		}
		return 0;
	}
	if (strncmp(text, "now", 3))
		return -EINVAL;
	if (!text[3]) {
		*out = now;
		return 0;
	}
	/* strtoll alone would also take "now- 15m" and "now-+15m" */
	if (text[3] != '-' || text[4] < '0' || text[4] > '9')
		return -EINVAL;
	char *end;
	errno = 0;
	long long n = strtoll(text + 4, &end, 10);
	if (errno || end == text + 4 || n < 0 || n > 1000000)
		return -EINVAL;
	static const struct { const char *unit; int64_t secs; } units[] = {
		{ "s", 1 }, { "m", 60 }, { "min", 60 }, { "h", 3600 }, { "d", 86400 },
		{ "w", 604800 }, { "M", 2592000 }, { "mon", 2592000 }, { "y", 31536000 },
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!*end || !strcmp(end, units[i].unit)) {
			*out = now - n * units[i].secs;
			return 0;
		}
	}
	return -EINVAL;
}

static bool digits(const char *s, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		*v = *v * 10 + (s[i] - '0');
	}
	return true;
}

int isotime__parse(const char *text, int64_t *out)
{
	int y, mo, d, h, mi, s, zh, zm;
	const char *p = text;
	size_t len;

	if (all_digits(text, &len) && len <= 12) {
		*out = strtoll(text, NULL, 10);
		return 0;
	}
	if (strlen(p) < 19 || !digits(p, 4, &y) || p[4] != '-' || !digits(p + 5, 2, &mo) ||
	    p[7] != '-' || !digits(p + 8, 2, &d) || (p[10] != 'T' && p[10] != ' ') ||
	    !digits(p + 11, 2, &h) || p[13] != ':' || !digits(p + 14, 2, &mi) || p[16] != ':' ||
	    !digits(p + 17, 2, &s))
		return -EINVAL;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
		return -EINVAL;
	p += 19;
	if (*p == '.') {	/* a fraction has at least one digit */
		if (p[1] < '0' || p[1] > '9')
			return -EINVAL;
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	}
	int64_t t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
	if (*p == 'Z' && !p[1]) {
		p++;
	} else if ((*p == '+' || *p == '-') && digits(p + 1, 2, &zh) && p[3] == ':' &&
		   digits(p + 4, 2, &zm) && !p[6] && zh <= 23 && zm <= 59) {
		int64_t off = zh * 3600 + zm * 60;
		t += *p == '+' ? -off : off;
		p += 6;
	}
	if (*p)
		return -EINVAL;
	*out = t;
	return 0;
}
