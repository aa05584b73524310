/* Pyroscope's ingest limits on the Connect push (the real server on loopback, in this
 * process): a pprof just under the size limit (uncompressed), the samples limit and the
 * ingestion window is stored, one just over is refused with its status, a Connect
 * invalid_argument and a message naming the flag, and a push holding one bad profile
 * stores none of its others. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
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

/* POST body with the write token and header ctype (or NULL); GET with the read token
 * when body is NULL. Returns the status. */
static long http(uint16_t port, const char *path, const char *ctype, const void *body,
		 size_t len, struct strbuf *reply)
{
	const char *const h[] = { body ? "Authorization: Bearer w" : "Authorization: Bearer r",
				  ctype, NULL };
	struct http_req r = { .headers = h, .body = body, .len = len };
	return http_client__at(port, path, &r, reply);
}

/* A CPU pprof of stacks distinct stacks main;fI, raw or gzipped, taken ago seconds
 * before now (0: no time). */
static void make_pprof(struct strbuf *out, size_t stacks, bool gz, int64_t ago)
{
	struct profile *p = profile__new();
	const struct profile_type cpu = { "cpu", "nanoseconds" };
	char leaf[32];

	assert_int_equal(profile__set_types(p, &cpu, 1), 0);
	for (size_t i = 0; i < stacks; i++) {
		snprintf(leaf, sizeof(leaf), "f%zu", i);
		const char *frames[] = { "main", leaf };
		profile__add_names(p, frames, 2, 10000000);
	}
	strbuf_reset(out);
	assert_int_equal(pprof__write_raw(out, p), 0);
	if (ago) {	/* pprof__write_raw writes no time: set it in the protobuf */
		Perftools__Profiles__Profile *pr = perftools__profiles__profile__unpack(
			NULL, out->len, (const uint8_t *)out->buf);
		assert_non_null(pr);
		pr->time_nanos = ((int64_t)time(NULL) - ago) * 1000000000LL;
		strbuf_reset(out);
		strbuf_grow(out, perftools__profiles__profile__get_packed_size(pr));
		out->len = perftools__profiles__profile__pack(pr, (uint8_t *)out->buf);
		perftools__profiles__profile__free_unpacked(pr, NULL);
	}
	if (gz) {
		struct strbuf z = STRBUF_INIT;
		assert_int_equal(gzip__compress(&z, out->buf, out->len), 0);
		strbuf_reset(out);
		strbuf_add(out, z.buf, z.len);
		strbuf_release(&z);
	}
	profile__free(p);
}

/* Pushes the profiles a and b (b may be NULL) as two samples of one series of service. */
static long push(uint16_t port, const char *service, const struct strbuf *a,
		 const struct strbuf *b, struct strbuf *reply)
{
	Push__V1__LabelPair l = PUSH__V1__LABEL_PAIR__INIT, *lv[1] = { &l };
	Push__V1__RawSample s[2] = { PUSH__V1__RAW_SAMPLE__INIT, PUSH__V1__RAW_SAMPLE__INIT };
	Push__V1__RawSample *sv[2] = { &s[0], &s[1] };
	Push__V1__RawProfileSeries ser = PUSH__V1__RAW_PROFILE_SERIES__INIT, *serv[1] = { &ser };
	Push__V1__PushRequest req = PUSH__V1__PUSH_REQUEST__INIT;

	l.name = "service_name";
	l.value = (char *)service;
	s[0].raw_profile.data = (uint8_t *)a->buf;
	s[0].raw_profile.len = a->len;
	if (b) {
		s[1].raw_profile.data = (uint8_t *)b->buf;
		s[1].raw_profile.len = b->len;
	}
	ser.n_labels = 1, ser.labels = lv, ser.n_samples = b ? 2 : 1, ser.samples = sv;
	req.n_series = 1, req.series = serv;
	size_t len = push__v1__push_request__get_packed_size(&req);
	uint8_t *buf = xmalloc(len + 1);
	push__v1__push_request__pack(&req, buf);
	long status = http(port, "/push.v1.PusherService/Push", "Content-Type: application/proto",
			   buf, len, reply);
	free(buf);
	return status;
}

static bool stored(uint16_t port, const char *service)
{
	struct strbuf reply = STRBUF_INIT, name = STRBUF_INIT;

	assert_int_equal(http(port, "/api/apps", NULL, NULL, 0, &reply), 200);
	strbuf_addf(&name, "\"serviceName\":\"%s\"", service);
	bool hit = strstr(reply.buf, name.buf) != NULL;
	strbuf_release(&reply);
	strbuf_release(&name);
	return hit;
}

static void test_push_limits(void **state)
{
	struct strbuf fits = STRBUF_INIT, over = STRBUF_INIT, reply = STRBUF_INIT;
	struct strbuf ok = STRBUF_INIT, tmp = STRBUF_INIT, data = STRBUF_INIT;
	char err[256];

	/* the size limit is the raw size of a 10-stack pprof: 11 stacks are over it */
	make_pprof(&fits, 10, false, 0);
	size_t limit = fits.len;
	strbuf_addf(&data, "%s/data", dir);
	struct server_options o = { .listen = "127.0.0.1:0", .data_dir = data.buf,
				    .tokens = writers, .nr_tokens = 1, .read_tokens = readers,
				    .nr_read_tokens = 1, .threads = 2,
				    .max_profile_bytes = limit, .max_profile_samples = 10,
				    .reject_older_than = 3600, .reject_newer_than = 600 };
	struct server *srv = server__start(&o, err, sizeof(err));
	if (!srv)
		fail_msg("%s", err);
	uint16_t port = server__port(srv);

	assert_int_equal(push(port, "fits", &fits, NULL, &reply), 200);
	assert_true(stored(port, "fits"));
	make_pprof(&fits, 10, true, 0);	/* gzipped, the same */
	assert_int_equal(push(port, "fitsgz", &fits, NULL, &reply), 200);

	/* over the size, raw and gzipped (smaller than the limit as sent) */
	make_pprof(&over, 11, false, 0);
	make_pprof(&ok, 1, false, 0);
	assert_int_equal(push(port, "big", &ok, &over, &reply), 413);
	assert_non_null(strstr(reply.buf, "\"invalid_argument\""));
	assert_non_null(strstr(reply.buf, "sample 1: profile of"));
	assert_non_null(strstr(reply.buf, "--max-profile-size"));
	make_pprof(&over, 11, true, 0);
	assert_true(over.len <= limit);	/* as sent it fits: the limit is on its inflated size */
	assert_int_equal(push(port, "biggz", &ok, &over, &reply), 413);
	assert_false(stored(port, "big"));	/* its good first sample neither */
	assert_false(stored(port, "biggz"));

	/* samples: with the size lifted by a server of its own */
	server__stop(srv);
	o.max_profile_bytes = SIZE_MAX;
	srv = server__start(&o, err, sizeof(err));
	if (!srv)
		fail_msg("%s", err);
	port = server__port(srv);
	make_pprof(&tmp, 11, true, 0);
	assert_int_equal(push(port, "many", &ok, &tmp, &reply), 400);
	assert_non_null(strstr(reply.buf, "profile has 11 samples, more than the limit of 10"));
	assert_non_null(strstr(reply.buf, "--max-profile-samples"));
	assert_false(stored(port, "many"));
	make_pprof(&tmp, 10, true, 0);
	assert_int_equal(push(port, "ten", &ok, &tmp, &reply), 200);
	assert_true(stored(port, "ten"));

	/* the window: an hour back */
	make_pprof(&tmp, 1, true, 3500);
	assert_int_equal(push(port, "recent", &tmp, NULL, &reply), 200);
	make_pprof(&tmp, 1, true, 3700);
	assert_int_equal(push(port, "early", &ok, &tmp, &reply), 422);
	assert_non_null(strstr(reply.buf, "outside the ingestion window"));
	assert_non_null(strstr(reply.buf, "--reject-older-than"));
	assert_false(stored(port, "early"));
	make_pprof(&tmp, 1, true, -700);
	assert_int_equal(push(port, "late", &tmp, NULL, &reply), 422);
	assert_non_null(strstr(reply.buf, "--reject-newer-than"));
	assert_false(stored(port, "late"));

	server__stop(srv);
	strbuf_release(&fits);
	strbuf_release(&over);
	strbuf_release(&ok);
	strbuf_release(&tmp);
	strbuf_release(&reply);
	strbuf_release(&data);
}

static void test_defaults(void **state)
{
	struct server s = { 0 };

	assert_int_equal(ingest__max_profile_bytes(&s), 4 << 20);
	assert_int_equal(ingest__max_samples(&s), 16000);
	s.opts.max_profile_bytes = 10;
	s.opts.max_profile_samples = SIZE_MAX;
	assert_int_equal(ingest__max_profile_bytes(&s), 10);
	assert_true(ingest__max_samples(&s) == SIZE_MAX);
}

static int setup(void **state)
{
	return scratch__make(dir, sizeof(dir), "limits");
}

static int teardown(void **state)
{
	return scratch__remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_push_limits, setup, teardown),
		cmocka_unit_test(test_defaults),
	};
	curl_global_init(CURL_GLOBAL_DEFAULT);
	int ret = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return ret;
}
