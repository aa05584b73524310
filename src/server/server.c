/* The HTTP front of `kiln serve`: libmicrohttpd with a pool of threads, routing, token
 * checks, body limits, and the retention thread. Handlers run outside the store lock and
 * take it only around store writes, and around reads of a store that cannot read beside
 * a write (server__read_lock). */
#include "server/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server/cache.h"
#include "server/grpc.h"
#include "server/listen.h"
#include "server/offload.h"
#include "ui/assets.h"
#include "util/log.h"

/* Connections: one client (an address) holds at most opts.client_connections of them, so
 * that idle or half-open connections from one host cannot take the server's whole budget
 * (about 1,020 by default in libmicrohttpd) and lock everyone out; a connection silent
 * for IDLE_TIMEOUT seconds is closed. The global limit is listen__connection_budget(). */
#define CONNECTION_IDLE_TIMEOUT 15

/* Rendered flamegraphs kept: a few views (ranges, filters, maxNodes) of a few users. */
#define RENDER_CACHE_ENTRIES 32
#define RENDER_CACHE_BYTES (64u << 20)

static const struct route {
	const char *method, *path;
	void (*fn)(struct request *r, struct response *resp);
	int auth;
} routes[] = {
	{ "POST", "/api/v2/profiles", ingest__gprofiler, AUTH_WRITE },
	{ "POST", "/api/v1/profiles", ingest__gprofiler, AUTH_WRITE },
	{ "POST", "/ingest", ingest__pyroscope, AUTH_WRITE },
	{ "POST", "/pyroscope/ingest", ingest__pyroscope, AUTH_WRITE },
	{ "POST", "/push.v1.PusherService/Push", ingest__push, AUTH_WRITE },
	{ "POST", "/v1development/profiles", ingest__otlp, AUTH_WRITE },
	{ "GET", "/pyroscope/render", query__render, AUTH_READ },
	{ "GET", "/render", query__render, AUTH_READ },
	{ "GET", "/pyroscope/render-diff", query__render_diff, AUTH_READ },
	{ "GET", "/render-diff", query__render_diff, AUTH_READ },
	{ "GET", "/pyroscope/labels", query__labels, AUTH_READ },
	{ "GET", "/labels", query__labels, AUTH_READ },
	{ "GET", "/pyroscope/label-values", query__label_values, AUTH_READ },
	{ "GET", "/label-values", query__label_values, AUTH_READ },
	{ "GET", "/api/apps", query__apps, AUTH_READ },
	{ "GET", "/api/labels", query__label_sets, AUTH_READ },
	{ "GET", "/api/series", query__series, AUTH_READ },
	{ "POST", "/querier.v1.QuerierService/ProfileTypes", query__connect_profile_types, AUTH_READ },
	{ "POST", "/querier.v1.QuerierService/LabelNames", query__connect_label_names, AUTH_READ },
	{ "POST", "/querier.v1.QuerierService/LabelValues", query__connect_label_values, AUTH_READ },
	{ "POST", "/querier.v1.QuerierService/Series", query__connect_series, AUTH_READ },
	{ "POST", "/querier.v1.QuerierService/SelectMergeStacktraces",
	  query__connect_select_merge_stacktraces, AUTH_READ },
	{ "POST", "/querier.v1.QuerierService/SelectMergeProfile",
	  query__connect_select_merge_profile, AUTH_READ },
	{ "POST", "/querier.v1.QuerierService/SelectSeries", query__connect_select_series, AUTH_READ },
	{ "POST", "/querier.v1.QuerierService/SelectMergeSpanProfile",
	  query__connect_select_merge_span_profile, AUTH_READ },
	{ "POST", "/querier.v1.QuerierService/Diff", query__connect_diff, AUTH_READ },
	{ "GET", "/", ui__asset, AUTH_NONE },
	{ "GET", "/ui/", ui__asset, AUTH_NONE },	/* a path ending in '/' matches a prefix */
};

static void health(struct request *r, struct response *resp)
{
	resp__json(resp, 200, json_pack("{s:s}", "message", "ok"));
}

static const struct route health_routes[] = {
	{ "GET", "/api/v1/health_check", health, AUTH_NONE },
	{ "GET", "/api/v2/health_check", health, AUTH_NONE },
	{ "GET", "/healthz", health, AUTH_NONE },
};

static const char *content_type_of(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (!dot)
		return "application/octet-stream";
	if (!strcmp(dot, ".html"))
		return "text/html; charset=utf-8";
	if (!strcmp(dot, ".js"))
		return "text/javascript; charset=utf-8";
	if (!strcmp(dot, ".css"))
		return "text/css; charset=utf-8";
	if (!strcmp(dot, ".svg"))
		return "image/svg+xml";
	if (!strcmp(dot, ".json"))
		return "application/json";
	return "application/octet-stream";
}

/* The web UI: "/" is src/ui/index.html, "/ui/NAME" any embedded file (see ui/assets.h).
 * Without an index.html, "/" lists the API. */
static void static_files(struct request *r, struct response *resp)
{
	const char *name = !strcmp(r->url, "/") ? "index.html" : r->url + strlen("/ui/");
	const struct asset *a = strchr(name, '/') ? NULL : asset__find(name);
	const char *page;
	size_t len;

	if (!strcmp(r->url, "/") && (page = ui__index(&len))) {
		resp->status = 200;
		resp->content_type = content_type_of(name);
		strbuf_add(&resp->body, page, len);
	} else if (a) {
		resp->status = 200;
		resp->content_type = content_type_of(name);
		strbuf_add(&resp->body, a->data, a->size);
	} else if (!strcmp(r->url, "/")) {
		resp->status = 200;
		resp->content_type = "text/html; charset=utf-8";
		strbuf_addstr(&resp->body,
			      "<!doctype html><title>kiln</title><h1>kiln server</h1><ul>"
			      "<li><a href=\"/api/apps\">/api/apps</a>: services"
			      "<li>/pyroscope/render?query=SERVICE{label=\"value\"}&amp;from=now-1h&amp;until=now"
			      "[&amp;format=collapsed|pprof]"
			      "<li>/pyroscope/render-diff, /pyroscope/labels, /pyroscope/label-values, /api/labels, /api/series"
			      "<li>uploads: POST /api/v2/profiles (gProfiler), POST /ingest and "
			      "/push.v1.PusherService/Push (Pyroscope)</ul>");
	} else {
		resp__error(resp, 404, "no such file '%.64s'", name);
	}
}

static const struct route static_route = { "GET", "/", static_files, AUTH_NONE };

static const struct route *find_route(const char *method, const char *url, bool *path_known)
{
	const struct route *tables[] = { routes, health_routes };
	const size_t sizes[] = { sizeof(routes) / sizeof(routes[0]),
				 sizeof(health_routes) / sizeof(health_routes[0]) };

	*path_known = false;
	if (!strcmp(url, "/") || !strncmp(url, "/ui/", 4)) {
		*path_known = true;
		return !strcmp(method, "GET") || !strcmp(method, "HEAD") ? &static_route : NULL;
	}
	for (size_t t = 0; t < 2; t++) {
		for (size_t i = 0; i < sizes[t]; i++) {
			const char *path = tables[t][i].path;
			size_t len = strlen(path);
			if (strcmp(path, url) &&
			    !(len > 1 && path[len - 1] == '/' && !strncmp(path, url, len)))
				continue;
			*path_known = true;
			if (!strcmp(tables[t][i].method, method) ||
			    (!strcmp(method, "HEAD") && !strcmp(tables[t][i].method, "GET")))
				return &tables[t][i];
		}
	}
	return NULL;
}

/* True when the client takes gzip (Accept-Encoding lists it without q=0). */
static bool accepts_gzip(struct MHD_Connection *conn)
{
	const char *ae = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept-Encoding");

	for (const char *p = ae; p && *p;) {
		size_t len = strcspn(p, ",");
		const char *q = memchr(p, ';', len);
		size_t name = q ? (size_t)(q - p) : len;
		while (name && (*p == ' ' || *p == '\t'))
			p++, name--, len--;
		while (name && (p[name - 1] == ' ' || p[name - 1] == '\t'))
			name--;
		if (name == 4 && !strncasecmp(p, "gzip", 4)) {
			const char *v = q ? strstr(q, "q=") : NULL;
			return !v || v >= p + len || strtod(v + 2, NULL) > 0;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return false;
}

/* Text worth compressing: JSON, HTML, scripts, styles, .col; not pprof (gzip already). */
static bool compressible(const struct response *resp)
{
	const char *ct = resp->content_type ? resp->content_type : "application/json";

	return resp->body.len >= 1024 && (!strncmp(ct, "text/", 5) ||
					  !strcmp(ct, "application/json") ||
					  !strcmp(ct, "image/svg+xml"));
}

static enum MHD_Result send_response(struct MHD_Connection *conn, struct response *resp)
{
	struct MHD_Response *m;
	enum MHD_Result ret;
	size_t len;
	char *body;
	bool text = compressible(resp), gz = text;

	if (gz && accepts_gzip(conn)) {
		struct strbuf out = STRBUF_INIT;
		/* level 1: a 200 kB flamegraph in ~2 ms, about as small as level 6's */
		if (!gzip__compress_level(&out, resp->body.buf, resp->body.len, 1)) {
			strbuf_release(&resp->body);
			resp->body = out;
		} else {
			strbuf_release(&out);
			gz = false;
		}
	} else {
		gz = false;
	}
	body = strbuf_detach(&resp->body, &len);

	m = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!m) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(m, "Content-Type", resp->content_type ? resp->content_type
								 : "application/json");
	if (resp->disposition)
		MHD_add_response_header(m, "Content-Disposition", resp->disposition);
	if (resp->cache)
		MHD_add_response_header(m, "X-Kiln-Cache", resp->cache);
	if (text)
		MHD_add_response_header(m, "Vary", "Accept-Encoding");
	if (gz)
		MHD_add_response_header(m, "Content-Encoding", "gzip");
	ret = MHD_queue_response(conn, resp->status, m);
	MHD_destroy_response(m);
	return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *conn, unsigned status, const char *msg)
{
	struct response resp = { .status = status };
	enum MHD_Result ret;

	strbuf_init(&resp.body, 0);
	resp__error(&resp, status, "%s", msg);
	ret = send_response(conn, &resp);
	strbuf_release(&resp.body);
	return ret;
}

/* 401 with a challenge, so that clients know basic auth (password = token) and Bearer
 * are accepted; the UI asks for a token instead of the browser's own dialog. */
static enum MHD_Result send_unauthorized(struct MHD_Connection *conn)
{
	struct response resp = { .status = 401 };
	struct MHD_Response *m;
	enum MHD_Result ret;
	size_t len;
	char *body;

	strbuf_init(&resp.body, 0);
	resp__error(&resp, 401, "missing or invalid token");
	body = strbuf_detach(&resp.body, &len);
	m = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!m) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(m, "Content-Type", "application/json");
	MHD_add_response_header(m, "WWW-Authenticate", "Bearer realm=\"kiln\"");
	ret = MHD_queue_response(conn, 401, m);
	MHD_destroy_response(m);
	return ret;
}

struct conn_state {
	struct request req;
	const struct route *route;
	struct response resp;	/* of a read route run by srv->offload, or of an upload
				 * whose puts are on their way */
	bool offloaded, answered;
	struct put_acks acks;	/* an upload's asynchronous puts (req.acks) */
};

/* A read route's handler, on an offload thread while its connection is suspended. */
static void run_offloaded(void *arg)
{
	struct conn_state *cs = arg;

	cs->route->fn(&cs->req, &cs->resp);
	cs->answered = true;
	MHD_resume_connection(cs->req.conn);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_size, void **con_cls)
{
	struct server *srv = cls;
	struct conn_state *cs = *con_cls;

	if (!cs) {
		bool known;
		const struct route *route = find_route(method, url, &known);
		const char *clen;

		if (!route)
			return send_error(conn, known ? 405 : 404,
					  known ? "method not allowed" : "no such endpoint");
		struct request probe = { .srv = srv, .conn = conn };
		char why[160];
		unsigned status = auth__admit(&probe, (unsigned)route->auth, why, sizeof(why));

		if (status == 401)
			return send_unauthorized(conn);
		if (status)
			return send_error(conn, status, why);
		clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
		if (clen && strtoull(clen, NULL, 10) > srv->opts.max_body_bytes) {
			char msg[96];
			snprintf(msg, sizeof(msg), "request body is larger than %zu bytes",
				 srv->opts.max_body_bytes);
			return send_error(conn, 413, msg);
		}
		cs = xcalloc(1, sizeof(*cs));
		cs->route = route;
		cs->req.srv = srv;
		cs->req.conn = conn;
		cs->req.method = method;
		cs->req.url = url;
		cs->req.tenant = probe.tenant;
		strbuf_init(&cs->req.body, 0);
		*con_cls = cs;
		return MHD_YES;
	}
	if (*upload_size) {
		if (cs->req.body.len + *upload_size > srv->opts.max_body_bytes)
			cs->req.too_large = true;
		else
			strbuf_add(&cs->req.body, upload_data, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (cs->req.too_large) {
		char msg[96];
		snprintf(msg, sizeof(msg), "request body is larger than %zu bytes",
			 srv->opts.max_body_bytes);
		return send_error(conn, 413, msg);
	}

	struct response resp = { .status = 500 };
	enum MHD_Result ret;
	if (cs->answered || (cs->req.acks && cs->acks.suspended)) {
		/* resumed: the offloaded handler's answer, or the upload's once stored */
		resp = cs->resp;
		cs->resp.body = (struct strbuf)STRBUF_INIT;
	} else if (cs->route->auth == AUTH_READ && srv->offload && !cs->offloaded) {
		/* a query must not hold up the other connections of this MHD thread */
		cs->offloaded = true;
		cs->resp = (struct response){ .status = 500 };
		strbuf_init(&cs->resp.body, 0);
		MHD_suspend_connection(conn);
		if (!offload__run(srv->offload, run_offloaded, cs))
			run_offloaded(cs);	/* stopping: here, then resumed */
		return MHD_YES;
	} else {
		strbuf_init(&resp.body, 0);
		if (cs->route->auth == AUTH_WRITE && store__async_puts(srv->store)) {
			ingest__acks_init(&cs->acks, srv, conn);
			cs->req.acks = &cs->acks;
		}
		cs->route->fn(&cs->req, &resp);
		if (cs->req.acks && ingest__acks_suspend(&cs->acks)) {
			cs->resp = resp;	/* answered once the store acknowledged */
			return MHD_YES;
		}
	}
	if (cs->req.acks)
		ingest__acks_answer(&cs->acks, &resp);
	if (resp.status >= 400)
		log_debug("%s %s: %u %s", method, url, resp.status, resp.body.buf);
	ret = send_response(conn, &resp);
	strbuf_release(&resp.body);
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct conn_state *cs = *con_cls;

	if (!cs)
		return;
	strbuf_release(&cs->req.body);
	strbuf_release(&cs->resp.body);
	if (cs->req.acks)
		ingest__acks_release(&cs->acks);
	free(cs);
	*con_cls = NULL;
}

void server__read_lock(struct server *srv)
{
	if (!store__concurrent_reads(srv->store))
		pthread_mutex_lock(&srv->lock);
}

void server__read_unlock(struct server *srv)
{
	if (!store__concurrent_reads(srv->store))
		pthread_mutex_unlock(&srv->lock);
}

/* Runs the store's maintenance (rollups of closed periods, retention) at start and every
 * hour until the server stops. */
/* One pass of the store's maintenance: retention and rollups (store__retain). */
static void maintain(struct server *srv)
{
	char err[256];

	pthread_mutex_lock(&srv->lock);
	int64_t before = srv->opts.retention_days > 0
			 ? req__now() - (int64_t)srv->opts.retention_days * 86400 : 0;
	int n = store__retain(srv->store, before, err, sizeof(err));
	pthread_mutex_unlock(&srv->lock);
	if (n < 0)
		log_error("%s", err);
	else if (n)
		log_info("retention: deleted %d sample rows", n);
}

/* Maintenance every hour after the one server__start ran before serving (so that a
 * first pass cannot land between two queries of a new server's first client, changing
 * the store's generation under them). */
static void *retention_loop(void *arg)
{
	struct server *srv = arg;

	pthread_mutex_lock(&srv->stop_lock);
	while (!srv->stopping) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 3600;
		while (!srv->stopping &&
		       pthread_cond_timedwait(&srv->stop_cond, &srv->stop_lock, &until) != ETIMEDOUT)
			;
		if (srv->stopping)
			break;
		pthread_mutex_unlock(&srv->stop_lock);
		maintain(srv);
		pthread_mutex_lock(&srv->stop_lock);
	}
	pthread_mutex_unlock(&srv->stop_lock);
	return NULL;
}

/* Reads the PEM certificate and key when TLS is asked for, and fills opt (3 items) with
 * libmicrohttpd's options for them. Returns 0, or a negative errno with err set. */
static int tls__load(struct server *srv, struct MHD_OptionItem *opt, char *err, size_t errlen)
{
	int ret = listen__read_tls(srv->opts.tls_cert, srv->opts.tls_key, &srv->tls_cert,
				   &srv->tls_key, err, errlen);

	if (ret || !srv->tls_cert.len)
		return ret;
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		errmsg(err, errlen, "failed to serve TLS: this libmicrohttpd was built without it");
		return -ENOTSUP;
	}
	opt[0] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, srv->tls_cert.buf };
	opt[1] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, srv->tls_key.buf };
	opt[2] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	return 0;
}

struct server *server__start(const struct server_options *opts, char *err, size_t errlen)
{
	struct server *srv = xcalloc(1, sizeof(*srv));
	struct store_options so = { .retention_days = opts->retention_days,
				    .query_timeout_ms = opts->query_timeout_ms > 0
							? opts->query_timeout_ms
							: SERVER_DEFAULT_QUERY_TIMEOUT_MS };
	struct sockaddr_storage sa, sa_grpc;
	const union MHD_DaemonInfo *info;
	struct MHD_OptionItem tls[3] = { { MHD_OPTION_END, 0, NULL } };

	/* A query of a large profile allocates tens of MB of short-lived arrays; glibc would
	 * map and unmap them for each request (page faults cost ~a third of a query). Keep
	 * freed memory in the heap for the next query instead. */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	srv->opts = *opts;
	if (!srv->opts.listen)
		srv->opts.listen = SERVER_DEFAULT_LISTEN;
	if (!srv->opts.max_body_bytes)
		srv->opts.max_body_bytes = SERVER_DEFAULT_MAX_BODY;
	if (!srv->opts.max_decoded_bytes)
		srv->opts.max_decoded_bytes = SERVER_DEFAULT_MAX_DECODED;
	if (!srv->opts.threads)
		srv->opts.threads = 4;
	srv->lock_fd = -1;
	strbuf_init(&srv->tls_cert, 0);
	strbuf_init(&srv->tls_key, 0);
	if (!srv->opts.client_connections)
		srv->opts.client_connections = SERVER_DEFAULT_CLIENT_CONNECTIONS;
	pthread_mutex_init(&srv->lock, NULL);
	pthread_mutex_init(&srv->stop_lock, NULL);
	pthread_mutex_init(&srv->waiting_lock, NULL);
	pthread_cond_init(&srv->waiting_cond, NULL);
	srv->cache = render_cache__new(RENDER_CACHE_ENTRIES, RENDER_CACHE_BYTES);
	pthread_cond_init(&srv->stop_cond, NULL);
	if (auth__init(srv, opts, err, errlen) ||
	    listen__parse(srv->opts.listen, &sa, err, errlen) ||
	    auth__check_listen(&srv->opts, &sa, err, errlen) ||
	    tls__load(srv, tls, err, errlen))
		goto fail;
	if (srv->opts.otlp_grpc_listen &&
	    (listen__parse(srv->opts.otlp_grpc_listen, &sa_grpc, err, errlen) ||
	     auth__check_listen(&srv->opts, &sa_grpc, err, errlen)))
		goto fail;
	srv->store = store__open(opts->data_dir ? opts->data_dir : "kiln-data", &so, err, errlen);
	if (!srv->store ||
	    auth__lock_store(opts->data_dir ? opts->data_dir : "kiln-data", &srv->lock_fd, err,
			     errlen))
		goto fail;
	maintain(srv);
	/* no MHD_OPTION_LISTENING_ADDRESS_REUSE: a second server on the port must fail */
	srv->offload = offload__new(srv->opts.threads);
	srv->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
				    MHD_ALLOW_SUSPEND_RESUME |
				    (sa.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0) |
				    (srv->tls_cert.len ? MHD_USE_TLS : 0),
				    0, NULL, NULL, on_request, srv,
				    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				    MHD_OPTION_THREAD_POOL_SIZE, srv->opts.threads,
				    MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
				    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_IDLE_TIMEOUT,
				    MHD_OPTION_PER_IP_CONNECTION_LIMIT, srv->opts.client_connections,
				    MHD_OPTION_CONNECTION_LIMIT, listen__connection_budget(),
				    MHD_OPTION_ARRAY, tls,
				    MHD_OPTION_END);
	if (!srv->mhd) {
		errmsg(err, errlen, "failed to listen on '%s': %s", srv->opts.listen,
		       strerror(errno ? errno : EADDRINUSE));
		goto fail;
	}
	info = MHD_get_daemon_info(srv->mhd, MHD_DAEMON_INFO_BIND_PORT);
	srv->port = info ? info->port : 0;
	if (srv->opts.otlp_grpc_listen &&
	    !(srv->grpc = grpc__start(srv, srv->opts.otlp_grpc_listen, err, errlen)))
		goto fail;
	if (pthread_create(&srv->retention_thread, NULL, retention_loop, srv) == 0)
		srv->retention_started = true;
	return srv;
fail:
	server__stop(srv);
	return NULL;
}

uint16_t server__port(const struct server *srv)
{
	return srv->port;
}

uint16_t server__grpc_port(const struct server *srv)
{
	return srv->grpc ? grpc__port(srv->grpc) : 0;
}

void server__stop(struct server *srv)
{
	if (!srv)
		return;
	grpc__stop(srv->grpc);		/* its calls store: before the store closes */
	offload__stop(srv->offload);	/* answers what is queued: no connection stays suspended */
	ingest__acks_drain(srv);	/* nor one whose upload the store has yet to acknowledge */
	if (srv->mhd)
		MHD_stop_daemon(srv->mhd);
	if (srv->retention_started) {
		pthread_mutex_lock(&srv->stop_lock);
		srv->stopping = true;
		pthread_cond_signal(&srv->stop_cond);
		pthread_mutex_unlock(&srv->stop_lock);
		pthread_join(srv->retention_thread, NULL);
	}
	store__close(srv->store);
	if (srv->lock_fd >= 0)
		close(srv->lock_fd);
	strbuf_release(&srv->tls_cert);
	strbuf_release(&srv->tls_key);
	auth__release(srv);
	render_cache__free(srv->cache);
	pthread_mutex_destroy(&srv->lock);
	pthread_mutex_destroy(&srv->stop_lock);
	pthread_cond_destroy(&srv->stop_cond);
	pthread_mutex_destroy(&srv->waiting_lock);
	pthread_cond_destroy(&srv->waiting_cond);
	free(srv);
}
