/* Query endpoints: Pyroscope's render (flamebearer JSON, or the merged profile as .col or
 * pprof), render-diff, labels, label values, apps, and kiln's sample-total series. */
#include "server/http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/col.h"
#include "format/dot.h"
#include "format/html.h"
#include "format/pprof.h"
#include "profile/ptype.h"
#include "server/cache.h"
#include "server/flamebearer.h"
#include "server/selector.h"
#include "server/targets.h"
#include "util/log.h"

#define DEFAULT_MAX_NODES 8192
#define MAX_MAX_NODES 1048576

/* The profile type a query names with `profile_type=name:type:unit:period_type:period_unit`
 * (none: the service's default). A service named without a type suffix is looked up as
 * the legacy name of that type ("app" and memory:alloc_space:... is "app.alloc_space"). */
/* The status of a failed store read: 503 when it ran past its deadline (the client may
 * narrow the query or retry), 500 otherwise. */
static unsigned read_status(int ret)
{
	return ret == -ETIMEDOUT ? 503 : 500;
}

static int parse_profile_type(struct request *r, struct response *resp, struct store_query *q)
{
	const char *id = req__arg(r, "profile_type"), *dot, *t, *e, *suffix;
	char type[65];

	if (!id)
		return 0;
	if (!ptype__valid(id)) {
		resp__error(resp, 400, "invalid profile_type '%.64s': use name:type:unit:"
			    "period_type:period_unit", id);
		return -EINVAL;
	}
	q->profile_type = xstrdup(id);
	t = strchr(id, ':') + 1;
	e = strchr(t, ':');
	snprintf(type, sizeof(type), "%.*s", (int)(e - t), t);
	dot = q->service ? strrchr(q->service, '.') : NULL;
	suffix = ptype__suffix(type, NULL);
	if (q->service && suffix && !(dot && ptype__legacy(dot + 1))) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, "%s.%s", q->service, suffix);
		free(q->service);
		q->service = strbuf_detach(&sb, NULL);
	}
	return 0;
}

/* A stored service name as the request's tenant knows it. */
static const char *shown(const struct request *r, const char *stored)
{
	const char *name = tenant__strip(r, stored);

	return name ? name : stored;
}

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* A Grafana-style selector, `{service_name="app", __profile_type__="...", k="v"}`, as the
 * one stored service it names (server/targets.h): of the profile_type argument's type
 * when there is one, else of CPU samples when several types match. */
static int grafana_selector(struct request *r, struct response *resp, const char *qname,
			    const char *text, struct store_query *q)
{
	const char *type = req__arg(r, "profile_type");
	struct store_query pick;
	struct targets t = { 0 };
	const struct target *one = NULL;
	char err[256];
	int ret;

	store_query_init(&pick);
	ret = targets__parse_selector(text, q, &pick, err, sizeof(err));
	if (ret) {
		resp__error(resp, 400, "invalid %s: %s", qname, err);
	} else if ((ret = targets__find(r, &pick, type && ptype__valid(type) ? type : NULL,
					0, &t, err, sizeof(err)))) {
		resp__error(resp, 500, "%s", err);
	} else {
		size_t cpu = 0;
		for (size_t i = 0; i < t.n && t.n > 1; i++)
			if (!strcmp(t.v[i].type, PTYPE_CPU_SAMPLES))
				one = &t.v[i], cpu++;
		one = t.n == 1 ? &t.v[0] : cpu == 1 ? one : NULL;
		if (!one && t.n) {
			resp__error(resp, 400, "%s matches %zu services: name one with service_name "
				    "and __profile_type__", qname, t.n);
			ret = -EINVAL;
		} else {
			/* nothing matches: a service no one has, which answers empty */
			q->service = xstrdup(one ? one->service : "-");
			if (one && !type)
				q->profile_type = xstrdup(one->type);
		}
	}
	targets__release(&t);
	store_query_release(&pick);
	return ret;
}

/* Parses a query selector and a time range from the named arguments. Sets an error
 * response and returns -EINVAL when one is malformed. */
static int parse_query(struct request *r, struct response *resp, const char *qname,
		       const char *fname, const char *uname, struct store_query *q,
		       int64_t *from, int64_t *until, bool required)
{
	const char *text = req__arg(r, qname), *s;
	int64_t now = req__now();
	bool stored = false;	/* q->service is a stored name already (of r's tenant) */
	char err[256];

	if (!text && !strcmp(qname, "query"))
		text = req__arg(r, "name");
	if (!text || !*text) {
		if (required) {
			resp__error(resp, 400, "missing '%s' parameter", qname);
			return -EINVAL;
		}
	} else if (*skip_blanks(text) == '{') {
		if (grafana_selector(r, resp, qname, text, q))
			return -EINVAL;
		stored = true;
	} else if (selector__parse(q, text, false, err, sizeof(err))) {
		resp__error(resp, 400, "invalid %s: %s", qname, err);
		return -EINVAL;
	}
	if (parse_profile_type(r, resp, q))
		return -EINVAL;
	if (q->service && r->tenant && !stored) {
		char *own = tenant__service(r, q->service);
		free(q->service);
		q->service = own;
	} else if (!q->service && r->srv->tenancy) {
		/* the store lists labels of every service: that would cross tenants */
		resp__error(resp, 400, "missing '%s' parameter: on a server with tenants a "
			    "query names its service", qname);
		return -EINVAL;
	}
	*from = now - 3600;
	*until = now;
	if (((s = req__arg(r, fname)) && attime__parse(s, now, from)) ||
	    ((s = req__arg(r, uname)) && attime__parse(s, now, until))) {
		resp__error(resp, 400, "invalid time '%.32s'", s);
		return -EINVAL;
	}
	if (*from >= *until) {
		resp__error(resp, 400, "'%s' must be before '%s'", fname, uname);
		return -EINVAL;
	}
	return 0;
}

/* The arguments of the label lists: an optional selector, and a range that covers all
 * time up to 'until' unless 'from' is given. */
static int parse_label_query(struct request *r, struct response *resp, struct store_query *q,
			     int64_t *from, int64_t *until)
{
	if (parse_query(r, resp, "query", "from", "until", q, from, until, false))
		return -EINVAL;
	if (!req__arg(r, "from"))
		*from = 0;
	if (!req__arg(r, "until"))
		*until += 1;	/* a series first seen this second is listed too */
	return 0;
}

static int parse_max_nodes(struct request *r, struct response *resp, size_t *out)
{
	const char *s = req__arg(r, "maxNodes");
	char *end;

	if (!s)
		s = req__arg(r, "max-nodes");
	*out = DEFAULT_MAX_NODES;
	if (!s)
		return 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || *end || !v) {
		resp__error(resp, 400, "invalid maxNodes '%.32s'", s);
		return -EINVAL;
	}
	*out = v > MAX_MAX_NODES ? MAX_MAX_NODES : (size_t)v;
	return 0;
}

/* The service's stored metadata (units, spy name, rate), or defaults. */
static json_t *service_meta(struct server *srv, const char *name)
{
	struct store_service *sv = NULL;
	size_t n = 0, len = strlen(name);
	json_t *m = NULL;
	char err[128];

	if (store__services(srv->store, &sv, &n, err, sizeof(err)))
		n = 0;
	for (int pass = 0; pass < 2 && !m; pass++) {
		for (size_t i = 0; i < n && !m; i++) {
			size_t l = strlen(sv[i].name);
			bool hit = pass == 0 ? !strcmp(sv[i].name, name)
					     : (l + 4 == len && !strncmp(name, sv[i].name, l)) ||
					       (len + 4 == l && !strncmp(name, sv[i].name, len));
			if (hit)
				m = json_pack("{s:s,s:i,s:s}", "spyName", sv[i].spy_name, "sampleRate",
					      (int)sv[i].sample_rate, "units", sv[i].units);
		}
	}
	store__free_services(sv, n);
	return m ? m : json_pack("{s:s,s:i,s:s}", "spyName", "unknown", "sampleRate", 100,
				 "units", "samples");
}

static json_t *timeline_json(const struct store_series *ts)
{
	json_t *samples = json_array();

	for (size_t i = 0; i < ts->n; i++)
		json_array_append_new(samples, json_integer((json_int_t)ts->samples[i]));
	return json_pack("{s:I,s:o,s:I}", "startTime", (json_int_t)ts->start, "samples", samples,
			 "durationDelta", (json_int_t)ts->step);
}

/* The standalone flamegraph page of p, or of left against right when right is set. */
static void send_html(struct response *resp, const struct profile *left,
		      const struct profile *right, const char *title)
{
	struct html_options ho = { .title = title };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int ret = -ENOMEM;

	if (f) {
		ret = right ? html__write_diff(f, left, right, &ho) : html__write(f, left, &ho);
		if (fclose(f) && !ret)
			ret = -EIO;
	}
	if (ret) {
		free(text);
		resp__error(resp, 500, "failed to write the flamegraph page");
		return;
	}
	strbuf_add(&resp->body, text, len);
	free(text);
	resp->status = 200;
	resp->content_type = "text/html; charset=utf-8";
	resp->disposition = "attachment; filename=\"flamegraph.html\"";
}

static void send_export(struct request *r, struct response *resp, const char *format,
			const struct store_query *q, int64_t from, int64_t until,
			struct profile *p, uint32_t rate)
{
	json_t *meta = profile__meta(p);

	json_object_set_new(meta, "service", json_string(shown(r, q->service)));
	json_object_set_new(meta, "start_time", json_integer(from));
	json_object_set_new(meta, "end_time", json_integer(until));
	json_object_set_new(meta, "frequency", json_integer(rate));
	json_object_set_new(meta, "sampling_frequency", json_integer(rate));
	if (!strcmp(format, "pprof")) {
		if (pprof__write(&resp->body, p)) {
			resp__error(resp, 500, "failed to encode pprof");
			return;
		}
		resp->status = 200;
		resp->content_type = "application/octet-stream";
		resp->disposition = "attachment; filename=\"profile.pb.gz\"";
		return;
	}
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f || col__write(f, p, true)) {
		if (f)
			fclose(f);
		free(text);
		resp__error(resp, 500, "failed to write collapsed stacks");
		return;
	}
	fclose(f);
	strbuf_add(&resp->body, text, len);
	free(text);
	resp->status = 200;
	resp->content_type = "text/plain; charset=utf-8";
	resp->disposition = "attachment; filename=\"profile.col\"";
}

/* Flamebearer JSON is cached by the normalized request and the store's generation. */
static void render_key(struct strbuf *key, const char *kind, const char *const *queries,
		       const int64_t *times, size_t n, size_t max_nodes)
{
	strbuf_addstr(key, kind);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(key, "|%zu:%s|%lld|%lld", strlen(queries[i]), queries[i],
			    (long long)times[2 * i], (long long)times[2 * i + 1]);
	strbuf_addf(key, "|%zu", max_nodes);
}

/* The response {"version":1,"flamebearer":FB,"metadata":META,...} from the flamebearer's
 * text and the other members (reference stolen). */
static void send_render(struct response *resp, const char *fb, size_t fb_len, json_t *rest)
{
	char *text = json_dumps(rest, JSON_COMPACT);

	json_decref(rest);
	if (!text)
		abort();
	strbuf_reset(&resp->body);
	strbuf_grow(&resp->body, fb_len + strlen(text) + 32);
	strbuf_addstr(&resp->body, "{\"version\":1,\"flamebearer\":");
	strbuf_add(&resp->body, fb, fb_len);
	if (text[1] != '}')
		strbuf_addch(&resp->body, ',');
	strbuf_addstr(&resp->body, text + 1);
	free(text);
	resp->status = 200;
	resp->content_type = "application/json";
}

/* The flamebearer text of the matching stacks (single when rq is NULL), from the cache or
 * built (then cached); server__read_lock around the store calls. Sets resp->cache. */
static int render_flamebearer(struct request *r, const struct store_query *lq, const char *ltext,
			      int64_t lf, int64_t lu, const struct store_query *rq,
			      const char *rtext, int64_t rf, int64_t ru, size_t max_nodes,
			      struct strbuf *fb, uint64_t ticks[2], struct response *resp,
			      char *err, size_t errlen)
{
	struct strbuf key = STRBUF_INIT;
	struct store_tree lt, rt;
	const char *queries[2] = { ltext, rtext };
	const int64_t times[4] = { lf, lu, rf, ru };
	uint64_t gen;
	int ret = 0;

	store_tree_init(&lt);
	store_tree_init(&rt);
	render_key(&key, rq ? "diff" : "single", queries, times, rq ? 2 : 1, max_nodes);
	strbuf_addf(&key, "|%s|%s|%s", lq->profile_type ? lq->profile_type : "",
		    rq && rq->profile_type ? rq->profile_type : "", r->tenant ? r->tenant : "");
	server__read_lock(r->srv);
	gen = store__generation(r->srv->store);
	if (!render_cache__get(r->srv->cache, key.buf, gen, fb, ticks)) {
		resp->cache = "miss";
		ret = store__select_tree(r->srv->store, lq, lf, lu, &lt, err, errlen);
		if (!ret && rq)
			ret = store__select_tree(r->srv->store, rq, rf, ru, &rt, err, errlen);
		server__read_unlock(r->srv);
		if (!ret) {
			flamebearer__write_trees(fb, &lt, rq ? &rt : NULL, max_nodes, &ticks[0],
						 &ticks[1]);
			render_cache__put(r->srv->cache, key.buf, gen, fb->buf, fb->len, ticks);
		}
	} else {
		server__read_unlock(r->srv);
		resp->cache = "hit";
	}
	store_tree_release(&lt);
	store_tree_release(&rt);
	strbuf_release(&key);
	return ret;
}

/* Rounds a range out to the store's resolution (a step), so that requests a few seconds
 * apart ("now-1h" reloaded) are the same query and can share a cached result. */
static int64_t ceil_step(int64_t t, int64_t step)
{
	int64_t r = t % step;

	if (r < 0)
		r += step;
	return !r || t > INT64_MAX - step ? t : t + (step - r);
}

static void round_range(const struct store *s, int64_t *from, int64_t *until)
{
	int64_t step = store__resolution(s) > 0 ? store__resolution(s) : 1;

	*from = ceil_step(*from, step);
	*until = ceil_step(*until, step);
	if (*until <= *from)
		*until = *from <= INT64_MAX - step ? *from + step : INT64_MAX;
}

void query__render(struct request *r, struct response *resp)
{
	const char *format = req__arg(r, "format");
	const char *text = req__arg(r, "query") ? req__arg(r, "query") : req__arg(r, "name");
	struct store_query q;
	struct store_series ts = { 0 };
	struct profile *p = NULL;
	struct strbuf fb = STRBUF_INIT;
	uint64_t ticks[2] = { 0, 0 };
	int64_t from, until;
	size_t max_nodes;
	json_t *meta = NULL;
	char err[256];
	int ret;

	store_query_init(&q);
	if (format && *format && strcmp(format, "json") && strcmp(format, "collapsed") &&
	    strcmp(format, "col") && strcmp(format, "pprof") && strcmp(format, "html") &&
	    strcmp(format, "dot")) {
		resp__error(resp, 400, "unknown format '%.32s': use json, collapsed, pprof, dot or "
			    "html", format);
		goto out;
	}
	if (parse_query(r, resp, "query", "from", "until", &q, &from, &until, true) ||
	    parse_max_nodes(r, resp, &max_nodes))
		goto out;
	round_range(r->srv->store, &from, &until);
	if (format && *format && strcmp(format, "json")) {
		p = profile__new();
		server__read_lock(r->srv);
		ret = strcmp(format, "collapsed") && strcmp(format, "col")
		      ? store__select(r->srv->store, &q, from, until, p, err, sizeof(err))
		      : query__select_col(r->srv, &q, from, until, p, err, sizeof(err));
		meta = service_meta(r->srv, q.service);
		server__read_unlock(r->srv);
		if (ret) {
			resp__error(resp, read_status(ret), "%s", err);
		} else if (!strcmp(format, "html")) {
			send_html(resp, p, NULL, text);
		} else if (!strcmp(format, "dot")) {	/* pprof -dot's graph (format/dot.h) */
			const char *units = json_string_value(json_object_get(meta, "units"));
			bool asked = req__arg(r, "maxNodes") || req__arg(r, "max-nodes");
			dot__write(&resp->body, p, shown(r, q.service), units ? units : "samples",
				   asked ? max_nodes : 0);
			resp->status = 200;
			resp->content_type = "text/vnd.graphviz; charset=utf-8";
		} else {
			send_export(r, resp, !strcmp(format, "pprof") ? "pprof" : "col", &q, from,
				    until, p, (uint32_t)json_integer_value(json_object_get(meta,
									"sampleRate")));
		}
		goto out;
	}
	ret = render_flamebearer(r, &q, text, from, until, NULL, NULL, 0, 0, max_nodes, &fb, ticks,
				 resp, err, sizeof(err));
	if (!ret) {
		server__read_lock(r->srv);
		ret = store__series(r->srv->store, &q, from, until, &ts, err, sizeof(err));
		meta = service_meta(r->srv, q.service);
		server__read_unlock(r->srv);
	}
	if (ret) {
		resp__error(resp, read_status(ret), "%s", err);
		goto out;
	}
	json_object_set_new(meta, "format", json_string("single"));
	json_object_set_new(meta, "name", json_string(shown(r, q.service)));
	json_object_set_new(meta, "appName", json_string(shown(r, q.service)));
	json_object_set_new(meta, "startTime", json_integer(from));
	json_object_set_new(meta, "endTime", json_integer(until));
	json_object_set_new(meta, "query", json_string(text));
	json_object_set_new(meta, "maxNodes", json_integer((json_int_t)max_nodes));
	send_render(resp, fb.buf, fb.len, json_pack("{s:O,s:o}", "metadata", meta,
						    "timeline", timeline_json(&ts)));
out:
	json_decref(meta);
	free(ts.samples);
	strbuf_release(&fb);
	store_query_release(&q);
	profile__free(p);
}

void query__render_diff(struct request *r, struct response *resp)
{
	const char *format = req__arg(r, "format");
	struct store_query lq, rq;
	struct strbuf fb = STRBUF_INIT;
	int64_t lf, lu, rf, ru;
	uint64_t ticks[2] = { 0, 0 };
	size_t max_nodes;
	json_t *meta = NULL;
	char err[256];
	int ret;

	store_query_init(&lq);
	store_query_init(&rq);
	if (format && *format && strcmp(format, "json") && strcmp(format, "html")) {
		resp__error(resp, 400, "unknown format '%.32s': use json or html", format);
		goto out;
	}
	if (parse_query(r, resp, "leftQuery", "leftFrom", "leftUntil", &lq, &lf, &lu, true) ||
	    parse_query(r, resp, "rightQuery", "rightFrom", "rightUntil", &rq, &rf, &ru, true) ||
	    parse_max_nodes(r, resp, &max_nodes))
		goto out;
	round_range(r->srv->store, &lf, &lu);
	round_range(r->srv->store, &rf, &ru);
	if (format && !strcmp(format, "html")) {
		struct profile *lp = profile__new(), *rp = profile__new();
		server__read_lock(r->srv);
		ret = store__select(r->srv->store, &lq, lf, lu, lp, err, sizeof(err));
		if (!ret)
			ret = store__select(r->srv->store, &rq, rf, ru, rp, err, sizeof(err));
		server__read_unlock(r->srv);
		if (ret)
			resp__error(resp, read_status(ret), "%s", err);
		else
			send_html(resp, lp, rp, "kiln diff: A = left, B = right");
		profile__free(lp);
		profile__free(rp);
		goto out;
	}
	ret = render_flamebearer(r, &lq, req__arg(r, "leftQuery"), lf, lu, &rq,
				 req__arg(r, "rightQuery"), rf, ru, max_nodes, &fb, ticks, resp,
				 err, sizeof(err));
	if (ret) {
		resp__error(resp, read_status(ret), "%s", err);
		goto out;
	}
	server__read_lock(r->srv);
	meta = service_meta(r->srv, lq.service);
	server__read_unlock(r->srv);
	json_object_set_new(meta, "format", json_string("double"));
	json_object_set_new(meta, "name", json_string(shown(r, lq.service)));
	json_object_set_new(meta, "appName", json_string(shown(r, lq.service)));
	json_object_set_new(meta, "maxNodes", json_integer((json_int_t)max_nodes));
	send_render(resp, fb.buf, fb.len, json_pack("{s:O,s:I,s:I}", "metadata", meta,
						    "leftTicks", (json_int_t)ticks[0],
						    "rightTicks", (json_int_t)ticks[1]));
out:
	json_decref(meta);
	strbuf_release(&fb);
	store_query_release(&lq);
	store_query_release(&rq);
}

static void send_strings(struct response *resp, const char *first, char **v, size_t n)
{
	json_t *a = json_array();

	if (first)
		json_array_append_new(a, json_string(first));
	for (size_t i = 0; i < n; i++) {
		json_t *s = json_string(v[i]);
		if (s)
			json_array_append_new(a, s);
	}
	resp__json(resp, 200, a);
}

void query__labels(struct request *r, struct response *resp)
{
	struct store_query q;
	int64_t from, until;
	char err[256], **v = NULL;
	size_t n = 0;
	int ret;

	store_query_init(&q);
	if (parse_label_query(r, resp, &q, &from, &until))
		goto out;
	server__read_lock(r->srv);
	ret = store__label_names(r->srv->store, &q, from, until, &v, &n, err, sizeof(err));
	server__read_unlock(r->srv);
	if (ret)
		resp__error(resp, read_status(ret), "%s", err);
	else
		send_strings(resp, "__name__", v, n);
	store__free_strings(v, n);
out:
	store_query_release(&q);
}

/* kiln's own: every label name of the matching series with its values, in one request
 * ({"host": ["a", "b"], ...}), so that the UI lists its filters without a round trip per
 * label. Same arguments as /pyroscope/labels. */
void query__label_sets(struct request *r, struct response *resp)
{
	struct store_query q;
	int64_t from, until;
	char err[256], **names = NULL;
	size_t n = 0;
	json_t *out = json_object();
	int ret;

	store_query_init(&q);
	if (parse_label_query(r, resp, &q, &from, &until))
		goto out;
	/* one pass over the series, "name\x1fvalue" sorted: a name's values are adjacent
	 * (a name per label_values call was N^2 for a series of N labels, under the lock) */
	server__read_lock(r->srv);
	ret = store__label_pairs(r->srv->store, &q, from, until, &names, &n, err, sizeof(err));
	server__read_unlock(r->srv);
	for (size_t i = 0; !ret && i < n;) {
		size_t len = strcspn(names[i], "\x1f"), j = i;
		json_t *a = json_array();
		for (; j < n && !strncmp(names[j], names[i], len) && names[j][len] == '\x1f'; j++) {
			json_t *str = json_string(names[j] + len + 1);
			if (str)
				json_array_append_new(a, str);
		}
		names[i][len] = 0;
		json_object_set_new(out, names[i], a);	/* dropped when the name is not UTF-8 */
		i = j;
	}
	if (ret) {
		resp__error(resp, read_status(ret), "%s", err);
	} else {
		resp__json(resp, 200, out);
		out = NULL;
	}
	store__free_strings(names, n);
out:
	json_decref(out);
	store_query_release(&q);
}

void query__label_values(struct request *r, struct response *resp)
{
	const char *label = req__arg(r, "label");
	struct store_query q;
	struct store_service *sv = NULL;
	int64_t from, until;
	char err[256], **v = NULL;
	size_t n = 0;
	int ret;

	store_query_init(&q);
	if (!label || !*label) {
		resp__error(resp, 400, "missing 'label' parameter");
		goto out;
	}
	if (parse_label_query(r, resp, &q, &from, &until))
		goto out;
	server__read_lock(r->srv);
	if (!strcmp(label, "__name__")) {
		ret = store__services(r->srv->store, &sv, &n, err, sizeof(err));
		if (!ret) {
			v = xcalloc(n + 1, sizeof(*v));
			size_t w = 0;
			for (size_t i = 0; i < n; i++)
				if (!ingest__is_span_service(sv[i].name))
					v[w++] = xstrdup(sv[i].name);
			store__free_services(sv, n);
			n = w;
		}
	} else {
		ret = store__label_values(r->srv->store, &q, label, from, until, &v, &n, err,
					  sizeof(err));
	}
	server__read_unlock(r->srv);
	if (ret)
		resp__error(resp, read_status(ret), "%s", err);
	else
		send_strings(resp, NULL, v, n);
	store__free_strings(v, n);
out:
	store_query_release(&q);
}

void query__apps(struct request *r, struct response *resp)
{
	struct store_service *sv = NULL;
	size_t n = 0;
	char err[256];
	int ret;

	server__read_lock(r->srv);
	ret = store__services(r->srv->store, &sv, &n, err, sizeof(err));
	server__read_unlock(r->srv);
	if (ret) {
		resp__error(resp, read_status(ret), "%s", err);
		return;
	}
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		const char *name = tenant__strip(r, sv[i].name);
		if (!name || ingest__is_span_service(name))	/* another tenant's, or spans */
			continue;
		/* Pyroscope's service name and the type, so the UI can group a service's
		 * types (app.cpu, app.alloc_space) under one name */
		const char *type = sv[i].profile_type ? sv[i].profile_type
						       : ptype__of_service(sv[i].name);
		char *base = targets__service_name(name);
		json_array_append_new(a, json_pack("{s:s,s:s,s:i,s:s,s:I,s:s,s:s}", "name", name,
						   "spyName", sv[i].spy_name, "sampleRate",
						   (int)sv[i].sample_rate, "units", sv[i].units,
						   "lastSeen", (json_int_t)sv[i].last_seen,
						   "serviceName", base, "profileType", type));
		free(base);
	}
	store__free_services(sv, n);
	resp__json(resp, 200, a);
}

void query__series(struct request *r, struct response *resp)
{
	struct store_query q;
	struct store_series ts = { 0 };
	int64_t from, until;
	char err[256];
	int ret;

	store_query_init(&q);
	if (parse_query(r, resp, "query", "from", "until", &q, &from, &until, true))
		goto out;
	server__read_lock(r->srv);
	ret = store__series(r->srv->store, &q, from, until, &ts, err, sizeof(err));
	server__read_unlock(r->srv);
	if (ret)
		resp__error(resp, read_status(ret), "%s", err);
	else
		resp__json(resp, 200, timeline_json(&ts));
	free(ts.samples);
out:
	store_query_release(&q);
}
