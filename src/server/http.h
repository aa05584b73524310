/* Internals shared by the server's files: the server state, one request with its body,
 * one response. Handlers fill the response; server.c sends it. Not a public interface. */
#ifndef KILN_SERVER_HTTP_H
#define KILN_SERVER_HTTP_H

#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "server/server.h"
#include "store/store.h"
#include "util/gzip.h"	/* gzip__* for the routes */
#include "util/strbuf.h"

struct server {
	struct MHD_Daemon *mhd;
	struct store *store;
	pthread_mutex_t lock;		/* serializes store writes (every call, when the
					 * store's reads cannot run beside them) */
	struct render_cache *cache;	/* flamegraphs by request and store generation */
	struct offload *offload;	/* runs the read routes (server/offload.h) */
	struct server_options opts;
	char **tokens;			/* write (upload) tokens */
	size_t nr_tokens;
	char **read_tokens;		/* read (query) tokens */
	size_t nr_read_tokens;
	char **tenants, **read_tenants;	/* per token, NULL: none */
	bool tenancy;			/* some token has a tenant */
	int lock_fd;			/* holds the data directory's lock file, or -1 */
	struct strbuf tls_cert, tls_key;	/* PEM, kept while the daemon runs; empty: HTTP */
	struct grpc_listener *grpc;	/* OTLP over gRPC (server/grpc.h), or NULL */
	uint16_t port;
	pthread_t retention_thread;
	pthread_mutex_t stop_lock;
	pthread_cond_t stop_cond;
	bool stopping, retention_started;
	pthread_mutex_t waiting_lock;
	pthread_cond_t waiting_cond;	/* waiting fell to 0 */
	unsigned waiting;		/* puts waiting for the store (server/ingest_wait.c) */
};

/* The asynchronous puts of one upload (server/ingest_wait.c): the handler returns with its
 * answer while they are on their way, and the connection is suspended until every one
 * of them is done; a failure then replaces the answer. */
struct put_acks {
	pthread_mutex_t lock;
	struct server *srv;
	struct MHD_Connection *conn;
	unsigned pending;	/* puts not done yet */
	bool suspended;		/* conn waits for them */
	int ret;		/* the first failure's errno, 0: none */
	char err[256];
};

/* Around a store read: takes srv->lock when the store's reads must not run beside its
 * writes (store__concurrent_reads false), else takes nothing, so that a query never
 * holds up ingest. */
void server__read_lock(struct server *srv);
void server__read_unlock(struct server *srv);

struct request {
	struct server *srv;
	struct MHD_Connection *conn;	/* NULL: a request of the gRPC listener (grpc.h) */
	const char *const *hdrs;	/* without conn: name, value, name, ... (nr_hdrs pairs) */
	size_t nr_hdrs;
	const char *method, *url;
	const char *tenant;		/* whose services it sees, NULL: the default tenant */
	struct put_acks *acks;		/* its puts are acknowledged later (see struct
					 * put_acks), NULL: stored before the handler returns */
	struct strbuf body;		/* as received (the handler may decode it) */
	bool too_large;
};

struct response {
	unsigned status;
	const char *content_type;	/* static string */
	const char *disposition;	/* Content-Disposition, static or NULL */
	const char *cache;		/* X-Kiln-Cache: "hit" or "miss", static or NULL */
	struct strbuf body;
};

/* A query-string argument or header (case-insensitive), or NULL. A request without conn
 * has no arguments and the headers hdrs lists. */
const char *req__arg(const struct request *r, const char *name);
const char *req__header(const struct request *r, const char *name);
/* The request time, seconds. */
int64_t req__now(void);

/* Sets a JSON error response: {"error": "<message>"}. */
void resp__error(struct response *resp, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same with a code, in Connect's shape {"code": "<code>", "message": "<message>"};
 * code NULL gives resp__error's shape. */
void resp__errorv(struct response *resp, unsigned status, const char *code, const char *fmt,
		  va_list ap) __attribute__((format(printf, 4, 0)));
/* Sets a JSON response from v (reference stolen). */
void resp__json(struct response *resp, unsigned status, json_t *v);

/* Replaces the body with its gzip-decoded form when it is gzip (by Content-Encoding or
 * magic bytes when sniff is set). Returns 0, or sets a 400/413 error and returns < 0. */
int req__gunzip_body(struct request *r, struct response *resp, bool sniff);
/* What a route needs (server/auth.c): nothing, a read token or a write token. */
enum { AUTH_NONE = 0, AUTH_WRITE = 1, AUTH_READ = 2 };
/* Copies the tokens and their tenants of o into srv (free with auth__release, also after
 * a failure). Returns 0, or -EINVAL with err set when a tenant name is invalid. */
int auth__init(struct server *srv, const struct server_options *o, char *err, size_t errlen);
void auth__release(struct server *srv);
/* Checks the request's token against need when the server has tokens, and sets *tenant
 * to the tenant of the token that matched (NULL: none). Returns 0 when allowed (or no
 * token is configured), -EACCES without a valid token (401), -EPERM when the token is
 * valid but lacks the role (403). A token containing NUL never matches. */
int auth__check(const struct request *r, unsigned need, const char **tenant);
/* Everything checked before a route's handler runs: the request's hygiene (400; HTTP/2
 * requests without conn: nghttp2 has checked their header fields), its
 * token for need (401/403) and its tenant (token's, or X-Scope-OrgID's on a server with
 * tenants: 400/403), which it sets in r->tenant. r needs srv and conn. Returns 0, or the
 * HTTP status to answer with and the message in why. */
unsigned auth__admit(struct request *r, unsigned need, char *why, size_t len);
/* True for a tenant name: 1 to 64 characters of [A-Za-z0-9_-]. */
bool tenant__valid(const char *name);
/* The name a service of r's tenant is stored under ("TENANT:SERVICE", ':' is never in a
 * service name), malloc'd; NULL when r has no tenant (stored as it is). */
char *tenant__service(const struct request *r, const char *service);
/* The name r's tenant knows stored service name by, or NULL when it belongs to another
 * tenant. */
const char *tenant__strip(const struct request *r, const char *stored);
/* True when sa is a loopback address (127.0.0.0/8, ::1, ::ffff:127.x.y.z). */
bool auth__loopback(const struct sockaddr_storage *sa);
/* Refuses (-EPERM with err set) to serve a non-loopback address sa with no token unless
 * o->insecure_open; 0 otherwise. */
int auth__check_listen(const struct server_options *o, const struct sockaddr_storage *sa,
		       char *err, size_t errlen);
/* True when s (len bytes) is valid UTF-8 (shortest forms, no surrogates) without NUL. */
bool auth__valid_utf8(const char *s, size_t len);
/* Checks every query argument and header of conn: no NUL, valid UTF-8 in arguments, at
 * most one Content-Length, not with Transfer-Encoding, which is at most one "chunked".
 * Returns 0, or -EINVAL with err saying what (the request gets 400). */
int auth__hygiene(struct MHD_Connection *conn, char *err, size_t errlen);
/* Takes an exclusive lock (flock) on the lock file of store location (DIR/kiln.lock, or
 * PATH.lock for sqlite:PATH), kept while *fd is open; *fd is -1 for locations that are
 * not local files. Returns 0, or a negative errno with err set (-EWOULDBLOCK: another
 * server holds it). */
int auth__lock_store(const char *location, int *fd, char *err, size_t errlen);

/* Route handlers (server/ingest.c, ingest_push.c, query.c). */
void ingest__gprofiler(struct request *r, struct response *resp);
void ingest__pyroscope(struct request *r, struct response *resp);
void ingest__push(struct request *r, struct response *resp);
void ingest__otlp(struct request *r, struct response *resp);
/* `/ingest?format=jfr` (server/ingest_jfr.c), called by ingest__pyroscope once the
 * request's name q, times, sampleRate (0: none given) and spyName (may be NULL) are
 * checked: parses the recording and stores a series per event kind, or sets the error. */
void ingest__jfr(struct request *r, struct response *resp, const struct store_query *q,
		 int64_t from, int64_t until, unsigned long rate, const char *spy);

/* Limits of a series, as Pyroscope's: label names per series, and the bytes of a name
 * and a value; series in one Connect push. */
#define INGEST_MAX_LABELS 30
#define INGEST_MAX_LABEL_NAME 1024
#define INGEST_MAX_LABEL_VALUE 2048
#define INGEST_MAX_SERIES_PER_PUSH 1000

/* Checks a label set against the limits above. Returns 0, or -E2BIG with a message. */
int ingest__check_labels(const struct labels *l, char *err, size_t errlen);
/* The one service-name rule of every ingest route (selector__valid_service: 1 to 256
 * characters of [A-Za-z0-9_.-/]). Returns true, or sets a 400 naming it and the rule. */
bool ingest__check_service(struct response *resp, const char *name);
/* How far ahead of the server's clock an upload may be. */
#define INGEST_MAX_FUTURE 86400
/* Checks that an uploaded time t (seconds) lies in [0, now + INGEST_MAX_FUTURE]. Returns
 * 0, or sets a 422 naming field and returns -ERANGE. */
int ingest__check_time(struct response *resp, const char *field, int64_t t, int64_t now);
/* Shared by the ingest handlers. Checks put's service, times and labels (valid UTF-8,
 * the limits above: 400/422 as above), stores it under the server's lock; on failure
 * sets a 422/507/500 error and returns a negative errno. */
int ingest__store(struct request *r, struct response *resp, const struct store_put *put);
/* The HTTP status of a failed put's errno (422, 503, 507 or 500). */
unsigned ingest__put_status(int ret);
/* Asynchronous puts (server/ingest_wait.c). ingest__acks_init readies a's lock for conn's
 * request; ingest__put_async starts put for r (r->acks set): returns 0 when the store
 * took it (the answer waits for it), else a negative errno with err set (-EBUSY: the
 * server's --max-waiting-uploads, or the store's own bound, is reached: 503). */
void ingest__acks_init(struct put_acks *a, struct server *srv, struct MHD_Connection *conn);
void ingest__acks_release(struct put_acks *a);
int ingest__put_async(struct request *r, const struct store_put *put, char *err, size_t errlen);
/* After the handler answered resp: returns true when puts are still on their way (a's
 * connection is then suspended, and resumed when the last is done), false when all are
 * done; then and after the resume, ingest__acks_answer turns resp into the first
 * failure's error when there was one (and resp was no error already). */
bool ingest__acks_suspend(struct put_acks *a);
void ingest__acks_answer(struct put_acks *a, struct response *resp);
/* Waits until no put of srv waits for the store (at stop: no connection stays suspended). */
void ingest__acks_drain(struct server *srv);
/* Pyroscope's ingest limits (server/ingest_limits.c), as server_options sets them. */
/* The limits in force (the defaults for 0; SIZE_MAX: none). */
size_t ingest__max_profile_bytes(const struct server *srv);
size_t ingest__max_samples(const struct server *srv);
/* The frames a pushed stack keeps from its root, as a store_put's max_depth (0: the
 * store's own bound). */
uint32_t ingest__max_depth(const struct server *srv);
/* Checks a pushed profile as sent (*data, *len: raw, or gzip which is inflated into
 * scratch, *data and *len then pointing there) against the size limit, uncompressed.
 * Returns 0, -EFBIG beyond it, or -EINVAL for bad gzip, with a message in err. */
int ingest__limit_size(const struct server *srv, const void **data, size_t *len,
		       struct strbuf *scratch, char *err, size_t errlen);
/* Checks the samples (distinct stacks with their labels) of a parsed profile against the
 * limit. Returns 0, or -E2BIG with a message in err. */
int ingest__limit_samples(const struct server *srv, const struct profile *p, char *err,
			  size_t errlen);
/* Checks an upload's times (seconds) against the ingestion window around now. Returns 0,
 * or -ERANGE with a message in err. */
int ingest__limit_window(const struct server *srv, int64_t from, int64_t until, int64_t now,
			 char *err, size_t errlen);
/* Span profiles (server/ingest_spans.c): the samples of a put labelled span_id (or
 * profile_id) are stored once more in the companion service "<service>" INGEST_SPAN_MARK,
 * each stack under the extra root frame INGEST_SPAN_FRAME "<id>". */
#define INGEST_SPAN_MARK "#spans"
#define INGEST_SPAN_FRAME "span_id="
/* True when a stored service name is a span companion (listings leave those out). */
bool ingest__is_span_service(const char *stored);
/* The companion's name for a stored service name (malloc'd). */
char *ingest__span_service(const char *service);
/* The companion put of put (service: the stored, tenant-qualified name): its
 * span-labelled stacks, with put's type, series and times, in out->put, which owns what
 * it points to (free with ingest__span_put_release); out->service is NULL when no stack
 * has a span id. ingest__store hangs it on put's `also`, so that the store writes both
 * or neither: a failed companion cannot leave the main profile stored for the client's
 * retry to store again. */
struct span_put {
	struct store_put put;
	char *service;
	struct profile *profile;
	uint32_t *stack_series;
};
void ingest__span_put(const struct store_put *put, struct span_put *out);
void ingest__span_put_release(struct span_put *sp);
/* One series of a parsed pprof: which sample type of the profile, the service it goes
 * to (legacy naming, "app.cpu", "app.alloc_space", ...), its profile type id
 * (profile/ptype.h) and Pyroscope units. */
struct pprof_series {
	size_t index;
	char *service;
	char *profile_type;
	const char *units;
};

/* Parses pprof data into p with every sample type, and lists in *out (malloc'd, *n
 * entries, free with ingest__free_series) one series per sample type, the preferred
 * type of each service first (samples before cpu): app (without a type suffix it may
 * end with) plus the type's suffix, the id's name part pushed_name (Pyroscope's
 * __name__; NULL: from the type). Returns 0; -ENOENT when the profile has no sample
 * type kiln can name a service after; -EINVAL with err set. */
int ingest__parse_pprof(struct profile *p, const void *data, size_t len, const char *app,
			const char *pushed_name, struct pprof_series **out, size_t *n, char *err,
			size_t errlen);
void ingest__free_series(struct pprof_series *v, size_t n);
/* The series of a pushed profile: for each label set its stacks use, base's labels plus
 * the set's own (labels base has win; empty values, names no selector can name, and the
 * per-request ones — span_id, span_name, profile_id, trace_id — are left out), one series
 * per distinct result. Fills *out (*n series, at least one) and *stack_series (the series
 * of each stack); free them with ingest__free_series_labels. Returns 0. */
int ingest__series(const struct profile *p, const struct labels *base, struct labels **out,
		   size_t *n, uint32_t **stack_series);
void ingest__free_series_labels(struct labels *v, size_t n, uint32_t *stack_series);
/* Selects q's stacks in [from, until) into out for the .col export (server/query_col.c):
 * each stack labelled with its container and its process (the root frame the .col
 * route kept, taken off the stack) where the series have them, which col__write turns
 * into the "0;<container>;<process>;" prefix. Call under server__read_lock. Returns 0,
 * or the store's negative errno with err set. */
int query__select_col(struct server *srv, const struct store_query *q, int64_t from,
		      int64_t until, struct profile *out, char *err, size_t errlen);
void query__render(struct request *r, struct response *resp);
void query__render_diff(struct request *r, struct response *resp);
void query__labels(struct request *r, struct response *resp);
void query__label_values(struct request *r, struct response *resp);
void query__label_sets(struct request *r, struct response *resp);
void query__apps(struct request *r, struct response *resp);
void query__series(struct request *r, struct response *resp);
/* Grafana's Pyroscope datasource: the Connect querier API (server/query_connect*.c). */
void query__connect_profile_types(struct request *r, struct response *resp);
void query__connect_label_names(struct request *r, struct response *resp);
void query__connect_label_values(struct request *r, struct response *resp);
void query__connect_series(struct request *r, struct response *resp);
void query__connect_select_merge_stacktraces(struct request *r, struct response *resp);
void query__connect_select_merge_profile(struct request *r, struct response *resp);
void query__connect_select_series(struct request *r, struct response *resp);
void query__connect_select_merge_span_profile(struct request *r, struct response *resp);
void query__connect_diff(struct request *r, struct response *resp);
/* The web UI's embedded files (server/ui_route.c): `/` and `/ui/NAME`. */
void ui__asset(struct request *r, struct response *resp);
/* index.html with its embedded stylesheets and scripts inlined (built on first use), or
 * NULL when there is no index.html. Sets *len. */
const char *ui__index(size_t *len);

#endif
