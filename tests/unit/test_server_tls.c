/* HTTPS end to end in one process: the server with a self-signed certificate made at test
 * time (openssl), and the agent's upload client verifying it. With the certificate as its
 * CA the upload is delivered; against the system's CAs it is not (and is spooled, never
 * sent in clear); --insecure-skip-verify delivers; plain HTTP to the TLS port gets nothing.
 * Skipped when openssl is not installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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
static struct strbuf cert = STRBUF_INIT, key = STRBUF_INIT;

static int make_cert(void)
{
	struct strbuf cmd = STRBUF_INIT;
	int rc;

	strbuf_addf(&cert, "%s/cert.pem", dir);
	strbuf_addf(&key, "%s/key.pem", dir);
	strbuf_addf(&cmd, "openssl req -x509 -newkey rsa:2048 -nodes -keyout '%s' -out '%s' "
		    "-days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 "
		    ">/dev/null 2>&1", key.buf, cert.buf);
	rc = system(cmd.buf);
	strbuf_release(&cmd);
	return rc;
}

static struct profile *session(void)
{
	struct profile *p = profile__new();
	const char text[] = "# {\"hostname\": \"h1\"}\n0;;app;main;tls_work 9\n";
	char err[128];

	assert_int_equal(col__parse(p, text, sizeof(text) - 1, err, sizeof(err)), 0);
	return p;
}

/* GET url with the read token, verifying with the test's certificate; 0 when the
 * request did not complete. */
static long get(const char *url, bool verify, struct strbuf *reply)
{
	const char *const h[] = { "Authorization: Bearer r", NULL };
	struct http_req r = { .headers = h, .timeout = 10, .cainfo = verify ? cert.buf : NULL };
	long status = http_client__do(url, &r, reply);
	return status < 0 ? 0 : status;
}

static void test_https_upload_verifies_the_server(void **state)
{
	static const char *const w[] = { "w" }, *const r[] = { "r" };
	struct strbuf data = STRBUF_INIT, url = STRBUF_INIT, spool = STRBUF_INIT;
	struct strbuf reply = STRBUF_INIT, path = STRBUF_INIT;
	struct profile *p = session();
	struct uploader *u;
	struct server *srv;
	char err[512];
	int64_t now = time(NULL);

	if (make_cert())
		skip();
	strbuf_addf(&data, "%s/data", dir);
	strbuf_addf(&spool, "%s/spool", dir);
	struct server_options o = { .listen = "127.0.0.1:0", .data_dir = data.buf, .tokens = w,
				    .nr_tokens = 1, .read_tokens = r, .nr_read_tokens = 1,
				    .threads = 2, .tls_cert = cert.buf, .tls_key = key.buf };
	srv = server__start(&o, err, sizeof(err));
	if (!srv)
		fail_msg("%s", err);
	strbuf_addf(&url, "https://127.0.0.1:%u", server__port(srv));

	/* the system's CAs do not know this certificate: not sent, spooled */
	u = uploader__new(url.buf, "w", "tls", spool.buf, 1 << 20);
	uploader__set_tls(u, NULL, false);
	assert_true(uploader__health_check(u, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "failed to reach"));
	assert_int_equal(uploader__send(u, p, now - 60, now, err, sizeof(err)), 1);
	assert_int_equal(uploader__spooled(u), 1);
	uploader__free(u);

	/* with it as the CA: delivered, the spooled session too */
	u = uploader__new(url.buf, "w", "tls", spool.buf, 1 << 20);
	uploader__set_tls(u, cert.buf, false);
	if (uploader__health_check(u, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(uploader__send(u, p, now - 60, now, err, sizeof(err)), 0);
	assert_int_equal(uploader__spooled(u), 0);
	uploader__free(u);

	/* skipping verification works too (with a warning) */
	u = uploader__new(url.buf, "w", "tls-insecure", NULL, 0);
	uploader__set_tls(u, NULL, true);
	assert_int_equal(uploader__send(u, p, now - 60, now, err, sizeof(err)), 0);
	uploader__free(u);

	strbuf_addf(&path, "%s/render?query=tls&format=collapsed&from=now-1h&until=now", url.buf);
	assert_int_equal(get(path.buf, true, &reply), 200);
	assert_non_null(strstr(reply.buf, "\napp;main;tls_work 18\n"));
	assert_int_equal(get(path.buf, false, &reply), 0);	/* unverified: no answer */
	/* plain HTTP to the TLS port: no HTTP answer */
	strbuf_reset(&path);
	strbuf_addf(&path, "http://127.0.0.1:%u/healthz", server__port(srv));
	assert_int_equal(get(path.buf, false, &reply), 0);

	server__stop(srv);
	profile__free(p);
	strbuf_release(&data);
	strbuf_release(&url);
	strbuf_release(&spool);
	strbuf_release(&reply);
	strbuf_release(&path);
}

static void test_tls_needs_readable_files(void **state)
{
	struct strbuf data = STRBUF_INIT;
	char err[512] = "";
	struct server_options o = { .listen = "127.0.0.1:0", .threads = 1,
				    .tls_cert = "/nonexistent/cert.pem", .tls_key = "/nonexistent/key.pem" };

	strbuf_addf(&data, "%s/data2", dir);
	o.data_dir = data.buf;
	assert_null(server__start(&o, err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/cert.pem"));
	o.tls_key = NULL;
	assert_null(server__start(&o, err, sizeof(err)));
	assert_non_null(strstr(err, "both"));
	strbuf_release(&data);
}

static int setup(void **state)
{
	return scratch__make(dir, sizeof(dir), "tls");
}

static int teardown(void **state)
{
	strbuf_reset(&cert);
	strbuf_reset(&key);
	return scratch__remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_https_upload_verifies_the_server, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tls_needs_readable_files, setup, teardown),
	};
	curl_global_init(CURL_GLOBAL_DEFAULT);
	int ret = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	strbuf_release(&cert);
	strbuf_release(&key);
	return ret;
}
