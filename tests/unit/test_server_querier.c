/* The Connect querier's span profiles and Diff on the real server (loopback, in this
 * process): a pushed pprof whose samples carry span_id / profile_id labels answers
 * SelectMergeSpanProfile for exactly the spans asked for, its spans never become series
 * or services, and the ordinary selects count each sample once; Diff of two selections
 * has each side's ticks and nodes of both. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "format/pprof.h"
#include "profile/profile.h"
#include "server/server.h"
#include "util/strbuf.h"

#include "http_client.h"
#include "scratch.h"

#define CPU "process_cpu:cpu:nanoseconds:cpu:nanoseconds"
#define MS 10000000ULL		/* one 100 Hz sample, in nanoseconds */

static char dir[64];
static const char *const tokens[] = { "writer" };
static const char *const read_tokens[] = { "reader" };

/* POSTs body to path with the token and content type (a GET of /api/apps when len is 0);
 * returns the status, reply filled. */
static long post(uint16_t port, const char *path, const char *token, const char *ctype,
		 const void *body, size_t len, struct strbuf *reply)
{
	struct strbuf auth = STRBUF_INIT, ct = STRBUF_INIT;

	strbuf_addf(&auth, "Authorization: Bearer %s", token);
	strbuf_addf(&ct, "Content-Type: %s", ctype);
	const char *const h[] = { auth.buf, ct.buf, NULL };
	bool get = !len && !strcmp(path, "/api/apps");
	struct http_req r = { .headers = h, .body = get ? NULL : body, .len = len };
	long status = http_client__at(port, path, &r, reply);
	strbuf_release(&auth);
	strbuf_release(&ct);
	return status;
}

/* One stack main;leaf of count samples with the labels key=value (key NULL: none). */
static void add(struct profile *p, const char *leaf, const char *key, const char *value,
		uint64_t count)
{
	uint32_t f[2] = { profile__intern_str(p, "main"), profile__intern_str(p, leaf) };
	struct profile_label l[2] = { { "handler", leaf }, { key, value } };
	uint32_t set = profile__labelset(p, l, key ? 2 : 1);
	uint64_t v = count * MS;

	profile__add_values(p, f, 2, set, &v);
}

/* Pushes spans aaaa (alpha, 7 samples), BBBB (beta, 3, as a legacy profile_id) and a
 * span-less idle (5) as one CPU pprof to app. */
static void push(uint16_t port)
{
	struct profile *p = profile__new();
	const struct profile_type cpu = { "cpu", "nanoseconds" };
	struct strbuf body = STRBUF_INIT, reply = STRBUF_INIT;

	assert_int_equal(profile__set_types(p, &cpu, 1), 0);
	profile__set_period(p, "cpu", "nanoseconds", (int64_t)MS);
	add(p, "alpha", "span_id", "00000000000000aa", 7);
	add(p, "beta", "profile_id", "00000000000000BB", 3);
	add(p, "idle", NULL, NULL, 5);
	assert_int_equal(pprof__write_raw(&body, p), 0);
	assert_int_equal(post(port, "/ingest?name=app&format=pprof&from=now-60&until=now", "writer",
			      "application/octet-stream", body.buf, body.len, &reply), 200);
	profile__free(p);
	strbuf_release(&body);
	strbuf_release(&reply);
}

/* A Connect JSON call; returns the status, *out the parsed answer (NULL when not JSON). */
static long call(uint16_t port, const char *method, const char *request, json_t **out)
{
	struct strbuf path = STRBUF_INIT, reply = STRBUF_INIT;

	strbuf_addf(&path, "/querier.v1.QuerierService/%s", method);
	long status = post(port, path.buf, "reader", "application/json", request, strlen(request),
			   &reply);
	*out = json_loads(reply.buf, 0, NULL);
	strbuf_release(&path);
	strbuf_release(&reply);
	return status;
}

/* The flamegraph total of SelectMergeSpanProfile for spans (a JSON array's inside) in
 * the selector; *names (when not NULL) the flamegraph's names joined by ';'. */
static long long span_total(uint16_t port, const char *selector, const char *spans,
			    struct strbuf *names)
{
	struct strbuf req = STRBUF_INIT;
	json_t *ans;
	long long now = (long long)time(NULL) * 1000;

	strbuf_addf(&req, "{\"profileTypeID\":\"%s\",\"labelSelector\":\"%s\","
		    "\"spanSelector\":[%s],\"start\":\"%lld\",\"end\":\"%lld\"}",
		    CPU, selector, spans, now - 3600000, now + 60000);
	assert_int_equal(call(port, "SelectMergeSpanProfile", req.buf, &ans), 200);
	json_t *fg = json_object_get(ans, "flamegraph");
	assert_non_null(fg);
	json_t *total = json_object_get(fg, "total");
	long long t = json_is_string(total) ? atoll(json_string_value(total))
					    : json_integer_value(total);
	if (names) {
		strbuf_reset(names);
		size_t i;
		json_t *n;
		json_array_foreach(json_object_get(fg, "names"), i, n)
			strbuf_addf(names, "%s;", json_string_value(n));
	}
	json_decref(ans);
	strbuf_release(&req);
	return t;
}

static struct server *start(void)
{
	struct strbuf data = STRBUF_INIT;
	char err[256];

	strbuf_addf(&data, "%s/data", dir);
	struct server_options o = { .listen = "127.0.0.1:0", .data_dir = data.buf,
				    .tokens = tokens, .nr_tokens = 1, .read_tokens = read_tokens,
				    .nr_read_tokens = 1, .max_body_bytes = 1024 * 1024,
				    .threads = 2 };
	struct server *srv = server__start(&o, err, sizeof(err));
	if (!srv)
		fail_msg("%s", err);
	strbuf_release(&data);
	return srv;
}

static void test_span_select(void **state)
{
	struct server *srv = start();
	uint16_t port = server__port(srv);
	struct strbuf names = STRBUF_INIT;
	const char *sel = "{service_name=\\\"app\\\"}";

	push(port);
	/* one span, by span_id; ids match in any case */
	assert_int_equal(span_total(port, sel, "\"00000000000000aa\"", &names), 7 * MS);
	assert_non_null(strstr(names.buf, ";alpha;"));
	assert_null(strstr(names.buf, "beta"));
	assert_null(strstr(names.buf, "span_id"));
	assert_int_equal(span_total(port, sel, "\"00000000000000AA\"", NULL), 7 * MS);
	/* a legacy profile_id is a span too; two spans add up */
	assert_int_equal(span_total(port, sel, "\"00000000000000bb\"", &names), 3 * MS);
	assert_non_null(strstr(names.buf, ";beta;"));
	assert_int_equal(span_total(port, sel, "\"00000000000000aa\",\"00000000000000bb\"", NULL),
			 10 * MS);
	/* unknown spans, and spans outside the label selector, give nothing */
	assert_int_equal(span_total(port, sel, "\"0123456789abcdef\"", NULL), 0);
	assert_int_equal(span_total(port, "{service_name=\\\"app\\\",handler=\\\"beta\\\"}",
				    "\"00000000000000aa\"", NULL), 0);
	assert_int_equal(span_total(port, "{service_name=\\\"other\\\"}", "\"00000000000000aa\"",
				    NULL), 0);
	strbuf_release(&names);
	server__stop(srv);
}

static void test_spans_stay_out(void **state)
{
	struct server *srv = start();
	uint16_t port = server__port(srv);
	long long now = (long long)time(NULL) * 1000;
	struct strbuf req = STRBUF_INIT, reply = STRBUF_INIT;
	json_t *ans;

	push(port);
	/* the ordinary select counts each sample once */
	strbuf_addf(&req, "{\"profileTypeID\":\"%s\",\"labelSelector\":\"{}\",\"start\":\"%lld\","
		    "\"end\":\"%lld\"}", CPU, now - 3600000, now + 60000);
	assert_int_equal(call(port, "SelectMergeStacktraces", req.buf, &ans), 200);
	json_t *total = json_object_get(json_object_get(ans, "flamegraph"), "total");
	assert_int_equal(json_is_string(total) ? atoll(json_string_value(total))
					       : json_integer_value(total), 15 * MS);
	json_decref(ans);
	/* no span label on series, no companion among the services or the types */
	strbuf_reset(&req);
	strbuf_addf(&req, "{\"start\":\"%lld\",\"end\":\"%lld\"}", now - 3600000, now + 60000);
	assert_int_equal(call(port, "LabelNames", req.buf, &ans), 200);
	char *text = json_dumps(ans, 0);
	assert_non_null(strstr(text, "handler"));
	assert_null(strstr(text, "span_id"));
	assert_null(strstr(text, "profile_id"));
	free(text);
	json_decref(ans);
	assert_int_equal(call(port, "ProfileTypes", req.buf, &ans), 200);
	assert_int_equal(json_array_size(json_object_get(ans, "profileTypes")), 1);
	json_decref(ans);
	assert_int_equal(post(port, "/api/apps", "reader", "text/plain", "", 0, &reply), 200);
	assert_non_null(strstr(reply.buf, "\"app.cpu\""));
	assert_null(strstr(reply.buf, "#"));
	strbuf_release(&req);
	strbuf_release(&reply);
	server__stop(srv);
}

static void test_span_refused(void **state)
{
	struct server *srv = start();
	uint16_t port = server__port(srv);
	json_t *ans;

	push(port);
	/* no span ids, no type, a tree in JSON, DOT: each refused with its code */
	assert_int_equal(call(port, "SelectMergeSpanProfile",
			      "{\"profileTypeID\":\"" CPU "\",\"labelSelector\":\"{}\"}", &ans), 400);
	assert_string_equal(json_string_value(json_object_get(ans, "code")), "invalid_argument");
	assert_non_null(strstr(json_string_value(json_object_get(ans, "message")), "span_selector"));
	json_decref(ans);
	assert_int_equal(call(port, "SelectMergeSpanProfile",
			      "{\"labelSelector\":\"{}\",\"spanSelector\":[\"aa\"]}", &ans), 400);
	json_decref(ans);
	assert_int_equal(call(port, "SelectMergeSpanProfile",
			      "{\"profileTypeID\":\"" CPU "\",\"spanSelector\":[\"aa\"],"
			      "\"format\":\"PROFILE_FORMAT_TREE\"}", &ans), 501);
	assert_string_equal(json_string_value(json_object_get(ans, "code")), "unimplemented");
	json_decref(ans);
	assert_int_equal(call(port, "SelectMergeSpanProfile",
			      "{\"profileTypeID\":\"" CPU "\",\"spanSelector\":[\"aa\"],"
			      "\"format\":\"PROFILE_FORMAT_DOT\"}", &ans), 501);
	json_decref(ans);
	server__stop(srv);
}

/* The JSON int64 of key in o (Connect JSON writes int64 as a string). */
static long long int64_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? atoll(json_string_value(v)) : json_integer_value(v);
}

static void test_diff(void **state)
{
	struct server *srv = start();
	uint16_t port = server__port(srv);
	long long now = (long long)time(NULL) * 1000;
	struct strbuf req = STRBUF_INIT;
	json_t *ans;

	push(port);
	strbuf_addf(&req, "{\"left\":{\"profileTypeID\":\"%s\",\"labelSelector\":"
		    "\"{handler=\\\"alpha\\\"}\",\"start\":\"%lld\",\"end\":\"%lld\"},"
		    "\"right\":{\"profileTypeID\":\"%s\",\"labelSelector\":"
		    "\"{handler=~\\\"beta|idle\\\"}\",\"start\":\"%lld\",\"end\":\"%lld\"}}",
		    CPU, now - 3600000, now + 60000, CPU, now - 3600000, now + 60000);
	assert_int_equal(call(port, "Diff", req.buf, &ans), 200);
	json_t *fg = json_object_get(ans, "flamegraph");
	assert_int_equal(int64_of(fg, "leftTicks"), 7 * MS);
	assert_int_equal(int64_of(fg, "rightTicks"), 8 * MS);
	assert_int_equal(int64_of(fg, "total"), 15 * MS);
	/* 7 values a node; left and right selves add up to each side's ticks; alpha is
	 * left's alone, beta and idle right's */
	long long ls = 0, rs = 0;
	size_t i, k;
	json_t *level, *names = json_object_get(fg, "names");
	json_array_foreach(json_object_get(fg, "levels"), i, level) {
		json_t *v = json_object_get(level, "values");
		assert_int_equal(json_array_size(v) % 7, 0);
		for (k = 0; k < json_array_size(v); k += 7) {
#define AT(j) (json_is_string(json_array_get(v, k + (j))) ? \
	       atoll(json_string_value(json_array_get(v, k + (j)))) : \
	       json_integer_value(json_array_get(v, k + (j))))
			const char *name = json_string_value(json_array_get(names, (size_t)AT(6)));
			ls += AT(2);
			rs += AT(5);
			if (!strcmp(name, "alpha"))
				assert_true(AT(1) == 7 * (long long)MS && AT(4) == 0);
			if (!strcmp(name, "idle"))
				assert_true(AT(1) == 0 && AT(4) == 5 * (long long)MS);
#undef AT
		}
	}
	assert_int_equal(ls, 7 * MS);
	assert_int_equal(rs, 8 * MS);
	json_decref(ans);
	/* a side missing */
	assert_int_equal(call(port, "Diff", "{\"left\":{\"profileTypeID\":\"" CPU "\"}}", &ans),
			 400);
	assert_non_null(strstr(json_string_value(json_object_get(ans, "message")), "right"));
	json_decref(ans);
	strbuf_release(&req);
	server__stop(srv);
}

static int setup(void **state)
{
	return scratch__make(dir, sizeof(dir), "querier");
}

static int teardown(void **state)
{
	return scratch__remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_span_select, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spans_stay_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_span_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diff, setup, teardown),
	};
	curl_global_init(CURL_GLOBAL_DEFAULT);
	int ret = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return ret;
}
