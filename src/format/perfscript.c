/* perf script → profile, after stackcollapse-perf.pl (see perfscript.h for the rules).
 *
 * One deliberate difference, for input perf never writes: a last sample with no blank
 * line after it still counts (the script drops it). Options the script has and we do not:
 * --inline and --srcline (they run addr2line), --addrs. */
#include "format/perfscript.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/strbuf.h"

struct collapse {
	struct profile *p;
	const struct perfscript_options *o;
	struct strbuf pname;	/* process name of the current sample */
	int state;		/* 0: no sample, 1: in a sample, -1: in a filtered-out sample */
	struct strbuf event;	/* the event collapsed: the first one seen */
	uint64_t period;	/* of the current sample */
	uint32_t *frames;	/* frame ids in line order: leaf line first */
	uint32_t *group;	/* per frame: index of its line within the sample */
	size_t nr, alloc;
	uint32_t lines;
	struct strbuf tmp;
};

static bool is_word(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* The period and event of a header line, as stackcollapse's :\s*(\d+)*\s+(\S+):\s*$ finds
 * them: from the leftmost ':' after which the rest of the line is "[period] event:".
 * Returns false when there is none (then the sample counts 1 and has no event). */
static bool header_event(const char *l, size_t n, uint64_t *period, const char **ev, size_t *evlen)
{
	size_t end = n, lastws = 0;
	bool ws = false;

	while (end > 0 && isspace((unsigned char)l[end - 1]))
		end--;
	if (end < 2 || l[end - 1] != ':')
		return false;
	/* the event has no whitespace: it starts after the last blank before its ':' */
	for (size_t k = end - 1; k-- > 0;)
		if (isspace((unsigned char)l[k])) {
			lastws = k, ws = true;
			break;
		}
	for (size_t c = 0; c + 1 < end; c++) {
		size_t i = c + 1, s1, d_at, d, s2, at;
		if (l[c] != ':')
			continue;
		for (s1 = i; i < end && isspace((unsigned char)l[i]); i++)
			;
		s1 = i - s1;
		for (d_at = i; i < end && isdigit((unsigned char)l[i]); i++)
			;
		d = i - d_at;
		for (s2 = i; i < end && isspace((unsigned char)l[i]); i++)
			;
		s2 = i - s2;
		/* with the digits as the period, or (when that fails) as part of the event */
		if (d && s2)
			at = i;
		else if (s1)
			at = d_at, d = 0;
		else
			continue;
		if (end - at < 2 || (ws && at <= lastws))
			continue;
		*period = 0;
		for (size_t k = 0; k < d && k < 19; k++)
			*period = *period * 10 + (uint64_t)(l[d_at + k] - '0');
		*ev = l + at;
		*evlen = end - 1 - at;
		return true;
	}
	return false;
}

/* Matches ^(\S.+?)\s+(\d+)[/]*(\d+)*\s+ and sets the process name and period from it.
 * Returns 1 for a header, 0 for another line, -1 for a header of a filtered-out event. */
static int parse_header(struct collapse *c, const char *l, size_t n)
{
	const char *ev = NULL;
	size_t evlen = 0;
	uint64_t period = 0;

	if (!n || isspace((unsigned char)l[0]))
		return 0;
	for (size_t e = 2, run; e < n; e++) {
		size_t i = e, pid_at, pid_len, tid_at = 0, tid_len = 0;
		if (!isspace((unsigned char)l[i]))
			continue;
		while (i < n && isspace((unsigned char)l[i]))
			i++;
		/* a later e in this run of blanks fails the same way: on failure the loop goes on
		 * after the run, which keeps a line of a million blanks linear */
		run = i - 1;
		for (pid_at = i; i < n && isdigit((unsigned char)l[i]); i++)
			;
		pid_len = i - pid_at;
		if (!pid_len) {
			e = run;
			continue;
		}
		while (i < n && l[i] == '/')
			i++;
		for (tid_at = i; i < n && isdigit((unsigned char)l[i]); i++)
			;
		tid_len = i - tid_at;
		if (i >= n || !isspace((unsigned char)l[i])) {
			e = run;
			continue;
		}
		if (header_event(l, n, &period, &ev, &evlen)) {
			/* only the first event type seen is collapsed */
			if (!c->event.len)
				strbuf_add(&c->event, ev, evlen);
			else if (c->event.len != evlen || memcmp(c->event.buf, ev, evlen))
				return -1;
		}
		c->period = period ? period : 1;
		strbuf_reset(&c->pname);
		for (size_t k = 0; k < e; k++)
			strbuf_addch(&c->pname, l[k] == ' ' ? '_' : l[k]);
		if (c->o->include_tid || c->o->include_pid) {
			/* "comm pid/tid" has both; "comm tid" only the thread: its pid is "?" */
			const char *pid = tid_len ? l + pid_at : "?";
			int plen = tid_len ? (int)pid_len : 1;
			strbuf_addf(&c->pname, "-%.*s", plen, pid);
			if (c->o->include_tid)
				strbuf_addf(&c->pname, "/%.*s", (int)(tid_len ? tid_len : pid_len),
					    tid_len ? l + tid_at : l + pid_at);
		}
		return 1;
	}
	return 0;
}

static void push_frame(struct collapse *c, const char *name, size_t len)
{
	if (c->nr == c->alloc) {
		c->alloc = c->alloc ? c->alloc * 2 : 128;
		c->frames = xrealloc(c->frames, c->alloc * sizeof(*c->frames));
		c->group = xrealloc(c->group, c->alloc * sizeof(*c->group));
	}
	c->frames[c->nr] = profile__intern(c->p, name, len);
	c->group[c->nr++] = c->lines;
}

static bool is_jit_map(const char *mod, size_t mlen)
{
	const char *m = memmem(mod, mlen, "/tmp/perf-", 10);
	size_t i;

	if (!m)
		return false;
	i = (size_t)(m - mod) + 10;
	if (i >= mlen || !isdigit((unsigned char)mod[i]))
		return false;
	while (i < mlen && isdigit((unsigned char)mod[i]))
		i++;
	return mlen - i >= 4 && !memcmp(mod + i, ".map", 4);
}

/* One part of an "a->b" chain, tidied and annotated as stackcollapse does, into c->tmp. */
static void tidy(struct collapse *c, const char *f, size_t n, const char *mod, size_t mlen,
		 bool inlined)
{
	struct strbuf *t = &c->tmp;
	const char *paren, *close;

	strbuf_reset(t);
	if (n == 9 && !memcmp(f, "[unknown]", 9) && !(mlen == 9 && !memcmp(mod, "[unknown]", 9))) {
		const char *base = mod + mlen;	/* the module's name instead, when known */
		while (base > mod && base[-1] != '/')
			base--;
		strbuf_addf(t, "[%.*s]", (int)(mod + mlen - base), base);
	} else {
		strbuf_add(t, f, n);
	}
	for (size_t i = 0; i < t->len; i++)
		if (t->buf[i] == ';')
			t->buf[i] = ':';
	/* everything from the first '(' is argument noise, unless this is a Go method such
	 * as "net/http.(*Client).Do" or the '(' opens "(anonymous namespace)" */
	paren = strstr(t->buf, ".(");
	close = paren ? strstr(paren + 2, ").") : NULL;
	if (!close) {
		for (char *p = t->buf; (p = strchr(p, '(')); p++) {
			if (strncmp(p + 1, "anonymous namespace)", 20)) {
				strbuf_setlen(t, (size_t)(p - t->buf));
				break;
			}
		}
	}
	size_t w = 0;
	for (size_t i = 0; i < t->len; i++)
		if (t->buf[i] != '"' && t->buf[i] != '\'')
			t->buf[w++] = t->buf[i];
	strbuf_setlen(t, w);
	if (!strncmp(c->pname.buf, "java", 4) && t->len && t->buf[0] == 'L' && strchr(t->buf, '/')) {
		memmove(t->buf, t->buf + 1, t->len);
		strbuf_setlen(t, t->len - 1);
	}
	if (inlined) {
		if (!strstr(t->buf, "_[i]"))
			strbuf_addstr(t, "_[i]");
	} else if (c->o->annotate_kernel && mlen && (mod[0] == '[' ||
		   (mlen >= 7 && !memcmp(mod + mlen - 7, "vmlinux", 7))) &&
		   !memmem(mod, mlen, "unknown", 7)) {
		strbuf_addstr(t, "_[k]");
	} else if (c->o->annotate_jit && is_jit_map(mod, mlen) && !strstr(t->buf, "_[j]")) {
		strbuf_addstr(t, "_[j]");
	}
}

/* Matches ^\s*(\w+)\s*(.+) \((.*)\) and adds the line's frames. Returns false when the
 * line is not a frame. */
static bool parse_frame(struct collapse *c, const char *l, size_t n)
{
	size_t i = 0, pc_at, pc_end, fstart, paren = 0, last = 0;
	struct strbuf raw = STRBUF_INIT;
	const char *mod;
	size_t mlen;

	while (i < n && isspace((unsigned char)l[i]))
		i++;
	for (pc_at = i; i < n && is_word(l[i]); i++)
		;
	if (i == pc_at)
		return false;
	pc_end = i;
	while (i < n && isspace((unsigned char)l[i]))
		i++;
	fstart = i;
	/* the module runs from the last " (" that has a ')' after it to the last ')' */
	for (size_t k = n; k-- > 0;)
		if (l[k] == ')') {
			last = k;
			break;
		}
	for (size_t p = last; p-- > fstart + 1;)
		if (l[p - 1] == ' ' && l[p] == '(') {
			paren = p - 1;
			break;
		}
	if (last && paren > fstart) {
		mod = l + paren + 2;
		mlen = last - (paren + 2);
	} else if (last > fstart && l[fstart] == '(' && fstart - pc_end >= 2) {
		/* "7f1e2215d058  (/lib/libc-2.15.so)": no symbol, two blanks. The script's
		 * \s*(.+) \( leaves one blank as the symbol, and so do we */
		paren = fstart - 1;
		fstart = paren - 1;
		mod = l + paren + 2;
		mlen = last - (paren + 2);
	} else {
		return false;
	}
	if (c->state <= 0)	/* no sample header, or a filtered one: ignored */
		return true;
	strbuf_add(&raw, l + fstart, paren - fstart);
	/* perf >= 4.8 prints symbol offsets: strip a trailing +0x<hex> */
	char *plus = strstr(raw.buf, "+0x");
	for (char *q = plus; q; q = strstr(q + 1, "+0x"))
		plus = q;
	if (plus && plus[3] && strspn(plus + 3, "0123456789abcdef") == strlen(plus + 3))
		strbuf_setlen(&raw, (size_t)(plus - raw.buf));
	if (raw.buf[0] != '(') {	/* "(comm)" frames are process names: skipped */
		const char *part = raw.buf, *arrow;
		bool first = true;
		do {
			arrow = strstr(part, "->");
			size_t plen = arrow ? (size_t)(arrow - part) : strlen(part);
			tidy(c, part, plen, mod, mlen, !first);
			push_frame(c, c->tmp.buf, c->tmp.len);
			first = false;
			part = arrow ? arrow + 2 : NULL;
		} while (part);
		c->lines++;
	}
	strbuf_release(&raw);
	return true;
}

/* Adds the sample collected so far: process name, then lines from the last (root) to the
 * first (leaf), each line's frames in their order; its count is the header's period. */
static void flush(struct collapse *c)
{
	uint32_t *stack;
	size_t depth = 0;

	if (c->state == 1) {
		stack = xmalloc((c->nr + 1) * sizeof(*stack));
		stack[depth++] = profile__intern(c->p, c->pname.buf, c->pname.len);
		for (size_t end = c->nr; end > 0;) {
			size_t start = end;
			while (start > 0 && c->group[start - 1] == c->group[end - 1])
				start--;
			for (size_t k = start; k < end; k++)
				stack[depth++] = c->frames[k];
			end = start;
		}
		profile__add(c->p, stack, (uint32_t)depth, c->o->count_samples ? 1 : c->period);
		free(stack);
	}
	c->nr = 0;
	c->lines = 0;
	c->state = 0;
	strbuf_reset(&c->pname);
}

int perfscript__parse(struct profile *p, const char *text, size_t len,
		      const struct perfscript_options *opts, size_t *skipped, char *err,
		      size_t errlen)
{
	static const struct perfscript_options defaults;
	struct collapse c = { .p = p, .o = opts ? opts : &defaults, .pname = STRBUF_INIT,
			      .tmp = STRBUF_INIT, .event = STRBUF_INIT };
	const char *end = text + len, *line = text;
	size_t headers = 0, bad = 0;
	int hdr;

	while (line < end) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		size_t n = (size_t)((eol ? eol : end) - line);

		if (n && line[0] == '#') {
			/* comments, perf's header */
		} else if (!n) {
			flush(&c);
		} else if ((hdr = parse_header(&c, line, n)) != 0) {
			headers++;
			c.state = hdr;
		} else if (!parse_frame(&c, line, n)) {
			bad++;
		}
		if (!eol)
			break;
		line = eol + 1;
	}
	flush(&c);
	free(c.frames);
	free(c.group);
	strbuf_release(&c.pname);
	strbuf_release(&c.tmp);
	strbuf_release(&c.event);
	if (skipped)
		*skipped = bad;
	if (!headers && len) {
		errmsg(err, errlen, "no perf script sample header found");
		return -EINVAL;
	}
	return 0;
}

bool perfscript__detect(const char *text, size_t len)
{
	struct perfscript_options o = { 0 };
	struct collapse c = { .o = &o, .pname = STRBUF_INIT, .tmp = STRBUF_INIT,
			      .event = STRBUF_INIT };
	const char *end = text + len, *line = text;
	bool prev_header = false, found = false;

	for (int seen = 0; line < end && seen < 64 && !found;) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		size_t n = (size_t)((eol ? eol : end) - line);

		if (n && line[0] != '#') {
			seen++;
			bool header = parse_header(&c, line, n) != 0;
			if (prev_header && !header) {
				/* a frame line: address, then symbol and "(module)"; perf
				 * indents it, older tools' output may not */
				size_t i = 0, pc;
				while (i < n && isspace((unsigned char)line[i]))
					i++;
				for (pc = i; i < n && isxdigit((unsigned char)line[i]); i++)
					;
				found = i > pc && i < n && isspace((unsigned char)line[i]) &&
					memchr(line, '(', n) && memchr(line, ')', n);
			}
			prev_header = header;
		}
		if (!eol)
			break;
		line = eol + 1;
	}
	strbuf_release(&c.pname);
	strbuf_release(&c.tmp);
	strbuf_release(&c.event);
	return found;
}
