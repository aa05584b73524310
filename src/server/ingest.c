/* Ingest: gProfiler's `POST /api/v2/profiles` and Pyroscope's `POST /ingest` (its Connect
 * push API is in ingest_push.c).
 * Each request is parsed into a profile outside the store lock, then stored in one
 * transaction; the 2xx goes out only after the commit. */
#include "server/http.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "format/col.h"
#include "format/pprof.h"
#include "profile/ptype.h"
#include "server/multipart.h"
#include "server/selector.h"
#include "util/hashmap.h"
#include "util/log.h"

bool ingest__check_service(struct response *resp, const char *name)
{
	if (name && selector__valid_service(name))
		return true;
	if (name)
		resp__error(resp, 400, "invalid service name '%.64s%s': use 1 to 256 characters of "
			    "[A-Za-z0-9_.-/]", name, strlen(name) > 64 ? "..." : "");
	else
		resp__error(resp, 400, "missing service name");
	return false;
}

int ingest__check_time(struct response *resp, const char *field, int64_t t, int64_t now)
{
	if (t >= 0 && t <= now + INGEST_MAX_FUTURE)
		return 0;
	resp__error(resp, 422, "'%s' is out of range: %lld is not between 0 (1970) and a day "
		    "from now", field, (long long)t);
	return -ERANGE;
}

int ingest__check_labels(const struct labels *l, char *err, size_t errlen)
{
	if (l->n > INGEST_MAX_LABELS) {
		errmsg(err, errlen, "series has more than the limit of %d label names",
		       INGEST_MAX_LABELS);
		return -E2BIG;
	}
	for (size_t i = 0; i < l->n; i++) {
		if (strlen(l->v[i].name) > INGEST_MAX_LABEL_NAME) {
			errmsg(err, errlen, "label name '%.32s...' is longer than %d bytes",
			       l->v[i].name, INGEST_MAX_LABEL_NAME);
			return -E2BIG;
		}
		if (strlen(l->v[i].value) > INGEST_MAX_LABEL_VALUE) {
			errmsg(err, errlen, "value of label '%.64s' is longer than %d bytes",
			       l->v[i].name, INGEST_MAX_LABEL_VALUE);
			return -E2BIG;
		}
	}
	return 0;
}

int ingest__store(struct request *r, struct response *resp, const struct store_put *put)
{
	char err[256];
	int ret;

	for (size_t i = 0; i < put->nr_series; i++) {
		if (ingest__check_labels(&put->series[i], err, sizeof(err))) {
			resp__error(resp, 400, "%s", err);
			return -E2BIG;
		}
	}
	if (!ingest__check_service(resp, put->service))
		return -EINVAL;
	if (ingest__check_time(resp, "from", put->from, req__now()) ||
	    ingest__check_time(resp, "until", put->until, req__now()))
		return -ERANGE;
	if (ingest__limit_window(r->srv, put->from, put->until, req__now(), err, sizeof(err))) {
		resp__error(resp, 422, "%s", err);
		return -ERANGE;
	}
	/* a label that is not UTF-8 would be stored and never listed (JSON is UTF-8) */
	for (size_t i = 0; i < put->nr_series; i++) {
		const struct labels *l = &put->series[i];
		for (size_t j = 0; j < l->n; j++) {
			if (auth__valid_utf8(l->v[j].name, strlen(l->v[j].name)) &&
			    auth__valid_utf8(l->v[j].value, strlen(l->v[j].value)))
				continue;
			resp__error(resp, 400, "label '%.64s' is not valid UTF-8", l->v[j].name);
			return -EINVAL;
		}
	}
	struct store_put own = *put;
	struct span_put spans;
	char *name = tenant__service(r, put->service);
	if (name)
		own.service = name;
	ingest__span_put(&own, &spans);
	if (spans.service)
		own.also = &spans.put;	/* one write: both or neither */
	/* a backend that batches concurrent puts (ClickHouse) takes them unserialized, and
	 * one that acknowledges them later does not hold this thread meanwhile */
	bool serial = !store__concurrent_puts(r->srv->store);
	if (r->acks) {
		ret = ingest__put_async(r, &own, err, sizeof(err));
	} else {
		if (serial)
			pthread_mutex_lock(&r->srv->lock);
		ret = store__put(r->srv->store, &own, err, sizeof(err));
		if (serial)
			pthread_mutex_unlock(&r->srv->lock);
	}
	ingest__span_put_release(&spans);
	free(name);
	if (ret) {
		log_error("%s", err);
		resp__error(resp, ingest__put_status(ret), "%s", err);
	}
	return ret;
}

unsigned ingest__put_status(int ret)
{
	/* -EAGAIN: the store's backend is down for now, -EBUSY: full (the agent's spool
	 * retries both) */
	return ret == -EINVAL ? 422 : ret == -ENOSPC ? 507 : ret == -EAGAIN || ret == -EBUSY ? 503
											       : 500;
}

/* The sampling frequency from a .col header: kiln's "frequency", gProfiler's
 * "sampling_frequency" at the top or in "metadata". 0 when unknown. */
static uint32_t col_frequency(json_t *meta)
{
	json_int_t f = json_integer_value(json_object_get(meta, "frequency"));

	if (f <= 0)
		f = json_integer_value(json_object_get(meta, "sampling_frequency"));
	if (f <= 0)
		f = json_integer_value(json_object_get(json_object_get(meta, "metadata"),
						       "sampling_frequency"));
	return f > 0 && f < 1000000 ? (uint32_t)f : 0;
}

/* Splits a .col profile into series per (container, process) and stores it, the process
 * name kept as the root frame, as gProfiler's studio does. */
static int put_col(struct request *r, struct response *resp, const char *service,
		   const char *host, int64_t from, int64_t until, struct profile *col)
{
	struct profile *p = col__split_prefix(col, true);
	size_t nr_stacks = profile__nr_stacks(p), nr_series = 0;
	uint32_t *stack_series = xcalloc(nr_stacks ? nr_stacks : 1, sizeof(*stack_series));
	struct labels *series = NULL;
	struct hashmap *ids = hashmap__new();
	struct strbuf key = STRBUF_INIT;
	int ret;

	for (size_t i = 0; i < nr_stacks || (!nr_stacks && !nr_series); i++) {
		const char *container = NULL, *process = NULL;
		bool created;
		void **slot;

		if (nr_stacks) {
			struct profile_stack s = profile__stack(p, i);
			container = profile__label(p, s.labels, COL_LABEL_CONTAINER);
			process = profile__label(p, s.labels, COL_LABEL_PROCESS);
		}
		if (!container)
			container = "";
		strbuf_reset(&key);
		strbuf_addf(&key, "%s%c%s", container, 0, process ? process : "");
		slot = hashmap__insert(ids, key.buf, key.len, &created);
		if (created) {
			series = xrealloc(series, (nr_series + 1) * sizeof(*series));
			labels_init(&series[nr_series]);
			labels__set(&series[nr_series], "host", host);
			if (*container)
				labels__set(&series[nr_series], "container", container);
			if (process)
				labels__set(&series[nr_series], "process", process);
			labels__sort(&series[nr_series]);
			*slot = (void *)(uintptr_t)nr_series++;
		}
		if (nr_stacks)
			stack_series[i] = (uint32_t)(uintptr_t)*slot;
		else
			break;
	}
	struct store_put put = {
		.service = service, .from = from, .until = until, .profile = p,
		.series = series, .nr_series = nr_series, .stack_series = stack_series,
		.profile_type = PTYPE_CPU_SAMPLES, .units = "samples", .spy_name = "kiln",
		.sample_rate = col_frequency(profile__meta(p)),
	};
	ret = ingest__store(r, resp, &put);
	for (size_t i = 0; i < nr_series; i++)
		labels_release(&series[i]);
	free(series);
	free(stack_series);
	hashmap__free(ids);
	strbuf_release(&key);
	profile__free(p);
	return ret;
}

/* A time in seconds from a JSON number or ISO string (fallback when absent or not a
 * time) into *out. Returns 0, or sets a 422 naming field and returns -ERANGE when it is
 * out of range (see ingest__check_time). */
static int json_time(struct response *resp, const char *field, json_t *v, int64_t fallback,
		     int64_t now, int64_t *out)
{
	int64_t t;

	*out = fallback;
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
	} else if (json_is_real(v)) {
		double d = json_real_value(v);
		/* checked before the cast: 1e60 does not fit an int64_t */
		if (!(d >= 0 && d <= (double)(now + INGEST_MAX_FUTURE))) {
			resp__error(resp, 422, "'%s' is out of range: %g is not between 0 (1970) "
				    "and a day from now", field, d);
			return -ERANGE;
		}
		*out = (int64_t)d;
	} else if (json_is_string(v) && !isotime__parse(json_string_value(v), &t)) {
		*out = t;
	}
	return ingest__check_time(resp, field, *out, now);
}

/* The body's field name when it holds a time, else the .col header's. */
static json_t *time_of(json_t *body, json_t *meta, const char *name)
{
	json_t *v = json_object_get(body, name);
	int64_t t;

	if (json_is_integer(v) || json_is_real(v) ||
	    (json_is_string(v) && !isotime__parse(json_string_value(v), &t)))
		return v;
	return json_object_get(meta, name);
}

void ingest__gprofiler(struct request *r, struct response *resp)
{
	const char *service = req__header(r, "GPROFILER-SERVICE-NAME");
	struct profile *p = NULL;
	json_t *body = NULL, *prof, *host;
	json_error_t jerr;
	char err[256];
	int64_t now = req__now(), from, until;

	if (!service)
		service = req__arg(r, "service");
	if (!service) {
		resp__error(resp, 400, "missing GPROFILER-SERVICE-NAME header");
		return;
	}
	if (!ingest__check_service(resp, service))
		return;
	if (req__gunzip_body(r, resp, true))
		return;
	body = json_loadb(r->body.buf, r->body.len, 0, &jerr);
	if (!body || !json_is_object(body)) {
		resp__error(resp, 400, "body is not a JSON object: %s", body ? "wrong type" : jerr.text);
		goto out;
	}
	prof = json_object_get(body, "profile");
	if (!json_is_string(prof)) {
		resp__error(resp, 422, "body has no 'profile' string");
		goto out;
	}
	p = profile__new();
	if (col__parse(p, json_string_value(prof), json_string_length(prof), err, sizeof(err))) {
		resp__error(resp, 422, "failed to parse 'profile': %s", err);
		goto out;
	}
	json_t *meta = profile__meta(p);
	if (json_time(resp, "end_time", time_of(body, meta, "end_time"), now, now, &until) ||
	    json_time(resp, "start_time", time_of(body, meta, "start_time"),
		      until >= 60 ? until - 60 : 0, now, &from))
		goto out;
	if (from > until) {
		resp__error(resp, 422, "start_time is after end_time");
		goto out;
	}
	host = json_object_get(body, "hostname");
	const char *hostname = json_is_string(host) ? json_string_value(host) : req__arg(r, "hostname");
	if (!hostname || !*hostname) {
		json_t *m = json_object_get(meta, "metadata");
		hostname = json_string_value(json_object_get(m, "hostname"));
	}
	if (put_col(r, resp, service, hostname && *hostname ? hostname : "unknown", from, until, p))
		goto out;
	json_int_t gpid = json_integer_value(json_object_get(body, "gpid"));
	resp__json(resp, 200, json_pack("{s:s,s:I}", "message", "ok", "gpid",
					gpid ? gpid : (json_int_t)(hash_bytes(hostname ? hostname : "",
									      hostname ? strlen(hostname) : 0) & 0x7fffffff)));
out:
	profile__free(p);
	json_decref(body);
}

/* Pyroscope's "lines" format: one stack per line (frames root first, ';'-separated, no
 * count), each line one sample. */
static void parse_lines(struct profile *p, const char *text, size_t len)
{
	const char *end = text + len;

	for (const char *line = text; line < end;) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		const char *lend = eol ? eol : end;

		if (lend > line && lend[-1] == '\r')
			lend--;
		if (lend > line)
			col__add_stack(p, line, (size_t)(lend - line), 1);
		if (!eol)
			break;
		line = eol + 1;
	}
}

struct ranked {
	struct pprof_series s;
	int rank;
};

static int by_rank(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->s.index < y->s.index ? -1 : x->s.index > y->s.index;
}

int ingest__parse_pprof(struct profile *p, const void *data, size_t len, const char *app,
			const char *pushed_name, struct pprof_series **out, size_t *n, char *err,
			size_t errlen)
{
	const char *dot = strrchr(app, '.');
	size_t base = dot && ptype__legacy(dot + 1) ? (size_t)(dot - app) : strlen(app);
	size_t nt, nr = 0;
	struct ranked *v;
	struct strbuf sb = STRBUF_INIT;

	*out = NULL;
	*n = 0;
	if (pprof__parse(p, data, len, NULL, err, errlen))
		return -EINVAL;
	nt = profile__nr_types(p);
	v = xcalloc(nt, sizeof(*v));
	for (size_t i = 0; i < nt; i++) {
		struct profile_type t = profile__type(p, i);
		const char *suffix = ptype__suffix(t.type, &v[nr].rank);
		if (!suffix)
			continue;
		strbuf_reset(&sb);
		strbuf_addf(&sb, "%.*s.%s", (int)base, app, suffix);
		v[nr].s.service = xstrdup(sb.buf);
		strbuf_reset(&sb);
		ptype__id(&sb, p, i, pushed_name);
		v[nr].s.profile_type = xstrdup(sb.buf);
		v[nr].s.units = ptype__units(t.type, t.unit);
		v[nr++].s.index = i;
	}
	strbuf_release(&sb);
	if (!nr) {
		free(v);
		return -ENOENT;
	}
	qsort(v, nr, sizeof(*v), by_rank);
	*out = xmalloc(nr * sizeof(**out));
	for (size_t i = 0; i < nr; i++)
		(*out)[i] = v[i].s;
	*n = nr;
	free(v);
	return 0;
}

void ingest__free_series(struct pprof_series *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].service);
		free(v[i].profile_type);
	}
	free(v);
}

/* Accepts NULL or a short word of [A-Za-z0-9_.-] (spyName, units). */
/* An argument, or NULL when it is missing or empty (Pyroscope's Go SDK sends "units="). */
static const char *word_arg(struct request *r, const char *name)
{
	const char *s = req__arg(r, name);
	return s && *s ? s : NULL;
}

static bool valid_word(const char *s)
{
	if (!s)
		return true;
	if (strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.' && *s != '-')
			return false;
	return true;
}

/* Pyroscope's multipart `sample_type_config` ({"contentions": {"display-name":
 * "block_count", ...}, ...}): the display name is the type's legacy name, which tells a
 * Go block profile (block_count, block_duration) from a mutex one with the same sample
 * types. Renames the series of ps whose type it names; ignores what it cannot read. */
static void apply_sample_type_config(const struct profile *p, const char *data, size_t len,
				     const char *app, struct pprof_series *ps, size_t nps)
{
	json_t *cfg = json_loadb(data, len, 0, NULL);
	const char *dot = strrchr(app, '.');
	size_t base = dot && ptype__legacy(dot + 1) ? (size_t)(dot - app) : strlen(app);

	for (size_t i = 0; json_is_object(cfg) && i < nps; i++) {
		const char *type = profile__type(p, ps[i].index).type;
		const char *display = json_string_value(
			json_object_get(json_object_get(cfg, type), "display-name"));
		char name[65];
		size_t n = 0;
		if (!display || !*display || strlen(display) >= sizeof(name))
			continue;
		for (; display[n]; n++) {	/* .NET writes alloc-samples for alloc_samples */
			char c = display[n] == '-' ? '_' : display[n];
			if (!isalnum((unsigned char)c) && c != '_')
				break;
			name[n] = c;
		}
		if (display[n])
			continue;
		name[n] = 0;
		struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, "%.*s.%s", (int)base, app, name);
		free(ps[i].service);
		ps[i].service = strbuf_detach(&sb, NULL);
		if (!strncmp(name, "block_", 6) && !strncmp(ps[i].profile_type, "mutex:", 6)) {
			strbuf_addf(&sb, "block:%s", ps[i].profile_type + 6);
			free(ps[i].profile_type);
			ps[i].profile_type = strbuf_detach(&sb, NULL);
		}
	}
	json_decref(cfg);
}

/* The size limit on a pushed profile as sent (ingest__limit_size), with its 413 / 422. */
static int limit_size(struct request *r, struct response *resp, const void **data, size_t *len,
		      struct strbuf *scratch)
{
	char err[256];
	int ret = ingest__limit_size(r->srv, data, len, scratch, err, sizeof(err));

	if (ret)
		resp__error(resp, ret == -EFBIG ? 413 : 422, "%s", err);
	return ret;
}

void ingest__pyroscope(struct request *r, struct response *resp)
{
	const char *name = req__arg(r, "name"), *format = req__arg(r, "format");
	const char *ctype = req__header(r, "Content-Type"), *s;
	struct store_query q;
	struct labels labels;
	struct profile *p = profile__new();
	char err[256];
	int64_t now = req__now(), from = now, until = now;
	unsigned long rate = 0;
	struct pprof_series *ps = NULL, legacy;
	struct labels *series = NULL;
	uint32_t *stack_series = NULL;
	size_t nps = 0, nr_series = 0;
	struct strbuf scratch = STRBUF_INIT;
	int ret;

	store_query_init(&q);
	labels_init(&labels);
	if (!name) {
		resp__error(resp, 400, "missing 'name' parameter");
		goto out;
	}
	if (selector__parse(&q, name, true, err, sizeof(err))) {
		resp__error(resp, 400, "invalid name: %s", err);
		goto out;
	}
	if (((s = req__arg(r, "from")) && attime__parse(s, now, &from)) ||
	    ((s = req__arg(r, "until")) && attime__parse(s, now, &until))) {
		resp__error(resp, 400, "invalid time '%.32s'", s);
		goto out;
	}
	if (ingest__check_time(resp, "from", from, now) ||
	    ingest__check_time(resp, "until", until, now))
		goto out;
	if (from > until) {
		resp__error(resp, 400, "'from' is after 'until'");
		goto out;
	}
	if ((s = req__arg(r, "sampleRate"))) {
		char *end;
		rate = strtoul(s, &end, 10);
		if (end == s || *end || rate > 1000000) {
			resp__error(resp, 400, "invalid sampleRate '%.32s'", s);
			goto out;
		}
	}
	if (!valid_word(word_arg(r, "spyName")) || !valid_word(word_arg(r, "units"))) {
		resp__error(resp, 400, "invalid spyName or units: use [A-Za-z0-9_.-]");
		goto out;
	}
	if (req__gunzip_body(r, resp, false))
		goto out;
	if (format && !strcmp(format, "jfr")) {
		ingest__jfr(r, resp, &q, from, until, rate, word_arg(r, "spyName"));
		goto out;
	}
	const void *body = r->body.buf;
	size_t blen = r->body.len;
	if (!format && ctype && strstr(ctype, "multipart/form-data")) {
		char boundary[128];
		const char *data;
		size_t len;
		if (multipart__boundary(ctype, boundary, sizeof(boundary))) {
			resp__error(resp, 400, "multipart body without a boundary");
			goto out;
		}
		ret = multipart__find(r->body.buf, r->body.len, boundary, "profile", &data, &len,
				      err, sizeof(err));
		if (ret) {
			resp__error(resp, 422, "%s", ret == -ENOENT ? "multipart body has no 'profile' part" : err);
			goto out;
		}
		const void *d = data;
		if (limit_size(r, resp, &d, &len, &scratch))
			goto out;
		ret = ingest__parse_pprof(p, d, len, q.service, NULL, &ps, &nps, err, sizeof(err));
		if (!ret && !multipart__find(r->body.buf, r->body.len, boundary, "sample_type_config",
					     &data, &len, err, sizeof(err)))
			apply_sample_type_config(p, data, len, q.service, ps, nps);
	} else if (limit_size(r, resp, &body, &blen, &scratch)) {
		goto out;
	} else if (!format || !strcmp(format, "folded") || !strcmp(format, "groups")) {
		ret = col__parse(p, body, blen, err, sizeof(err));
	} else if (!strcmp(format, "lines")) {
		parse_lines(p, body, blen);
		ret = 0;
	} else if (!strcmp(format, "pprof")) {
		ret = ingest__parse_pprof(p, body, blen, q.service, NULL, &ps, &nps,
					  err, sizeof(err));
	} else {
		resp__error(resp, 422, "unsupported format '%.32s': use folded, lines, pprof or jfr", format);
		goto out;
	}
	if (ret == -ENOENT) {
		resp__error(resp, 422, "pprof profile has no sample type kiln knows (cpu, wall, "
			    "samples, space, objects, contentions, delay, goroutine)");
		goto out;
	}
	if (ret) {
		resp__error(resp, 422, "failed to parse profile: %s", err);
		goto out;
	}
	if (ingest__limit_samples(r->srv, p, err, sizeof(err))) {
		resp__error(resp, 400, "%s", err);
		goto out;
	}
	if (!ps) {	/* collapsed stacks: the type the name says */
		legacy = (struct pprof_series){ 0, q.service, (char *)ptype__of_service(q.service),
						word_arg(r, "units") };
		ps = &legacy;
		nps = 1;
	}
	selector__to_labels(&q, &labels);
	ingest__series(p, &labels, &series, &nr_series, &stack_series);
	for (size_t i = 0; i < nps; i++) {
		struct store_put put = {
			.service = ps[i].service, .from = from, .until = until, .profile = p,
			.profile_type = ps[i].profile_type, .type_index = ps[i].index,
			.series = series, .nr_series = nr_series, .stack_series = stack_series,
			.units = ps[i].units, .max_depth = ingest__max_depth(r->srv),
			.spy_name = word_arg(r, "spyName"),
			.sample_rate = rate ? (uint32_t)rate
					    : (uint32_t)json_integer_value(json_object_get(
						      profile__meta(p), "frequency")),
		};
		if (ingest__store(r, resp, &put))
			goto out;
	}
	resp->status = 200;
	resp->content_type = "text/plain";
	strbuf_reset(&resp->body);
out:
	if (ps != &legacy)
		ingest__free_series(ps, nps);
	ingest__free_series_labels(series, nr_series, stack_series);
	labels_release(&labels);
	store_query_release(&q);
	profile__free(p);
	strbuf_release(&scratch);
}
