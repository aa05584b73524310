/* The store interface on the SQLite backend: what is put comes back, merged across series,
 * through the raw, hourly and daily rows; labels; series totals; retention frees space. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "format/col.h"
#include "profile/ptype.h"
#include "server/flamebearer.h"
#include "store/rows.h"
#include "store/store.h"
#include "util/strbuf.h"

static char dir[] = "/tmp/kiln-test-store.XXXXXX";

static void rm_dir(void)
{
	struct strbuf cmd = STRBUF_INIT;
	strbuf_addf(&cmd, "rm -rf '%s'", dir);
	if (system(cmd.buf))
		fprintf(stderr, "failed to remove '%s'\n", dir);
	strbuf_release(&cmd);
}

/* Runs sql on the database file path (created when missing). */
static int sqlite_exec_file(const char *path, const char *sql)
{
	sqlite3 *db;
	char *msg = NULL;
	int rc = sqlite3_open(path, &db);

	if (!rc)
		rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	if (rc)
		fprintf(stderr, "sqlite: %s\n", msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	sqlite3_close(db);
	return rc;
}

static struct store *open_store(void)
{
	char err[256];
	struct store *s = store__open(dir, NULL, err, sizeof(err));
	if (!s)
		fail_msg("%s", err);
	return s;
}

/* Puts collapsed text for one host: the .col prefix frames become series labels. */
static void put_col(struct store *s, const char *host, int64_t from, const char *text)
{
	struct profile *p = profile__new();
	struct labels l;
	char err[256];

	assert_int_equal(col__parse(p, text, strlen(text), err, sizeof(err)), 0);
	labels_init(&l);
	labels__set(&l, "host", host);
	labels__sort(&l);
	struct store_put put = { .service = "svc", .from = from, .until = from + 60, .profile = p,
				 .series = &l, .nr_series = 1 };
	if (store__put(s, &put, err, sizeof(err)))
		fail_msg("%s", err);
	labels_release(&l);
	profile__free(p);
}

static uint64_t count_of(struct profile *p, const char *folded)
{
	struct strbuf sb = STRBUF_INIT;
	uint64_t c = 0;

	for (size_t i = 0; i < profile__nr_stacks(p); i++) {
		struct profile_stack st = profile__stack(p, i);
		strbuf_reset(&sb);
		for (uint32_t j = 0; j < st.depth; j++)
			strbuf_addf(&sb, "%s%s", j ? ";" : "", profile__name(p, st.frames[j]));
		if (!strcmp(sb.buf, folded))
			c += st.count;
	}
	strbuf_release(&sb);
	return c;
}

static void query(struct store_query *q, const char *service, const char *host)
{
	store_query_init(q);
	q->service = strdup(service);
	if (host) {
		q->m = calloc(1, sizeof(*q->m));
		q->m[0].name = strdup("host");
		q->m[0].value = strdup(host);
		q->m[0].op = MATCH_EQ;
		q->n = 1;
	}
}

static void test_rows_codec(void **state)
{
	struct sample_row r[] = { { 9, 1 }, { 3, 5 }, { 9, 2 }, { 70000, 1ULL << 40 } }, *d, *m;
	struct strbuf b = STRBUF_INIT;
	size_t n = rows__normalize(r, 4), nd, nm;

	assert_int_equal(n, 3);
	rows__encode(&b, r, n);
	assert_int_equal(rows__decode(b.buf, b.len, &d, &nd), 0);
	assert_int_equal(nd, 3);
	assert_int_equal(d[1].stack, 9);
	assert_int_equal(d[1].count, 3);
	nm = rows__merge(d, nd, r, n, &m);
	assert_int_equal(nm, 3);
	assert_int_equal(m[2].count, 1ULL << 41);
	/* Truncated and trailing bytes are errors, never a crash. */
	assert_int_equal(rows__decode(b.buf, b.len - 1, &m, &nm), -EINVAL);
	strbuf_addch(&b, 0);
	assert_int_equal(rows__decode(b.buf, b.len, &m, &nm), -EINVAL);
	free(d);
	free(m);
	strbuf_release(&b);
}

static void test_put_select_rollups(void **state)
{
	struct store *s = open_store();
	struct store_query q;
	struct profile *p;
	char err[256];
	/* Two whole days plus edges, so that day, hour and raw rows are all read. */
	int64_t day = 1700006400, t;

	for (t = day - 7200; t < day + 2 * 86400 + 7200; t += 1800)
		put_col(s, t % 3600 ? "a" : "b", t, "main;work 2\nmain;idle 1\n");
	put_col(s, "a", day, "main;work 5\n");
	/* A late upload for a day already rolled up is merged into its hour and day rows. */
	put_col(s, "c", day + 100, "main;late 9\n");
	query(&q, "svc", NULL);
	p = profile__new();
	assert_int_equal(store__select(s, &q, day, day + 86400, p, err, sizeof(err)), 0);
	assert_int_equal(count_of(p, "main;late"), 9);
	assert_int_equal(count_of(p, "main;idle"), 48);
	profile__free(p);
	store_query_release(&q);

	query(&q, "svc", NULL);
	p = profile__new();
	assert_int_equal(store__select(s, &q, day - 7200, day + 2 * 86400 + 7200, p, err,
				       sizeof(err)), 0);
	/* 104 uploads of 2 work + 1 idle, one more of 5 work */
	assert_int_equal(count_of(p, "main;work"), 104 * 2 + 5);
	assert_int_equal(count_of(p, "main;late"), 9);
	assert_int_equal(count_of(p, "main;idle"), 104);
	profile__free(p);
	store_query_release(&q);

	query(&q, "svc.cpu", "b");	/* Pyroscope-style name, one host */
	p = profile__new();
	assert_int_equal(store__select(s, &q, day - 7200, day + 2 * 86400 + 7200, p, err,
				       sizeof(err)), 0);
	assert_int_equal(count_of(p, "main;idle"), 52);
	profile__free(p);

	/* A range inside one hour reads raw rows only. */
	p = profile__new();
	assert_int_equal(store__select(s, &q, day + 3600, day + 3700, p, err, sizeof(err)), 0);
	assert_int_equal(profile__total(p), 3);
	profile__free(p);

	struct store_series ser;
	assert_int_equal(store__series(s, &q, day, day + 86400, &ser, err, sizeof(err)), 0);
	uint64_t sum = 0;
	for (size_t i = 0; i < ser.n; i++)
		sum += ser.samples[i];
	assert_int_equal(sum, 24 * 3);
	free(ser.samples);
	store_query_release(&q);
	store__close(s);

	/* Everything survives a reopen. */
	s = open_store();
	query(&q, "svc", NULL);
	char **v;
	size_t n;
	assert_int_equal(store__label_values(s, &q, "host", 0, INT64_MAX, &v, &n, err,
					     sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[0], "a");
	store__free_strings(v, n);
	struct store_service *sv;
	assert_int_equal(store__services(s, &sv, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_string_equal(sv[0].name, "svc");
	store__free_services(sv, n);
	store_query_release(&q);
	store__close(s);
}

static void test_retention_frees_space(void **state)
{
	struct store *s = open_store();
	struct store_stats before, after;
	struct strbuf text = STRBUF_INIT;
	struct store_query q;
	struct profile *p;
	char err[256];
	int64_t now = time(NULL);

	/* Many distinct stacks, 30 days old, then one recent upload. */
	for (int i = 0; i < 20000; i++)
		strbuf_addf(&text, "old;frame_%d;leaf_%d 1\n", i, i * 7);
	put_col(s, "old", now - 30 * 86400, text.buf);
	put_col(s, "new", now - 60, "new;fresh 4\n");
	assert_int_equal(store__stats(s, &before, err, sizeof(err)), 0);
	assert_true(store__retain(s, now - 86400, err, sizeof(err)) > 0);
	assert_int_equal(store__stats(s, &after, err, sizeof(err)), 0);
	assert_true(after.bytes < before.bytes / 2);
	assert_true(after.stacks < 10);
	assert_int_equal(after.samples, 4);

	query(&q, "svc", NULL);
	p = profile__new();
	assert_int_equal(store__select(s, &q, now - 120, now, p, err, sizeof(err)), 0);
	assert_int_equal(count_of(p, "new;fresh"), 4);
	profile__free(p);
	store_query_release(&q);
	/* New stacks after collection get fresh ids and read back. */
	put_col(s, "new", now - 50, "new;fresh;deeper 2\n");
	store__close(s);
	s = open_store();
	query(&q, "svc", NULL);
	p = profile__new();
	assert_int_equal(store__select(s, &q, now - 120, now, p, err, sizeof(err)), 0);
	assert_int_equal(count_of(p, "new;fresh;deeper"), 2);
	profile__free(p);
	store_query_release(&q);
	store__close(s);
	strbuf_release(&text);
}

static char *dump_fb(json_t *fb)
{
	char *text = json_dumps(fb, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(fb);
	return text;
}

/* The call tree of a select is the tree of the stacks select returns: the flamegraphs
 * built from either are the same, single and diff, and the tree is well formed. */
static void test_select_tree(void **state)
{
	struct store *s = open_store();
	struct strbuf text = STRBUF_INIT;
	int64_t now = time(NULL) / 10 * 10;
	uint64_t seed = 7, gen = store__generation(s);
	char err[256];

	for (int up = 0; up < 6; up++) {
		strbuf_reset(&text);
		for (int j = 0; j < 300; j++) {
			int depth = 1 + (int)((seed = seed * 6364136223846793005ULL + 1) >> 59) % 9;
			for (int d = 0; d < depth; d++)
				strbuf_addf(&text, "%sf%llu", d ? ";" : "",
					    (unsigned long long)((seed = seed * 6364136223846793005ULL + 1) >> 61));
			strbuf_addf(&text, " %d\n", 1 + j % 7);
		}
		put_col(s, up % 2 ? "a" : "b", now - 600 + up * 60, text.buf);
		assert_true(store__generation(s) > gen);
		gen = store__generation(s);
	}
	const char *sel[2][2] = { { "svc", NULL }, { "svc", "a" } };
	struct profile *p[2];
	struct store_tree t[2];
	for (int k = 0; k < 2; k++) {
		struct store_query q;
		uint64_t self = 0;
		query(&q, sel[k][0], sel[k][1]);
		p[k] = profile__new();
		store_tree_init(&t[k]);
		assert_int_equal(store__select(s, &q, now - 3600, now, p[k], err, sizeof(err)), 0);
		assert_int_equal(store__select_tree(s, &q, now - 3600, now, &t[k], err, sizeof(err)),
				 0);
		assert_true(t[k].n > 100);
		for (size_t i = 0; i < t[k].n; i++) {
			assert_true(i == 0 || t[k].parent[i] < i);
			assert_true(i == 0 || t[k].name[i] < t[k].nr_names);
			self += t[k].self[i];
		}
		assert_int_equal(self, profile__total(p[k]));
		char *a = dump_fb(flamebearer__build(p[k], NULL, 1 << 20, NULL, NULL));
		char *b = dump_fb(flamebearer__build_trees(&t[k], NULL, 1 << 20, NULL, NULL));
		assert_string_equal(a, b);
		free(a);
		free(b);
		store_query_release(&q);
	}
	char *a = dump_fb(flamebearer__build(p[0], p[1], 1 << 20, NULL, NULL));
	char *b = dump_fb(flamebearer__build_trees(&t[0], &t[1], 1 << 20, NULL, NULL));
	assert_string_equal(a, b);
	free(a);
	free(b);
	for (int k = 0; k < 2; k++) {
		profile__free(p[k]);
		store_tree_release(&t[k]);
	}
	assert_true(store__retain(s, 0, err, sizeof(err)) >= 0);
	assert_true(store__generation(s) > gen);
	strbuf_release(&text);
	store__close(s);
}

/* store__open picks the backend by scheme: unknown schemes fail, naming the known ones,
 * and leave nothing on disk; sqlite:PATH and plain directories open SQLite. */
static void test_open_by_scheme(void **state)
{
	static const char *const unknown[][2] = {
		{ "foo://x", "'foo'" },
		{ "bar+baz://h:9000/db", "'bar+baz'" },
		{ "FooBar://h/db", "'FooBar'" },
	};
	struct strbuf loc = STRBUF_INIT;
	char err[256], cwd[4096];
	struct stat st;
	struct store *s;

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		err[0] = 0;
		assert_null(store__open(unknown[i][0], NULL, err, sizeof(err)));
		assert_non_null(strstr(err, "unknown storage scheme"));
		assert_non_null(strstr(err, unknown[i][1]));
		assert_non_null(strstr(err, "(known: sqlite, clickhouse)"));
		assert_non_null(strstr(err, unknown[i][0]));
	}
	/* nothing was created for them: neither "foo:" nor "bar+baz:" */
	assert_int_equal(stat("foo:", &st), -1);
	assert_int_equal(stat("bar+baz:", &st), -1);
	/* an empty location is an error, not the current directory */
	assert_null(store__open("", NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "empty"));
	/* a name with a colon but no "//" is a directory, as before schemes existed */
	s = store__open("foo:bar", NULL, err, sizeof(err));
	if (!s)
		fail_msg("%s", err);
	store__close(s);
	assert_int_equal(stat("foo:bar/kiln.db", &st), 0);
	assert_int_equal(chdir(cwd), 0);

	/* sqlite:PATH is the database file PATH, in any case of the scheme */
	strbuf_addf(&loc, "SQLite:%s/own.db", dir);
	s = store__open(loc.buf, NULL, err, sizeof(err));
	if (!s)
		fail_msg("%s", err);
	assert_int_equal(store__resolution(s), 10);
	assert_int_equal(store__generation(s), 1);
	store__close(s);
	strbuf_reset(&loc);
	strbuf_addf(&loc, "%s/own.db", dir);
	assert_int_equal(stat(loc.buf, &st), 0);

	/* a plain directory is created with its parents and holds kiln.db */
	strbuf_reset(&loc);
	strbuf_addf(&loc, "%s/a/b", dir);
	s = store__open(loc.buf, NULL, err, sizeof(err));
	if (!s)
		fail_msg("%s", err);
	assert_int_equal(store__resolution(s), 10);
	store__close(s);
	strbuf_addstr(&loc, "/kiln.db");
	assert_int_equal(stat(loc.buf, &st), 0);
	strbuf_release(&loc);
}

static uint64_t select_total(struct store *s, const char *service, const char *type)
{
	struct store_query q;
	struct profile *p = profile__new();
	char err[256];
	uint64_t total;

	query(&q, service, NULL);
	q.profile_type = type ? strdup(type) : NULL;
	if (store__select(s, &q, 0, time(NULL) + 3600, p, err, sizeof(err)))
		fail_msg("%s", err);
	total = profile__total(p);
	store_query_release(&q);
	profile__free(p);
	return total;
}

/* One service holds series of several profile types side by side: each put stores the
 * value of its sample type, a query names its type or gets the service's first one. */
static void test_profile_types(void **state)
{
	static const struct profile_type t[] = { { "samples", "count" }, { "cpu", "nanoseconds" } };
	static const char ns[] = "process_cpu:cpu:nanoseconds:cpu:nanoseconds";
	struct store *s = open_store();
	struct profile *p = profile__new();
	uint32_t f = profile__intern_str(p, "main");
	uint64_t v[] = { 3, 30000000 };
	int64_t now = time(NULL) - 120;
	struct labels l;
	char err[256];

	labels_init(&l);
	labels__set(&l, "pod", "a");
	assert_int_equal(profile__set_types(p, t, 2), 0);
	profile__add_values(p, &f, 1, 0, v);
	struct store_put put = { .service = "app.cpu", .from = now, .until = now + 10,
				 .profile = p, .series = &l, .nr_series = 1,
				 .profile_type = PTYPE_CPU_SAMPLES };
	assert_int_equal(store__put(s, &put, err, sizeof(err)), 0);
	put.profile_type = ns, put.type_index = 1;
	assert_int_equal(store__put(s, &put, err, sizeof(err)), 0);
	put.type_index = 2;
	assert_int_equal(store__put(s, &put, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "failed to store profile: no such sample type");
	assert_int_equal(select_total(s, "app.cpu", NULL), 3);
	assert_int_equal(select_total(s, "app.cpu", PTYPE_CPU_SAMPLES), 3);
	assert_int_equal(select_total(s, "app.cpu", ns), 30000000);
	assert_int_equal(select_total(s, "app.cpu", "wall:wall:nanoseconds:wall:nanoseconds"), 0);
	/* the types survive a reopen */
	store__close(s);
	s = open_store();
	assert_int_equal(select_total(s, "app.cpu", ns), 30000000);
	assert_int_equal(select_total(s, "app.cpu", NULL), 3);
	store__close(s);
	labels_release(&l);
	profile__free(p);
}

/* A database of schema version 0 (no profile types) is migrated when opened: its series
 * read as the type their service's name says, and new ones are stored beside them. */
static void test_migrate_v0(void **state)
{
	static const char v0[] =
		"CREATE TABLE frames(id INTEGER PRIMARY KEY, name TEXT NOT NULL);"
		"CREATE TABLE stacks(id INTEGER PRIMARY KEY, parent INTEGER NOT NULL,"
		" frame INTEGER NOT NULL);"
		"CREATE TABLE services(id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL,"
		" units TEXT, spy_name TEXT, sample_rate INTEGER, last_seen INTEGER);"
		"CREATE TABLE series(id INTEGER PRIMARY KEY, service INTEGER NOT NULL,"
		" labels TEXT NOT NULL, first_seen INTEGER, last_seen INTEGER, UNIQUE(service, labels));"
		"CREATE TABLE samples(level INTEGER NOT NULL, service INTEGER NOT NULL,"
		" bucket INTEGER NOT NULL, series INTEGER NOT NULL, total INTEGER NOT NULL,"
		" nrows INTEGER NOT NULL, data BLOB NOT NULL,"
		" PRIMARY KEY(level, service, bucket, series)) WITHOUT ROWID;"
		"CREATE TABLE rollups(level INTEGER PRIMARY KEY, done_until INTEGER NOT NULL);"
		"INSERT INTO frames VALUES(1, 'main'), (2, 'malloc');"
		"INSERT INTO stacks VALUES(1, 0, 1), (2, 1, 2);"
		"INSERT INTO services VALUES(1, 'app.cpu', 'samples', 'kiln', 100, 0),"
		" (2, 'app.alloc_space', 'bytes', 'gospy', 100, 0);"
		"INSERT INTO series VALUES(1, 1, 'host\x1fh\x1e', 0, 4000000000),"
		" (2, 2, 'host\x1fh\x1e', 0, 4000000000);";
	struct sample_row cpu = { 1, 7 }, mem = { 2, 4096 };
	struct strbuf path = STRBUF_INIT, a = STRBUF_INIT, b = STRBUF_INIT, sql = STRBUF_INIT;
	int64_t bucket = (time(NULL) - 600) / 10 * 10;
	struct store *s;

	rows__encode(&a, &cpu, 1);
	rows__encode(&b, &mem, 1);
	strbuf_addf(&sql, "%sINSERT INTO samples VALUES(0, 1, %lld, 1, 7, 1, x'", v0,
		    (long long)bucket);
	for (size_t i = 0; i < a.len; i++)
		strbuf_addf(&sql, "%02x", (unsigned char)a.buf[i]);
	strbuf_addf(&sql, "'), (0, 2, %lld, 2, 4096, 1, x'", (long long)bucket);
	for (size_t i = 0; i < b.len; i++)
		strbuf_addf(&sql, "%02x", (unsigned char)b.buf[i]);
	strbuf_addf(&sql, "'); INSERT INTO rollups VALUES(1, %lld), (2, %lld);",
		    (long long)(bucket / 3600 * 3600), (long long)(bucket / 86400 * 86400));
	strbuf_addf(&path, "%s/kiln.db", dir);
	assert_int_equal(sqlite_exec_file(path.buf, sql.buf), 0);

	s = open_store();
	assert_int_equal(select_total(s, "app.cpu", NULL), 7);
	assert_int_equal(select_total(s, "app.cpu", PTYPE_CPU_SAMPLES), 7);
	assert_int_equal(select_total(s, "app.alloc_space", NULL), 4096);
	assert_int_equal(select_total(s, "app.alloc_space", "memory:alloc_space:bytes:space:bytes"),
			 4096);
	assert_int_equal(select_total(s, "app.alloc_space", PTYPE_CPU_SAMPLES), 0);
	/* the same label set, now with a type: a second series of the same service */
	put_col(s, "h", time(NULL) - 300, "main;malloc 5\n");
	store__close(s);
	s = open_store();
	assert_int_equal(select_total(s, "svc", NULL), 5);
	assert_int_equal(select_total(s, "app.cpu", NULL), 7);
	store__close(s);
	assert_int_equal(sqlite_exec_file(path.buf, "SELECT 1;"), 0);
	strbuf_release(&path), strbuf_release(&a), strbuf_release(&b), strbuf_release(&sql);
}

/* A read past its deadline stops with -ETIMEDOUT and a message, and the store still
 * answers the next read in full; a write is never stopped. The read decodes 300 raw rows
 * (one hour not rolled up yet) of 5,000 stacks each against a 1 ms deadline: its time
 * without one is printed, tens of times longer under ASan. */
static void test_query_deadline(void **state)
{
	const int64_t hour = 1699999200;	/* a multiple of 3600 */
	struct store_options so = { .query_timeout_ms = 1 };
	struct strbuf text = STRBUF_INIT;
	struct timespec t0, t1;
	struct store_query q;
	struct profile *p;
	struct store *s;
	char err[256];
	int ret;

	for (int i = 0; i < 5000; i++)
		strbuf_addf(&text, "main;f%d;g%d 3\n", i, i);
	s = store__open(dir, &so, err, sizeof(err));
	assert_non_null(s);
	for (int i = 0; i < 300; i++)
		put_col(s, i % 2 ? "a" : "b", hour + 10 * i, text.buf);
	query(&q, "svc", NULL);
	p = profile__new();
	ret = store__select(s, &q, hour, hour + 3000, p, err, sizeof(err));
	assert_int_equal(ret, -ETIMEDOUT);
	assert_non_null(strstr(err, "deadline of 1 ms"));
	profile__free(p);
	store__close(s);
	s = open_store();	/* no deadline: the whole answer */
	p = profile__new();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(store__select(s, &q, hour, hour + 3000, p, err, sizeof(err)), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "the read without a deadline took %.1f ms\n",
		(double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	assert_int_equal(count_of(p, "main;f7;g7"), 3 * 300);
	profile__free(p);
	store_query_release(&q);
	store__close(s);
	strbuf_release(&text);
}

/* Every name=value pair of the matching series in one pass, sorted, grouped by name;
 * and a series key of many labels read back whole (the key is parsed by appending). */
static void test_label_pairs(void **state)
{
	static const char *const want[] = { "host\x1f" "a", "host\x1f" "b", "k\x1f" "v" };
	struct store *s = open_store();
	struct store_query q;
	struct labels l;
	char err[256], **v = NULL;
	size_t n = 0;

	put_col(s, "a", 1700000000, "main;x 1\n");
	put_col(s, "b", 1700000000, "main;x 1\n");
	put_col(s, "a", 1700000010, "main;x 1\n");	/* the same series again */
	labels_init(&l);
	labels__set(&l, "host", "a");
	labels__set(&l, "k", "v");
	labels__sort(&l);
	struct profile *p = profile__new();
	assert_int_equal(col__parse(p, "main;y 2\n", 9, err, sizeof(err)), 0);
	struct store_put put = { .service = "svc", .from = 1700000000, .until = 1700000060,
				 .profile = p, .series = &l, .nr_series = 1 };
	assert_int_equal(store__put(s, &put, err, sizeof(err)), 0);
	profile__free(p);
	labels_release(&l);
	query(&q, "svc", NULL);
	assert_int_equal(store__label_pairs(s, &q, 0, 1800000000, &v, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(v[i], want[i]);
	store__free_strings(v, n);
	store_query_release(&q);
	store__close(s);
	/* reopened: the series keys are parsed again */
	s = open_store();
	query(&q, "svc", "a");
	assert_int_equal(store__label_pairs(s, &q, 0, 1800000000, &v, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);	/* host=a (with and without k) */
	assert_string_equal(v[0], "host\x1f" "a");
	assert_string_equal(v[1], "k\x1f" "v");
	store__free_strings(v, n);
	store_query_release(&q);
	store__close(s);
}

static int setup(void **state)
{
	memcpy(dir, "/tmp/kiln-test-store.XXXXXX", sizeof(dir));
	if (!mkdtemp(dir))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	rm_dir();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_codec),
		cmocka_unit_test_setup_teardown(test_put_select_rollups, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retention_frees_space, setup, teardown),
		cmocka_unit_test_setup_teardown(test_select_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_by_scheme, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_v0, setup, teardown),
		cmocka_unit_test_setup_teardown(test_query_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_label_pairs, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
