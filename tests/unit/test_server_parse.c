/* The parsers that face HTTP clients, fed known answers and then many mutated and random
 * inputs (a deterministic fuzz loop, run under ASan/UBSan): selectors, Pyroscope times,
 * ISO times, multipart bodies, sample-row blobs, gzip with a size limit, flamebearer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "server/flamebearer.h"
#include "server/http.h"
#include "server/multipart.h"
#include "server/selector.h"
#include "server_ref.h"
#include "store/rows.h"
#include "util/strbuf.h"

#define ROUNDS 20000

static uint64_t seed = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

/* Copies src with a few random byte edits (flip, insert, delete, truncate). */
static size_t mutate(const char *src, size_t len, char *out, size_t cap)
{
	size_t n = len < cap ? len : cap;

	memcpy(out, src, n);
	for (int edits = 1 + (int)(rnd() % 4); edits; edits--) {
		size_t at = n ? rnd() % n : 0;
		switch (rnd() % 4) {
		case 0:
			if (n)
				out[at] = (char)rnd();
			break;
		case 1:
			if (n < cap) {
				memmove(out + at + 1, out + at, n - at);
				out[at] = "{}=,\"~!;\r\n-\\ "[rnd() % 14];
				n++;
			}
			break;
		case 2:
			if (n) {
				memmove(out + at, out + at + 1, n - at - 1);
				n--;
			}
			break;
		default:
			n = at;
			break;
		}
	}
	return n;
}

static void test_selector_known_answers(void **state)
{
	struct store_query q;
	char err[128];

	store_query_init(&q);
	assert_int_equal(selector__parse(&q, "my.app.cpu{env=staging, region = us-west-1 }", true,
					 err, sizeof(err)), 0);
	assert_string_equal(q.service, "my.app.cpu");
	assert_int_equal(q.n, 2);
	assert_string_equal(q.m[1].value, "us-west-1");
	assert_int_equal(selector__parse(&q, "app{otel.scope.name=\"com.grafana/x\",a=\"q\\\"t\"}",
					 true, err, sizeof(err)), 0);
	assert_string_equal(q.m[0].value, "com.grafana/x");
	assert_string_equal(q.m[1].value, "q\"t");
	assert_int_equal(selector__parse(&q, "app.cpu{h=~\"web-[0-9]+\",x!=\"y\",z!~\"a|b\"}", false,
					 err, sizeof(err)), 0);
	struct labels l;
	labels_init(&l);
	labels__set(&l, "h", "web-12");
	assert_true(store_query__matches(&q, &l));
	labels__set(&l, "z", "a");
	assert_false(store_query__matches(&q, &l));
	labels_release(&l);
	/* errors */
	assert_int_equal(selector__parse(&q, "app{x=~\"y\"}", true, err, sizeof(err)), -EINVAL);
	assert_int_equal(selector__parse(&q, "app{x=y}", false, err, sizeof(err)), -EINVAL);
	assert_int_equal(selector__parse(&q, "app{a=1,a=2}", true, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "twice"));
	assert_int_equal(selector__parse(&q, "{a=1}", true, err, sizeof(err)), -EINVAL);
	assert_int_equal(selector__parse(&q, "app{bad-name=1}", true, err, sizeof(err)), -EINVAL);
	assert_int_equal(selector__parse(&q, "app{a=\"(\"}", false, err, sizeof(err)), 0);
	assert_int_equal(selector__parse(&q, "app{a=~\"(\"}", false, err, sizeof(err)), -EINVAL);
	assert_int_equal(selector__parse(&q, "app}", true, err, sizeof(err)), -EINVAL);
	store_query_release(&q);
}

static void test_selector_fuzz(void **state)
{
	static const char *seeds[] = {
		"app.cpu{env=staging,region=us-west-1}",
		"app.cpu{h=~\"web-[0-9]+\",x!=\"y\",z!~\"a|b\"}",
		"nodeapp{otel.scope.name=com.grafana.pyroscope/nodejs,process.runtime.version=v20}",
	};
	char buf[256], err[128], service[256];
	struct ref_matcher m[64];
	struct store_query q;
	size_t nm, valid = 0;

	store_query_init(&q);
	for (int i = 0; i < ROUNDS; i++) {
		const char *s = seeds[i % 3];
		size_t n = mutate(s, strlen(s), buf, sizeof(buf) - 1);
		buf[n] = 0;
		int ret = selector__parse(&q, buf, i % 2, err, sizeof(err));
		bool ok = ref_selector(buf, i % 2, service, sizeof(service), m, 64, &nm);
		if (ret != (ok ? 0 : -EINVAL))
			fail_msg("'%s' (%s): got %d, the grammar says %s", buf,
				 i % 2 ? "ingest" : "query", ret, ok ? "valid" : "invalid");
		if (ret == 0) {
			valid++;
			assert_string_equal(q.service, service);
			assert_int_equal(q.n, nm);
			for (size_t j = 0; j < nm; j++) {
				assert_string_equal(q.m[j].name, m[j].name);
				assert_string_equal(q.m[j].value, m[j].value);
				assert_int_equal(q.m[j].op, m[j].op);
			}
			assert_true(selector__valid_service(q.service));
			struct labels l;
			labels_init(&l);
			selector__to_labels(&q, &l);
			store_query__matches(&q, &l);
			labels_release(&l);
		} else {
			assert_true(err[0]);
		}
	}
	/* both outcomes were exercised */
	assert_true(valid > ROUNDS / 20 && valid < ROUNDS - ROUNDS / 20);
	store_query_release(&q);
}

static void test_times(void **state)
{
	int64_t t;

	assert_int_equal(attime__parse("1615709120", 0, &t), 0);
	assert_int_equal(t, 1615709120);
	assert_int_equal(attime__parse("1615709120123", 0, &t), 0);
	assert_int_equal(t, 1615709120);
	assert_int_equal(attime__parse("1615709120123456789", 0, &t), 0);
	assert_int_equal(t, 1615709120);
	assert_int_equal(attime__parse("20210314", 0, &t), 0);
	assert_int_equal(t, 1615680000);
	assert_int_equal(attime__parse("now-1h", 10000, &t), 0);
	assert_int_equal(t, 6400);
	assert_int_equal(attime__parse("now-7d", 1000000, &t), 0);
	assert_int_equal(t, 1000000 - 7 * 86400);
	assert_int_equal(attime__parse("now+1h", 0, &t), -EINVAL);
	assert_int_equal(attime__parse("12345678901234567890123", 0, &t), -EINVAL);
	assert_int_equal(isotime__parse("2021-03-14T08:05:20.123456", &t), 0);
	assert_int_equal(t, 1615709120);
	assert_int_equal(isotime__parse("2021-03-14T10:05:20+02:00", &t), 0);
	assert_int_equal(t, 1615709120);
	assert_int_equal(isotime__parse("2021-03-14T08:05:20Z", &t), 0);
	assert_int_equal(isotime__parse("2021-13-14T08:05:20", &t), -EINVAL);
	char buf[64];
	size_t valid[2] = { 0, 0 };
	for (int i = 0; i < ROUNDS; i++) {
		const char *s = i % 2 ? "2021-03-14T10:05:20.5+02:00" : "now-15min";
		size_t n = mutate(s, strlen(s), buf, sizeof(buf) - 1);
		int64_t t1 = -1, t2 = -1, w1 = -2, w2 = -2;
		buf[n] = 0;
		int r1 = isotime__parse(buf, &t1), r2 = attime__parse(buf, 1000000000, &t2);
		bool ok1 = ref_isotime(buf, &w1), ok2 = ref_attime(buf, 1000000000, &w2);
		if (r1 != (ok1 ? 0 : -EINVAL) || (ok1 && t1 != w1))
			fail_msg("isotime '%s': got %d (%lld), expected %s (%lld)", buf, r1,
				 (long long)t1, ok1 ? "valid" : "invalid", (long long)w1);
		if (r2 != (ok2 ? 0 : -EINVAL) || (ok2 && t2 != w2))
			fail_msg("attime '%s': got %d (%lld), expected %s (%lld)", buf, r2,
				 (long long)t2, ok2 ? "valid" : "invalid", (long long)w2);
		valid[0] += ok1;
		valid[1] += ok2;
	}
	assert_true(valid[0] > ROUNDS / 100 && valid[1] > ROUNDS / 100);
}

static const char body[] =
	"--XyZ\r\n"
	"Content-Disposition: form-data; name=\"sample_type_config\"; filename=\"c.json\"\r\n"
	"\r\n"
	"{\"cpu\":{}}\r\n"
	"--XyZ\r\n"
	"Content-Disposition: form-data; name=\"profile\"; filename=\"profile\"\r\n"
	"Content-Type: application/octet-stream\r\n"
	"\r\n"
	"PPROF\r\nBYTES\r\n"
	"--XyZ--\r\n";

static void test_multipart(void **state)
{
	char boundary[80], err[128], buf[512];
	const char *data;
	size_t len, off, wlen, outcomes[3] = { 0, 0, 0 };

	assert_int_equal(multipart__boundary("multipart/form-data; boundary=XyZ", boundary,
					     sizeof(boundary)), 0);
	assert_string_equal(boundary, "XyZ");
	assert_int_equal(multipart__boundary("multipart/form-data; boundary=\"a b\"", boundary,
					     sizeof(boundary)), 0);
	assert_string_equal(boundary, "a b");
	assert_int_equal(multipart__boundary("multipart/form-data", boundary, sizeof(boundary)),
			 -EINVAL);
	assert_int_equal(multipart__find(body, sizeof(body) - 1, "XyZ", "profile", &data, &len,
					 err, sizeof(err)), 0);
	/* the CRLF before a delimiter belongs to the delimiter */
	assert_int_equal(len, 12);
	assert_memory_equal(data, "PPROF\r\nBYTES", 12);
	assert_int_equal(multipart__find(body, sizeof(body) - 1, "XyZ", "jfr", &data, &len, err,
					 sizeof(err)), -ENOENT);
	/* "filename=\"profile\"" alone does not name a part "profile". */
	assert_int_equal(multipart__find(body, 120, "XyZ", "profile", &data, &len, err,
					 sizeof(err)), -EINVAL);
	/* a part without headers ends its (empty) header block at once: what follows is
	 * content, even when it looks like headers */
	static const char headless[] =
		"--XyZ\r\n\r\nContent-Disposition: form-data; name=\"profile\"\r\n\r\nfake\r\n"
		"--XyZ--\r\n";
	assert_int_equal(multipart__find(headless, sizeof(headless) - 1, "XyZ", "profile", &data,
					 &len, err, sizeof(err)), -ENOENT);
	for (int i = 0; i < ROUNDS; i++) {
		size_t n = mutate(body, sizeof(body) - 1, buf, sizeof(buf));
		/* exact-size heap copy, so that ASan sees any read past the end */
		char *copy = malloc(n ? n : 1);
		memcpy(copy, buf, n);
		int ret = multipart__find(copy, n, "XyZ", "profile", &data, &len, err, sizeof(err));
		int want = ref_multipart(copy, n, "XyZ", "profile", &off, &wlen);
		if (ret != want)
			fail_msg("round %d: got %d, the body's shape calls for %d", i, ret, want);
		if (!ret) {
			assert_ptr_equal(data, copy + off);
			assert_int_equal(len, wlen);
		}
		outcomes[ret == 0 ? 0 : ret == -ENOENT ? 1 : 2]++;
		free(copy);
	}
	/* each answer was exercised */
	assert_true(outcomes[0] && outcomes[1] && outcomes[2]);
}

static void test_rows_fuzz(void **state)
{
	unsigned char buf[64];

	for (int i = 0; i < ROUNDS; i++) {
		size_t n = rnd() % sizeof(buf);
		struct sample_row *rows;
		size_t nr;
		for (size_t j = 0; j < n; j++)
			buf[j] = (unsigned char)(i % 3 ? rnd() % 4 : rnd());
		unsigned char *copy = malloc(n ? n : 1);
		memcpy(copy, buf, n);
		if (!rows__decode(copy, n, &rows, &nr)) {
			for (size_t j = 1; j < nr; j++)
				assert_true(rows[j].stack > rows[j - 1].stack);
			free(rows);
		}
		free(copy);
	}
}

static void test_gzip_limit(void **state)
{
	struct strbuf zeros = STRBUF_INIT, gz = STRBUF_INIT, out = STRBUF_INIT;

	strbuf_grow(&zeros, 4 << 20);
	memset(zeros.buf, 0, 4 << 20);
	zeros.len = 4 << 20;
	assert_int_equal(gzip__compress(&gz, zeros.buf, zeros.len), 0);
	assert_true(gz.len < 10000);	/* a small body that inflates to 4 MiB */
	assert_int_equal(gzip__decompress(&out, gz.buf, gz.len, 1 << 20), -EFBIG);
	strbuf_reset(&out);
	assert_int_equal(gzip__decompress(&out, gz.buf, gz.len, 8 << 20), 0);
	assert_int_equal(out.len, 4 << 20);
	strbuf_reset(&out);
	assert_int_equal(gzip__decompress(&out, gz.buf, gz.len / 2, 8 << 20), -EINVAL);
	strbuf_reset(&out);
	assert_int_equal(gzip__decompress(&out, "not gzip", 8, 8 << 20), -EINVAL);
	strbuf_release(&zeros);
	strbuf_release(&gz);
	strbuf_release(&out);
}

/* Sum of a flamebearer row's totals, decoding the delta-encoded offsets. */
static void check_levels(json_t *fb, uint64_t ticks, size_t width)
{
	json_t *levels = json_object_get(fb, "levels");
	size_t nr_names = json_array_size(json_object_get(fb, "names"));

	assert_int_equal(json_integer_value(json_array_get(json_array_get(levels, 0), 1)), ticks);
	for (size_t d = 0; d < json_array_size(levels); d++) {
		json_t *row = json_array_get(levels, d);
		uint64_t x = 0, end = 0;
		assert_int_equal(json_array_size(row) % width, 0);
		for (size_t i = 0; i < json_array_size(row); i += width) {
			x = end + (uint64_t)json_integer_value(json_array_get(row, i));
			end = x + (uint64_t)json_integer_value(json_array_get(row, i + 1));
			assert_true(end <= ticks);
			assert_true((size_t)json_integer_value(json_array_get(row, i + width - 1)) < nr_names);
		}
	}
}

/* Checks that every node's total is its self plus its children's totals (per side), the
 * children being the nodes of the next row that start inside it; returns the node count. */
static size_t check_tree(json_t *fb, size_t width)
{
	json_t *levels = json_object_get(fb, "levels");
	size_t nodes = 0;

	for (size_t d = 0; d < json_array_size(levels); d++) {
		json_t *row = json_array_get(levels, d), *next = json_array_get(levels, d + 1);
		nodes += json_array_size(row) / width;
		for (size_t side = 0; side < (width == 7 ? 2 : 1); side++) {
			uint64_t end = 0, nend = 0;
			size_t j = 0;
			for (size_t i = 0; i < json_array_size(row); i += width) {
				uint64_t x = end + (uint64_t)json_integer_value(json_array_get(row, i + 3 * side));
				uint64_t total = (uint64_t)json_integer_value(json_array_get(row, i + 3 * side + 1));
				uint64_t self = (uint64_t)json_integer_value(json_array_get(row, i + 3 * side + 2));
				uint64_t kids = 0;
				end = x + total;
				/* children: next-row nodes starting in [x, x + total) */
				while (next && j < json_array_size(next)) {
					uint64_t cx = nend + (uint64_t)json_integer_value(json_array_get(next, j + 3 * side));
					uint64_t ct = (uint64_t)json_integer_value(json_array_get(next, j + 3 * side + 1));
					if (cx >= x + total && !(ct == 0 && cx == x + total && !total))
						break;
					assert_true(cx >= x);
					kids += ct;
					nend = cx + ct;
					j += width;
				}
				assert_int_equal(self + kids, total);
			}
		}
	}
	return nodes;
}

static void test_flamebearer(void **state)
{
	struct profile *a = profile__new(), *b = profile__new();
	const char *s1[] = { "main", "foo" }, *s2[] = { "main", "bar" }, *s3[] = { "main" };
	uint64_t lt, rt;

	profile__add_names(a, s1, 2, 100);
	profile__add_names(a, s2, 2, 200);
	profile__add_names(a, s3, 1, 5);
	json_t *fb = flamebearer__build(a, NULL, 8192, NULL, NULL);
	/* Pyroscope's example shape: root, main, then bar before foo (sorted), offsets
	 * delta-coded; names are numbered in the order nodes are emitted */
	char *text = json_dumps(json_object_get(fb, "levels"), JSON_COMPACT);
	assert_string_equal(text, "[[0,305,0,0],[0,305,5,1],[0,200,200,2,0,100,100,3]]");
	free(text);
	text = json_dumps(json_object_get(fb, "names"), JSON_COMPACT);
	assert_string_equal(text, "[\"total\",\"main\",\"bar\",\"foo\"]");
	free(text);
	check_levels(fb, 305, 4);
	json_decref(fb);
	/* 4 nodes fit all; with 3, main is kept and its children fold into "other" (keeping
	 * bar too would need a fourth node for foo's "other") */
	fb = flamebearer__build(a, NULL, 4, NULL, NULL);
	text = json_dumps(json_object_get(fb, "levels"), JSON_COMPACT);
	assert_string_equal(text, "[[0,305,0,0],[0,305,5,1],[0,200,200,2,0,100,100,3]]");
	free(text);
	json_decref(fb);
	fb = flamebearer__build(a, NULL, 3, NULL, NULL);
	text = json_dumps(json_object_get(fb, "levels"), JSON_COMPACT);
	assert_string_equal(text, "[[0,305,0,0],[0,305,5,1],[0,300,300,2]]");
	free(text);
	text = json_dumps(json_object_get(fb, "names"), JSON_COMPACT);
	assert_string_equal(text, "[\"total\",\"main\",\"other\"]");
	free(text);
	json_decref(fb);
	fb = flamebearer__build(a, NULL, 1, NULL, NULL);	/* at least the root and "other" */
	text = json_dumps(json_object_get(fb, "levels"), JSON_COMPACT);
	assert_string_equal(text, "[[0,305,0,0],[0,305,305,1]]");
	free(text);
	json_decref(fb);

	/* names are JSON-escaped; names that are not UTF-8 have their high bytes as '?' */
	{
		struct profile *c = profile__new();
		const char *odd[] = { "q\"b\\s", "tab\there\x01", "caf\xc3\xa9", "bad\xff\xc3\xa9",
				      "\xed\xa0\x80surrogate", "\xc0\xafoverlong" };
		profile__add_names(c, odd, 6, 1);
		fb = flamebearer__build(c, NULL, 0, NULL, NULL);
		text = json_dumps(json_object_get(fb, "names"), JSON_COMPACT);
		assert_string_equal(text, "[\"total\",\"q\\\"b\\\\s\",\"tab\\there\\u0001\","
				    "\"caf\xc3\xa9\",\"bad???\",\"???surrogate\",\"??overlong\"]");
		free(text);
		json_decref(fb);
		profile__free(c);
	}

	/* random profiles keep the invariants, single and double, with many ties at the cut */
	for (int i = 0; i < 200; i++) {
		char names[8][16];
		const char *stack[12];
		for (int k = 0; k < 8; k++)
			snprintf(names[k], sizeof(names[k]), "f%d", k);
		for (int j = 0; j < 30; j++) {
			uint32_t depth = 1 + (uint32_t)(rnd() % 12);
			for (uint32_t d = 0; d < depth; d++)
				stack[d] = names[rnd() % 8];
			profile__add_names(j % 2 ? a : b, stack, depth, 1 + rnd() % (i % 2 ? 3 : 50));
		}
		size_t max = 1 + rnd() % 64;
		fb = flamebearer__build(a, NULL, max, NULL, NULL);
		check_levels(fb, profile__total(a), 4);
		assert_true(check_tree(fb, 4) <= (max < 2 ? 2 : max));
		json_decref(fb);
		fb = flamebearer__build(a, b, max, &lt, &rt);
		assert_int_equal(lt, profile__total(a));
		assert_int_equal(rt, profile__total(b));
		check_levels(fb, lt, 7);
		assert_true(check_tree(fb, 7) <= (max < 2 ? 2 : max));
		json_decref(fb);
	}
	profile__free(a);
	profile__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_selector_known_answers),
		cmocka_unit_test(test_selector_fuzz),
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_multipart),
		cmocka_unit_test(test_rows_fuzz),
		cmocka_unit_test(test_gzip_limit),
		cmocka_unit_test(test_flamebearer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
