/* Reference implementations of the URL parsers of server/selector.h and of
 * multipart__find, written from their contracts in another style (POSIX regular
 * expressions over the whole text, timegm, one search per shape), so that the fuzz
 * tests of test_server_parse.c can assert the one right answer for each mutated input
 * instead of "0 or -EINVAL". Slow and simple on purpose. */
#ifndef KILN_TESTS_SERVER_REF_H
#define KILN_TESTS_SERVER_REF_H

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "store/store.h"
#include "util/re.h"

/* The length of the match of the extended regular expression re anchored at p, or -1. */
static inline long ref_token(const char *p, const char *re)
{
	char anchored[256];
	regmatch_t m;
	regex_t r;
	long n = -1;

	snprintf(anchored, sizeof(anchored), "^(%s)", re);
	if (regcomp(&r, anchored, REG_EXTENDED))
		abort();
	if (!regexec(&r, p, 1, &m, 0))
		n = (long)m.rm_eo;
	regfree(&r);
	return n;
}

struct ref_matcher {
	char name[512], value[512];
	enum match_op op;
};

/* The selector grammar of selector__parse: fills service and m[*n] and returns true when
 * text is a valid selector, false otherwise. */
static inline bool ref_selector(const char *text, bool ingest, char *service, size_t cap,
				struct ref_matcher *m, size_t max, size_t *n)
{
	static const char ws[] = "[ \t]*";
	const char *p = text;
	long k;

	*n = 0;
	p += ref_token(p, ws);
	if ((k = ref_token(p, "[A-Za-z0-9_./-]+")) <= 0 || (size_t)k >= cap)
		return false;
	snprintf(service, cap, "%.*s", (int)k, p);
	p += k;
	p += ref_token(p, ws);
	if (*p == '{') {
		p++;
		p += ref_token(p, ws);
		while (*p != '}') {
			struct ref_matcher *x = &m[*n];
			size_t len = 0;

			if (*n == max || (k = ref_token(p, "[A-Za-z_][A-Za-z0-9_.]*")) <= 0 ||
			    (size_t)k >= sizeof(x->name))
				return false;
			snprintf(x->name, sizeof(x->name), "%.*s", (int)k, p);
			p += k;
			p += ref_token(p, ws);
			k = ref_token(p, "=~|!~|!=|=");
			if (k < 0)
				return false;
			x->op = k == 1 ? MATCH_EQ : p[0] == '=' ? MATCH_RE : p[1] == '~' ? MATCH_NRE
										: MATCH_NE;
			if (ingest && x->op != MATCH_EQ)
				return false;
			p += k;
			p += ref_token(p, ws);
			if (*p == '"') {
				if ((k = ref_token(p, "\"([^\"\\]|\\\\.)*\"")) < 0)
					return false;
				for (long i = 1; i < k - 1; i++) {	/* drop each escaping '\' */
					if (p[i] == '\\')
						i++;
					if (len + 1 < sizeof(x->value))
						x->value[len++] = p[i];
				}
			} else {
				if (!ingest)
					return false;
				k = ref_token(p, "[^,}]*");
				for (len = (size_t)k; len && (p[len - 1] == ' ' || p[len - 1] == '\t');
				     len--)
					;
				if (len >= sizeof(x->value))
					return false;
				memcpy(x->value, p, len);
			}
			x->value[len] = 0;
			p += k;
			for (size_t i = 0; i < *n; i++)
				if (!strcmp(m[i].name, x->name))
					return false;
			/* a selector's expression is valid when its engine, RE2, takes it */
			if (x->op == MATCH_RE || x->op == MATCH_NRE) {
				char rerr[128];
				struct re *r = re__compile(x->value, rerr, sizeof(rerr));
				if (!r)
					return false;
				re__free(r);
			}
			(*n)++;
			p += ref_token(p, ws);
			if (*p == ',') {
				p++;
				p += ref_token(p, ws);
			} else if (*p != '}') {
				return false;
			}
		}
		p++;
		p += ref_token(p, ws);
	}
	return !*p;
}

/* UTC seconds of a civil date and time; fields out of range roll over as timegm does. */
static inline int64_t ref_utc(long y, long mo, long d, long h, long mi, long s)
{
	struct tm tm = { .tm_year = (int)(y - 1900), .tm_mon = (int)(mo - 1), .tm_mday = (int)d,
			 .tm_hour = (int)h, .tm_min = (int)mi, .tm_sec = (int)s };

	return (int64_t)timegm(&tm);
}

/* Fills the captures of re (whole text, anchored both ends) as numbers in v (-1 when a
 * group did not take part). Returns false when text does not match. */
static inline bool ref_fields(const char *text, const char *re, long *v, size_t nv)
{
	regmatch_t m[16];
	regex_t r;
	bool ok;

	if (regcomp(&r, re, REG_EXTENDED))
		abort();
	ok = !regexec(&r, text, nv + 1 < 16 ? nv + 1 : 16, m, 0);
	regfree(&r);
	for (size_t i = 0; ok && i < nv; i++) {
		char num[32];
		int len = (int)(m[i + 1].rm_eo - m[i + 1].rm_so);

		snprintf(num, sizeof(num), "%.*s", len, text + m[i + 1].rm_so);
		v[i] = m[i + 1].rm_so < 0 ? -1 : strtol(num, NULL, 10);
	}
	return ok;
}

/* attime__parse's contract: digits (8: YYYYMMDD, 13: ms, 16: us, 19: ns, otherwise
 * seconds; at most 19), "now", or "now-<digits>[unit]" (no unit: seconds, n <= 10^6). */
static inline bool ref_attime(const char *text, int64_t now, int64_t *out)
{
	static const struct { const char *unit; int64_t secs; } units[] = {
		{ "", 1 }, { "s", 1 }, { "m", 60 }, { "min", 60 }, { "h", 3600 }, { "d", 86400 },
		{ "w", 604800 }, { "M", 2592000 }, { "mon", 2592000 }, { "y", 31536000 },
	};
	size_t len = strlen(text);
	long v[3];

	if (len && ref_token(text, "[0-9]+") == (long)len) {
		if (len > 18)	/* 19 digits may not fit in int64: not reached by the fuzz */
			return len == 19 ? (*out = strtoll(text, NULL, 10) / 1000000000, true)
					 : false;
		int64_t x = strtoll(text, NULL, 10);
		if (len == 8) {
			if (!ref_fields(text, "^([0-9]{4})([0-9]{2})([0-9]{2})$", v, 3) || v[1] < 1 ||
			    v[1] > 12 || v[2] < 1 || v[2] > 31)
				return false;
			*out = ref_utc(v[0], v[1], v[2], 0, 0, 0);
		} else {
			*out = len == 13 ? x / 1000 : len == 16 ? x / 1000000 : x;
		}
		return true;
	}
	if (!strcmp(text, "now")) {
		*out = now;
		return true;
	}
	if (strncmp(text, "now-", 4) || (len = (size_t)ref_token(text + 4, "[0-9]*")) == 0)
		return false;
	int64_t n = len <= 18 ? strtoll(text + 4, NULL, 10) : -1;
	if (n < 0 || n > 1000000)
		return false;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(text + 4 + len, units[i].unit)) {
			*out = now - n * units[i].secs;
			return true;
		}
	}
	return false;
}

/* isotime__parse's contract: up to 12 digits are seconds; else
 * YYYY-MM-DD[T ]HH:MM:SS[.digits][Z|+HH:MM|-HH:MM] with months 1-12, days 1-31, hours
 * 0-23, minutes 0-59, seconds 0-60 and zones of at most 23:59; no zone is UTC. */
static inline bool ref_isotime(const char *text, int64_t *out)
{
	size_t len = strlen(text);
	long v[10];

	if (len && len <= 12 && ref_token(text, "[0-9]+") == (long)len) {
		*out = strtoll(text, NULL, 10);
		return true;
	}
	if (!ref_fields(text, "^([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([0-9]{2}):([0-9]{2}):"
			"([0-9]{2})(\\.[0-9]+)?(Z|[-+]([0-9]{2}):([0-9]{2}))?$", v, 10))
		return false;
	if (v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 || v[4] > 59 ||
	    v[5] > 60 || v[8] > 23 || v[9] > 59)
		return false;
	*out = ref_utc(v[0], v[1], v[2], v[3], v[4], v[5]);
	if (v[8] >= 0) {
		int64_t off = v[8] * 3600 + v[9] * 60;
		*out += strchr(text + 19, '+') ? -off : off;
	}
	return true;
}

/* True when the header block [h, end) has a line "Content-Disposition:..." (any case) in
 * which name="<name>" stands right after the colon, a ' ' or a ';' (so not as the tail of
 * filename="..."). */
static inline bool ref_named(const char *h, const char *end, const char *name)
{
	char want[128];
	size_t wl = (size_t)snprintf(want, sizeof(want), "name=\"%s\"", name);

	while (h < end) {
		const char *eol = memmem(h, (size_t)(end - h), "\r\n", 2);
		const char *lend = eol ? eol : end;

		if (lend - h > 20 && !strncasecmp(h, "content-disposition:", 20))
			for (const char *p = h + 20; p + wl <= lend; p++)
				if (!memcmp(p, want, wl) && (p == h + 20 || p[-1] == ' ' || p[-1] == ';'))
					return true;
		h = eol ? eol + 2 : end;
	}
	return false;
}

/* multipart__find's contract over RFC 2046's shape: the first "--B" opens the body (the
 * rest of its line is ignored), "--B--" closes it; each part is the delimiter line, header
 * lines up to the first empty line (none at all when the delimiter line is followed by an
 * empty one), and content up to the next CRLF "--B". Returns 0 with the content's offset
 * and length, -ENOENT when no part is named name, -EINVAL when the shape breaks first. */
static inline int ref_multipart(const char *b, size_t n, const char *bd, const char *name,
				size_t *off, size_t *len)
{
	char delim[128];
	size_t dl = (size_t)snprintf(delim, sizeof(delim), "\r\n--%s", bd);
	const char *end = b + n, *p = memmem(b, n, delim + 2, dl - 2);

	if (!p)
		return -EINVAL;
	for (p += dl - 2;;) {
		const char *eol, *hend, *next;

		if (end - p >= 2 && !memcmp(p, "--", 2))
			return -ENOENT;
		if (!(eol = memmem(p, (size_t)(end - p), "\r\n", 2)))
			return -EINVAL;
		if (!(hend = memmem(eol, (size_t)(end - eol), "\r\n\r\n", 4)))
			return -EINVAL;
		if (!(next = memmem(hend + 4, (size_t)(end - hend - 4), delim, dl)))
			return -EINVAL;
		if (hend > eol && ref_named(eol + 2, hend, name)) {
			*off = (size_t)(hend + 4 - b);
			*len = (size_t)(next - hend - 4);
			return 0;
		}
		p = next + dl;
	}
}

#endif
