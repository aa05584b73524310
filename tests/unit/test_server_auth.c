/* The server's access rules, tried as an attacker would on a real server on loopback:
 * every read route without a token, with a wrong one and with a write token; uploads with
 * a read token; NUL bytes that used to cut tokens and service names; invalid UTF-8; an
 * open server on a non-loopback address; a second server on the same data directory or
 * port; one tenant reading or writing another's services. Each time a normal client with
 * the right token is still served. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/http.h"
#include "server/server.h"
#include "util/strbuf.h"

#include "http_client.h"
#include "scratch.h"

static char dir[64];
static const char *const writers[] = { "w-token" };
static const char *const readers[] = { "r-token", "other-reader" };

static struct server *start_at(const char *listen, const char *data, bool with_tokens,
			       bool insecure_open, char *err, size_t errlen)
{
	struct strbuf path = STRBUF_INIT;
	struct server_options o = { .listen = listen, .threads = 2,
				    .insecure_open = insecure_open };
	struct server *srv;

	strbuf_addf(&path, "%s/%s", dir, data);
	o.data_dir = path.buf;
	if (with_tokens) {
		o.tokens = writers;
		o.nr_tokens = 1;
		o.read_tokens = readers;
		o.nr_read_tokens = 2;
	}
	srv = server__start(&o, err, errlen);
	strbuf_release(&path);
	return srv;
}

static struct server *start(void)
{
	char err[512];
	struct server *srv = start_at("127.0.0.1:0", "data", true, false, err, sizeof(err));

	if (!srv)
		fail_msg("%s", err);
	return srv;
}

static struct strbuf headers_seen = STRBUF_INIT;

/* One request with optional headers (header: lines joined by '\n'); userpwd sets basic
 * auth. Returns the status. */
static long http(uint16_t port, const char *path, const char *header, const char *userpwd,
		 const char *body, struct strbuf *reply)
{
	struct http_req r = { .header_lines = header, .userpwd = userpwd, .body = body,
			      .len = body ? strlen(body) : 0, .headers_out = &headers_seen };
	return http_client__at(port, path, &r, reply);
}

static const char *const read_paths[] = {
	"/api/apps",
	"/api/labels?query=shop.cpu",
	"/api/series?query=shop.cpu&from=now-1h&until=now",
	"/pyroscope/labels?query=shop.cpu",
	"/labels?query=shop.cpu",
	"/pyroscope/label-values?label=host&query=shop.cpu",
	"/label-values?label=host&query=shop.cpu",
	"/pyroscope/render?query=shop.cpu&from=now-1h&until=now",
	"/render?query=shop.cpu&from=now-1h&until=now&format=collapsed",
	"/pyroscope/render?query=shop.cpu&from=now-1h&until=now&format=pprof",
	"/pyroscope/render?query=shop.cpu&from=now-1h&until=now&format=html",
	"/pyroscope/render-diff?leftQuery=shop.cpu&rightQuery=shop.cpu&leftFrom=now-1h"
	"&leftUntil=now&rightFrom=now-1h&rightUntil=now",
	"/render-diff?leftQuery=shop.cpu&rightQuery=shop.cpu&format=html",
};

static void test_reads_need_a_read_token(void **state)
{
	struct server *srv = start();
	uint16_t port = server__port(srv);
	struct strbuf reply = STRBUF_INIT;
	const char *wr = "Authorization: Bearer w-token", *rd = "Authorization: Bearer r-token";

	assert_int_equal(http(port, "/ingest?name=shop.cpu%7Bhost%3Dh1%7D&from=now-10&until=now",
			      wr, NULL, "main;secret_path 5\n", &reply), 200);
	for (size_t i = 0; i < sizeof(read_paths) / sizeof(read_paths[0]); i++) {
		const char *p = read_paths[i];
		/* no token, a wrong one, a write token: nothing of the data comes back */
		assert_int_equal(http(port, p, NULL, NULL, NULL, &reply), 401);
		assert_null(strstr(reply.buf, "secret_path"));
		assert_non_null(strstr(headers_seen.buf, "WWW-Authenticate: Bearer"));
		assert_int_equal(http(port, p, "Authorization: Bearer nope", NULL, NULL, &reply), 401);
		assert_int_equal(http(port, p, "GPROFILER-API-KEY: nope", NULL, NULL, &reply), 401);
		assert_int_equal(http(port, p, wr, NULL, NULL, &reply), 403);
		assert_null(strstr(reply.buf, "secret_path"));
		/* the reader is served, whichever way it sends the token */
		assert_int_equal(http(port, p, rd, NULL, NULL, &reply), 200);
		assert_int_equal(http(port, p, NULL, "anyone:other-reader", NULL, &reply), 200);
	}
	assert_int_equal(http(port, "/render?query=shop.cpu&format=collapsed&key=r-token", NULL,
			      NULL, NULL, &reply), 200);
	assert_non_null(strstr(reply.buf, "main;secret_path 5"));
	assert_int_equal(http(port, "/render?query=shop.cpu&format=collapsed", "GPROFILER-API-KEY: r-token",
			      NULL, NULL, &reply), 200);
	/* a token that is a prefix or extension of a real one is not it */
	assert_int_equal(http(port, "/api/apps", "Authorization: Bearer r-toke", NULL, NULL, &reply), 401);
	assert_int_equal(http(port, "/api/apps", "Authorization: Bearer r-tokenx", NULL, NULL, &reply), 401);
	assert_int_equal(http(port, "/api/apps", "Authorization: Bearer ", NULL, NULL, &reply), 401);
	/* the health checks and the UI's own files (no data in them) stay open */
	assert_int_equal(http(port, "/healthz", NULL, NULL, NULL, &reply), 200);
	assert_int_equal(http(port, "/api/v2/health_check", NULL, NULL, NULL, &reply), 200);
	assert_int_equal(http(port, "/", NULL, NULL, NULL, &reply), 200);
	assert_null(strstr(reply.buf, "secret_path"));
	assert_int_equal(http(port, "/ui/app.js", NULL, NULL, NULL, &reply), 200);
	strbuf_release(&reply);
	server__stop(srv);
}

static void test_uploads_need_a_write_token(void **state)
{
	struct server *srv = start();
	uint16_t port = server__port(srv);
	struct strbuf reply = STRBUF_INIT;
	const char *rd = "Authorization: Bearer r-token";

	assert_int_equal(http(port, "/ingest?name=app.cpu", NULL, NULL, "main;x 1\n", &reply), 401);
	assert_int_equal(http(port, "/ingest?name=app.cpu", rd, NULL, "main;x 1\n", &reply), 403);
	assert_int_equal(http(port, "/ingest?name=app.cpu", NULL, "u:r-token", "main;x 1\n", &reply), 403);
	assert_int_equal(http(port, "/api/v2/profiles", "GPROFILER-API-KEY: r-token", NULL, "{}",
			      &reply), 403);
	assert_int_equal(http(port, "/api/apps", rd, NULL, NULL, &reply), 200);
	assert_string_equal(reply.buf, "[]");
	/* basic auth with the token as password, as Pyroscope's SDKs send it */
	assert_int_equal(http(port, "/ingest?name=app.cpu", NULL, "app:w-token", "main;x 1\n", &reply), 200);
	assert_int_equal(http(port, "/api/apps", rd, NULL, NULL, &reply), 200);
	assert_non_null(strstr(reply.buf, "\"app.cpu\""));
	/* a server without tenants ignores X-Scope-OrgID (Alloy may send one) */
	assert_int_equal(http(port, "/api/apps", "Authorization: Bearer r-token\nX-Scope-OrgID: x", NULL,
			      NULL, &reply), 200);
	assert_non_null(strstr(reply.buf, "\"app.cpu\""));
	strbuf_release(&reply);
	server__stop(srv);
}

/* key=r-token%00x used to be read as "r-token"; a%00b.cpu was stored as "a". */
static void test_nul_and_invalid_utf8_are_refused(void **state)
{
	struct server *srv = start();
	uint16_t port = server__port(srv);
	struct strbuf reply = STRBUF_INIT;
	const char *wr = "Authorization: Bearer w-token", *rd = "Authorization: Bearer r-token";

	/* basic auth "u:r-token\0x" (a NUL inside base64 reaches no argument check) */
	assert_int_equal(http(port, "/api/apps", "Authorization: Basic dTpyLXRva2VuAHg=", NULL, NULL,
			      &reply), 401);
	assert_int_equal(http(port, "/api/apps", "Authorization: Basic dTpyLXRva2Vu", NULL, NULL,
			      &reply), 200);	/* "u:r-token" */
	assert_int_equal(http(port, "/api/apps", "Authorization: Basic !!!", NULL, NULL, &reply), 401);
	assert_int_equal(http(port, "/api/apps?key=r-token%00x", NULL, NULL, NULL, &reply), 400);
	assert_non_null(strstr(reply.buf, "argument 'key' contains a NUL byte"));
	assert_int_equal(http(port, "/ingest?name=app.cpu&key=w-token%00", NULL, NULL, "main;x 1\n",
			      &reply), 400);
	assert_int_equal(http(port, "/ingest?name=a%00b.cpu", wr, NULL, "main;x 1\n", &reply), 400);
	assert_non_null(strstr(reply.buf, "argument 'name' contains a NUL byte"));
	assert_int_equal(http(port, "/ingest?name=app.cpu%7Bk%3D%ff%fe%7D", wr, NULL, "main;x 1\n",
			      &reply), 400);
	assert_non_null(strstr(reply.buf, "argument 'name' is not valid UTF-8"));
	/* an overlong '/' and a surrogate are not UTF-8 either */
	assert_int_equal(http(port, "/ingest?name=app.cpu%7Bk%3D%c0%af%7D", wr, NULL, "main;x 1\n",
			      &reply), 400);
	assert_int_equal(http(port, "/ingest?name=app.cpu%7Bk%3D%ed%a0%80%7D", wr, NULL, "main;x 1\n",
			      &reply), 400);
	assert_int_equal(http(port, "/api/apps", rd, NULL, NULL, &reply), 200);
	assert_string_equal(reply.buf, "[]");
	/* valid UTF-8 is kept as it is, and listed */
	assert_int_equal(http(port, "/ingest?name=app.cpu%7Bcity%3DZ%c3%bcrich%7D&from=now-10&until=now", wr, NULL,
			      "main;x 1\n", &reply), 200);
	assert_int_equal(http(port, "/pyroscope/label-values?label=city&query=app.cpu", rd, NULL,
			      NULL, &reply), 200);
	assert_string_equal(reply.buf, "[\"Z\xc3\xbcrich\"]");
	strbuf_release(&reply);
	server__stop(srv);
}

static void test_valid_utf8(void **state)
{
	assert_true(auth__valid_utf8("", 0));
	assert_true(auth__valid_utf8("a\xc3\xbc\xe2\x82\xac\xf0\x9f\x94\xa5", 10));
	assert_false(auth__valid_utf8("a\0b", 3));
	assert_false(auth__valid_utf8("\xc3", 1));		/* cut short */
	assert_false(auth__valid_utf8("\xe0\x80\xaf", 3));	/* overlong */
	assert_false(auth__valid_utf8("\xf4\x90\x80\x80", 4));	/* beyond U+10FFFF */
	assert_false(auth__valid_utf8("\xff", 1));
}

/* Without a token the server is everyone's: only on loopback, unless told otherwise. */
static void test_open_server_only_on_loopback(void **state)
{
	struct strbuf reply = STRBUF_INIT;
	char err[512] = "";
	struct server *srv;

	assert_null(start_at("0.0.0.0:0", "open", false, false, err, sizeof(err)));
	assert_non_null(strstr(err, "--insecure-open"));
	assert_null(start_at("[::]:0", "open", false, false, err, sizeof(err)));
	srv = start_at("0.0.0.0:0", "open", false, true, err, sizeof(err));
	assert_non_null(srv);
	assert_int_equal(http(server__port(srv), "/api/apps", NULL, NULL, NULL, &reply), 200);
	server__stop(srv);
	srv = start_at("0.0.0.0:0", "open", true, false, err, sizeof(err));
	assert_non_null(srv);
	assert_int_equal(http(server__port(srv), "/api/apps", NULL, NULL, NULL, &reply), 401);
	server__stop(srv);
	srv = start_at("127.0.0.2:0", "open", false, false, err, sizeof(err));	/* all of 127/8 */
	assert_non_null(srv);
	server__stop(srv);
	strbuf_release(&reply);
}

/* Two servers on one data directory split the uploads and fail some with UNIQUE errors;
 * two on one port split the connections. The second one must not start. */
/* Tenants: acme's and beta's tokens each see and write only their own services, under the
 * same names; a token may not name another tenant in X-Scope-OrgID; a token without a
 * tenant picks one with it, or gets the default tenant. */
static void test_tenants_see_only_their_own(void **state)
{
	static const char *const w[] = { "w-acme", "w-beta", "w-admin" };
	static const char *const wt[] = { "acme", "beta", NULL };
	static const char *const r[] = { "r-acme", "r-beta", "r-admin" };
	static const char *const rt[] = { "acme", "beta", NULL };
	struct strbuf data = STRBUF_INIT, reply = STRBUF_INIT;
	char err[512];
	const char *render = "/render?query=app.cpu&format=collapsed&from=now-1h&until=now";
	const char *ingest = "/ingest?name=app.cpu%7Bhost%3Dh%7D&from=now-10&until=now";

	strbuf_addf(&data, "%s/tenants", dir);
	struct server_options o = { .listen = "127.0.0.1:0", .data_dir = data.buf, .threads = 2,
				    .tokens = w, .nr_tokens = 3, .token_tenants = wt,
				    .read_tokens = r, .nr_read_tokens = 3, .read_token_tenants = rt };
	struct server *srv = server__start(&o, err, sizeof(err));
	if (!srv)
		fail_msg("%s", err);
	uint16_t port = server__port(srv);

	assert_int_equal(http(port, ingest, "Authorization: Bearer w-acme", NULL, "main;acme_secret 3\n",
			      &reply), 200);
	assert_int_equal(http(port, ingest, NULL, "beta:w-beta", "main;beta_secret 5\n", &reply), 200);
	assert_int_equal(http(port, ingest, "Authorization: Bearer w-admin", NULL, "main;shared 7\n",
			      &reply), 200);
	/* the same query, and the same URL for the render cache, per tenant */
	for (int pass = 0; pass < 2; pass++) {
		assert_int_equal(http(port, render, "Authorization: Bearer r-acme", NULL, NULL, &reply), 200);
		assert_non_null(strstr(reply.buf, "main;acme_secret 3"));
		assert_null(strstr(reply.buf, "beta_secret"));
		assert_null(strstr(reply.buf, "shared"));
		assert_int_equal(http(port, render, "Authorization: Bearer r-beta", NULL, NULL, &reply), 200);
		assert_non_null(strstr(reply.buf, "main;beta_secret 5"));
		assert_null(strstr(reply.buf, "acme_secret"));
		assert_int_equal(http(port, render, "Authorization: Bearer r-admin", NULL, NULL, &reply), 200);
		assert_non_null(strstr(reply.buf, "main;shared 7"));
		assert_null(strstr(reply.buf, "secret"));
	}
	/* Grafana's selectors pick among the tenant's own services only */
	const char *grafana = "/render?query=%7Bservice_name%3D%22app%22%7D&format=collapsed"
			      "&from=now-1h&until=now";
	assert_int_equal(http(port, grafana, "Authorization: Bearer r-acme", NULL, NULL, &reply), 200);
	assert_non_null(strstr(reply.buf, "main;acme_secret 3"));
	assert_null(strstr(reply.buf, "beta_secret"));
	assert_null(strstr(reply.buf, "shared"));
	assert_int_equal(http(port, grafana, "Authorization: Bearer r-admin", NULL, NULL, &reply), 200);
	assert_non_null(strstr(reply.buf, "main;shared 7"));
	assert_null(strstr(reply.buf, "secret"));
	/* the service list shows a tenant its own names, without any prefix */
	assert_int_equal(http(port, "/api/apps", "Authorization: Bearer r-acme", NULL, NULL, &reply), 200);
	assert_non_null(strstr(reply.buf, "\"name\":\"app.cpu\""));
	assert_null(strstr(reply.buf, "acme:"));
	assert_null(strstr(reply.buf, "beta"));
	assert_int_equal(http(port, "/api/apps", "Authorization: Bearer r-admin", NULL, NULL, &reply), 200);
	assert_null(strstr(reply.buf, "acme"));
	/* X-Scope-OrgID: not another tenant's; a token without a tenant picks one */
	assert_int_equal(http(port, render, "Authorization: Bearer r-acme\nX-Scope-OrgID: beta", NULL,
			      NULL, &reply), 403);
	assert_int_equal(http(port, ingest, "Authorization: Bearer w-acme\nX-Scope-OrgID: beta", NULL,
			      "main;forged 1\n", &reply), 403);
	assert_int_equal(http(port, render, "Authorization: Bearer r-acme\nX-Scope-OrgID: acme", NULL,
			      NULL, &reply), 200);
	assert_non_null(strstr(reply.buf, "acme_secret"));
	assert_int_equal(http(port, render, "Authorization: Bearer r-admin\nX-Scope-OrgID: beta", NULL,
			      NULL, &reply), 200);
	assert_non_null(strstr(reply.buf, "beta_secret"));
	assert_int_equal(http(port, render, "Authorization: Bearer r-admin\nX-Scope-OrgID: a:b", NULL,
			      NULL, &reply), 400);
	/* label lists without a service would cross tenants */
	assert_int_equal(http(port, "/pyroscope/labels", "Authorization: Bearer r-acme", NULL, NULL,
			      &reply), 400);
	assert_int_equal(http(port, "/pyroscope/label-values?label=host&query=app.cpu",
			      "Authorization: Bearer r-beta", NULL, NULL, &reply), 200);
	assert_string_equal(reply.buf, "[\"h\"]");
	server__stop(srv);

	/* a tenant name that could not be kept apart is refused at start */
	static const char *const bad[] = { "a:b" };
	o.token_tenants = bad;
	o.nr_tokens = 1;
	o.read_token_tenants = NULL;
	assert_null(server__start(&o, err, sizeof(err)));
	assert_non_null(strstr(err, "invalid tenant 'a:b'"));
	strbuf_release(&data);
	strbuf_release(&reply);
}

static void test_one_server_per_store_and_port(void **state)
{
	struct server *a = start(), *b;
	uint16_t port = server__port(a);
	struct strbuf listen = STRBUF_INIT, reply = STRBUF_INIT, lock = STRBUF_INIT;
	char err[512] = "";

	b = start_at("127.0.0.1:0", "data", true, false, err, sizeof(err));
	assert_null(b);
	assert_non_null(strstr(err, "in use by another kiln serve"));
	strbuf_addf(&lock, "%s/data/kiln.lock", dir);
	assert_non_null(strstr(err, lock.buf));
	strbuf_addf(&listen, "127.0.0.1:%u", port);
	b = start_at(listen.buf, "other", true, false, err, sizeof(err));
	assert_null(b);
	assert_non_null(strstr(err, "failed to listen"));
	/* another directory on another port is no conflict */
	b = start_at("127.0.0.1:0", "x", true, false, err, sizeof(err));
	assert_non_null(b);
	server__stop(b);
	/* the first server is unharmed */
	assert_int_equal(http(port, "/ingest?name=app.cpu", "Authorization: Bearer w-token", NULL,
			      "main;x 1\n", &reply), 200);
	server__stop(a);
	/* and once it is gone, the directory and the port are free again */
	b = start_at(listen.buf, "data", true, false, err, sizeof(err));
	if (!b)
		fail_msg("%s", err);
	server__stop(b);
	strbuf_release(&listen);
	strbuf_release(&reply);
	strbuf_release(&lock);
}

static void test_sqlite_url_is_locked(void **state)
{
	struct strbuf url = STRBUF_INIT;
	struct server_options o = { .listen = "127.0.0.1:0", .threads = 1 };
	struct server *a, *b;
	char err[512] = "";

	strbuf_addf(&url, "sqlite:%s/one.db", dir);
	o.data_dir = url.buf;
	a = server__start(&o, err, sizeof(err));
	if (!a)
		fail_msg("%s", err);
	b = server__start(&o, err, sizeof(err));
	assert_null(b);
	assert_non_null(strstr(err, "one.db.lock"));
	server__stop(a);
	strbuf_release(&url);
}

static int setup(void **state)
{
	return scratch__make(dir, sizeof(dir), "auth");
}

static int teardown(void **state)
{
	return scratch__remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reads_need_a_read_token, setup, teardown),
		cmocka_unit_test_setup_teardown(test_uploads_need_a_write_token, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nul_and_invalid_utf8_are_refused, setup, teardown),
		cmocka_unit_test(test_valid_utf8),
		cmocka_unit_test_setup_teardown(test_open_server_only_on_loopback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tenants_see_only_their_own, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_server_per_store_and_port, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sqlite_url_is_locked, setup, teardown),
	};
	curl_global_init(CURL_GLOBAL_DEFAULT);
	int ret = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	strbuf_release(&headers_seen);
	return ret;
}
