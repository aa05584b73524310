/* Internals of the ClickHouse backend, shared by store/clickhouse*.c. Not a public
 * interface: clickhouse_http.c (locations, requests, RowBinary), clickhouse.c (schema,
 * open, retention, stats), clickhouse_write.c (put), clickhouse_query.c (reads). */
#ifndef KILN_STORE_CLICKHOUSE_INT_H
#define KILN_STORE_CLICKHOUSE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/clickhouse.h"
#include "store/store.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

#define CH_NR_LEVELS 3

/* A parsed location (see store/clickhouse.h). Owns its strings. */
struct ch_location {
	char **hosts;		/* "HOST:PORT" each */
	size_t nr_hosts;
	char *database, *user, *password, *cluster, *cacert;
	bool secure, insecure;
	long timeout;
};

void ch_location_init(struct ch_location *l);
void ch_location_release(struct ch_location *l);
/* Parses REST, the text after "clickhouse:" ("//host:port/db?..."). Returns 0, or
 * -EINVAL with a message naming the problem in err. */
int ch_location__parse(struct ch_location *l, const char *rest, char *err, size_t errlen);

/* A cached stack: its frame ids, root first. */
struct ch_stack {
	uint32_t depth;
	uint64_t frames[];
};

/* A series as the series table knows it (rows grouped by id). */
struct ch_series {
	uint64_t id;
	char *service, *ptype;
	struct labels labels;
	int64_t first_seen, last_seen;
};

/* What this server wrote of a series: rewritten when the range or metadata outgrows it. */
struct ch_seen {
	int64_t first, last;
	uint64_t meta;		/* hash of units, spy name, rate */
};

/* An asynchronous put waiting for its batch: called when the batch was sent. */
struct ch_waiter {
	store_put_done *done;
	void *arg;
};

/* A group commit (clickhouse_batch.c): the rows of every put that joined it, sent as one
 * INSERT per table. Its maps are what those puts add to the caches once ClickHouse
 * acknowledged the batch; puts that join later look them up too, so a frame or stack new
 * to several puts of one batch is sent once. */
struct ch_batch {
	struct strbuf frames, stacks, series, samples;	/* RowBinary rows */
	struct hashmap *frames_new;	/* id -> char * name (owned) */
	struct hashmap *stacks_new;	/* id -> struct ch_stack * (owned) */
	struct hashmap *seen_new;	/* series id -> struct ch_seen * (owned) */
	struct hashmap *types_new;	/* service -> char * its default type (owned) */
	size_t puts;		/* puts that joined */
	size_t rows;		/* sample rows of those puts */
	struct ch_waiter *waiters;	/* the asynchronous puts of it */
	size_t nr_waiters, waiters_cap;
	size_t refs;		/* the sender, and the puts that wait for b (store__put) */
	bool done;		/* sent: ret and err say how it went */
	int ret;
	char err[256];
};

struct ch_store {
	struct store base;
	struct ch_location loc;
	/* idle CURL * handles of every call but the batches' inserts (one per call at a
	 * time, so that calls in several threads each have their own; pool_lock) */
	void **pool;
	size_t nr_pool;
	pthread_mutex_t pool_lock;
	void *wcurl;		/* CURL * of the batch being sent (one at a time) */
	size_t host;		/* the host requests go to first (atomic) */
	char *name;		/* the location without the password, for messages */
	bool ready;		/* the schema is there (atomic; set under ensure_lock) */
	pthread_mutex_t ensure_lock;	/* one ch__ensure at a time (taken last) */
	char version[32];	/* ClickHouse's version() */

	/* cache_lock guards the maps of the caches (readers and puts look up, the sender
	 * and the reads that fetch what is missing insert): never held while waiting for
	 * mu. Their values are never freed before close, so a pointer found stays valid
	 * after the lock is let go (a default type that changed is kept in old_types). */
	pthread_rwlock_t cache_lock;
	struct hashmap *frames;	/* id (8 bytes) -> char * name */
	struct hashmap *stacks;	/* id -> struct ch_stack * */
	struct hashmap *seen;	/* series id -> struct ch_seen * */
	struct hashmap *types;	/* service -> char * its default profile type */
	char **old_types;
	size_t nr_old_types;

	/* mu guards everything above and the batches; reads, retention and stats hold it
	 * for their whole call, a put only while it adds its rows to the open batch (and a
	 * synchronous one when the batch's answer comes back), the sender only between
	 * batches, never while one is on the network */
	pthread_mutex_t mu;
	pthread_cond_t sent;	/* a batch went on the network, or came back */
	struct ch_batch *open;	/* the batch puts join now (NULL: none yet) */
	struct ch_batch *sending;	/* the batch on the network (NULL: none) */
	pthread_cond_t joined;	/* a put joined the open batch, or gave up before, or
				 * the store closes */
	size_t coming;		/* puts hashing their rows, about to join (under mu) */
	pthread_t sender;	/* the thread that sends the batches */
	bool sender_started, closing;
	size_t batch_rows;	/* CH_BATCH_ROWS (tests set their own) */
	size_t batch_bytes;	/* CH_BATCH_BYTES (likewise) */
	long batch_wait_ms;	/* CH_BATCH_WAIT_MS (likewise) */
	long batch_linger_ms;	/* CH_BATCH_LINGER_MS (likewise) */
	size_t last_puts;	/* puts of the last batch sent */
};

extern const int64_t ch_level_step[CH_NR_LEVELS];
extern const char *const ch_level_table[CH_NR_LEVELS];
/* The whole-service rollups ([0] is the raw table): one row per service, type, bucket and
 * stack, over every series. */
extern const char *const ch_fleet_table[CH_NR_LEVELS];

/* Content hashes: a frame name's id, a stack's id (frame ids root first), a series' id. */
uint64_t ch__frame_id(const char *name, size_t len);
uint64_t ch__stack_id(const uint64_t *frames, uint32_t depth);
uint64_t ch__series_id(const char *service, const char *ptype, const char *labels_key);
/* The label set as the series table keeps it: "name\x1fvalue\x1e..." (sorted input). */
void ch__labels_key(struct strbuf *out, const struct labels *l);
void ch__labels_parse(struct labels *l, const char *key, size_t len);

/* RowBinary encoding (little-endian integers, varint-prefixed strings and arrays). */
void rb_u32(struct strbuf *b, uint32_t v);
void rb_u64(struct strbuf *b, uint64_t v);
void rb_varint(struct strbuf *b, uint64_t v);
void rb_str(struct strbuf *b, const char *s, size_t len);

/* A RowBinary reader over an answer; any read past the end sets bad and returns 0/"". */
struct rb_reader {
	const uint8_t *p, *end;
	bool bad;
};
uint64_t rbr_u64(struct rb_reader *r);
uint32_t rbr_u32(struct rb_reader *r);
uint64_t rbr_varint(struct rb_reader *r);
/* A string: returns its bytes (not NUL-terminated) and sets *len. */
const char *rbr_str(struct rb_reader *r, size_t *len);
/* A reader over the bytes of an answer. */
static inline struct rb_reader rbr_of(const struct strbuf *b)
{
	return (struct rb_reader){ (const uint8_t *)b->buf, (const uint8_t *)b->buf + b->len, false };
}
static inline bool rbr_more(const struct rb_reader *r)
{
	return !r->bad && r->p < r->end;
}

/* Appends s as a ClickHouse string literal ('...', with \ and ' escaped). */
void ch__quote(struct strbuf *b, const char *s);
/* Gzip-compresses len bytes into out (replacing its contents). */
void ch__gzip(struct strbuf *out, const void *data, size_t len);

/* Runs one request (on a curl handle of its own: any thread, any lock held) on host (SIZE_MAX: the current host, then the others in turn when it
 * cannot be reached): sql as the query; with body, sql is an INSERT ... FORMAT RowBinary
 * and body its rows. The answer (decompressed) goes to out when out is not NULL. what
 * says what was being done, for messages. Returns 0; -EAGAIN when no host could be
 * reached (ClickHouse down: try later); -EIO when ClickHouse refused the request (its
 * message in err). */
int ch__request(struct ch_store *s, size_t host, const char *sql, const struct strbuf *body,
		struct strbuf *out, const char *what, char *err, size_t errlen);
/* The same on the curl handle curl (a CURL *): what the batch's sender uses. */
int ch__request_on(struct ch_store *s, void *curl, size_t host, const char *sql,
		   const struct strbuf *body, struct strbuf *out, const char *what, char *err,
		   size_t errlen);
/* Opens and closes the curl handles of s. */
int ch__http_open(struct ch_store *s, char *err, size_t errlen);
void ch__http_close(struct ch_store *s);

/* Creates or upgrades the schema when it is not known to be there (any thread; with mu
 * or without). Returns 0, or a negative errno (-EAGAIN: ClickHouse unreachable). */
int ch__ensure(struct ch_store *s, char *err, size_t errlen);

/* Reads the series of the services named (none: all services), grouped by id, into
 * *out (malloc'd; free with ch__free_series): every one that may hold data at or after
 * since (0: all). Also fills the cache of default types. */
int ch__load_series(struct ch_store *s, const char *const *services, size_t nr_services,
		    int64_t since, struct ch_series **out, size_t *n, char *err, size_t errlen);
void ch__free_series(struct ch_series *v, size_t n);
/* The default profile type of service: the type of its first stored series, NULL when
 * the service has none (after ch__load_series named it). Both take cache_lock (the
 * caller does not hold it); the string stays valid until the store closes. */
const char *ch__default_type(struct ch_store *s, const char *service);
void ch__set_default_type(struct ch_store *s, const char *service, const char *type);

/* The open batch of s, made when there is none (s->mu held). When the open batch is full
 * (CH_BATCH_ROWS sample rows or CH_BATCH_BYTES of rows), waits until it went on the
 * network and opens the next when wait is set (so puts faster than ClickHouse wait here),
 * else returns NULL. */
struct ch_batch *ch__batch_open(struct ch_store *s, bool wait);
/* A put on its way to the open batch (s->mu held): counted in s->coming until it joins a
 * batch or gives up (ch__batch_left), so that the batch's sender can wait for it. */
void ch__batch_coming(struct ch_store *s);
void ch__batch_left(struct ch_store *s);
/* Has the put that just added its rows to b (the open batch, s->mu held) wait until b was
 * sent (by the sender thread: one INSERT per table for every put of b, the caches updated
 * only after ClickHouse acknowledged them all). Returns b's result (0, or the negative
 * errno of its failed insert with the message in err), the same for every put of b. */
int ch__batch_wait(struct ch_store *s, struct ch_batch *b, char *err, size_t errlen);
/* The same for an asynchronous put (s->mu held): done(arg, ret, err) is called with b's
 * result, from the sender thread without s->mu, once b was sent. */
void ch__batch_notify(struct ch_store *s, struct ch_batch *b, store_put_done *done, void *arg);
/* Starts the sender thread of s (returns 0, or a negative errno with err set); stops it
 * after it sent the open batch (the store is closing: no put joins any more). */
int ch__batch_start(struct ch_store *s, char *err, size_t errlen);
void ch__batch_stop(struct ch_store *s);
/* Frees a batch nobody waits for (at close). Accepts NULL. */
void ch__batch_free(struct ch_batch *b);
/* Whether frame / stack id is known to be stored, or will be with the batch b (cache_lock
 * held for reading, and mu). */
bool ch__frame_known(struct ch_store *s, const struct ch_batch *b, uint64_t id);
bool ch__stack_known(struct ch_store *s, const struct ch_batch *b, uint64_t id);

int ch__put(struct store *st, const struct store_put *put, char *err, size_t errlen);
int ch__put_async(struct store *st, const struct store_put *put, store_put_done *done,
		  void *arg, char *err, size_t errlen);
int ch__select(struct store *st, const struct store_query *q, int64_t from, int64_t until,
	       struct profile *out, char *err, size_t errlen);
int ch__select_tree(struct store *st, const struct store_query *q, int64_t from,
		    int64_t until, struct store_tree *out, char *err, size_t errlen);
int ch__series(struct store *st, const struct store_query *q, int64_t from, int64_t until,
	       struct store_series *out, char *err, size_t errlen);
int ch__label_names(struct store *st, const struct store_query *q, int64_t from, int64_t until,
		    char ***out, size_t *n, char *err, size_t errlen);
int ch__label_values(struct store *st, const struct store_query *q, const char *name,
		     int64_t from, int64_t until, char ***out, size_t *n, char *err,
		     size_t errlen);
int ch__services(struct store *st, struct store_service **out, size_t *n, char *err,
		 size_t errlen);

#endif
