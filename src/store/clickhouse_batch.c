/* The ClickHouse backend's group commit. Puts do not each send their own INSERTs: each
 * adds its rows to the open batch and either waits (store__put) or leaves a callback
 * (store__put_async); the store's sender thread sends the open batch (one INSERT per
 * table, in the order clickhouse_write.c explains) whenever none is on the network,
 * without the store's lock, while the next batch fills with the puts that arrive
 * meanwhile. So the uploads in flight cost one round of inserts, not one each, however
 * many there are (a batch's bounds aside), and the lock is held only for in-memory work.
 *
 * Durability is unchanged: no put returns before ClickHouse acknowledged every insert of
 * its batch; a batch that fails fails every put of it (each answers 503 or 500, and the
 * agents resend), and nothing of it enters the caches. */
#include "store/clickhouse_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/log.h"

/* Whether b takes no more puts: it holds batch_rows sample rows or batch_bytes of rows. */
static bool full(const struct ch_store *s, const struct ch_batch *b)
{
	return b->rows >= s->batch_rows ||
	       b->frames.len + b->stacks.len + b->series.len + b->samples.len >= s->batch_bytes;
}

struct ch_batch *ch__batch_open(struct ch_store *s, bool wait)
{
	while (s->open && full(s, s->open)) {
		if (!wait)
			return NULL;
		pthread_cond_wait(&s->sent, &s->mu);	/* full: the next one */
	}
	if (s->open)
		return s->open;
	struct ch_batch *b = xcalloc(1, sizeof(*b));
	strbuf_init(&b->frames, 0);
	strbuf_init(&b->stacks, 0);
	strbuf_init(&b->series, 0);
	strbuf_init(&b->samples, 0);
	b->frames_new = hashmap__new();
	b->stacks_new = hashmap__new();
	b->seen_new = hashmap__new();
	b->types_new = hashmap__new();
	b->refs = 1;	/* the sender's */
	s->open = b;
	return b;
}

void ch__batch_coming(struct ch_store *s)
{
	s->coming++;
}

void ch__batch_left(struct ch_store *s)
{
	s->coming--;
	pthread_cond_broadcast(&s->joined);
}

/* t + ms, as a deadline for pthread_cond_timedwait. */
static struct timespec after_ms(const struct timespec *t, long ms)
{
	struct timespec d = *t;

	d.tv_sec += ms / 1000;
	d.tv_nsec += ms % 1000 * 1000000L;
	d.tv_sec += d.tv_nsec / 1000000000L;
	d.tv_nsec %= 1000000000L;
	return d;
}

static bool before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Has the sender of b wait (s->mu held) for the puts that would otherwise each follow in
 * a batch of their own: at most s->batch_wait_ms for those hashing their rows now, and,
 * when the last batch had several puts (uploads arrive together), s->batch_linger_ms for
 * any. A lone client's put (no put coming, batches of one) goes out at once. */
static void fill(struct ch_store *s, struct ch_batch *b)
{
	struct timespec now, linger, wait;

	clock_gettime(CLOCK_REALTIME, &now);
	linger = after_ms(&now, s->last_puts > 1 ? s->batch_linger_ms : 0);
	wait = after_ms(&now, s->batch_wait_ms);
	while (!full(s, b)) {
		const struct timespec *until = before(&now, &linger) ? &linger :
					       s->coming && before(&now, &wait) ? &wait : NULL;
		if (!until)
			break;
		pthread_cond_timedwait(&s->joined, &s->mu, until);
		clock_gettime(CLOCK_REALTIME, &now);
	}
}

static void free_values(struct hashmap *m)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	void *v;

	while (m && hashmap__next(m, &it, NULL, NULL, &v))
		free(v);
	hashmap__free(m);
}

void ch__batch_free(struct ch_batch *b)
{
	if (!b)
		return;
	strbuf_release(&b->frames);
	strbuf_release(&b->stacks);
	strbuf_release(&b->series);
	strbuf_release(&b->samples);
	free_values(b->frames_new);
	free_values(b->stacks_new);
	free_values(b->seen_new);
	free_values(b->types_new);
	free(b->waiters);
	free(b);
}

bool ch__frame_known(struct ch_store *s, const struct ch_batch *b, uint64_t id)
{
	return hashmap__find(s->frames, &id, sizeof(id)) ||
	       (b && hashmap__find(b->frames_new, &id, sizeof(id)));
}

bool ch__stack_known(struct ch_store *s, const struct ch_batch *b, uint64_t id)
{
	return hashmap__find(s->stacks, &id, sizeof(id)) ||
	       (b && hashmap__find(b->stacks_new, &id, sizeof(id)));
}

/* Moves every entry of from into the cache to, the cache's entry kept when it has one. */
static void adopt(struct hashmap *to, struct hashmap *from)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	const void *key;
	size_t len;
	void *v;
	bool created;

	while (hashmap__next(from, &it, &key, &len, &v)) {
		void **slot = hashmap__insert(to, key, len, &created);
		if (created)
			*slot = v;
		else
			free(v);
	}
	hashmap__clear(from);
}

/* What b's puts wrote of their series, merged into the cache (widest range known). */
static void adopt_seen(struct ch_store *s, struct ch_batch *b)
{
	struct hashmap_iter it = HASHMAP_ITER_INIT;
	const void *key;
	size_t len;
	void *v;
	bool created;

	while (hashmap__next(b->seen_new, &it, &key, &len, &v)) {
		struct ch_seen *n = v;
		void **slot = hashmap__insert(s->seen, key, len, &created);
		if (created) {
			*slot = n;
			continue;
		}
		struct ch_seen *o = *slot;
		o->first = o->first < n->first ? o->first : n->first;
		o->last = o->last > n->last ? o->last : n->last;
		o->meta = n->meta;
		free(n);
	}
	hashmap__clear(b->seen_new);
}

/* Sends b: its inserts in order, each only when it has rows. Called without s->mu (b is
 * not changed by anyone while it is s->sending). */
static int send_batch(struct ch_store *s, struct ch_batch *b, char *err, size_t errlen)
{
	static const struct {
		size_t off;
		const char *sql, *what;
	} ins[] = {
		{ offsetof(struct ch_batch, frames), "INSERT INTO frames FORMAT RowBinary",
		  "insert frames" },
		{ offsetof(struct ch_batch, stacks), "INSERT INTO stacks FORMAT RowBinary",
		  "insert stacks" },
		{ offsetof(struct ch_batch, series), "INSERT INTO series_in FORMAT RowBinary",
		  "insert series" },
		{ offsetof(struct ch_batch, samples), "INSERT INTO samples FORMAT RowBinary",
		  "insert samples" },
	};
	int ret = 0;

	for (size_t i = 0; !ret && i < sizeof(ins) / sizeof(ins[0]); i++) {
		const struct strbuf *rows = (const struct strbuf *)((const char *)b + ins[i].off);
		if (rows->len)
			ret = ch__request_on(s, s->wcurl, SIZE_MAX, ins[i].sql, rows, NULL,
					     ins[i].what, err, errlen);
	}
	return ret;
}

void ch__batch_notify(struct ch_store *s, struct ch_batch *b, store_put_done *done, void *arg)
{
	(void)s;
	b->puts++;
	if (b->nr_waiters == b->waiters_cap) {
		b->waiters_cap = b->waiters_cap ? 2 * b->waiters_cap : 16;
		b->waiters = xrealloc(b->waiters, b->waiters_cap * sizeof(*b->waiters));
	}
	b->waiters[b->nr_waiters++] = (struct ch_waiter){ done, arg };
}

int ch__batch_wait(struct ch_store *s, struct ch_batch *b, char *err, size_t errlen)
{
	int ret;

	b->puts++;
	b->refs++;
	while (!b->done)
		pthread_cond_wait(&s->sent, &s->mu);
	ret = b->ret;
	if (ret)
		errmsg(err, errlen, "%s", b->err);
	if (!--b->refs)
		ch__batch_free(b);
	return ret;
}

/* Sends the open batch once it has puts (after fill), one at a time, until the store
 * closes; the puts that arrive meanwhile fill the next. */
static void *sender(void *arg)
{
	struct ch_store *s = arg;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		struct ch_batch *b = s->open;
		if (!b || !b->puts) {
			if (s->closing)
				break;
			pthread_cond_wait(&s->joined, &s->mu);
			continue;
		}
		fill(s, b);
		s->open = NULL;		/* the puts after this one open the next batch */
		s->sending = b;
		s->last_puts = b->puts;
		pthread_cond_broadcast(&s->sent);	/* for the puts waiting for room */
		pthread_mutex_unlock(&s->mu);
		int ret = send_batch(s, b, b->err, sizeof(b->err));
		pthread_mutex_lock(&s->mu);
		if (!ret) {
			pthread_rwlock_wrlock(&s->cache_lock);
			adopt(s->frames, b->frames_new);
			adopt(s->stacks, b->stacks_new);
			adopt(s->types, b->types_new);
			adopt_seen(s, b);
			pthread_rwlock_unlock(&s->cache_lock);
		} else if (b->puts > 1) {
			log_warn("%s (%zu uploads of one batch)", b->err, b->puts);
		}
		b->ret = ret;
		b->done = true;
		s->sending = NULL;
		pthread_cond_broadcast(&s->sent);
		pthread_mutex_unlock(&s->mu);
		/* b is not freed before its sender's reference goes: its waiters are read here */
		for (size_t i = 0; i < b->nr_waiters; i++)
			b->waiters[i].done(b->waiters[i].arg, ret, ret ? b->err : NULL);
		pthread_mutex_lock(&s->mu);
		if (!--b->refs)
			ch__batch_free(b);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

int ch__batch_start(struct ch_store *s, char *err, size_t errlen)
{
	int ret = pthread_create(&s->sender, NULL, sender, s);

	if (ret) {
		errmsg(err, errlen, "failed to start the ClickHouse sender thread: %s", strerror(ret));
		return -ret;
	}
	s->sender_started = true;
	return 0;
}

void ch__batch_stop(struct ch_store *s)
{
	if (!s->sender_started)
		return;
	pthread_mutex_lock(&s->mu);
	s->closing = true;
	pthread_cond_broadcast(&s->joined);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->sender, NULL);
	s->sender_started = false;
}
