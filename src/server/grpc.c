/* OTLP over gRPC (server/grpc.h): an accept thread, a thread per connection running one
 * nghttp2 server session over blocking I/O (plain, or GnuTLS with ALPN h2), and the
 * Export method handed to ingest__otlp. */
#include "server/grpc.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <jansson.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/http.h"
#include "server/listen.h"
#include "util/hashmap.h"
#include "util/log.h"

struct grpc_listener {
	struct server *srv;
	int fd, stop_fd;		/* listening socket; eventfd, readable once stopping */
	uint16_t port;
	gnutls_certificate_credentials_t cred;	/* NULL: cleartext */
	pthread_t accept_thread;
	bool accept_started;
	pthread_mutex_t lock;
	pthread_cond_t idle;
	unsigned nr_conns;
	struct hashmap *per_client;	/* peer address -> its open connections */
};

struct h2conn {
	struct grpc_listener *g;
	int fd;
	unsigned char peer[16];		/* the client's address, the key of per_client */
	size_t peerlen;
	gnutls_session_t tls;		/* NULL: cleartext */
	nghttp2_session *h2;
	size_t buffered;		/* request bytes its open streams hold */
};

/* One request stream: the headers kiln reads, the body, then the answer's message. */
struct stream {
	char *method, *path, *ctype, *encoding, *authz, *org;
	struct strbuf body;
	bool too_large;
	struct strbuf out;
	size_t out_off;
};

/* ---- I/O ---- */

static int conn_write(struct h2conn *c, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = c->tls ? gnutls_record_send(c->tls, p, len)
				   : send(c->fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && (c->tls ? n == GNUTLS_E_INTERRUPTED || n == GNUTLS_E_AGAIN
				     : errno == EINTR))
			continue;
		if (n <= 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Sends what the session has queued. Returns 0 or -EIO. */
static int flush(struct h2conn *c)
{
	for (;;) {
		const uint8_t *data;
		ssize_t n = nghttp2_session_mem_send(c->h2, &data);
		if (n < 0)
			return -EIO;
		if (!n)
			return 0;
		if (conn_write(c, data, (size_t)n))
			return -EIO;
	}
}

/* ---- the Export call ---- */

static void stream_free(struct stream *s)
{
	char *v[] = { s->method, s->path, s->ctype, s->encoding, s->authz, s->org };

	for (size_t i = 0; i < 6; i++)
		free(v[i]);
	strbuf_release(&s->body);
	strbuf_release(&s->out);
	free(s);
}

#define NV(n, v) { (uint8_t *)(n), (uint8_t *)(v), strlen(n), strlen(v), NGHTTP2_NV_FLAG_NONE }

static ssize_t read_answer(nghttp2_session *h2, int32_t id, uint8_t *buf, size_t len,
			   uint32_t *flags, nghttp2_data_source *src, void *user)
{
	struct stream *s = src->ptr;
	size_t n = s->out.len - s->out_off;

	if (n > len)
		n = len;
	memcpy(buf, s->out.buf + s->out_off, n);
	s->out_off += n;
	if (s->out_off == s->out.len) {
		nghttp2_nv trailer[] = { NV("grpc-status", "0") };
		*flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
		if (nghttp2_submit_trailer(h2, id, trailer, 1))
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	return (ssize_t)n;
}

/* Answers a stream: code OK sends the empty ExportProfilesServiceResponse and the
 * trailer; any other code is a trailers-only answer with the message. */
static void answer(struct h2conn *c, int32_t id, struct stream *s, enum grpc_code code,
		   const char *msg)
{
	if (code == GRPC_OK) {
		nghttp2_nv h[] = { NV(":status", "200"), NV("content-type", "application/grpc"),
				   NV("grpc-accept-encoding", "gzip") };
		nghttp2_data_provider d = { .source.ptr = s, .read_callback = read_answer };
		strbuf_reset(&s->out);
		grpc__frame(&s->out, "", 0);
		s->out_off = 0;
		nghttp2_submit_response(c->h2, id, h, 3, &d);
		return;
	}
	struct strbuf enc = STRBUF_INIT;
	char num[12];
	snprintf(num, sizeof(num), "%d", (int)code);
	grpc__percent_encode(&enc, msg);
	nghttp2_nv h[] = { NV(":status", "200"), NV("content-type", "application/grpc"),
			   NV("grpc-accept-encoding", "gzip"), NV("grpc-status", num),
			   NV("grpc-message", enc.buf) };
	nghttp2_submit_response(c->h2, id, h, 5, NULL);
	strbuf_release(&enc);
}

/* The message of a handler's JSON error ({"message": ...}), or its whole body. */
static void error_text(const struct response *resp, char *out, size_t len)
{
	json_t *j = json_loadb(resp->body.buf, resp->body.len, 0, NULL);
	const char *m = j ? json_string_value(json_object_get(j, "message")) : NULL;

	snprintf(out, len, "%s", m ? m : resp->body.len ? resp->body.buf : "failed");
	json_decref(j);
}

static void handle(struct h2conn *c, int32_t id, struct stream *s)
{
	struct server *srv = c->g->srv;
	const void *msg;
	size_t len;
	bool compressed;
	char err[512];

	if (!s->method || strcmp(s->method, "POST") || !s->path ||
	    strcmp(s->path, OTLP_GRPC_EXPORT)) {
		errmsg(err, sizeof(err), "unknown method '%.128s': kiln serves %s",
		       s->path ? s->path : "", OTLP_GRPC_EXPORT);
		answer(c, id, s, GRPC_UNIMPLEMENTED, err);
		return;
	}
	if (!s->ctype || strncmp(s->ctype, "application/grpc", 16) ||
	    (s->ctype[16] && s->ctype[16] != '+' && s->ctype[16] != ';') ||
	    !strncmp(s->ctype, "application/grpc+json", 21)) {
		nghttp2_nv h[] = { NV(":status", "415"), NV("content-type", "text/plain") };
		nghttp2_submit_response(c->h2, id, h, 2, NULL);
		return;
	}
	if (s->too_large) {
		errmsg(err, sizeof(err), "gRPC message is larger than %zu bytes (--max-body-bytes)",
		       srv->opts.max_body_bytes);
		answer(c, id, s, GRPC_RESOURCE_EXHAUSTED, err);
		return;
	}
	if (grpc__unframe(s->body.buf, s->body.len, &msg, &len, &compressed, err, sizeof(err))) {
		answer(c, id, s, GRPC_INTERNAL, err);
		return;
	}
	struct strbuf plain = STRBUF_INIT;
	if (compressed) {
		int ret = -ENOTSUP;
		if (!s->encoding || strcasecmp(s->encoding, "gzip") ||
		    (ret = gzip__decompress(&plain, msg, len, srv->opts.max_decoded_bytes))) {
			if (ret == -EFBIG)
				errmsg(err, sizeof(err), "gRPC message is larger than %zu bytes once "
				       "decompressed", srv->opts.max_decoded_bytes);
			else
				errmsg(err, sizeof(err), ret == -ENOTSUP ? "compressed message with "
				       "grpc-encoding '%.32s': kiln takes gzip" : "gRPC message is not "
				       "valid gzip (grpc-encoding '%.32s')", s->encoding ? s->encoding
										  : "identity");
			answer(c, id, s, ret == -ENOTSUP ? GRPC_UNIMPLEMENTED : ret == -EFBIG ?
			       GRPC_RESOURCE_EXHAUSTED : GRPC_INTERNAL, err);
			strbuf_release(&plain);
			return;
		}
	} else {
		strbuf_add(&plain, msg, len);
	}

	/* the OTLP/HTTP route's request: its tokens, tenant header and protobuf body */
	const char *hdrs[] = { "Authorization", s->authz, "X-Scope-OrgID", s->org,
			       "Content-Type", "application/x-protobuf" };
	struct request r = { .srv = srv, .hdrs = hdrs, .nr_hdrs = 3, .method = "POST",
			     .url = OTLP_GRPC_EXPORT, .body = plain };
	struct response resp = { .status = 500 };
	unsigned status = auth__admit(&r, AUTH_WRITE, err, sizeof(err));

	strbuf_init(&resp.body, 0);
	if (!status) {
		ingest__otlp(&r, &resp);
		status = resp.status;
		if (status >= 400)
			error_text(&resp, err, sizeof(err));
	}
	if (status >= 400)
		log_debug("gRPC %s: %u %s", OTLP_GRPC_EXPORT, status, err);
	answer(c, id, s, grpc__code_of(status), err);
	strbuf_release(&r.body);
	strbuf_release(&resp.body);
}

/* ---- nghttp2 callbacks ---- */

static int on_begin_headers(nghttp2_session *h2, const nghttp2_frame *f, void *user)
{
	struct stream *s;

	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	s = xcalloc(1, sizeof(*s));
	strbuf_init(&s->body, 0);
	strbuf_init(&s->out, 0);
	nghttp2_session_set_stream_user_data(h2, f->hd.stream_id, s);
	return 0;
}

static int on_header(nghttp2_session *h2, const nghttp2_frame *f, const uint8_t *name,
		     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
		     void *user)
{
	struct stream *s = nghttp2_session_get_stream_user_data(h2, f->hd.stream_id);
	static const char *const names[] = { ":method", ":path", "content-type",
					     "grpc-encoding", "authorization", "x-scope-orgid" };
	char **slot[6];

	if (!s || f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	slot[0] = &s->method, slot[1] = &s->path, slot[2] = &s->ctype;
	slot[3] = &s->encoding, slot[4] = &s->authz, slot[5] = &s->org;
	for (size_t i = 0; i < 6; i++) {
		if (namelen != strlen(names[i]) || memcmp(name, names[i], namelen))
			continue;
		free(*slot[i]);	/* a repeated field: the last one */
		*slot[i] = xstrndup((const char *)value, valuelen);
	}
	return 0;
}

static int on_data(nghttp2_session *h2, uint8_t flags, int32_t id, const uint8_t *data,
		   size_t len, void *user)
{
	struct h2conn *c = user;
	struct stream *s = nghttp2_session_get_stream_user_data(h2, id);
	size_t max = c->g->srv->opts.max_body_bytes;

	if (!s || s->too_large)
		return 0;
	/* the bound is per connection: its streams together hold at most one message */
	if (s->body.len + len > max || c->buffered + len > max) {
		s->too_large = true;
		c->buffered -= s->body.len;
		strbuf_release(&s->body);
		return 0;
	}
	strbuf_add(&s->body, data, len);
	c->buffered += len;
	return 0;
}

static int on_frame(nghttp2_session *h2, const nghttp2_frame *f, void *user)
{
	struct h2conn *c = user;
	struct stream *s;

	if ((f->hd.type != NGHTTP2_DATA && f->hd.type != NGHTTP2_HEADERS) ||
	    !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	s = nghttp2_session_get_stream_user_data(h2, f->hd.stream_id);
	if (s)
		handle(c, f->hd.stream_id, s);
	return 0;
}

static int on_close(nghttp2_session *h2, int32_t id, uint32_t code, void *user)
{
	struct h2conn *c = user;
	struct stream *s = nghttp2_session_get_stream_user_data(h2, id);

	if (!s)
		return 0;	/* not a request's stream */
	c->buffered -= s->body.len;
	nghttp2_session_set_stream_user_data(h2, id, NULL);
	stream_free(s);
	return 0;
}

/* ---- connections ---- */

static int tls_handshake(struct h2conn *c)
{
	const gnutls_datum_t h2 = { (unsigned char *)"h2", 2 };
	int ret;

	if (gnutls_init(&c->tls, GNUTLS_SERVER | GNUTLS_NO_SIGNAL) ||
	    gnutls_credentials_set(c->tls, GNUTLS_CRD_CERTIFICATE, c->g->cred) ||
	    gnutls_set_default_priority(c->tls) ||
	    gnutls_alpn_set_protocols(c->tls, &h2, 1, GNUTLS_ALPN_MANDATORY))
		return -EIO;
	gnutls_transport_set_int(c->tls, c->fd);
	gnutls_handshake_set_timeout(c->tls, GRPC_IDLE_TIMEOUT * 1000u);
	do
		ret = gnutls_handshake(c->tls);
	while (ret < 0 && !gnutls_error_is_fatal(ret));
	if (ret < 0) {
		log_debug("gRPC: TLS handshake failed: %s", gnutls_strerror(ret));
		return -EIO;
	}
	return 0;
}

/* Serves one connection until the peer or the session ends it, it idles, or the
 * listener stops. */
static void serve(struct h2conn *c)
{
	nghttp2_session_callbacks *cb;
	nghttp2_settings_entry settings[] = {
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, GRPC_MAX_STREAMS },
		{ NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1u << 20 },
		{ NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, 64u << 10 },
	};
	uint8_t buf[16384];

	if (c->g->cred && tls_handshake(c))
		return;
	nghttp2_session_callbacks_new(&cb);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
	int ret = nghttp2_session_server_new(&c->h2, cb, c);
	nghttp2_session_callbacks_del(cb);
	if (ret)
		return;
	nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, settings, 3);
	nghttp2_session_set_local_window_size(c->h2, NGHTTP2_FLAG_NONE, 0, 4u << 20);
	while (!flush(c) && (nghttp2_session_want_read(c->h2) ||
			     nghttp2_session_want_write(c->h2))) {
		struct pollfd p[2] = { { c->fd, POLLIN, 0 }, { c->g->stop_fd, POLLIN, 0 } };
		ssize_t n;
		if (!(c->tls && gnutls_record_check_pending(c->tls))) {
			int k = poll(p, 2, GRPC_IDLE_TIMEOUT * 1000);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0 || p[1].revents) {	/* idle, or stopping: say goodbye */
				nghttp2_session_terminate_session(c->h2, NGHTTP2_NO_ERROR);
				flush(c);
				break;
			}
		}
		if (c->tls) {
			n = gnutls_record_recv(c->tls, buf, sizeof(buf));
			if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED)
				continue;
		} else {
			n = recv(c->fd, buf, sizeof(buf), 0);
			if (n < 0 && errno == EINTR)
				continue;
		}
		if (n <= 0)
			break;
		if (nghttp2_session_mem_recv(c->h2, buf, (size_t)n) < 0) {
			flush(c);	/* the GOAWAY nghttp2 queued for a protocol error */
			break;
		}
	}
	nghttp2_session_del(c->h2);	/* closes the streams: on_close frees them */
	if (c->tls)
		gnutls_bye(c->tls, GNUTLS_SHUT_WR);
}

/* Counts c in: false when the listener, or c's client address, holds its limit of
 * connections already (GRPC_MAX_CONNECTIONS; --client-connections, as for HTTP). */
static bool admit(struct grpc_listener *g, const struct h2conn *c)
{
	bool created, ok;

	pthread_mutex_lock(&g->lock);
	void **slot = hashmap__insert(g->per_client, c->peer, c->peerlen, &created);
	uintptr_t n = (uintptr_t)*slot;
	ok = g->nr_conns < GRPC_MAX_CONNECTIONS && n < g->srv->opts.client_connections;
	if (ok) {
		g->nr_conns++;
		*slot = (void *)(n + 1);
	} else if (!n) {
		hashmap__remove(g->per_client, c->peer, c->peerlen);
	}
	pthread_mutex_unlock(&g->lock);
	return ok;
}

static void leave(struct grpc_listener *g, const struct h2conn *c)
{
	pthread_mutex_lock(&g->lock);
	void **slot = hashmap__find(g->per_client, c->peer, c->peerlen);
	if (slot && (uintptr_t)*slot > 1)
		*slot = (void *)((uintptr_t)*slot - 1);
	else
		hashmap__remove(g->per_client, c->peer, c->peerlen);
	g->nr_conns--;
	pthread_cond_broadcast(&g->idle);
	pthread_mutex_unlock(&g->lock);
}

static void *conn_thread(void *arg)
{
	struct h2conn *c = arg;
	struct grpc_listener *g = c->g;
	struct timeval tv = { .tv_sec = GRPC_IDLE_TIMEOUT };
	int one = 1;

	/* a peer that stops reading cannot hold a send forever */
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	serve(c);
	if (c->tls)
		gnutls_deinit(c->tls);
	close(c->fd);
	leave(g, c);
	free(c);
	return NULL;
}

static void *accept_loop(void *arg)
{
	struct grpc_listener *g = arg;

	for (;;) {
		struct pollfd p[2] = { { g->fd, POLLIN, 0 }, { g->stop_fd, POLLIN, 0 } };
		struct sockaddr_storage sa;
		socklen_t salen = sizeof(sa);
		pthread_attr_t attr;
		pthread_t t;
		int fd;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN) ||
		    (fd = accept4(g->fd, (struct sockaddr *)&sa, &salen, SOCK_CLOEXEC)) < 0)
			continue;
		struct h2conn *c = xcalloc(1, sizeof(*c));
		c->g = g;
		c->fd = fd;
		c->peerlen = sa.ss_family == AF_INET6 ? 16 : 4;
		memcpy(c->peer, sa.ss_family == AF_INET6
		       ? (void *)&((struct sockaddr_in6 *)&sa)->sin6_addr
		       : (void *)&((struct sockaddr_in *)&sa)->sin_addr, c->peerlen);
		if (!admit(g, c)) {
			log_debug("gRPC: refusing a connection: the listener or the client holds "
				  "its limit");
			close(fd);
			free(c);
			continue;
		}
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &attr, conn_thread, c)) {
			close(fd);
			leave(g, c);
			free(c);
		}
		pthread_attr_destroy(&attr);
	}
	return NULL;
}

struct grpc_listener *grpc__start(struct server *srv, const char *addr, char *err,
				  size_t errlen)
{
	struct grpc_listener *g = xcalloc(1, sizeof(*g));
	struct sockaddr_storage sa;
	socklen_t salen;
	int one = 1;

	g->srv = srv;
	g->fd = g->stop_fd = -1;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->idle, NULL);
	g->per_client = hashmap__new();
	if (listen__parse(addr, &sa, err, errlen))
		goto fail;
	if (srv->tls_cert.len) {
		gnutls_datum_t cert = { (unsigned char *)srv->tls_cert.buf, (unsigned)srv->tls_cert.len };
		gnutls_datum_t key = { (unsigned char *)srv->tls_key.buf, (unsigned)srv->tls_key.len };
		int ret = gnutls_certificate_allocate_credentials(&g->cred);
		if (!ret)
			ret = gnutls_certificate_set_x509_key_mem(g->cred, &cert, &key,
								  GNUTLS_X509_FMT_PEM);
		if (ret < 0) {
			errmsg(err, errlen, "failed to load the TLS certificate for the gRPC "
			       "listener '%s': %s", addr, gnutls_strerror(ret));
			goto fail;
		}
	}
	salen = sa.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	g->fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	g->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (g->fd < 0 || g->stop_fd < 0 ||
	    setsockopt(g->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(g->fd, (struct sockaddr *)&sa, salen) || listen(g->fd, 128) ||
	    getsockname(g->fd, (struct sockaddr *)&sa, &salen)) {
		errmsg(err, errlen, "failed to listen on '%s' (gRPC): %s", addr, strerror(errno));
		goto fail;
	}
	g->port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
						 : ((struct sockaddr_in *)&sa)->sin_port);
	if (pthread_create(&g->accept_thread, NULL, accept_loop, g)) {
		errmsg(err, errlen, "failed to start the gRPC listener's thread");
		goto fail;
	}
	g->accept_started = true;
	return g;
fail:
	grpc__stop(g);
	return NULL;
}

uint16_t grpc__port(const struct grpc_listener *g)
{
	return g->port;
}

void grpc__stop(struct grpc_listener *g)
{
	uint64_t one = 1;

	if (!g)
		return;
	if (g->stop_fd >= 0 && write(g->stop_fd, &one, sizeof(one)) < 0)
		log_error("failed to stop the gRPC listener: %s", strerror(errno));
	if (g->accept_started)
		pthread_join(g->accept_thread, NULL);
	pthread_mutex_lock(&g->lock);
	while (g->nr_conns)
		pthread_cond_wait(&g->idle, &g->lock);
	pthread_mutex_unlock(&g->lock);
	if (g->fd >= 0)
		close(g->fd);
	if (g->stop_fd >= 0)
		close(g->stop_fd);
	if (g->cred)
		gnutls_certificate_free_credentials(g->cred);
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->idle);
	hashmap__free(g->per_client);
	free(g);
}
