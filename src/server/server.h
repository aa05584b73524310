/* `kiln serve`: the HTTP server (libmicrohttpd) in front of the store.
 *
 * Routes (see server/ingest.c and server/query.c):
 *   GET  /api/v1/health_check, /api/v2/health_check     gProfiler agent's start check
 *   POST /api/v2/profiles                               gProfiler upload (gzip JSON + .col)
 *   POST /ingest, /pyroscope/ingest                     Pyroscope push (folded, lines, pprof)
 *   GET  /pyroscope/render, /render                     flamebearer JSON, or format=collapsed|pprof|html
 *   GET  /pyroscope/render-diff, /render-diff           "double" flamebearer, or format=html
 *   GET  /pyroscope/labels, /labels, /pyroscope/label-values, /label-values
 *   GET  /api/apps                                      services with their metadata
 *   GET  /api/series                                    sample totals over time
 *   GET  /, /ui/NAME                                    the web UI (embedded files)
 * When any token is configured, uploads need a write token and every other route but the
 * health checks and the UI's static files a read token (401 without one, 403 with a token
 * of the other role). Without tokens the server listens on loopback only, unless
 * insecure_open. Every error is JSON {"error": "..."}. */
#ifndef KILN_SERVER_SERVER_H
#define KILN_SERVER_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct server_options {
	const char *listen;		/* "ADDR:PORT"; port 0 picks a free one */
	const char *otlp_grpc_listen;	/* "ADDR:PORT" of OTLP over gRPC (server/grpc.h), NULL: off */
	const char *data_dir;		/* store location (directory or URL), see store__open */
	int retention_days;		/* raw data kept this long; 0 keeps everything */
	const char *const *tokens;	/* write tokens: may upload */
	size_t nr_tokens;
	const char *const *read_tokens;	/* read tokens: may query (a token in both may do both) */
	size_t nr_read_tokens;
	/* The tenant of each token (parallel to tokens and read_tokens; NULL arrays or entries:
	 * none). With any tenant, a tenant's token sees and writes only its own services, and
	 * a token without one picks a tenant with X-Scope-OrgID (none: the default tenant). */
	const char *const *token_tenants, *const *read_token_tenants;
	bool insecure_open;		/* no token on a non-loopback address is allowed */
	const char *tls_cert, *tls_key;	/* PEM files: serve HTTPS (both or neither) */
	size_t max_body_bytes;		/* request body as sent (413 beyond) */
	size_t max_decoded_bytes;	/* body after gzip decoding (413 beyond) */
	unsigned threads;		/* HTTP worker threads */
	int query_timeout_ms;		/* a store read stops after this long (503); 0: default */
	unsigned client_connections;	/* connections per client address; 0: default */
	/* Uploads whose connection waits for a store that acknowledges puts later
	 * (store__async_puts: ClickHouse) without holding a thread; one more: 503.
	 * 0: SERVER_DEFAULT_WAITING_UPLOADS. */
	unsigned max_waiting_uploads;
	/* Pyroscope's ingest limits (server/ingest_limits.c). 0 takes the default, SIZE_MAX
	 * none; the window's bounds are seconds, 0: none. */
	size_t max_profile_bytes;	/* a pushed profile, uncompressed (413 beyond) */
	size_t max_profile_samples;	/* samples of one pushed profile (400 beyond) */
	size_t max_stack_depth;		/* frames of a pushed stack kept from the root (the
					 * leaf end is cut beyond) */
	int64_t reject_older_than;	/* an upload starting this long before now: 422 */
	int64_t reject_newer_than;	/* an upload ending this long after now: 422 */
};

#define SERVER_DEFAULT_LISTEN "127.0.0.1:4040"
#define SERVER_DEFAULT_MAX_BODY (16u << 20)
#define SERVER_DEFAULT_MAX_DECODED (256u << 20)
/* Connections one client address may hold: idle ones from one host cannot lock out the
 * others. A connection silent for 15 s is closed. */
#define SERVER_DEFAULT_CLIENT_CONNECTIONS 64u
/* Uploads that may wait at once for their store's acknowledgement (each a suspended
 * connection and the rows it put: the store bounds those too). */
#define SERVER_DEFAULT_WAITING_UPLOADS 4096u
/* A query reads the store at most this long: 503 beyond. */
#define SERVER_DEFAULT_QUERY_TIMEOUT_MS 10000
/* Pyroscope's defaults for a pushed profile: 4 MiB uncompressed, 16,000 samples. */
#define INGEST_DEFAULT_MAX_PROFILE_BYTES (4u << 20)
#define INGEST_DEFAULT_MAX_SAMPLES 16000u
/* Pyroscope's max_profile_stacktrace_depth: deeper pushed stacks are cut to 1,000 frames. */
#define INGEST_DEFAULT_MAX_DEPTH 1000u

struct server;

/* Opens the store (taking its directory's lock) and starts serving in background
 * threads. Returns NULL with a message in err when the store cannot be opened or is in
 * use by another server, the address cannot be bound or is not loopback without a
 * token, or the TLS files cannot be read. */
struct server *server__start(const struct server_options *opts, char *err, size_t errlen);
/* The port actually bound (useful with port 0). */
uint16_t server__port(const struct server *srv);
/* The gRPC listener's port, 0 when it is off. */
uint16_t server__grpc_port(const struct server *srv);
/* Stops serving, waits for requests in flight, closes the store. Accepts NULL. */
void server__stop(struct server *srv);

#endif
