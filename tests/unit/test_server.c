/* The real server on loopback (in this process, port picked by the kernel) with the real
 * upload client: uploads come back from the query API, the spool survives a server that
 * is down, and bad requests get their error and store nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "agent/upload.h"
#include "format/col.h"
#include "server/http.h"
#include "server/server.h"
#include "util/strbuf.h"

#include "http_client.h"
#include "scratch.h"

static char dir[64];
static const char *const tokens[] = { "s3cret", "other-token" };
static const char *const read_tokens[] = { "reader" };

static struct server *start(uint16_t port)
{
	struct strbuf listen = STRBUF_INIT, data = STRBUF_INIT;
	char err[256];

	strbuf_addf(&listen, "127.0.0.1:%u", port);
	strbuf_addf(&data, "%s/data", dir);
	struct server_options o = { .listen = listen.buf, .data_dir = data.buf, .tokens = tokens,
				    .nr_tokens = 2, .read_tokens = read_tokens, .nr_read_tokens = 1,
				    .max_body_bytes = 64 * 1024, .threads = 2 };
	struct server *srv = server__start(&o, err, sizeof(err));
	if (!srv)
		fail_msg("%s", err);
	strbuf_release(&listen);
	strbuf_release(&data);
	return srv;
}

/* Response headers of the last http() call. */
static struct strbuf last_headers = STRBUF_INIT;

/* One HTTP request; returns the status and fills reply (and last_headers). A GET that
 * sends no token of its own sends the read token. */
static long http(uint16_t port, const char *path, const char *const *headers, const void *body,
		 size_t len, struct strbuf *reply)
{
	bool token = false;
	for (size_t i = 0; headers && headers[i]; i++)
		token |= !strncasecmp(headers[i], "Authorization:", 14);
	struct http_req r = { .headers = headers, .body = body, .len = len,
			      .headers_out = &last_headers,
			      .header_lines = !body && !token ? "Authorization: Bearer reader" : NULL };
	return http_client__at(port, path, &r, reply);
}

static struct profile *session(const char *leaf, uint64_t count)
{
	struct profile *p = profile__new();
	struct strbuf text = STRBUF_INIT;
	char err[128];

	strbuf_addf(&text, "# {\"hostname\": \"h1\"}\n0;ctr;worker;main;%s %llu\n0;;sshd;poll 1\n",
		    leaf, (unsigned long long)count);
	assert_int_equal(col__parse(p, text.buf, text.len, err, sizeof(err)), 0);
	strbuf_release(&text);
	return p;
}

/* The merged .col of service over the last hour, as the query API returns it. */
static void collapsed(uint16_t port, const char *query, struct strbuf *out)
{
	struct strbuf path = STRBUF_INIT;

	strbuf_addf(&path, "/pyroscope/render?query=%s&from=now-1h&until=now&format=collapsed",
		    query);
	assert_int_equal(http(port, path.buf, NULL, NULL, 0, out), 200);
	strbuf_release(&path);
}

static void test_upload_and_query(void **state)
{
	struct server *srv = start(0);
	uint16_t port = server__port(srv);
	struct strbuf url = STRBUF_INIT, reply = STRBUF_INIT;
	struct uploader *u;
	struct profile *p = session("alpha", 42);
	char err[256];
	int64_t now = time(NULL);

	strbuf_addf(&url, "127.0.0.1:%u", port);
	u = uploader__new(url.buf, "s3cret", "web", NULL, 0);
	assert_int_equal(uploader__health_check(u, err, sizeof(err)), 0);
	assert_int_equal(uploader__send(u, p, now - 60, now, err, sizeof(err)), 0);

	collapsed(port, "web", &reply);
	assert_non_null(strstr(reply.buf, "\nworker;main;alpha 42\n"));
	assert_non_null(strstr(reply.buf, "\nsshd;poll 1\n"));
	/* prefix frames became labels */
	collapsed(port, "web%7Bcontainer%3D%22ctr%22%2Chost%21%3D%22%22%7D", &reply);
	assert_non_null(strstr(reply.buf, "worker;main;alpha 42"));
	assert_null(strstr(reply.buf, "sshd"));
	assert_int_equal(http(port, "/pyroscope/label-values?label=process&query=web", NULL, NULL,
			      0, &reply), 200);
	assert_string_equal(reply.buf, "[\"sshd\",\"worker\"]");
	/* the page comes with its scripts and styles inlined; the files are still served */
	assert_int_equal(http(port, "/", NULL, NULL, 0, &reply), 200);
	assert_non_null(strstr(reply.buf, "KilnFlame"));
	assert_null(strstr(reply.buf, "<script src="));
	assert_int_equal(http(port, "/ui/app.js", NULL, NULL, 0, &reply), 200);
	assert_non_null(strstr(reply.buf, "kilnApp"));
	/* every label with its values in one request */
	assert_int_equal(http(port, "/api/labels?query=web", NULL, NULL, 0, &reply), 200);
	json_t *sets = json_loads(reply.buf, 0, NULL);
	char *text = json_dumps(json_object_get(sets, "process"), JSON_COMPACT);
	assert_string_equal(text, "[\"sshd\",\"worker\"]");
	free(text);
	text = json_dumps(json_object_get(sets, "container"), JSON_COMPACT);
	assert_string_equal(text, "[\"ctr\"]");
	free(text);
	assert_int_equal(json_array_size(json_object_get(sets, "host")), 1);
	json_decref(sets);
	assert_int_equal(http(port, "/pyroscope/render?query=web&from=now-1h&until=now", NULL,
			      NULL, 0, &reply), 200);
	json_t *fb = json_loads(reply.buf, 0, NULL);
	assert_non_null(fb);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(fb, "flamebearer"),
							    "numTicks")), 43);
	json_decref(fb);

	/* A token the server does not know: the upload is refused, not spooled. */
	uploader__free(u);
	u = uploader__new(url.buf, "wrong", "web", NULL, 0);
	assert_int_equal(uploader__send(u, p, now - 60, now, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "401"));
	uploader__free(u);
	profile__free(p);
	strbuf_release(&url);
	strbuf_release(&reply);
	server__stop(srv);
}

/* numTicks of the flamegraph of web over the hour before until (fixed times, so that
 * repeated queries are the same query); *hit tells whether it came from the server's
 * cache. gzip asks for a compressed response (and checks it was). */
static uint64_t render_ticks(uint16_t port, int64_t until, bool gzip, bool *hit)
{
	const char *h[] = { "Accept-Encoding: gzip", NULL };
	struct strbuf reply = STRBUF_INIT, plain = STRBUF_INIT, path = STRBUF_INIT;

	strbuf_addf(&path, "/pyroscope/render?query=web&from=%lld&until=%lld",
		    (long long)until - 3600, (long long)until);
	assert_int_equal(http(port, path.buf, gzip ? h : NULL, NULL, 0, &reply), 200);
	strbuf_release(&path);
	*hit = strstr(last_headers.buf, "X-Kiln-Cache: hit") != NULL;
	if (!*hit)
		assert_non_null(strstr(last_headers.buf, "X-Kiln-Cache: miss"));
	if (gzip) {
		assert_non_null(strstr(last_headers.buf, "Content-Encoding: gzip"));
		assert_int_equal(gzip__decompress(&plain, reply.buf, reply.len, 1 << 20), 0);
	} else {
		assert_null(strstr(last_headers.buf, "Content-Encoding"));
		strbuf_add(&plain, reply.buf, reply.len);
	}
	json_t *v = json_loads(plain.buf, 0, NULL);
	assert_non_null(v);
	uint64_t ticks = (uint64_t)json_integer_value(
		json_object_get(json_object_get(v, "flamebearer"), "numTicks"));
	assert_non_null(json_object_get(v, "timeline"));
	json_decref(v);
	strbuf_release(&reply);
	strbuf_release(&plain);
	return ticks;
}

/* A repeated query is served from the cache, an upload invalidates it at once, and
 * responses are gzip'd for clients that ask. */
static void test_render_cache(void **state)
{
	struct server *srv = start(0);
	uint16_t port = server__port(srv);
	struct strbuf url = STRBUF_INIT;
	struct profile *p = session("alpha", 42);
	struct uploader *u;
	char err[256];
	int64_t now = time(NULL);
	bool hit;

	strbuf_addf(&url, "127.0.0.1:%u", port);
	u = uploader__new(url.buf, "s3cret", "web", NULL, 0);
	assert_int_equal(uploader__send(u, p, now - 60, now, err, sizeof(err)), 0);
	assert_int_equal(render_ticks(port, now + 60, false, &hit), 43);
	assert_false(hit);
	assert_int_equal(render_ticks(port, now + 60, false, &hit), 43);
	assert_true(hit);
	/* more samples: the next query sees them, not the cached flamegraph */
	profile__free(p);
	p = session("beta", 5);
	assert_int_equal(uploader__send(u, p, now - 30, now, err, sizeof(err)), 0);
	assert_int_equal(render_ticks(port, now + 60, true, &hit), 49);
	assert_false(hit);
	assert_int_equal(render_ticks(port, now + 60, true, &hit), 49);
	assert_true(hit);
	uploader__free(u);
	profile__free(p);
	strbuf_release(&url);
	server__stop(srv);
}

static void test_spool_survives_server_down(void **state)
{
	struct server *srv = start(0);
	uint16_t port = server__port(srv);
	struct strbuf url = STRBUF_INIT, spool = STRBUF_INIT, reply = STRBUF_INIT;
	struct profile *a = session("first", 5), *b = session("second", 7), *c = session("third", 9);
	struct uploader *u;
	char err[256];
	int64_t now = time(NULL);

	server__stop(srv);	/* the port is now closed */
	strbuf_addf(&url, "http://127.0.0.1:%u/", port);
	strbuf_addf(&spool, "%s/spool", dir);
	u = uploader__new(url.buf, "other-token", "batch", spool.buf, 1 << 20);
	assert_true(uploader__health_check(u, err, sizeof(err)) < 0);
	assert_int_equal(uploader__send(u, a, now - 180, now - 120, err, sizeof(err)), 1);
	assert_int_equal(uploader__send(u, b, now - 120, now - 60, err, sizeof(err)), 1);
	assert_int_equal(uploader__spooled(u), 2);

	/* The server comes back on the same port: the next session sends the spool first. */
	srv = start(port);
	assert_int_equal(uploader__send(u, c, now - 60, now, err, sizeof(err)), 0);
	assert_int_equal(uploader__spooled(u), 0);
	collapsed(port, "batch", &reply);
	assert_non_null(strstr(reply.buf, "worker;main;first 5"));
	assert_non_null(strstr(reply.buf, "worker;main;second 7"));
	assert_non_null(strstr(reply.buf, "worker;main;third 9"));
	/* Each spooled session was sent once: counts are not doubled by a second flush. */
	assert_int_equal(uploader__flush(u, err, sizeof(err)), 0);
	collapsed(port, "batch", &reply);
	assert_non_null(strstr(reply.buf, "worker;main;first 5\n"));
	uploader__free(u);
	profile__free(a);
	profile__free(b);
	profile__free(c);
	strbuf_release(&url);
	strbuf_release(&spool);
	strbuf_release(&reply);
	server__stop(srv);
}

static void test_spool_is_bounded(void **state)
{
	struct strbuf spool = STRBUF_INIT;
	struct profile *p = session("x", 1);
	struct uploader *u;
	char err[256];

	strbuf_addf(&spool, "%s/small-spool", dir);
	/* Port 1 on loopback: nothing listens there. */
	u = uploader__new("127.0.0.1:1", "t", "svc", spool.buf, 1200);
	for (int i = 0; i < 10; i++)
		assert_int_equal(uploader__send(u, p, 1000 + i, 1060 + i, err, sizeof(err)), 1);
	assert_true(uploader__spooled(u) < 10);
	assert_true(uploader__spooled(u) >= 1);
	uploader__free(u);
	profile__free(p);
	strbuf_release(&spool);
}

static void test_bad_requests_store_nothing(void **state)
{
	struct server *srv = start(0);
	uint16_t port = server__port(srv);
	struct strbuf reply = STRBUF_INIT, big = STRBUF_INIT;
	const char *auth[] = { "Authorization: Bearer s3cret", NULL };
	const char *bad_auth[] = { "Authorization: Bearer nope", NULL };
	const char *gz[] = { "Authorization: Bearer s3cret", "Content-Encoding: gzip", NULL };
	const char *gp[] = { "GPROFILER-API-KEY: s3cret", "GPROFILER-SERVICE-NAME: bad name!", NULL };
	const char *gp_ok[] = { "GPROFILER-API-KEY: s3cret", "GPROFILER-SERVICE-NAME: ok", NULL };
	const char body[] = "main;foo 3\n";

	assert_int_equal(http(port, "/ingest?name=app.cpu", NULL, body, sizeof(body) - 1, &reply), 401);
	assert_int_equal(http(port, "/ingest?name=app.cpu", bad_auth, body, sizeof(body) - 1, &reply), 401);
	assert_non_null(strstr(reply.buf, "\"error\""));
	assert_int_equal(http(port, "/ingest?name=app%7Bbad-label%3Dx%7D", auth, body,
			      sizeof(body) - 1, &reply), 400);
	assert_int_equal(http(port, "/ingest?name=%7Bx%3Dy%7D", auth, body, sizeof(body) - 1, &reply), 400);
	assert_int_equal(http(port, "/ingest?name=app&from=yesterday", auth, body, sizeof(body) - 1,
			      &reply), 400);
	assert_int_equal(http(port, "/ingest?name=app", auth, "main;foo x\n", 11, &reply), 422);
	assert_int_equal(http(port, "/ingest?name=app&format=trie", auth, body, sizeof(body) - 1,
			      &reply), 422);
	assert_int_equal(http(port, "/ingest?name=app", gz, body, sizeof(body) - 1, &reply), 400);
	for (int i = 0; i < 70 * 1024 / 16; i++)
		strbuf_addstr(&big, "main;foo;bar 1\n\n");
	assert_int_equal(http(port, "/ingest?name=app", auth, big.buf, big.len, &reply), 413);
	assert_int_equal(http(port, "/api/v2/profiles", gp, "{}", 2, &reply), 400);
	assert_int_equal(http(port, "/api/v2/profiles", gp_ok, "{nope", 5, &reply), 400);
	assert_int_equal(http(port, "/api/v2/profiles", gp_ok, "{\"x\":1}", 7, &reply), 422);
	assert_int_equal(http(port, "/api/v2/profiles", gp_ok, "{\"profile\":\"a;b c\"}", 19,
			      &reply), 422);
	assert_int_equal(http(port, "/nowhere", NULL, NULL, 0, &reply), 404);
	assert_int_equal(http(port, "/pyroscope/render?query=app%7Bx%3D%22%7D", NULL, NULL, 0,
			      &reply), 400);
	assert_int_equal(http(port, "/pyroscope/label-values", NULL, NULL, 0, &reply), 400);

	/* None of that reached the store. */
	assert_int_equal(http(port, "/api/apps", NULL, NULL, 0, &reply), 200);
	assert_string_equal(reply.buf, "[]");
	/* And a good one does, with any configured token. */
	assert_int_equal(http(port, "/ingest?name=app.cpu%7Benv%3Dprod%7D&from=now-10&until=now",
			      auth, body, sizeof(body) - 1, &reply), 200);
	collapsed(port, "app.cpu%7Benv%3D%22prod%22%7D", &reply);
	assert_non_null(strstr(reply.buf, "main;foo 3"));
	strbuf_release(&reply);
	strbuf_release(&big);
	server__stop(srv);
}

static int setup(void **state)
{
	return scratch__make(dir, sizeof(dir), "server");
}

static int teardown(void **state)
{
	return scratch__remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_upload_and_query, setup, teardown),
		cmocka_unit_test_setup_teardown(test_render_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spool_survives_server_down, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spool_is_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_requests_store_nothing, setup, teardown),
	};
	curl_global_init(CURL_GLOBAL_DEFAULT);
	int ret = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	strbuf_release(&last_headers);
	return ret;
}
