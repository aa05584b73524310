/* store/clickhouse's group commit against a fake ClickHouse (an HTTP server in this test
 * that answers the schema's queries and records every INSERT): puts that arrive while a
 * batch is on the network share the next batch's INSERTs, each put returns only after
 * its batch was acknowledged, and a batch ClickHouse refuses fails every put of it and
 * leaves nothing in the caches (the same put sends its stacks again); the put that would
 * send a batch waits for the puts still hashing their rows, and a batch full of rows
 * takes no more puts, nor an asynchronous one (-EBUSY); and the schema's
 * column codecs follow the server's version. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "profile/profile.h"
#include "store/clickhouse_int.h"

/* The fake server's state, guarded by mu. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	int listener;
	uint16_t port;
	bool hold;		/* hold the next samples INSERT until released */
	bool hold_read;		/* hold the next read of the series table likewise */
	bool held;		/* one is held now */
	bool refuse;		/* answer samples INSERTs with an error */
	int samples, stacks;	/* INSERTs received */
	int last_rows;		/* sample rows of the last samples INSERT */
	const char *version;	/* what SELECT version() answers */
	char schema;		/* the schema version it says the database has */
	struct strbuf ddl;	/* every statement but INSERTs, one a line */
} fake = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, -1, 0, false, false, false,
	   false, 0, 0, 0, "18.16.1", CH_SCHEMA_VERSION, STRBUF_INIT };

static void inflate_body(const char *in, size_t len, struct strbuf *out)
{
	z_stream z;
	char buf[65536];
	int rc;

	memset(&z, 0, sizeof(z));
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	do {
		z.next_out = (Bytef *)buf;
		z.avail_out = sizeof(buf);
		rc = inflate(&z, Z_NO_FLUSH);
		strbuf_add(out, buf, sizeof(buf) - z.avail_out);
	} while (rc == Z_OK);
	inflateEnd(&z);
}

/* Occurrences of the RowBinary string "app.cpu" (a sample row's service) in b. */
static int count_rows(const struct strbuf *b)
{
	int n = 0;

	for (size_t i = 0; i + 8 <= b->len; i++)
		n += !memcmp(b->buf + i, "\x07" "app.cpu", 8);
	return n;
}

static void reply(int fd, int status, const char *body, size_t len)
{
	char head[128];
	int n = snprintf(head, sizeof(head), "HTTP/1.1 %d X\r\nContent-Length: %zu\r\n\r\n",
			 status, len);
	assert_int_equal(write(fd, head, (size_t)n), n);
	if (len)
		assert_int_equal(write(fd, body, len), (ssize_t)len);
}

/* One connection: requests one after another (curl keeps it alive). */
static void *serve_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	struct strbuf in = STRBUF_INIT, sql = STRBUF_INIT;
	char buf[65536];
	ssize_t n;

	for (;;) {
		char *end;
		while (!(end = strstr(in.buf, "\r\n\r\n"))) {
			if ((n = read(fd, buf, sizeof(buf))) <= 0)
				goto out;
			strbuf_add(&in, buf, (size_t)n);
		}
		size_t head = (size_t)(end + 4 - in.buf), len = 0;
		const char *cl = strcasestr(in.buf, "Content-Length:");
		if (cl && cl < end)
			len = strtoul(cl + 15, NULL, 10);
		while (in.len < head + len) {
			if ((n = read(fd, buf, sizeof(buf))) <= 0)
				goto out;
			strbuf_add(&in, buf, (size_t)n);
		}
		strbuf_reset(&sql);
		inflate_body(in.buf + head, len, &sql);
		bool samples = strstr(in.buf, "INSERT%20INTO%20samples") && strstr(in.buf, "INSERT%20INTO%20samples") < end;
		bool stacks = strstr(in.buf, "INSERT%20INTO%20stacks") && strstr(in.buf, "INSERT%20INTO%20stacks") < end;
		pthread_mutex_lock(&fake.mu);
		const char *version = fake.version;
		char schema = fake.schema;
		if (!strstr(in.buf, "query=INSERT") || strstr(in.buf, "query=INSERT") > end)
			strbuf_addf(&fake.ddl, "%s\n", sql.buf);
		fake.stacks += stacks;
		bool refuse = samples && fake.refuse;
		bool read = !strstr(in.buf, "query=INSERT") && strstr(sql.buf, " FROM series");
		if (samples || read) {
			if (samples) {
				fake.samples++;
				fake.last_rows = count_rows(&sql);
			}
			if (samples ? fake.hold : read && fake.hold_read) {
				fake.hold = fake.hold && !samples;
				fake.hold_read = fake.hold_read && !read;
				fake.held = true;
				pthread_cond_broadcast(&fake.cond);
				while (fake.held)
					pthread_cond_wait(&fake.cond, &fake.mu);
			}
		}
		pthread_mutex_unlock(&fake.mu);
		if (refuse) {
			static const char msg[] = "Code: 241, e.displayText() = DB::Exception: out of memory";
			reply(fd, 500, msg, sizeof(msg) - 1);
		} else if (!strncmp(sql.buf, "SELECT version()", 16)) {
			char v[32];
			int vn = snprintf(v, sizeof(v), "%s\n", version);
			reply(fd, 200, v, (size_t)vn);
		} else if (strstr(sql.buf, "max(version)) FROM kiln_schema")) {
			char v[8] = { schema };
			reply(fd, 200, v, sizeof(v));
		} else {
			reply(fd, 200, "", 0);
		}
		size_t used = head + len;
		memmove(in.buf, in.buf + used, in.len - used);
		strbuf_setlen(&in, in.len - used);
	}
out:
	close(fd);
	strbuf_release(&in);
	strbuf_release(&sql);
	return NULL;
}

static void *accept_loop(void *arg)
{
	int fd;

	(void)arg;
	while ((fd = accept(fake.listener, NULL, NULL)) >= 0) {
		pthread_t t;
		pthread_create(&t, NULL, serve_conn, (void *)(intptr_t)fd);
		pthread_detach(t);
	}
	return NULL;
}

static void fake_start(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	pthread_t t;

	fake.listener = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fake.listener >= 0);
	assert_int_equal(bind(fake.listener, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fake.listener, 64), 0);
	assert_int_equal(getsockname(fake.listener, (struct sockaddr *)&a, &len), 0);
	fake.port = ntohs(a.sin_port);
	pthread_create(&t, NULL, accept_loop, NULL);
	pthread_detach(t);
}

/* Waits (at most 30 s: a bound, not a measurement) until cond() holds, checking it under
 * lock every millisecond. */
static bool wait_for(bool (*cond)(void *), void *arg, pthread_mutex_t *lock)
{
	for (int i = 0; i < 30000; i++) {
		pthread_mutex_lock(lock);
		bool ok = cond(arg);
		pthread_mutex_unlock(lock);
		if (ok)
			return true;
		usleep(1000);
	}
	return false;
}

static bool is_held(void *arg)
{
	(void)arg;
	return fake.held;
}

struct joiners {
	struct ch_store *s;
	size_t want;
};

static bool joined(void *arg)
{
	struct joiners *j = arg;
	return j->s->open && j->s->open->puts == j->want;
}

static void release(void)
{
	pthread_mutex_lock(&fake.mu);
	fake.held = false;
	pthread_cond_broadcast(&fake.cond);
	pthread_mutex_unlock(&fake.mu);
}

struct putter {
	struct store *s;
	int id, ret;
	char err[256];
	pthread_t t;
};

/* What an asynchronous put reported (guarded by fake.mu): done once, with ret. */
struct acked {
	int calls, ret;
};

static void on_acked(void *arg, int ret, const char *err)
{
	struct acked *a = arg;

	(void)err;
	pthread_mutex_lock(&fake.mu);
	a->calls++;
	a->ret = ret;
	pthread_mutex_unlock(&fake.mu);
}

/* One put of two stacks: one of its own ("main;p<id>") and one common to all; with
 * acked, asynchronous (p->ret: whether the store took it). */
static void put_of(struct putter *p, struct acked *acked)
{
	struct profile *prof = profile__new();
	char own[32];
	struct labels l;

	snprintf(own, sizeof(own), "p%d", p->id);
	const char *a[] = { "main", own }, *b[] = { "main", "common" };
	profile__add_names(prof, a, 2, 1);
	profile__add_names(prof, b, 2, 1);
	labels_init(&l);
	labels__set(&l, "host", own);
	struct store_put put = { .profile_type = "process_cpu:samples:count::", .service = "app.cpu",
				 .from = 1000000, .until = 1000010, .profile = prof, .series = &l,
				 .nr_series = 1 };
	p->ret = acked ? store__put_async(p->s, &put, on_acked, acked, p->err, sizeof(p->err))
		       : store__put(p->s, &put, p->err, sizeof(p->err));
	labels_release(&l);
	profile__free(prof);
}

static void *put_one(void *arg)
{
	put_of(arg, NULL);
	return NULL;
}

/* A put held on the network, n more that arrive meanwhile (all joined to the open batch
 * before it is released), then everyone's results. */
static void held_round(struct store *st, struct putter *first, struct putter *more, size_t n)
{
	struct ch_store *s = (struct ch_store *)st;
	struct joiners j = { s, n };

	pthread_mutex_lock(&fake.mu);
	fake.hold = true;
	pthread_mutex_unlock(&fake.mu);
	pthread_create(&first->t, NULL, put_one, first);
	assert_true(wait_for(is_held, NULL, &fake.mu));
	for (size_t i = 0; i < n; i++)
		pthread_create(&more[i].t, NULL, put_one, &more[i]);
	assert_true(wait_for(joined, &j, &s->mu));
	release();
	pthread_join(first->t, NULL);
	for (size_t i = 0; i < n; i++)
		pthread_join(more[i].t, NULL);
}

static void test_group_commit(void **state)
{
	struct putter first = { 0 }, more[4] = { 0 }, again = { 0 };
	char loc[64], err[256];

	(void)state;
	fake_start();
	snprintf(loc, sizeof(loc), "clickhouse://127.0.0.1:%u/kiln", fake.port);
	struct store *s = store__open(loc, NULL, err, sizeof(err));
	assert_non_null(s);
	assert_true(store__concurrent_puts(s));
	struct ch_store *cs = (struct ch_store *)s;

	/* four puts behind a held one: one more samples INSERT, of all their rows */
	first = (struct putter){ .s = s, .id = 0 };
	for (int i = 0; i < 4; i++)
		more[i] = (struct putter){ .s = s, .id = 1 + i };
	held_round(s, &first, more, 4);
	assert_int_equal(first.ret, 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(more[i].ret, 0);
	assert_int_equal(fake.samples, 2);
	assert_int_equal(fake.last_rows, 8);
	assert_int_equal(fake.stacks, 2);
	assert_int_equal(hashmap__count(cs->stacks), 6);	/* common + p0..p4 */
	assert_null(cs->open);

	/* a refused batch fails every put of it, and caches none of its stacks */
	pthread_mutex_lock(&fake.mu);
	fake.refuse = true;
	pthread_mutex_unlock(&fake.mu);
	first = (struct putter){ .s = s, .id = 10 };
	for (int i = 0; i < 4; i++)
		more[i] = (struct putter){ .s = s, .id = 11 + i };
	held_round(s, &first, more, 4);
	assert_int_equal(first.ret, -EIO);
	assert_non_null(strstr(first.err, "out of memory"));
	for (int i = 0; i < 4; i++) {
		assert_int_equal(more[i].ret, -EIO);
		assert_non_null(strstr(more[i].err, "failed to insert samples"));
	}
	assert_int_equal(fake.samples, 4);
	assert_int_equal(fake.stacks, 4);
	assert_int_equal(hashmap__count(cs->stacks), 6);

	/* the same put again: its stack is sent again, and now stays */
	pthread_mutex_lock(&fake.mu);
	fake.refuse = false;
	pthread_mutex_unlock(&fake.mu);
	again = (struct putter){ .s = s, .id = 10 };
	put_one(&again);
	assert_int_equal(again.ret, 0);
	assert_int_equal(fake.stacks, 5);
	assert_int_equal(fake.samples, 5);
	assert_int_equal(fake.last_rows, 2);
	assert_int_equal(hashmap__count(cs->stacks), 7);
	store__close(s);
}

/* A store on the fake server (started on first use), database kiln. */
static struct store *open_fake(void)
{
	char loc[64], err[256];

	if (fake.listener < 0)
		fake_start();
	snprintf(loc, sizeof(loc), "clickhouse://127.0.0.1:%u/kiln", fake.port);
	struct store *st = store__open(loc, NULL, err, sizeof(err));
	assert_non_null(st);
	return st;
}

static bool coming_none(void *arg)
{
	return ((struct ch_store *)arg)->coming == 0;
}

static bool coming_one_joined_one(void *arg)
{
	struct ch_store *s = arg;
	return s->coming == 1 && s->open && s->open->puts == 1;
}

/* The put that finds the network idle waits for the puts still hashing their rows (here
 * one the test stands in for, then a real one), and sends one batch with them. */
static void test_fill(void **state)
{
	struct putter a = { 0 }, b = { 0 };

	(void)state;
	struct store *st = open_fake();
	struct ch_store *s = (struct ch_store *)st;
	s->batch_wait_ms = 600000;	/* a bound, not a measurement: only the puts end it */
	pthread_mutex_lock(&fake.mu);
	int before = fake.samples;
	pthread_mutex_unlock(&fake.mu);

	pthread_mutex_lock(&s->mu);
	ch__batch_coming(s);	/* a put on its way */
	pthread_mutex_unlock(&s->mu);
	a = (struct putter){ .s = st, .id = 20 };
	pthread_create(&a.t, NULL, put_one, &a);
	assert_true(wait_for(coming_one_joined_one, s, &s->mu));
	b = (struct putter){ .s = st, .id = 21 };
	pthread_create(&b.t, NULL, put_one, &b);
	struct joiners j = { s, 2 };
	assert_true(wait_for(joined, &j, &s->mu));
	pthread_mutex_lock(&fake.mu);
	assert_int_equal(fake.samples, before);	/* nothing sent while a put is coming */
	pthread_mutex_unlock(&fake.mu);
	pthread_mutex_lock(&s->mu);
	ch__batch_left(s);	/* it gave up */
	pthread_mutex_unlock(&s->mu);
	pthread_join(a.t, NULL);
	pthread_join(b.t, NULL);
	assert_int_equal(a.ret, 0);
	assert_int_equal(b.ret, 0);
	assert_int_equal(fake.samples, before + 1);
	assert_int_equal(fake.last_rows, 4);
	assert_true(coming_none(s));
	store__close(st);
}

/* A batch that holds batch_rows sample rows takes no more puts: behind a held batch, a
 * put fills the next one, and the put after it (coming, or waiting for room) goes in a
 * third, although the second's sender would otherwise wait for it. */
static void test_full(void **state)
{
	struct putter first = { 0 }, second = { 0 }, third = { 0 };

	(void)state;
	struct store *st = open_fake();
	struct ch_store *s = (struct ch_store *)st;
	s->batch_rows = 2;	/* one put's rows */
	s->batch_wait_ms = 600000;
	pthread_mutex_lock(&fake.mu);
	int before = fake.samples;
	fake.hold = true;
	pthread_mutex_unlock(&fake.mu);

	first = (struct putter){ .s = st, .id = 30 };
	pthread_create(&first.t, NULL, put_one, &first);
	assert_true(wait_for(is_held, NULL, &fake.mu));
	second = (struct putter){ .s = st, .id = 31 };
	pthread_create(&second.t, NULL, put_one, &second);
	struct joiners j = { s, 1 };
	assert_true(wait_for(joined, &j, &s->mu));
	third = (struct putter){ .s = st, .id = 32 };
	pthread_create(&third.t, NULL, put_one, &third);
	assert_true(wait_for(coming_one_joined_one, s, &s->mu));
	release();
	pthread_join(first.t, NULL);
	pthread_join(second.t, NULL);
	pthread_join(third.t, NULL);
	assert_int_equal(first.ret, 0);
	assert_int_equal(second.ret, 0);
	assert_int_equal(third.ret, 0);
	assert_int_equal(fake.samples, before + 3);
	assert_int_equal(fake.last_rows, 2);
	store__close(st);
}

static bool both_acked(void *arg)
{
	struct acked *a = arg;
	return a[0].calls && a[1].calls;
}

/* Asynchronous puts hold no thread of the caller's: behind a held batch, one fills the
 * next batch (batch_rows: one put's rows) and returns at once, the one after it is
 * refused with -EBUSY and a message (the caller answers 503), and the two taken are
 * reported done, once each, when ClickHouse acknowledged them. */
static void test_async_full(void **state)
{
	struct putter p[3] = { 0 };
	struct acked acked[3] = { 0 };

	(void)state;
	struct store *st = open_fake();
	assert_true(store__async_puts(st));
	struct ch_store *s = (struct ch_store *)st;
	s->batch_rows = 2;
	s->batch_wait_ms = 0;
	pthread_mutex_lock(&fake.mu);
	int before = fake.samples;
	fake.hold = true;
	pthread_mutex_unlock(&fake.mu);

	for (int i = 0; i < 3; i++)
		p[i] = (struct putter){ .s = st, .id = 40 + i };
	put_of(&p[0], &acked[0]);
	assert_int_equal(p[0].ret, 0);
	assert_true(wait_for(is_held, NULL, &fake.mu));
	put_of(&p[1], &acked[1]);
	assert_int_equal(p[1].ret, 0);
	put_of(&p[2], &acked[2]);
	assert_int_equal(p[2].ret, -EBUSY);
	assert_non_null(strstr(p[2].err, "already wait for ClickHouse"));
	pthread_mutex_lock(&fake.mu);
	assert_int_equal(acked[0].calls + acked[1].calls, 0);	/* nothing acknowledged yet */
	pthread_mutex_unlock(&fake.mu);
	release();
	assert_true(wait_for(both_acked, acked, &fake.mu));
	store__close(st);
	assert_int_equal(acked[0].calls, 1);
	assert_int_equal(acked[1].calls, 1);
	assert_int_equal(acked[2].calls, 0);
	assert_int_equal(acked[0].ret, 0);
	assert_int_equal(acked[1].ret, 0);
	assert_int_equal(fake.samples, before + 2);
}

struct reader {
	struct store *s;
	int ret;
	pthread_t t;
};

static void *select_one(void *arg)
{
	struct reader *r = arg;
	struct store_query q = { .service = "app.cpu" };
	struct profile *p = profile__new();
	char err[256];

	r->ret = store__select(r->s, &q, 0, 2000000, p, err, sizeof(err));
	profile__free(p);
	return NULL;
}

/* Reads run beside each other (each on a curl handle of its own): while one waits for
 * ClickHouse's answer, another read and a put go through. */
static void test_concurrent_reads(void **state)
{
	struct reader held = { 0 };
	struct putter put = { 0 };
	char err[256];
	char **names;
	size_t n;

	(void)state;
	struct store *st = open_fake();
	assert_true(store__concurrent_reads(st));
	pthread_mutex_lock(&fake.mu);
	fake.hold_read = true;
	pthread_mutex_unlock(&fake.mu);
	held = (struct reader){ .s = st };
	pthread_create(&held.t, NULL, select_one, &held);
	assert_true(wait_for(is_held, NULL, &fake.mu));
	struct store_query q = { .service = "app.cpu" };
	assert_int_equal(store__label_names(st, &q, 0, 2000000, &names, &n, err, sizeof(err)), 0);
	store__free_strings(names, n);
	put = (struct putter){ .s = st, .id = 50 };
	put_one(&put);
	assert_int_equal(put.ret, 0);
	pthread_mutex_lock(&fake.mu);
	assert_true(fake.held);	/* the first read still waits */
	pthread_mutex_unlock(&fake.mu);
	release();
	pthread_join(held.t, NULL);
	assert_int_equal(held.ret, 0);
	store__close(st);
}

/* The schema a database gets: column codecs from ClickHouse 20 on (18.16 has none, and
 * refuses the syntax), the same columns either way. KILN_DUMP_DDL=FILE writes the
 * statements for 26.9 there (to try them on a real server). */
static void test_codecs(void **state)
{
	static const char *const versions[] = { "18.16.1", "26.9.2.1" };
	char loc[64], err[256];

	(void)state;
	for (int i = 0; i < 2; i++) {
		pthread_mutex_lock(&fake.mu);
		fake.version = versions[i];
		fake.schema = 0;	/* a new database */
		strbuf_reset(&fake.ddl);
		pthread_mutex_unlock(&fake.mu);
		snprintf(loc, sizeof(loc), "clickhouse://127.0.0.1:%u/k%d", fake.port, i);
		struct store *s = store__open(loc, NULL, err, sizeof(err));
		assert_non_null(s);
		store__close(s);
		pthread_mutex_lock(&fake.mu);
		const char *ddl = fake.ddl.buf;
		assert_non_null(strstr(ddl, "CREATE TABLE IF NOT EXISTS samples (service String, series"
					    " UInt64"));
		assert_non_null(strstr(ddl, "CREATE TABLE IF NOT EXISTS fleet_1h (service String,"
					    " ptype String, t UInt32"));
		if (i == 0) {
			assert_null(strstr(ddl, "CODEC"));
		} else {
			assert_non_null(strstr(ddl, "stack UInt64 CODEC(ZSTD(3)), count UInt64 CODEC(T64,"
						    " ZSTD(1)), ptype String) ENGINE = MergeTree()"));
			assert_non_null(strstr(ddl, "frames Array(UInt64) CODEC(ZSTD(3))"));
			const char *dump = getenv("KILN_DUMP_DDL");
			FILE *f = dump ? fopen(dump, "w") : NULL;
			if (f) {
				fputs(ddl, f);
				fclose(f);
			}
		}
		pthread_mutex_unlock(&fake.mu);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_group_commit),
		cmocka_unit_test(test_fill),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_async_full),
		cmocka_unit_test(test_concurrent_reads),
		cmocka_unit_test(test_codecs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
