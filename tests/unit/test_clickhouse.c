/* store/clickhouse: the parts that need no server. Locations (hosts, default ports,
 * options, credentials, refusals), the content hashes that let two kiln servers agree
 * (pinned values: a change would split one database's ids in two), RowBinary written and
 * read back byte for byte against ClickHouse's format, string quoting, and gzip bodies
 * that zlib inflates to the input, and every call failing with -EAGAIN when ClickHouse
 * is not there. The servers themselves: tests/e2e/clickhouse_*.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile/profile.h"
#include "store/clickhouse_int.h"

static void test_location(void **state)
{
	struct ch_location l;
	char err[256];

	(void)state;
	unsetenv("KILN_CLICKHOUSE_PASSWORD");
	ch_location_init(&l);
	assert_int_equal(ch_location__parse(&l, "//db.example:9123/prof", err, sizeof(err)), 0);
	assert_int_equal(l.nr_hosts, 1);
	assert_string_equal(l.hosts[0], "db.example:9123");
	assert_string_equal(l.database, "prof");
	assert_null(l.user);
	assert_null(l.password);
	assert_null(l.cluster);
	assert_false(l.secure);
	ch_location_release(&l);

	/* default ports follow secure=, credentials, several hosts, every option */
	assert_int_equal(ch_location__parse(&l, "//u:p@w@a,b:8124/k_1?cluster=c1&secure=1&"
					    "cacert=/ca.pem&insecure=1&timeout=5", err,
					    sizeof(err)), 0);
	assert_int_equal(l.nr_hosts, 2);
	assert_string_equal(l.hosts[0], "a:8443");
	assert_string_equal(l.hosts[1], "b:8124");
	assert_string_equal(l.user, "u");
	assert_string_equal(l.password, "p@w");
	assert_string_equal(l.cluster, "c1");
	assert_string_equal(l.cacert, "/ca.pem");
	assert_true(l.secure);
	assert_true(l.insecure);
	assert_int_equal(l.timeout, 5);
	ch_location_release(&l);

	setenv("KILN_CLICKHOUSE_PASSWORD", "from-env", 1);
	assert_int_equal(ch_location__parse(&l, "//kiln@h/d", err, sizeof(err)), 0);
	assert_string_equal(l.hosts[0], "h:8123");
	assert_string_equal(l.password, "from-env");
	ch_location_release(&l);
	unsetenv("KILN_CLICKHOUSE_PASSWORD");

	static const char *const bad[] = {
		"h:8123/db", "//h:8123", "//h:8123/", "//h:8123/d-b", "//h:x/db", "//:8123/db",
		"///db", "//h/db?nope=1", "//h/db?cluster=a;b", "//h:/db",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_int_equal(ch_location__parse(&l, bad[i], err, sizeof(err)), -EINVAL);
		assert_true(err[0] != 0);
		ch_location_release(&l);
	}
}

static void test_hashes(void **state)
{
	uint64_t ab[2], ba[2];

	(void)state;
	/* pinned: every kiln, on every machine, must give these */
	ab[0] = ba[1] = ch__frame_id("a", 1);
	ab[1] = ba[0] = ch__frame_id("b", 1);
	assert_true(ch__frame_id("main", 4) == 0x102a6837de10ee06ULL);
	assert_true(ch__stack_id(ab, 2) == 0xdd622024a79a5032ULL);
	assert_true(ch__series_id("s", "t", "k\x1fv\x1e") == 0x6436236baad0b28aULL);
	assert_true(ab[0] != ab[1]);
	assert_true(ch__stack_id(ab, 2) != ch__stack_id(ba, 2));
	assert_true(ch__stack_id(ab, 1) != ch__stack_id(ab, 2));
	assert_true(ch__stack_id(ab, 2) == ch__stack_id(ab, 2));
	assert_true(ch__stack_id(ab, 0) != 0);
	assert_true(ch__series_id("s", "t", "") != ch__series_id("s", "", "t"));
	assert_true(ch__series_id("st", "", "") != ch__series_id("s", "t", ""));
}

static void test_labels_key(void **state)
{
	struct labels l, back;
	struct strbuf k = STRBUF_INIT;

	(void)state;
	labels_init(&l);
	labels_init(&back);
	labels__set(&l, "host", "a\nb");
	labels__set(&l, "env", "prod");
	labels__sort(&l);
	ch__labels_key(&k, &l);
	assert_int_equal(k.len, strlen("env\x1fprod\x1ehost\x1f" "a?b\x1e"));
	assert_memory_equal(k.buf, "env\x1fprod\x1ehost\x1f" "a?b\x1e", k.len);
	ch__labels_parse(&back, k.buf, k.len);
	assert_int_equal(back.n, 2);
	assert_string_equal(labels__get(&back, "env"), "prod");
	assert_string_equal(labels__get(&back, "host"), "a?b");
	/* a torn key stops at the last whole label */
	labels_release(&back);
	ch__labels_parse(&back, k.buf, k.len - 3);
	assert_int_equal(back.n, 1);
	labels_release(&back);
	labels_release(&l);
	strbuf_release(&k);
}

static void test_rowbinary(void **state)
{
	struct strbuf b = STRBUF_INIT;
	struct rb_reader r;
	size_t len;
	const char *s;

	(void)state;
	rb_u32(&b, 0x01020304);
	rb_u64(&b, 0x1122334455667788ULL);
	rb_varint(&b, 300);
	rb_str(&b, "hi", 2);
	/* what ClickHouse's RowBinary is: little-endian, LEB128 lengths */
	static const uint8_t want[] = { 4, 3, 2, 1, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22,
					0x11, 0xac, 0x02, 2, 'h', 'i' };
	assert_int_equal(b.len, sizeof(want));
	assert_memory_equal(b.buf, want, sizeof(want));
	r = rbr_of(&b);
	assert_int_equal(rbr_u32(&r), 0x01020304);
	assert_true(rbr_u64(&r) == 0x1122334455667788ULL);
	assert_int_equal(rbr_varint(&r), 300);
	s = rbr_str(&r, &len);
	assert_int_equal(len, 2);
	assert_memory_equal(s, "hi", 2);
	assert_false(rbr_more(&r));
	assert_false(r.bad);
	/* reading past the end, or a length beyond it, is bad and safe */
	assert_int_equal(rbr_u64(&r), 0);
	assert_true(r.bad);
	strbuf_reset(&b);
	rb_varint(&b, 1000);
	strbuf_add(&b, "x", 1);
	r = rbr_of(&b);
	s = rbr_str(&r, &len);
	assert_true(r.bad);
	assert_int_equal(len, 0);
	strbuf_release(&b);
}

static void test_quote_gzip(void **state)
{
	struct strbuf b = STRBUF_INIT, gz = STRBUF_INIT;
	char out[4096];
	uLongf outlen = sizeof(out);
	z_stream z = { 0 };

	(void)state;
	ch__quote(&b, "it's a \\ test");
	assert_string_equal(b.buf, "'it\\'s a \\\\ test'");
	strbuf_reset(&b);
	for (int i = 0; i < 200; i++)
		strbuf_addf(&b, "row %d;", i);
	ch__gzip(&gz, b.buf, b.len);
	assert_true(gz.len > 18 && gz.len < b.len);
	assert_int_equal((unsigned char)gz.buf[0], 0x1f);
	assert_int_equal((unsigned char)gz.buf[1], 0x8b);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)gz.buf;
	z.avail_in = (uInt)gz.len;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)outlen;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(z.total_out, b.len);
	assert_memory_equal(out, b.buf, b.len);
	inflateEnd(&z);
	strbuf_release(&b);
	strbuf_release(&gz);
}

/* store__open dispatches clickhouse:// here; a ClickHouse that is not there is no reason
 * to fail at start, but every call says it is unavailable with -EAGAIN (the server's 503). */
static void test_down(void **state)
{
	struct store_query q;
	struct profile *p = profile__new(), *out = profile__new();
	struct labels l;
	char err[256];
	struct store *s;

	(void)state;
	err[0] = 0;
	assert_null(store__open("clickhouse://127.0.0.1:1", NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "no database"));
	s = store__open("CLICKHOUSE://127.0.0.1:1/kiln", NULL, err, sizeof(err));
	assert_non_null(s);
	assert_int_equal(store__resolution(s), 10);
	labels_init(&l);
	const char *frames[] = { "main", "work" };
	profile__add_names(p, frames, 2, 3);
	struct store_put put = { .service = "app.cpu", .from = 1000, .until = 1010, .profile = p,
				 .series = &l, .nr_series = 1 };
	assert_int_equal(store__put(s, &put, err, sizeof(err)), -EAGAIN);
	assert_non_null(strstr(err, "clickhouse '127.0.0.1:1' is unavailable"));
	store_query_init(&q);
	q.service = strdup("app.cpu");
	assert_int_equal(store__select(s, &q, 0, 2000, out, err, sizeof(err)), -EAGAIN);
	assert_int_equal(profile__nr_stacks(out), 0);
	/* bad input is refused before any request */
	put.until = 999;
	assert_int_equal(store__put(s, &put, err, sizeof(err)), -EINVAL);
	store_query_release(&q);
	store__close(s);
	profile__free(p);
	profile__free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_location),
		cmocka_unit_test(test_hashes),
		cmocka_unit_test(test_labels_key),
		cmocka_unit_test(test_rowbinary),
		cmocka_unit_test(test_quote_gzip),
		cmocka_unit_test(test_down),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
