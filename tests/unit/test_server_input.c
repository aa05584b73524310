/* Bad input on every ingest route of a real server on loopback, sent as an attacker
 * would: times far outside any query (1e60, INT64_MIN, year 2262 in nanoseconds), service
 * names one route took and another refused, a pprof sample without locations, and the
 * request smuggling shapes (two Content-Lengths, Content-Length with chunked), JFR that is
 * not, and the Java agent's multipart without its parts. Each is
 * refused with a message naming what was wrong and stores nothing; a normal upload right
 * after is served. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "format/pprof.h"
#include "profile.pb-c.h"
#include "push.pb-c.h"
#include "server/http.h"
#include "server/server.h"
#include "util/strbuf.h"

#include "http_client.h"
#include "scratch.h"

static char dir[64];
static const char *const writers[] = { "w" };
static const char *const readers[] = { "r" };
static struct server *srv;
static uint16_t port;

/* POST body (len bytes) to path with the write token and header h (or NULL); GET with
 * the read token when body is NULL. Returns the status. */
static long http(const char *path, const char *h1, const void *body, size_t len,
		 struct strbuf *reply)
{
	const char *const h[] = { body ? "Authorization: Bearer w" : "Authorization: Bearer r",
				  h1, NULL };
	struct http_req r = { .headers = h, .body = body, .len = len };
	return http_client__at(port, path, &r, reply);
}

/* The services stored, as /api/apps lists them. */
static void apps(struct strbuf *out)
{
	assert_int_equal(http("/api/apps", NULL, NULL, 0, out), 200);
}

static long gprofiler(const char *service, const char *times, struct strbuf *reply)
{
	struct strbuf body = STRBUF_INIT, h = STRBUF_INIT;
	long status;

	strbuf_addf(&body, "{\"profile\":\"# {}\\n0;;p;main;f 3\\n\"%s%s}", *times ? "," : "",
		    times);
	strbuf_addf(&h, "GPROFILER-SERVICE-NAME: %s", service);
	status = http("/api/v2/profiles", h.buf, body.buf, body.len, reply);
	strbuf_release(&body);
	strbuf_release(&h);
	return status;
}

static void test_times_are_range_checked(void **state)
{
	struct strbuf reply = STRBUF_INIT, path = STRBUF_INIT;
	const char body[] = "main;x 1\n";

	assert_int_equal(gprofiler("gp", "\"end_time\":1e60", &reply), 422);
	assert_non_null(strstr(reply.buf, "'end_time' is out of range"));
	assert_int_equal(gprofiler("gp", "\"start_time\":-9223372036854775808,\"end_time\":100",
				   &reply), 422);
	assert_non_null(strstr(reply.buf, "'start_time' is out of range"));
	assert_int_equal(gprofiler("gp", "\"end_time\":9223372036854775807", &reply), 422);
	assert_int_equal(gprofiler("gp", "\"end_time\":\"9999-01-01T00:00:00Z\"", &reply), 422);
	assert_int_equal(gprofiler("gp", "\"end_time\":-1.5", &reply), 422);
	assert_int_equal(http("/ingest?name=py.cpu&from=0&until=99999999999", NULL, body,
			      sizeof(body) - 1, &reply), 422);
	assert_non_null(strstr(reply.buf, "'until' is out of range"));
	strbuf_addf(&path, "/ingest?name=py.cpu&from=%lld&until=%lld", (long long)time(NULL) + 3 * 86400,
		    (long long)time(NULL) + 3 * 86400);	/* three days ahead */
	assert_int_equal(http(path.buf, NULL, body, sizeof(body) - 1, &reply), 422);
	assert_non_null(strstr(reply.buf, "'from' is out of range"));
	apps(&reply);
	assert_string_equal(reply.buf, "[]");
	/* within range, old or new, they are taken */
	assert_int_equal(gprofiler("gp", "\"start_time\":1000,\"end_time\":1060.5", &reply), 200);
	assert_int_equal(gprofiler("gp2", "", &reply), 200);
	assert_int_equal(http("/ingest?name=py.cpu&from=now-10&until=now", NULL, body,
			      sizeof(body) - 1, &reply), 200);
	apps(&reply);
	assert_non_null(strstr(reply.buf, "\"gp\""));
	strbuf_release(&reply);
	strbuf_release(&path);
}

/* A Connect push of one pprof with time_nanos t and label region=region. */
static long push_labeled(int64_t t, const char *service, const char *region,
			 struct strbuf *reply)
{
	struct profile *p = profile__new();
	struct strbuf pb = STRBUF_INIT;
	const char *frames[] = { "main", "work" };
	Push__V1__LabelPair l = PUSH__V1__LABEL_PAIR__INIT, l2 = PUSH__V1__LABEL_PAIR__INIT;
	Push__V1__LabelPair *lv[2] = { &l, &l2 };
	Push__V1__RawSample s = PUSH__V1__RAW_SAMPLE__INIT, *sv[1] = { &s };
	Push__V1__RawProfileSeries ser = PUSH__V1__RAW_PROFILE_SERIES__INIT, *serv[1] = { &ser };
	Push__V1__PushRequest req = PUSH__V1__PUSH_REQUEST__INIT;
	long status;

	const struct profile_type cpu = { "cpu", "nanoseconds" };
	assert_int_equal(profile__set_types(p, &cpu, 1), 0);
	profile__add_names(p, frames, 2, 10);
	assert_int_equal(pprof__write(&pb, p), 0);
	if (t) {	/* pprof__write writes no time: set it in the protobuf */
		struct strbuf raw = STRBUF_INIT;
		assert_int_equal(gzip__decompress(&raw, pb.buf, pb.len, 1 << 20), 0);
		Perftools__Profiles__Profile *pr = perftools__profiles__profile__unpack(
			NULL, raw.len, (const uint8_t *)raw.buf);
		assert_non_null(pr);
		pr->time_nanos = t;
		strbuf_reset(&pb);
		strbuf_grow(&pb, perftools__profiles__profile__get_packed_size(pr));
		pb.len = perftools__profiles__profile__pack(pr, (uint8_t *)pb.buf);
		perftools__profiles__profile__free_unpacked(pr, NULL);
		strbuf_release(&raw);
	}
	l.name = "service_name";
	l.value = (char *)service;
	s.raw_profile.data = (uint8_t *)pb.buf;
	s.raw_profile.len = pb.len;
	l2.name = "region";
	l2.value = (char *)region;
	ser.n_labels = region ? 2 : 1, ser.labels = lv, ser.n_samples = 1, ser.samples = sv;
	req.n_series = 1, req.series = serv;
	size_t len = push__v1__push_request__get_packed_size(&req);
	uint8_t *buf = xmalloc(len + 1);
	push__v1__push_request__pack(&req, buf);
	status = http("/push.v1.PusherService/Push", "Content-Type: application/proto", buf, len,
		      reply);
	free(buf);
	strbuf_release(&pb);
	profile__free(p);
	return status;
}

static long push(int64_t t, const char *service, struct strbuf *reply)
{
	return push_labeled(t, service, NULL, reply);
}

static void test_push_times_are_range_checked(void **state)
{
	struct strbuf reply = STRBUF_INIT;

	assert_int_equal(push(INT64_MAX, "pushed", &reply), 422);
	assert_non_null(strstr(reply.buf, "'time_nanos' is out of range"));
	apps(&reply);
	assert_null(strstr(reply.buf, "pushed"));
	/* a label value that is not UTF-8 would be stored and never listed */
	assert_int_equal(push_labeled(0, "pushed", "eu\xff", &reply), 400);
	assert_non_null(strstr(reply.buf, "label 'region' is not valid UTF-8"));
	apps(&reply);
	assert_null(strstr(reply.buf, "pushed"));
	assert_int_equal(push_labeled(0, "pushed", "eu", &reply), 200);
	apps(&reply);
	assert_non_null(strstr(reply.buf, "pushed"));
	strbuf_release(&reply);
}

/* A 300-character name went in through /ingest and was refused by /api/v2/profiles with
 * a message about characters: one rule, one message, on every route. */
static void test_one_service_name_rule(void **state)
{
	struct strbuf reply = STRBUF_INIT, name = STRBUF_INIT, path = STRBUF_INIT;
	const char body[] = "main;x 1\n";

	for (int i = 0; i < 300; i++)
		strbuf_addch(&name, 'a' + i % 26);
	assert_int_equal(gprofiler(name.buf, "", &reply), 400);
	assert_non_null(strstr(reply.buf, "1 to 256 characters of"));
	strbuf_addf(&path, "/ingest?name=%s.cpu", name.buf);
	assert_int_equal(http(path.buf, NULL, body, sizeof(body) - 1, &reply), 400);
	assert_non_null(strstr(reply.buf, "1 to 256 characters of"));
	assert_int_equal(push(0, name.buf, &reply), 400);
	assert_non_null(strstr(reply.buf, "1 to 256 characters of"));
	assert_int_equal(gprofiler("bad name", "", &reply), 400);
	assert_non_null(strstr(reply.buf, "1 to 256 characters of"));
	apps(&reply);
	assert_string_equal(reply.buf, "[]");
	/* 256 is the limit, on every route */
	strbuf_setlen(&name, 256);
	assert_int_equal(gprofiler(name.buf, "", &reply), 200);
	strbuf_setlen(&name, 252);
	strbuf_reset(&path);
	strbuf_addf(&path, "/ingest?name=%s.cpu", name.buf);
	assert_int_equal(http(path.buf, NULL, body, sizeof(body) - 1, &reply), 200);
	strbuf_release(&reply);
	strbuf_release(&name);
	strbuf_release(&path);
}

/* A pprof sample without locations (an empty stack) once reached NULL + 0 in
 * profile__stack (UBSan): it is stored as an empty stack, beside the others. */
static void test_pprof_sample_without_locations(void **state)
{
	struct profile *p = profile__new();
	struct strbuf pb = STRBUF_INIT, reply = STRBUF_INIT;

	const struct profile_type samples = { "samples", "count" };
	assert_int_equal(profile__set_types(p, &samples, 1), 0);
	profile__add(p, NULL, 0, 4);
	assert_int_equal(pprof__write(&pb, p), 0);
	assert_int_equal(http("/ingest?name=empty&format=pprof&from=now-10&until=now", NULL,
			      pb.buf, pb.len, &reply), 200);
	assert_int_equal(http("/render?query=empty.cpu&from=now-1h&until=now", NULL, NULL, 0,
			      &reply), 200);
	profile__free(p);
	strbuf_release(&pb);
	strbuf_release(&reply);
}

/* A JFR recording that is not one, and the Java agent's multipart without its parts: 422
 * naming what is wrong, nothing stored. */
static void test_bad_jfr_is_refused(void **state)
{
	struct strbuf reply = STRBUF_INIT, body = STRBUF_INIT;
	uint8_t hdr[68] = { 'F', 'L', 'R', 0, 0, 2, 0, 1 };
	const char *mp = "Content-Type: multipart/form-data; boundary=XbX";

	hdr[15] = 68;			/* chunk size */
	hdr[30] = 0x03, hdr[31] = 0xe8;	/* metadata offset 1000 */
	hdr[67] = 1;			/* compressed integers */
	assert_int_equal(http("/ingest?name=jbad&format=jfr", NULL, hdr, sizeof(hdr), &reply), 422);
	assert_non_null(strstr(reply.buf, "invalid JFR recording: chunk 1 at offset 0: metadata "
				       "offset 1000 is outside the chunk of 68 bytes"));
	assert_int_equal(http("/ingest?name=jbad&format=jfr", NULL, "FLR", 3, &reply), 422);
	assert_non_null(strstr(reply.buf, "chunk header truncated"));
	strbuf_addstr(&body, "--XbX\r\nContent-Disposition: form-data; name=\"profile\"; "
		      "filename=\"p\"\r\n\r\nx\r\n--XbX--\r\n");
	assert_int_equal(http("/ingest?name=jbad&format=jfr", mp, body.buf, body.len, &reply), 422);
	assert_non_null(strstr(reply.buf, "no 'jfr' part"));
	strbuf_reset(&body);
	strbuf_addstr(&body, "--XbX\r\nContent-Disposition: form-data; name=\"jfr\"; "
		      "filename=\"jfr\"\r\n\r\nFLR\r\n--XbX\r\nContent-Disposition: form-data; "
		      "name=\"labels\"; filename=\"labels\"\r\n\r\n\xff\xff\xff\r\n--XbX--\r\n");
	assert_int_equal(http("/ingest?name=jbad&format=jfr", mp, body.buf, body.len, &reply), 422);
	assert_non_null(strstr(reply.buf, "invalid 'labels' part"));
	apps(&reply);
	assert_null(strstr(reply.buf, "jbad"));
	strbuf_release(&reply);
	strbuf_release(&body);
	(void)state;
}

/* Sends raw bytes and returns the status line's code (0: no answer). */
static int raw(const char *req)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	char buf[512];
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0), code = 0;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	shutdown(fd, SHUT_WR);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n > 12) {
		buf[n] = 0;
		code = atoi(buf + 9);
	}
	close(fd);
	return code;
}

#define POST "POST /ingest?name=smuggled.cpu&from=now-10&until=now HTTP/1.1\r\nHost: x\r\n" \
	     "Authorization: Bearer w\r\nConnection: close\r\n"

static void test_smuggling_shapes_are_refused(void **state)
{
	struct strbuf reply = STRBUF_INIT;

	assert_int_equal(raw(POST "Content-Length: 9\r\nContent-Length: 9\r\n\r\nmain;x 1\n"), 400);
	assert_int_equal(raw(POST "Content-Length: 9\r\nContent-Length: 4\r\n\r\nmain;x 1\n"), 400);
	assert_int_equal(raw(POST "Content-Length: 9\r\nTransfer-Encoding: chunked\r\n\r\n"
			     "9\r\nmain;x 1\n\r\n0\r\n\r\n"), 400);
	assert_int_equal(raw(POST "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"
			     "9\r\nmain;x 1\n\r\n0\r\n\r\n"), 400);
	/* this one used to hang until the connection timed out */
	assert_int_equal(raw(POST "Transfer-Encoding: gzip, chunked\r\n\r\n9\r\nmain;x 1\n\r\n0\r\n\r\n"), 400);
	apps(&reply);
	assert_string_equal(reply.buf, "[]");
	/* one Content-Length, or chunked alone, is served */
	assert_int_equal(raw(POST "Content-Length: 9\r\n\r\nmain;x 1\n"), 200);
	assert_int_equal(raw(POST "Transfer-Encoding: chunked\r\n\r\n9\r\nmain;x 1\n\r\n0\r\n\r\n"), 200);
	assert_int_equal(http("/render?query=smuggled.cpu&format=collapsed&from=now-1h&until=now",
			      NULL, NULL, 0, &reply), 200);
	assert_non_null(strstr(reply.buf, "\nmain;x 2\n"));
	strbuf_release(&reply);
}

static int setup(void **state)
{
	struct strbuf data = STRBUF_INIT;
	char err[256];

	if (scratch__make(dir, sizeof(dir), "input"))
		return -1;
	strbuf_addf(&data, "%s/data", dir);
	struct server_options o = { .listen = "127.0.0.1:0", .data_dir = data.buf,
				    .tokens = writers, .nr_tokens = 1, .read_tokens = readers,
				    .nr_read_tokens = 1, .threads = 2 };
	srv = server__start(&o, err, sizeof(err));
	strbuf_release(&data);
	if (!srv)
		return -1;
	port = server__port(srv);
	return 0;
}

static int teardown(void **state)
{
	server__stop(srv);
	return scratch__remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_times_are_range_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_push_times_are_range_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_service_name_rule, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pprof_sample_without_locations, setup, teardown),
		cmocka_unit_test_setup_teardown(test_smuggling_shapes_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_jfr_is_refused, setup, teardown),
	};
	curl_global_init(CURL_GLOBAL_DEFAULT);
	int ret = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return ret;
}
