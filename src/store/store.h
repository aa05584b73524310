/* The profile store: where `kiln serve` keeps every uploaded profile, and how it answers
 * queries. This header is the contract every backend keeps; a backend implements struct
 * store_ops and exports one struct store_backend, and store__open picks it by the
 * location's scheme (store/store.c holds the table): SQLite (store/sqlite.h) and
 * ClickHouse (store/clickhouse.h).
 *
 * Data model (after Pyroscope and gProfiler's studio):
 *   - a service ("app.cpu", or a gProfiler service name) owns series;
 *   - a series is a profile type (profile/ptype.h: "name:type:unit:period_type:period_unit")
 *     and a label set (host, container, process, any Pyroscope label), sorted by name,
 *     unique per service; a query names the type it wants, or gets the type the service
 *     stored first (CPU samples for agents);
 *   - a sample row is (series, time bucket, stack, count); stacks and frame names are
 *     stored once and referenced by id.
 * Times are unix seconds, ranges are half-open [from, until): a query returns the samples
 * stored with from <= time < until, merged over every series that matches.
 *
 * What every backend guarantees:
 *   - durability: when store__put returns 0 (the server then answers 2xx), the upload is
 *     stored and survives a crash of the server and of the machine;
 *   - a query sees every put that returned before it started, and nothing of a put that
 *     failed;
 *   - time is kept at the store's resolution (store__resolution) or coarser for old data:
 *     a range is answered exactly when its bounds are multiples of the resolution.
 * What each backend says for itself (in its header): the resolutions it keeps and when it
 * coarsens, how retention removes data, and whether its calls may come from several
 * threads at once. A caller that does not know the backend serializes every call (the
 * server holds one mutex around each); a backend whose store__concurrent_reads is true
 * lets reads run in other threads while one thread writes. */
#ifndef KILN_STORE_STORE_H
#define KILN_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* Frames of a stack beyond this depth are not stored (the stack is cut there). */
#define STORE_MAX_DEPTH 4096

struct label {
	char *name;
	char *value;
};

/* A label set: owns its strings. Sorted by name with labels__sort(); names unique. */
struct labels {
	struct label *v;
	size_t n;
};

void labels_init(struct labels *l);
void labels_release(struct labels *l);
/* Adds (or replaces) name=value, copying both. */
void labels__set(struct labels *l, const char *name, const char *value);
/* Returns the value of name, or NULL. */
const char *labels__get(const struct labels *l, const char *name);
void labels__sort(struct labels *l);

enum match_op { MATCH_EQ, MATCH_NE, MATCH_RE, MATCH_NRE };

struct matcher {
	char *name;
	char *value;
	enum match_op op;
	struct re *re;		/* compiled for MATCH_RE / MATCH_NRE (util/re.h), else NULL */
};

/* A query: a service and label matchers, as parsed from `app.cpu{host="a",x!~"b.*"}`
 * (see server/selector.h), and the profile type wanted (profile/ptype.h; NULL: the
 * service's default, the type it was first stored with: CPU for agents). Owns its
 * strings and compiled expressions. */
struct store_query {
	char *service;
	struct matcher *m;
	size_t n;
	char *profile_type;
};

void store_query_init(struct store_query *q);
void store_query_release(struct store_query *q);
/* True when the label set satisfies every matcher (a missing label reads as ""). */
bool store_query__matches(const struct store_query *q, const struct labels *l);

/* One upload: the stacks of profile, split into series. Stack i of the profile belongs to
 * series[stack_series[i]] (or series[0] when stack_series is NULL), and its first `skip`
 * frames are not stored. The value stored is that of sample type type_index (0 unless
 * set); stacks whose depth is <= skip, or whose value is 0, are ignored. A series is a
 * label set of one profile type: profile_type (profile/ptype.h; NULL: the type of the
 * service's earlier uploads, PTYPE_CPU_SAMPLES for a new one). */
struct store_put {
	const char *profile_type;
	size_t type_index;
	const char *service;
	int64_t from, until;
	const struct profile *profile;
	const struct labels *series;
	size_t nr_series;
	const uint32_t *stack_series;
	uint32_t skip;
	/* Frames kept of each stack after skip, from the root (the leaf end is cut, as
	 * Pyroscope's max_profile_stacktrace_depth cuts it); 0 or more than
	 * STORE_MAX_DEPTH: STORE_MAX_DEPTH. */
	uint32_t max_depth;
	/* Another put (with no `also` of its own) stored in the same write: both are stored
	 * or neither is (the span companion of server/ingest_spans.c); NULL: none. */
	const struct store_put *also;
	/* Service metadata for Pyroscope's render (may be NULL/0: keep what is known). */
	const char *units;
	const char *spy_name;
	uint32_t sample_rate;
};

/* The frames put keeps of a stack: max_depth, bounded by STORE_MAX_DEPTH. */
static inline uint32_t store_put__max_depth(const struct store_put *put)
{
	return put->max_depth && put->max_depth < STORE_MAX_DEPTH ? put->max_depth : STORE_MAX_DEPTH;
}

struct store_service {
	char *name;
	char *units;
	char *spy_name;
	uint32_t sample_rate;
	int64_t last_seen;
	char *profile_type;	/* the type of its first upload (profile/ptype.h); NULL: unknown */
	char **types;		/* every type its series have, profile_type first (may be NULL: */
	size_t nr_types;	/* a backend that lists none; then only profile_type is known) */
};

/* A time series of sample totals: samples[i] covers [start + i*step, +step). */
struct store_series {
	int64_t start;
	int64_t step;
	uint64_t *samples;
	size_t n;
};

struct store_stats {
	uint64_t rows;		/* stored (series, bucket, stack) rows at raw resolution */
	uint64_t samples;	/* sum of their counts */
	uint64_t stacks;	/* distinct stack nodes */
	uint64_t frames;	/* distinct frame names */
	uint64_t bytes;		/* database size on disk */
};

/* The merged stacks of a select as a call tree. Node 0 is the root (no frame); node i > 0
 * has parent[i] < i and the frame name names[name[i]]; self[i] is the number of samples
 * whose stack ends at node i. Siblings have distinct names (damaged data may break this:
 * readers must not rely on it for memory safety). Arrays are malloc'd and owned by the
 * tree; names point into strings. */
struct store_tree {
	uint32_t *parent, *name;
	uint64_t *self;
	size_t n;
	const char **names;
	size_t nr_names;
	char *strings;
};

void store_tree_init(struct store_tree *t);
void store_tree_release(struct store_tree *t);

struct store_options {
	/* Data older than this many days may be removed by store__retain (how, and whether
	 * coarser data is kept longer, is the backend's: see its header). 0: keep forever. */
	int retention_days;
	/* A read (select, select_tree, series) still running after this many milliseconds
	 * stops and fails with -ETIMEDOUT and a message; writes are never stopped. 0: none. */
	int query_timeout_ms;
};

struct store;

/* What an asynchronous put (store__put_async) reports, once: ret 0 when the upload is as
 * durable as after store__put's 0, else store__put's negative errno and err its message. */
typedef void store_put_done(void *arg, int ret, const char *err);

/* Every call returns 0 (or a count), or a negative errno with a message in err. */
struct store_ops {
	int (*put)(struct store *s, const struct store_put *put, char *err, size_t errlen);
	/* NULL for a backend whose puts are synchronous only (see store__put_async) */
	int (*put_async)(struct store *s, const struct store_put *put, store_put_done *done,
			 void *arg, char *err, size_t errlen);
	int (*select)(struct store *s, const struct store_query *q, int64_t from, int64_t until,
		      struct profile *out, char *err, size_t errlen);
	int (*select_tree)(struct store *s, const struct store_query *q, int64_t from,
			   int64_t until, struct store_tree *out, char *err, size_t errlen);
	int (*series)(struct store *s, const struct store_query *q, int64_t from, int64_t until,
		      struct store_series *out, char *err, size_t errlen);
	int (*label_names)(struct store *s, const struct store_query *q, int64_t from,
			   int64_t until, char ***out, size_t *n, char *err, size_t errlen);
	int (*label_values)(struct store *s, const struct store_query *q, const char *name,
			    int64_t from, int64_t until, char ***out, size_t *n, char *err,
			    size_t errlen);
	int (*services)(struct store *s, struct store_service **out, size_t *n, char *err,
			size_t errlen);
	int (*retain)(struct store *s, int64_t before, char *err, size_t errlen);
	int (*stats)(struct store *s, struct store_stats *out, char *err, size_t errlen);
	void (*close)(struct store *s);
};

struct store {
	const struct store_ops *ops;
	struct store_options opts;
	uint64_t generation;	/* bumped by every put and retain: see store__generation */
	bool concurrent_puts;	/* put may run in any thread beside every other call */
	int64_t resolution;	/* finest time step kept, seconds (> 0): see store__resolution */
	bool concurrent_reads;	/* see store__concurrent_reads */
};

/* A backend as store__open knows it: one entry of the table in store/store.c. */
struct store_backend {
	const char *scheme;	/* locations "SCHEME:REST" are this backend's (any case) */
	/* Opens the store named by REST, the location's text after "SCHEME:". Returns a
	 * store whose base (ops, opts, generation 1, resolution) is filled in, or NULL with
	 * a message in err. */
	struct store *(*open)(const char *rest, const struct store_options *opts, char *err,
			      size_t errlen);
	/* Opens the store kept in the existing directory dir, for a location without a
	 * scheme; NULL when the backend keeps no stores in directories. */
	struct store *(*open_dir)(const char *dir, const struct store_options *opts, char *err,
				  size_t errlen);
};

/* Opens the store at location: "SCHEME:REST" where SCHEME names a backend ("sqlite:PATH"),
 * or else a plain directory (created when missing), which the first backend of the table
 * that keeps stores in directories opens (SQLite: DIR/kiln.db). A location with "://"
 * whose scheme is no backend's ("foo://h:9000/db") fails with a message that
 * names the known schemes. Returns NULL with a message in err. */
struct store *store__open(const char *location, const struct store_options *opts, char *err,
			  size_t errlen);
/* The finest time step the store keeps, in seconds: queries whose bounds are multiples of
 * it are answered exactly, so a caller may round ranges to it (e.g. to share a cache). */
int64_t store__resolution(const struct store *s);
/* True when the reads (select, select_tree, series, label_names, label_values,
 * label_pairs, services, generation) may be called from any number of threads at once
 * and while another thread writes (put, retain); the writes (and stats) stay the
 * caller's to serialize. False: the caller serializes every call. */
bool store__concurrent_reads(const struct store *s);
/* Closes the store, committing nothing that is not already committed. Accepts NULL. */
void store__close(struct store *s);

/* Stores one upload atomically: when this returns 0 the data survives a crash. */
int store__put(struct store *s, const struct store_put *put, char *err, size_t errlen);
/* True when the backend lets store__put run in several threads at once and beside every
 * other call (it locks what it shares): a caller need not serialize its puts. */
bool store__concurrent_puts(const struct store *s);
/* Starts storing one upload, for a caller that must not wait for it (a server thread
 * serving many connections): returns 0 once the store took everything it needs of put
 * (the caller may free it at once), and done(arg, ...) is then called exactly once, from
 * a thread of the store's (also before this returns, in a race), when the upload is
 * durable or has failed; or returns a negative errno with err set and never calls done
 * (-EBUSY: the store holds as much waiting data as it may, retry later). Only for a
 * backend whose store__async_puts is true (-ENOTSUP otherwise); like store__put, it may
 * be called from any thread beside every other call. */
int store__put_async(struct store *s, const struct store_put *put, store_put_done *done,
		     void *arg, char *err, size_t errlen);
bool store__async_puts(const struct store *s);
/* Adds to out the merged stacks of every series of q's service matching q, whose rows lie
 * in [from, until); an empty out takes the sample type of the type selected (see
 * ptype__apply). Returns 0 (also when nothing matched), or a negative errno. */
int store__select(struct store *s, const struct store_query *q, int64_t from, int64_t until,
		  struct profile *out, char *err, size_t errlen);
/* Like store__select, but fills out (initialized, empty) with the merged stacks as a call
 * tree (see struct store_tree): what a flamegraph needs, without building each stack. */
int store__select_tree(struct store *s, const struct store_query *q, int64_t from,
		       int64_t until, struct store_tree *out, char *err, size_t errlen);
/* A number that changes whenever the stored data may have changed (every store__put and
 * store__retain, whatever their result), so that a result computed at one generation may
 * be reused while the generation is the same. Starts at 1 for each open store. */
uint64_t store__generation(const struct store *s);
/* Fills out with sample totals per step over [from, until): out->start is from rounded
 * down to out->step, the step is chosen by the store (a multiple of store__resolution,
 * at most ~1500 points; the backend's header says how it grows with the range) and
 * out->samples is malloc'd (free it). */
int store__series(struct store *s, const struct store_query *q, int64_t from, int64_t until,
		  struct store_series *out, char *err, size_t errlen);
/* Label names (or values of one name) of q's matching series seen in [from, until), as a
 * sorted malloc'd array of malloc'd strings (free with store__free_strings). */
int store__label_names(struct store *s, const struct store_query *q, int64_t from,
		       int64_t until, char ***out, size_t *n, char *err, size_t errlen);
int store__label_values(struct store *s, const struct store_query *q, const char *name,
			int64_t from, int64_t until, char ***out, size_t *n, char *err,
			size_t errlen);
/* Every label of q's matching series seen in [from, until) as "name\x1fvalue", sorted
 * and unique (so grouped by name), in one pass over the series: the work is linear in
 * the labels stored, whatever their number per series. Freed as above. (A backend's
 * label_values op gives these pairs when called with a NULL name.) */
int store__label_pairs(struct store *s, const struct store_query *q, int64_t from,
		       int64_t until, char ***out, size_t *n, char *err, size_t errlen);
void store__free_strings(char **v, size_t n);
/* Lists every service, sorted by name (free with store__free_services). */
int store__services(struct store *s, struct store_service **out, size_t *n, char *err,
		    size_t errlen);
void store__free_services(struct store_service *v, size_t n);
/* The store's periodic maintenance (the server runs it hourly): removes data older than
 * before as the backend's retention says (see store_options and the backend's header:
 * SQLite also rolls closed hours and days up here and frees the space on disk). before 0
 * removes nothing. Returns the number of rows deleted. */
int store__retain(struct store *s, int64_t before, char *err, size_t errlen);
int store__stats(struct store *s, struct store_stats *out, char *err, size_t errlen);

#endif
