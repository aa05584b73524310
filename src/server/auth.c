/* Who may use the server: write tokens (uploads) and read tokens (queries), taken from
 * `Authorization: Bearer`, basic auth (the token is the password, as Pyroscope's SDKs send
 * it), the GPROFILER-API-KEY header or the `key` argument; the rule that a server without
 * tokens listens on loopback only; request hygiene that applies to every route (no NUL in
 * arguments and headers, valid UTF-8 in arguments, unambiguous body framing); and the lock that keeps one server per data
 * directory. */
#include "server/http.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <unistd.h>

#include "util/log.h"

/* n copies of the strings v (NULL entries and a NULL v stay NULL). */
static char **copy_strings(const char *const *v, size_t n)
{
	char **out = xcalloc(n + 1, sizeof(*out));

	for (size_t i = 0; v && i < n; i++)
		out[i] = v[i] ? xstrdup(v[i]) : NULL;
	return out;
}

static void free_strings(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

int auth__init(struct server *srv, const struct server_options *o, char *err, size_t errlen)
{
	srv->nr_tokens = o->nr_tokens;
	srv->tokens = copy_strings(o->tokens, o->nr_tokens);
	srv->tenants = copy_strings(o->token_tenants, o->nr_tokens);
	srv->nr_read_tokens = o->nr_read_tokens;
	srv->read_tokens = copy_strings(o->read_tokens, o->nr_read_tokens);
	srv->read_tenants = copy_strings(o->read_token_tenants, o->nr_read_tokens);
	for (size_t i = 0; i < o->nr_tokens + o->nr_read_tokens; i++) {
		const char *t = i < o->nr_tokens ? srv->tenants[i]
						 : srv->read_tenants[i - o->nr_tokens];
		if (!t)
			continue;
		if (!tenant__valid(t)) {
			errmsg(err, errlen, "invalid tenant '%.64s': use 1 to 64 characters of "
			       "[A-Za-z0-9_-]", t);
			return -EINVAL;
		}
		srv->tenancy = true;
	}
	return 0;
}

void auth__release(struct server *srv)
{
	free_strings(srv->tokens, srv->nr_tokens);
	free_strings(srv->tenants, srv->nr_tokens);
	free_strings(srv->read_tokens, srv->nr_read_tokens);
	free_strings(srv->read_tenants, srv->nr_read_tokens);
}

/* Compares in time that depends only on the lengths, not on where the bytes differ. */
static bool token_equal(const char *a, size_t la, const char *b)
{
	size_t lb = strlen(b);
	unsigned char diff = la != lb;

	for (size_t i = 0; i < la; i++)
		diff |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
	return !diff && lb;
}

/* The roles of the token cand (length len): AUTH_WRITE and/or AUTH_READ bits; *tenant
 * is set to the tenant of the first match with a role in need. */
static unsigned roles_of(const struct server *srv, const char *cand, size_t len,
			 unsigned need, const char **tenant, bool *found)
{
	unsigned roles = 0;

	if (!cand || memchr(cand, 0, len))
		return 0;
	for (size_t i = 0; i < srv->nr_tokens; i++) {
		if (!token_equal(cand, len, srv->tokens[i]))
			continue;
		roles |= AUTH_WRITE;
		if ((need & AUTH_WRITE) && !*found) {
			*found = true;
			*tenant = srv->tenants[i];
		}
	}
	for (size_t i = 0; i < srv->nr_read_tokens; i++) {
		if (!token_equal(cand, len, srv->read_tokens[i]))
			continue;
		roles |= AUTH_READ;
		if ((need & AUTH_READ) && !*found) {
			*found = true;
			*tenant = srv->read_tenants[i];
		}
	}
	return roles;
}

/* A header or argument with its length (a NUL inside is kept, so that it can be refused). */
static const char *value_n(const struct request *r, enum MHD_ValueKind kind,
			   const char *name, size_t *len)
{
	const char *v = NULL;

	*len = 0;
	if (!r->conn) {	/* HTTP/2: nghttp2 refuses a NUL in a field */
		v = kind == MHD_HEADER_KIND ? req__header(r, name) : NULL;
		*len = v ? strlen(v) : 0;
		return v;
	}
	if (MHD_lookup_connection_value_n(r->conn, kind, name, strlen(name), &v, len) != MHD_YES)
		return NULL;
	return v;
}

/* Decodes standard base64 (padding optional, surrounding blanks ignored) into out.
 * Returns 0, or -EINVAL on any other character. */
static int base64_decode(const char *in, size_t len, struct strbuf *out)
{
	unsigned bits = 0, nbits = 0;

	while (len && (*in == ' ' || *in == '\t'))
		in++, len--;
	while (len && (in[len - 1] == ' ' || in[len - 1] == '\t' || in[len - 1] == '='))
		len--;
	for (size_t i = 0; i < len; i++) {
		char c = in[i];
		int v = c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 :
			c >= '0' && c <= '9' ? c - '0' + 52 : c == '+' ? 62 : c == '/' ? 63 : -1;
		if (v < 0)
			return -EINVAL;
		bits = (bits << 6) | (unsigned)v;
		nbits += 6;
		if (nbits >= 8) {
			nbits -= 8;
			strbuf_addch(out, (char)((bits >> nbits) & 0xff));
		}
	}
	return 0;
}

int auth__check(const struct request *r, unsigned need, const char **tenant)
{
	const struct server *srv = r->srv;
	const char *authz, *v;
	unsigned roles = 0;
	bool found = false;
	size_t len;

	*tenant = NULL;
	if (need == AUTH_NONE || (!srv->nr_tokens && !srv->nr_read_tokens))
		return 0;
	if ((v = value_n(r, MHD_HEADER_KIND, "GPROFILER-API-KEY", &len)))
		roles |= roles_of(srv, v, len, need, tenant, &found);
	if ((v = value_n(r, MHD_GET_ARGUMENT_KIND, "key", &len)))
		roles |= roles_of(srv, v, len, need, tenant, &found);
	authz = value_n(r, MHD_HEADER_KIND, "Authorization", &len);
	if (authz && len > 7 && !strncasecmp(authz, "Bearer ", 7)) {
		roles |= roles_of(srv, authz + 7, len - 7, need, tenant, &found);
	} else if (authz && len > 6 && !strncasecmp(authz, "Basic ", 6)) {
		/* decoded here, not by libmicrohttpd: its C strings would cut a NUL in the
		 * password, and "token\0x" would pass as "token" */
		struct strbuf plain = STRBUF_INIT;
		const char *colon;
		if (!base64_decode(authz + 6, len - 6, &plain) &&
		    (colon = memchr(plain.buf, ':', plain.len)))
			roles |= roles_of(srv, colon + 1, plain.len - (size_t)(colon + 1 - plain.buf),
					  need, tenant, &found);
		strbuf_release(&plain);
	}
	if (roles & need)
		return 0;
	return roles ? -EPERM : -EACCES;
}

unsigned auth__admit(struct request *r, unsigned need, char *why, size_t len)
{
	const char *tenant, *org;
	int rc;

	if (r->conn && auth__hygiene(r->conn, why, len))
		return 400;
	rc = auth__check(r, need, &tenant);
	if (rc == -EACCES) {
		errmsg(why, len, "missing or invalid token");
		return 401;
	}
	if (rc) {
		errmsg(why, len, "%s", need == AUTH_WRITE
		       ? "this token may not upload: it is a read token"
		       : "this token may not read: it is a write token");
		return 403;
	}
	/* Pyroscope's tenant header: a token without a tenant may pick one; a tenant's token
	 * may only name its own. Ignored on a server without tenants. */
	org = req__header(r, "X-Scope-OrgID");
	if (r->srv->tenancy && org && need != AUTH_NONE) {
		if (!tenant__valid(org)) {
			errmsg(why, len, "invalid X-Scope-OrgID: use 1 to 64 characters of "
			       "[A-Za-z0-9_-]");
			return 400;
		}
		if (tenant && strcmp(tenant, org)) {
			errmsg(why, len, "this token is not for the tenant X-Scope-OrgID names");
			return 403;
		}
		tenant = org;
	}
	r->tenant = tenant;
	return 0;
}

bool tenant__valid(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > 64)
		return false;
	for (; *name; name++)
		if (!isalnum((unsigned char)*name) && *name != '_' && *name != '-')
			return false;
	return true;
}

char *tenant__service(const struct request *r, const char *service)
{
	struct strbuf sb = STRBUF_INIT;

	if (!r->tenant)
		return NULL;
	strbuf_addf(&sb, "%s:%s", r->tenant, service);
	return strbuf_detach(&sb, NULL);
}

const char *tenant__strip(const struct request *r, const char *stored)
{
	const char *colon = strchr(stored, ':');
	size_t len;

	if (!r->tenant)
		return colon ? NULL : stored;
	len = strlen(r->tenant);
	if (!colon || (size_t)(colon - stored) != len || strncmp(stored, r->tenant, len))
		return NULL;
	return colon + 1;
}

bool auth__loopback(const struct sockaddr_storage *sa)
{
	if (sa->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (IN6_IS_ADDR_LOOPBACK(a))
			return true;
		return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
	}
	return false;
}

int auth__check_listen(const struct server_options *o, const struct sockaddr_storage *sa,
		       char *err, size_t errlen)
{
	if (o->nr_tokens || o->nr_read_tokens || o->insecure_open || auth__loopback(sa))
		return 0;
	errmsg(err, errlen, "refusing to serve '%s' without a token: anyone who can connect "
	       "could read every profile and upload; give --token and --read-token (or "
	       "--tokens-file), or --insecure-open to serve it open anyway", o->listen);
	return -EPERM;
}

/* True when s (len bytes) is valid UTF-8 without overlong forms, surrogates or NUL. */
bool auth__valid_utf8(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		unsigned c = *p++, n, min, cp;

		if (!c)
			return false;
		if (c < 0x80)
			continue;
		if ((c & 0xe0) == 0xc0)
			n = 1, min = 0x80, cp = c & 0x1f;
		else if ((c & 0xf0) == 0xe0)
			n = 2, min = 0x800, cp = c & 0x0f;
		else if ((c & 0xf8) == 0xf0)
			n = 3, min = 0x10000, cp = c & 0x07;
		else
			return false;
		if ((size_t)(end - p) < n)
			return false;
		for (unsigned i = 0; i < n; i++, p++) {
			if ((*p & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (*p & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
	}
	return true;
}

struct hygiene {
	const char *what;	/* "argument" or "header" */
	char bad[96];
	unsigned content_length, transfer_encoding;
	bool te_chunked;	/* the (one) Transfer-Encoding is exactly "chunked" */
};

static enum MHD_Result check_value(void *cls, enum MHD_ValueKind kind, const char *key,
				   size_t key_size, const char *value, size_t value_size)
{
	struct hygiene *h = cls;
	const char *why = NULL;

	if (kind == MHD_HEADER_KIND && !strcasecmp(key, "Content-Length"))
		h->content_length++;
	if (kind == MHD_HEADER_KIND && !strcasecmp(key, "Transfer-Encoding")) {
		h->transfer_encoding++;
		h->te_chunked = value && !strcasecmp(value, "chunked");
	}
	if (memchr(key, 0, key_size) || (value && memchr(value, 0, value_size)))
		why = "contains a NUL byte";
	else if (kind == MHD_GET_ARGUMENT_KIND && (!auth__valid_utf8(key, key_size) ||
						   (value && !auth__valid_utf8(value, value_size))))
		why = "is not valid UTF-8";
	if (!why)
		return MHD_YES;
	/* the name quoted only when it is printable ASCII itself */
	for (size_t i = 0; i < key_size; i++)
		if ((unsigned char)key[i] < 0x20 || (unsigned char)key[i] >= 0x7f)
			key_size = 0;
	snprintf(h->bad, sizeof(h->bad), "%s '%.32s' %s", h->what, key_size ? key : "?", why);
	return MHD_NO;
}

int auth__hygiene(struct MHD_Connection *conn, char *err, size_t errlen)
{
	struct hygiene h = { .what = "argument" };

	MHD_get_connection_values_n(conn, MHD_GET_ARGUMENT_KIND, check_value, &h);
	if (!h.bad[0]) {
		h.what = "header";
		MHD_get_connection_values_n(conn, MHD_HEADER_KIND, check_value, &h);
	}
	/* Framing that proxies and servers may read differently (request smuggling):
	 * libmicrohttpd takes all of these. */
	if (!h.bad[0] && h.content_length > 1)
		snprintf(h.bad, sizeof(h.bad), "more than one Content-Length header");
	else if (!h.bad[0] && h.content_length && h.transfer_encoding)
		snprintf(h.bad, sizeof(h.bad), "both Content-Length and Transfer-Encoding");
	else if (!h.bad[0] && (h.transfer_encoding > 1 || (h.transfer_encoding && !h.te_chunked)))
		snprintf(h.bad, sizeof(h.bad), "Transfer-Encoding other than one 'chunked'");
	if (!h.bad[0])
		return 0;
	errmsg(err, errlen, "%s", h.bad);
	return -EINVAL;
}

/* The lock file of a store location: DIR/kiln.lock for a directory, PATH.lock for a
 * file URL (sqlite:PATH); "" for locations that are not local files. */
static void lock_path(const char *location, struct strbuf *out)
{
	const char *colon = strchr(location, ':');
	const char *slash = strchr(location, '/');

	if (colon && (!slash || colon < slash)) {
		if (!strncmp(location, "sqlite:", 7) && location[7])
			strbuf_addf(out, "%s.lock", location + 7);
		return;
	}
	strbuf_addf(out, "%s/kiln.lock", location);
}

int auth__lock_store(const char *location, int *fd, char *err, size_t errlen)
{
	struct strbuf path = STRBUF_INIT;
	int ret = 0;

	*fd = -1;
	lock_path(location, &path);
	if (!path.len)
		goto out;
	*fd = open(path.buf, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (*fd < 0) {
		ret = -errno;
		errmsg(err, errlen, "failed to open lock file '%s': %s", path.buf, strerror(errno));
		goto out;
	}
	if (flock(*fd, LOCK_EX | LOCK_NB)) {
		ret = -errno;
		if (ret == -EWOULDBLOCK)
			errmsg(err, errlen, "store '%s' is in use by another kiln serve (lock file "
			       "'%s' is held): one server per data directory", location, path.buf);
		else
			errmsg(err, errlen, "failed to lock '%s': %s", path.buf, strerror(errno));
		close(*fd);
		*fd = -1;
	}
out:
	strbuf_release(&path);
	return ret;
}
