/* store/sqlite_read.c: reads run off the writer. A read's snapshot is one committed state
 * (whole uploads, every put that returned before it), a put goes through while a read
 * transaction is open, and reads in several threads beside a writer (growing the
 * dictionaries, a retain reloading them) always see whole uploads and never lose one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/sqlite_int.h"
#include "util/strbuf.h"

#include "scratch.h"

static char dir[] = "/tmp/kiln-test-sqlread.XXXXXX";

/* Each upload holds this many samples in all: a read seeing part of one sees a sum that
 * is not a multiple of it. */
#define PER_UPLOAD 7

static struct store *open_store(void)
{
	char err[256];
	struct store *s = store__open(dir, NULL, err, sizeof(err));
	if (!s)
		fail_msg("%s", err);
	return s;
}

/* Puts upload i at time t: two stacks (3 + 4 samples) with frames and a series of their
 * own, so that every put grows the dictionaries the reads share. */
static void put_one(struct store *s, const char *service, int i, int64_t t)
{
	struct profile *p = profile__new();
	struct strbuf f = STRBUF_INIT, g = STRBUF_INIT, v = STRBUF_INIT;
	struct labels l;
	char err[256];

	strbuf_addf(&f, "f%d", i);
	strbuf_addf(&g, "g%d", i % 13);
	strbuf_addf(&v, "%d", i % 29);
	const char *a[] = { "main", f.buf }, *b[] = { "main", f.buf, g.buf };
	profile__add_names(p, a, 2, 3);
	profile__add_names(p, b, 3, 4);
	labels_init(&l);
	labels__set(&l, "host", v.buf);
	labels__sort(&l);
	struct store_put put = { .service = service, .from = t, .until = t + 10, .profile = p,
				 .series = &l, .nr_series = 1 };
	if (store__put(s, &put, err, sizeof(err)))
		fail_msg("%s", err);
	labels_release(&l);
	profile__free(p);
	strbuf_release(&f);
	strbuf_release(&g);
	strbuf_release(&v);
}

static uint64_t select_total(struct store *s, int64_t from, int64_t until)
{
	struct store_query q;
	struct profile *p = profile__new();
	char err[256];
	uint64_t total;

	store_query_init(&q);
	q.service = xstrdup("svc");
	if (store__select(s, &q, from, until, p, err, sizeof(err)))
		fail_msg("%s", err);
	total = profile__total(p);
	profile__free(p);
	store_query_release(&q);
	return total;
}

static uint64_t tree_total(struct store *s, int64_t from, int64_t until)
{
	struct store_query q;
	struct store_tree t;
	char err[256];
	uint64_t total = 0;

	store_query_init(&q);
	store_tree_init(&t);
	q.service = xstrdup("svc");
	if (store__select_tree(s, &q, from, until, &t, err, sizeof(err)))
		fail_msg("%s", err);
	for (size_t i = 0; i < t.n; i++) {
		assert_true(i == 0 || t.parent[i] < i);
		total += t.self[i];
	}
	store_tree_release(&t);
	store_query_release(&q);
	return total;
}

static uint64_t raw_total(sqlite3 *db)
{
	sqlite3_stmt *st;
	uint64_t n = 0;

	assert_int_equal(sqlite3_prepare_v2(db, "SELECT coalesce(sum(total), 0) FROM samples"
					    " WHERE level = 0", -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/* A put returns while a read transaction is open, and the read keeps its snapshot. */
static void test_snapshot(void **state)
{
	struct store *s = open_store();
	struct sqlite_store *sq = (struct sqlite_store *)s;
	int64_t t = time(NULL) / 10 * 10 - 600;
	char err[256];

	assert_true(store__concurrent_reads(s));
	put_one(s, "svc", 0, t);
	struct sq_reader *rd = sq__read_begin(sq, err, sizeof(err));
	if (!rd)
		fail_msg("%s", err);
	sq__mirror_unlock(sq);
	put_one(s, "svc", 1, t + 10);	/* the read transaction is still open */
	put_one(s, "svc", 2, t + 20);
	assert_int_equal(raw_total(rd->db), PER_UPLOAD);
	assert_int_equal(sq__readers_busy(sq), 1);
	sq__read_end(rd);
	assert_int_equal(sq__readers_busy(sq), 0);
	/* a new read (from the pool) sees every put that returned */
	assert_int_equal(select_total(s, t, t + 3600), 3 * PER_UPLOAD);
	assert_int_equal(tree_total(s, t, t + 3600), 3 * PER_UPLOAD);
	store__close(s);
}

#define UPLOADS 200
#define READERS 3

struct shared {
	struct store *s;
	int64_t t;
	int done;		/* atomic: the writer has finished */
	int failed_puts;
	int reads[READERS];
	int torn[READERS];	/* reads that saw part of an upload */
	int backwards[READERS];	/* reads that saw less than an earlier one */
	int errors[READERS];
};

/* put_one, select_total, tree_total for other threads: cmocka may not fail there. */
static int put_quiet(struct store *s, int i, int64_t t)
{
	struct profile *p = profile__new();
	struct strbuf f = STRBUF_INIT, g = STRBUF_INIT, v = STRBUF_INIT;
	struct labels l;
	char err[256];
	int ret;

	strbuf_addf(&f, "f%d", i);
	strbuf_addf(&g, "g%d", i % 13);
	strbuf_addf(&v, "%d", i % 29);
	const char *a[] = { "main", f.buf }, *b[] = { "main", f.buf, g.buf };
	profile__add_names(p, a, 2, 3);
	profile__add_names(p, b, 3, 4);
	labels_init(&l);
	labels__set(&l, "host", v.buf);
	labels__sort(&l);
	struct store_put put = { .service = "svc", .from = t, .until = t + 10, .profile = p,
				 .series = &l, .nr_series = 1 };
	ret = store__put(s, &put, err, sizeof(err));
	if (ret)
		fprintf(stderr, "put %d: %s\n", i, err);
	labels_release(&l);
	profile__free(p);
	strbuf_release(&f);
	strbuf_release(&g);
	strbuf_release(&v);
	return ret;
}

/* The samples of svc in [from, until) by select (tree 0) or select_tree (1); -1: error. */
static int64_t read_total(struct store *s, int64_t from, int64_t until, int tree)
{
	struct store_query q;
	struct profile *p = profile__new();
	struct store_tree t;
	char err[256];
	int64_t total = 0;
	int ret;

	store_query_init(&q);
	store_tree_init(&t);
	q.service = xstrdup("svc");
	ret = tree ? store__select_tree(s, &q, from, until, &t, err, sizeof(err))
		   : store__select(s, &q, from, until, p, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "read: %s\n", err);
		total = -1;
	} else if (tree) {
		for (size_t i = 0; i < t.n; i++)
			total += (int64_t)t.self[i];
	} else {
		total = (int64_t)profile__total(p);
	}
	store_tree_release(&t);
	profile__free(p);
	store_query_release(&q);
	return total;
}

static void *writer(void *arg)
{
	struct shared *sh = arg;
	char err[256];

	for (int i = 0; i < UPLOADS; i++) {
		if (put_quiet(sh->s, i, sh->t + (i % 30) * 10))
			sh->failed_puts++;
		if (i == UPLOADS / 2) {	/* deletes the old rows: a reload under the reads */
			int n = store__retain(sh->s, sh->t - 86400, err, sizeof(err));
			if (n <= 0) {
				fprintf(stderr, "retain deleted %d rows: %s\n", n, err);
				sh->failed_puts++;
			}
		}
	}
	__atomic_store_n(&sh->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

struct reader_arg {
	struct shared *sh;
	int id;
};

static void *reader(void *arg)
{
	struct reader_arg *ra = arg;
	struct shared *sh = ra->sh;
	int64_t last = 0;
	int id = ra->id;

	while (!__atomic_load_n(&sh->done, __ATOMIC_SEQ_CST)) {
		int64_t n = read_total(sh->s, sh->t, sh->t + 3600, id % 2);
		char **v = NULL;
		size_t nv = 0;
		char err[256];
		struct store_query q;

		if (n < 0)
			sh->errors[id]++;
		else if (n % PER_UPLOAD)	/* whole uploads */
			sh->torn[id]++;
		else if (n < last)		/* a later read sees no less */
			sh->backwards[id]++;
		last = n > last ? n : last;
		store_query_init(&q);
		q.service = xstrdup("svc");
		if (store__label_values(sh->s, &q, "host", sh->t, sh->t + 3600, &v, &nv, err,
					sizeof(err)) || nv > 29)
			sh->errors[id]++;
		store__free_strings(v, nv);
		store_query_release(&q);
		sh->reads[id]++;
	}
	return NULL;
}

static void test_reads_beside_writer(void **state)
{
	struct shared sh = { .s = open_store(), .t = time(NULL) / 3600 * 3600 - 3600 };
	struct reader_arg ra[READERS];
	pthread_t w, r[READERS];

	/* old rows of another service, for the retain to delete mid-way */
	for (int i = 0; i < 20; i++)
		put_one(sh.s, "old", 1000 + i, sh.t - 10 * 86400 + i * 10);
	for (int i = 0; i < READERS; i++) {
		ra[i] = (struct reader_arg){ &sh, i };
		assert_int_equal(pthread_create(&r[i], NULL, reader, &ra[i]), 0);
	}
	assert_int_equal(pthread_create(&w, NULL, writer, &sh), 0);
	pthread_join(w, NULL);
	for (int i = 0; i < READERS; i++) {
		pthread_join(r[i], NULL);
		print_message("reader %d: %d reads\n", i, sh.reads[i]);
		assert_int_equal(sh.errors[i], 0);
		assert_int_equal(sh.torn[i], 0);
		assert_int_equal(sh.backwards[i], 0);
	}
	assert_int_equal(sh.failed_puts, 0);
	/* every upload stored once */
	assert_int_equal(select_total(sh.s, sh.t, sh.t + 3600), UPLOADS * PER_UPLOAD);
	assert_int_equal(tree_total(sh.s, sh.t, sh.t + 3600), UPLOADS * PER_UPLOAD);
	store__close(sh.s);
}

/* A listing of more series than one hold of the read lock covers (sqlite_query.c
 * LABELS_CHUNK) sees every series stored before it began, once, while uploads add series
 * and a retention pass (which makes it start over) runs between its chunks. */
#define MANY_SERIES 10000

static void put_many(struct store *s, int64_t t)
{
	struct profile *p = profile__new();
	struct labels *l = xcalloc(MANY_SERIES, sizeof(*l));
	uint32_t *of = xcalloc(MANY_SERIES, sizeof(*of));
	char err[256], host[32], leaf[32];

	for (int i = 0; i < MANY_SERIES; i++) {
		snprintf(leaf, sizeof(leaf), "leaf%d", i);
		snprintf(host, sizeof(host), "h%05d", i);
		const char *names[] = { "main", leaf };
		profile__add_names(p, names, 2, 1);
		labels_init(&l[i]);
		labels__set(&l[i], "host", host);
		of[i] = (uint32_t)i;
	}
	struct store_put put = { .service = "svc", .from = t, .until = t + 10, .profile = p,
				 .series = l, .nr_series = MANY_SERIES, .stack_series = of };
	if (store__put(s, &put, err, sizeof(err)))
		fail_msg("%s", err);
	for (int i = 0; i < MANY_SERIES; i++)
		labels_release(&l[i]);
	free(l);
	free(of);
	profile__free(p);
}

static void test_labels_in_chunks(void **state)
{
	struct shared sh = { .s = open_store(), .t = time(NULL) / 3600 * 3600 - 3600 };
	pthread_t w;
	int listings = 0;

	for (int i = 0; i < 20; i++)
		put_one(sh.s, "old", 1000 + i, sh.t - 10 * 86400 + i * 10);
	put_many(sh.s, sh.t);
	assert_int_equal(pthread_create(&w, NULL, writer, &sh), 0);
	while (!__atomic_load_n(&sh.done, __ATOMIC_SEQ_CST) || !listings) {
		struct store_query q;
		char **v = NULL, err[256];
		size_t nv = 0, mine = 0;

		store_query_init(&q);
		q.service = xstrdup("svc");
		assert_int_equal(store__label_values(sh.s, &q, "host", sh.t, sh.t + 3600, &v, &nv,
						     err, sizeof(err)), 0);
		for (size_t i = 0; i < nv; i++) {
			mine += v[i][0] == 'h';
			if (i)	/* sorted and each once */
				assert_true(strcmp(v[i - 1], v[i]) < 0);
		}
		assert_int_equal(mine, MANY_SERIES);
		store__free_strings(v, nv);
		store_query_release(&q);
		listings++;
	}
	pthread_join(w, NULL);
	print_message("%d listings beside the writer\n", listings);
	assert_int_equal(sh.failed_puts, 0);
	store__close(sh.s);
}

static int setup(void **state)
{
	return scratch__make(dir, sizeof(dir), "sqlread");
}

static int teardown(void **state)
{
	return scratch__remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_snapshot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reads_beside_writer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_labels_in_chunks, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
