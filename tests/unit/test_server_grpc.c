/* OTLP over gRPC against a real HTTP/2 client: libcurl (nghttp2 inside) speaking h2c with
 * prior knowledge, and HTTP/2 over TLS (ALPN) with a certificate made at test time, to
 * the server in this process. An Export of an OTLP request kiln wrote (otlp__write),
 * plain and gzip-compressed, is answered with grpc-status 0 and an empty message and its
 * stacks are in the render; a wrong token, a bad frame, garbage, an unknown method, an
 * unknown compression and a message over the limits get their gRPC codes, and store
 * nothing; a client holding its --client-connections gets no more until one closes.
 * Also the framing helpers on their own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scratch.h"
#include "format/col.h"
#include "format/otlp.h"
#include "server/grpc.h"
#include "server/http.h"
#include "server/server.h"
#include "util/gzip.h"
#include "util/strbuf.h"

static char dir[64];
static const char *const writers[] = { "w" };
static const char *const readers[] = { "r" };

static size_t on_data(char *d, size_t size, size_t n, void *arg)
{
	strbuf_add(arg, d, size * n);
	return size * n;
}

/* Headers and trailers, lower-cased names, one "name: value" a line. */
static size_t on_header(char *d, size_t size, size_t n, void *arg)
{
	struct strbuf *sb = arg;
	size_t len = size * n;

	for (size_t i = 0; i < len && d[i] != ':'; i++)
		d[i] = (char)(d[i] >= 'A' && d[i] <= 'Z' ? d[i] + 32 : d[i]);
	strbuf_add(sb, d, len);
	return len;
}

struct call {
	long http;		/* HTTP status */
	int grpc;		/* grpc-status, -1 when none */
	struct strbuf headers, body;
};

/* POSTs body to path on port over HTTP/2 as a gRPC client does; tls: https, verifying
 * with cert. */
static void call(struct call *out, uint16_t port, const char *path, const char *token,
		 const char *encoding, const void *body, size_t len, const char *cert)
{
	struct strbuf url = STRBUF_INIT, hdr = STRBUF_INIT;
	struct curl_slist *h = NULL;
	CURL *c = curl_easy_init();
	const char *st;

	strbuf_addf(&url, "%s://127.0.0.1:%u%s", cert ? "https" : "http", port, path);
	h = curl_slist_append(h, "Content-Type: application/grpc");
	h = curl_slist_append(h, "TE: trailers");
	if (token) {
		strbuf_addf(&hdr, "Authorization: Bearer %s", token);
		h = curl_slist_append(h, hdr.buf);
	}
	if (encoding) {
		strbuf_reset(&hdr);
		strbuf_addf(&hdr, "grpc-encoding: %s", encoding);
		h = curl_slist_append(h, hdr.buf);
	}
	strbuf_init(&out->headers, 0);
	strbuf_init(&out->body, 0);
	curl_easy_setopt(c, CURLOPT_URL, url.buf);
	curl_easy_setopt(c, CURLOPT_HTTP_VERSION, cert ? (long)CURL_HTTP_VERSION_2TLS
						       : (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
	if (cert)
		curl_easy_setopt(c, CURLOPT_CAINFO, cert);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)len);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &out->body);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &out->headers);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->http);
	long version = 0;
	curl_easy_getinfo(c, CURLINFO_HTTP_VERSION, &version);
	assert_int_equal(version, CURL_HTTP_VERSION_2_0);
	st = strstr(out->headers.buf ? out->headers.buf : "", "grpc-status: ");
	out->grpc = st ? atoi(st + 13) : -1;
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	strbuf_release(&url);
	strbuf_release(&hdr);
}

static void call_release(struct call *c)
{
	strbuf_release(&c->headers);
	strbuf_release(&c->body);
}

/* The collapsed render of query over HTTP/1.1 (the MHD port). */
static void render(uint16_t port, const char *query, struct strbuf *out)
{
	struct strbuf url = STRBUF_INIT;
	struct curl_slist *h = curl_slist_append(NULL, "Authorization: Bearer r");
	CURL *c = curl_easy_init();
	char *q = curl_easy_escape(c, query, 0);

	strbuf_addf(&url, "http://127.0.0.1:%u/pyroscope/render?query=%s&from=now-1h&until=now"
		    "&format=collapsed", port, q);
	strbuf_reset(out);
	curl_easy_setopt(c, CURLOPT_URL, url.buf);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	curl_free(q);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	strbuf_release(&url);
}

/* An ExportProfilesServiceRequest of service with one stack main;fn counted n times, as
 * a gRPC message (gzip-compressed when gz). */
static void export_request(struct strbuf *out, const char *service, const char *fn, int n,
			   bool gz)
{
	struct profile *p = profile__new();
	struct strbuf text = STRBUF_INIT, pb = STRBUF_INIT, z = STRBUF_INIT;
	struct otlp_attr attrs[] = { { "host.name", "grpc-host" } };
	char err[128];

	strbuf_addf(&text, "0;;worker;main;%s %d\n", fn, n);
	assert_int_equal(col__parse(p, text.buf, text.len, err, sizeof(err)), 0);
	assert_int_equal(otlp__write(&pb, p, service, attrs, 1,
				     (uint64_t)(time(NULL) - 10) * 1000000000ull,
				     5000000000ull), 0);
	strbuf_reset(out);
	if (gz) {
		assert_int_equal(gzip__compress(&z, pb.buf, pb.len), 0);
		grpc__frame(out, z.buf, z.len);
		out->buf[0] = 1;	/* the compressed flag */
	} else {
		grpc__frame(out, pb.buf, pb.len);
	}
	profile__free(p);
	strbuf_release(&text);
	strbuf_release(&pb);
	strbuf_release(&z);
}

static struct server *start(struct strbuf *data, const char *cert, const char *key,
			    size_t max_body)
{
	char err[256];
	struct server_options o = { .listen = "127.0.0.1:0", .otlp_grpc_listen = "127.0.0.1:0",
				    .data_dir = data->buf, .tokens = writers, .nr_tokens = 1,
				    .read_tokens = readers, .nr_read_tokens = 1, .threads = 2,
				    .tls_cert = cert, .tls_key = key, .max_body_bytes = max_body };
	struct server *srv = server__start(&o, err, sizeof(err));

	if (!srv)
		fail_msg("%s", err);
	assert_int_not_equal(server__grpc_port(srv), 0);
	return srv;
}

static void test_export_h2c(void **state)
{
	struct strbuf data = STRBUF_INIT, req = STRBUF_INIT, col = STRBUF_INIT;
	struct call c;

	strbuf_addf(&data, "%s/data", dir);
	struct server *srv = start(&data, NULL, NULL, 0);
	uint16_t gport = server__grpc_port(srv), port = server__port(srv);

	export_request(&req, "grpcapp", "plain_work", 7, false);
	call(&c, gport, OTLP_GRPC_EXPORT, "w", NULL, req.buf, req.len, NULL);
	assert_int_equal(c.http, 200);
	assert_int_equal(c.grpc, 0);
	assert_non_null(strstr(c.headers.buf, "content-type: application/grpc"));
	assert_int_equal(c.body.len, 5);	/* one empty message */
	assert_memory_equal(c.body.buf, "\0\0\0\0\0", 5);
	call_release(&c);
	export_request(&req, "grpcapp", "gzip_work", 5, true);
	call(&c, gport, OTLP_GRPC_EXPORT, "w", "gzip", req.buf, req.len, NULL);
	assert_int_equal(c.grpc, 0);
	call_release(&c);
	render(port, "grpcapp.cpu{host=\"grpc-host\"}", &col);
	assert_non_null(strstr(col.buf, "main;plain_work 7\n"));
	assert_non_null(strstr(col.buf, "main;gzip_work 5\n"));

	/* refused, each with its code, nothing stored */
	export_request(&req, "refused", "never", 3, false);
	call(&c, gport, OTLP_GRPC_EXPORT, NULL, NULL, req.buf, req.len, NULL);
	assert_int_equal(c.grpc, GRPC_UNAUTHENTICATED);
	assert_non_null(strstr(c.headers.buf, "grpc-message: missing or invalid token"));
	call_release(&c);
	call(&c, gport, OTLP_GRPC_EXPORT, "r", NULL, req.buf, req.len, NULL);
	assert_int_equal(c.grpc, GRPC_PERMISSION_DENIED);
	call_release(&c);
	call(&c, gport, OTLP_GRPC_EXPORT, "w", NULL, req.buf, req.len - 1, NULL);
	assert_int_equal(c.grpc, GRPC_INTERNAL);	/* the frame says one byte more */
	assert_non_null(strstr(c.headers.buf, "exactly one message"));
	call_release(&c);
	call(&c, gport, "/opentelemetry.proto.collector.trace.v1.TraceService/Export", "w",
	     NULL, req.buf, req.len, NULL);
	assert_int_equal(c.grpc, GRPC_UNIMPLEMENTED);
	call_release(&c);
	call(&c, gport, OTLP_GRPC_EXPORT, "w", "snappy", req.buf, req.len, NULL);
	assert_int_equal(c.grpc, 0);	/* the flag says uncompressed: the encoding is moot */
	call_release(&c);
	req.buf[0] = 1;
	call(&c, gport, OTLP_GRPC_EXPORT, "w", "snappy", req.buf, req.len, NULL);
	assert_int_equal(c.grpc, GRPC_UNIMPLEMENTED);
	call_release(&c);
	struct strbuf junk = STRBUF_INIT;
	grpc__frame(&junk, "\xff\xff\xff", 3);
	call(&c, gport, OTLP_GRPC_EXPORT, "w", NULL, junk.buf, junk.len, NULL);
	assert_int_equal(c.grpc, GRPC_INVALID_ARGUMENT);
	assert_non_null(strstr(c.headers.buf, "grpc-message: invalid OTLP profiles"));
	call_release(&c);
	/* the one accepted above, with the moot encoding, is all refused.cpu holds (3, not 6
	 * or more) */
	render(port, "refused.cpu", &col);
	assert_non_null(strstr(col.buf, "main;never 3\n"));
	server__stop(srv);

	/* a message over --max-body-bytes */
	export_request(&req, "big", "big_work", 1, false);
	srv = start(&data, NULL, NULL, req.len - 1);
	call(&c, server__grpc_port(srv), OTLP_GRPC_EXPORT, "w", NULL, req.buf, req.len, NULL);
	assert_int_equal(c.grpc, GRPC_RESOURCE_EXHAUSTED);
	assert_non_null(strstr(c.headers.buf, "--max-body-bytes"));
	call_release(&c);
	render(server__port(srv), "big.cpu", &col);
	assert_null(strstr(col.buf, "big_work"));
	server__stop(srv);
	strbuf_release(&junk);
	strbuf_release(&data);
	strbuf_release(&req);
	strbuf_release(&col);
}

static void test_export_tls(void **state)
{
	struct strbuf data = STRBUF_INIT, cert = STRBUF_INIT, key = STRBUF_INIT;
	struct strbuf cmd = STRBUF_INIT, req = STRBUF_INIT, col = STRBUF_INIT;
	struct call c;

	strbuf_addf(&cert, "%s/cert.pem", dir);
	strbuf_addf(&key, "%s/key.pem", dir);
	strbuf_addf(&cmd, "openssl req -x509 -newkey rsa:2048 -nodes -keyout '%s' -out '%s' "
		    "-days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 "
		    ">/dev/null 2>&1", key.buf, cert.buf);
	if (system(cmd.buf))
		skip();	/* openssl is in scripts/deps/server.txt */
	strbuf_addf(&data, "%s/tlsdata", dir);
	struct server *srv = start(&data, cert.buf, key.buf, 0);
	export_request(&req, "tlsapp", "tls_work", 4, true);
	call(&c, server__grpc_port(srv), OTLP_GRPC_EXPORT, "w", "gzip", req.buf, req.len,
	     cert.buf);
	assert_int_equal(c.grpc, 0);
	call_release(&c);
	server__stop(srv);
	/* read back from the store over plain HTTP by a server without TLS */
	srv = start(&data, NULL, NULL, 0);
	render(server__port(srv), "tlsapp.cpu", &col);
	assert_non_null(strstr(col.buf, "main;tls_work 4\n"));
	server__stop(srv);
	strbuf_release(&data);
	strbuf_release(&cert);
	strbuf_release(&key);
	strbuf_release(&cmd);
	strbuf_release(&req);
	strbuf_release(&col);
}

/* curl's result of one Export to port (h2c), without asserting it. */
static CURLcode try_call(uint16_t port, const struct strbuf *req)
{
	struct strbuf url = STRBUF_INIT, body = STRBUF_INIT;
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/grpc");
	CURL *c = curl_easy_init();

	h = curl_slist_append(h, "Authorization: Bearer w");
	strbuf_addf(&url, "http://127.0.0.1:%u%s", port, OTLP_GRPC_EXPORT);
	curl_easy_setopt(c, CURLOPT_URL, url.buf);
	curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->buf);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)req->len);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	CURLcode rc = curl_easy_perform(c);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	strbuf_release(&url);
	strbuf_release(&body);
	return rc;
}

/* --client-connections 1: while a connection of 127.0.0.1 is open, a second one is
 * closed at once; once the first closes, an Export goes through again. */
static void test_client_limit(void **state)
{
	struct strbuf data = STRBUF_INIT, req = STRBUF_INIT;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char err[256];

	strbuf_addf(&data, "%s/data", dir);
	struct server_options o = { .listen = "127.0.0.1:0", .otlp_grpc_listen = "127.0.0.1:0",
				    .data_dir = data.buf, .tokens = writers, .nr_tokens = 1,
				    .read_tokens = readers, .nr_read_tokens = 1, .threads = 2,
				    .client_connections = 1 };
	struct server *srv = server__start(&o, err, sizeof(err));
	if (!srv)
		fail_msg("%s", err);
	uint16_t port = server__grpc_port(srv);
	export_request(&req, "limited", "work", 1, false);
	assert_int_equal(try_call(port, &req), CURLE_OK);

	/* a connection that holds the one slot: the server's SETTINGS frame answers its
	 * preface (a refused one reads end of file: the call's connection was still open) */
	static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\4\0\0\0\0\0";
	unsigned char frame[9];
	int fd = -1;
	sa.sin_port = htons(port);
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	for (int i = 0; i < 200 && fd < 0; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
		assert_int_equal(write(fd, preface, sizeof(preface) - 1), sizeof(preface) - 1);
		if (read(fd, frame, sizeof(frame)) == (ssize_t)sizeof(frame) && frame[3] == 4)
			break;
		close(fd);
		fd = -1;
		usleep(10000);
	}
	assert_true(fd >= 0);
	assert_int_not_equal(try_call(port, &req), CURLE_OK);
	close(fd);
	CURLcode rc;
	/* once the server has seen it close, calls pass again */
	for (int i = 0; i < 200 && (rc = try_call(port, &req)) != CURLE_OK; i++)
		usleep(10000);
	assert_int_equal(rc, CURLE_OK);
	server__stop(srv);
	strbuf_release(&data);
	strbuf_release(&req);
}

static void test_framing(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	const void *msg;
	size_t len;
	bool z;
	char err[160];

	grpc__frame(&sb, "abc", 3);
	assert_int_equal(sb.len, 8);
	assert_memory_equal(sb.buf, "\0\0\0\0\3abc", 8);
	assert_int_equal(grpc__unframe(sb.buf, sb.len, &msg, &len, &z, err, sizeof(err)), 0);
	assert_int_equal(len, 3);
	assert_false(z);
	assert_memory_equal(msg, "abc", 3);
	assert_int_equal(grpc__unframe(sb.buf, 4, &msg, &len, &z, err, sizeof(err)), -EINVAL);
	strbuf_addch(&sb, 'x');	/* a second message, or trailing bytes */
	assert_int_equal(grpc__unframe(sb.buf, sb.len, &msg, &len, &z, err, sizeof(err)), -EINVAL);
	sb.buf[0] = 2;
	assert_int_equal(grpc__unframe(sb.buf, 8, &msg, &len, &z, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "flag 2"));
	strbuf_reset(&sb);
	grpc__percent_encode(&sb, "50% of \xc3\xa9t\xc3\xa9\n");
	assert_string_equal(sb.buf, "50%25 of %C3%A9t%C3%A9%0A");
	assert_int_equal(grpc__code_of(200), GRPC_OK);
	assert_int_equal(grpc__code_of(413), GRPC_RESOURCE_EXHAUSTED);
	assert_int_equal(grpc__code_of(422), GRPC_INVALID_ARGUMENT);
	assert_int_equal(grpc__code_of(401), GRPC_UNAUTHENTICATED);
	assert_int_equal(grpc__code_of(500), GRPC_INTERNAL);
	strbuf_release(&sb);
}

static int setup(void **state)
{
	return scratch__make(dir, sizeof(dir), "grpc");
}

static int teardown(void **state)
{
	return scratch__remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_framing),
		cmocka_unit_test_setup_teardown(test_export_h2c, setup, teardown),
		cmocka_unit_test_setup_teardown(test_export_tls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_limit, setup, teardown),
	};
	curl_global_init(CURL_GLOBAL_DEFAULT);
	int ret = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return ret;
}
