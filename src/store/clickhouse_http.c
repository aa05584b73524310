/* The ClickHouse backend's wire: locations, content hashes, RowBinary, and requests over
 * ClickHouse's HTTP interface (libcurl, gzip both ways). */
#include "store/clickhouse_int.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <zlib.h>

#include "util/log.h"

void ch_location_init(struct ch_location *l)
{
	memset(l, 0, sizeof(*l));
	l->timeout = 60;
}

void ch_location_release(struct ch_location *l)
{
	for (size_t i = 0; i < l->nr_hosts; i++)
		free(l->hosts[i]);
	free(l->hosts);
	free(l->database);
	free(l->user);
	free(l->password);
	free(l->cluster);
	free(l->cacert);
	ch_location_init(l);
}

static bool is_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

static int parse_option(struct ch_location *l, const char *opt, char *err, size_t errlen)
{
	const char *eq = strchr(opt, '=');
	size_t klen = eq ? (size_t)(eq - opt) : strlen(opt);
	const char *v = eq ? eq + 1 : "1";

	if (klen == 7 && !strncmp(opt, "cluster", 7) && is_name(v)) {
		free(l->cluster);
		l->cluster = xstrdup(v);
	} else if (klen == 6 && !strncmp(opt, "secure", 6)) {
		l->secure = strcmp(v, "0") != 0;
	} else if (klen == 8 && !strncmp(opt, "insecure", 8)) {
		l->insecure = strcmp(v, "0") != 0;
	} else if (klen == 6 && !strncmp(opt, "cacert", 6) && *v) {
		free(l->cacert);
		l->cacert = xstrdup(v);
	} else if (klen == 7 && !strncmp(opt, "timeout", 7) && atol(v) > 0) {
		l->timeout = atol(v);
	} else {
		errmsg(err, errlen, "bad clickhouse option '%s' (known: cluster=NAME, secure=1,"
		       " cacert=FILE, insecure=1, timeout=S)", opt);
		return -EINVAL;
	}
	return 0;
}

int ch_location__parse(struct ch_location *l, const char *rest, char *err, size_t errlen)
{
	char *copy, *p, *at, *slash, *query, *host, *save = NULL;
	int ret = -EINVAL;

	if (strncmp(rest, "//", 2)) {
		errmsg(err, errlen, "bad clickhouse location 'clickhouse:%s': expected"
		       " clickhouse://HOST:PORT/DB", rest);
		return -EINVAL;
	}
	p = copy = xstrdup(rest + 2);
	query = strchr(p, '?');
	if (query)
		*query++ = 0;
	slash = strchr(p, '/');
	if (!slash || !is_name(slash + 1)) {
		errmsg(err, errlen, "bad clickhouse location: no database name (letters, digits, _)"
		       " after the host: clickhouse://HOST:PORT/DB");
		goto out;
	}
	*slash = 0;
	l->database = xstrdup(slash + 1);
	at = strrchr(p, '@');
	if (at) {
		char *colon;
		*at = 0;
		colon = strchr(p, ':');
		if (colon) {
			*colon = 0;
			l->password = xstrdup(colon + 1);
		}
		l->user = xstrdup(p);
		p = at + 1;
	}
	for (host = strtok_r(p, ",", &save); host; host = strtok_r(NULL, ",", &save)) {
		struct strbuf h = STRBUF_INIT;
		const char *colon = strrchr(host, ':');
		if (host[0] == ':' || (colon && (!colon[1] || strspn(colon + 1, "0123456789") !=
						 strlen(colon + 1)))) {
			errmsg(err, errlen, "bad clickhouse host '%s': expected HOST[:PORT]", host);
			goto out;
		}
		strbuf_addstr(&h, host);
		if (!colon)
			strbuf_addstr(&h, ":0");
		l->hosts = xrealloc(l->hosts, (l->nr_hosts + 1) * sizeof(*l->hosts));
		l->hosts[l->nr_hosts++] = strbuf_detach(&h, NULL);
	}
	if (!l->nr_hosts) {
		errmsg(err, errlen, "bad clickhouse location: no host");
		goto out;
	}
	save = NULL;
	for (char *o = query ? strtok_r(query, "&", &save) : NULL; o; o = strtok_r(NULL, "&", &save))
		if (parse_option(l, o, err, errlen))
			goto out;
	/* the default port, now that secure= is known */
	for (size_t i = 0; i < l->nr_hosts; i++) {
		size_t len = strlen(l->hosts[i]);
		if (len > 2 && !strcmp(l->hosts[i] + len - 2, ":0")) {
			l->hosts[i][len - 2] = 0;
			struct strbuf h = STRBUF_INIT;
			strbuf_addf(&h, "%s:%d", l->hosts[i], l->secure ? 8443 : 8123);
			free(l->hosts[i]);
			l->hosts[i] = strbuf_detach(&h, NULL);
		}
	}
	if (l->cluster && l->nr_hosts < 1) {
		errmsg(err, errlen, "bad clickhouse location: cluster=%s names no host", l->cluster);
		goto out;
	}
	if (!l->password && getenv("KILN_CLICKHOUSE_PASSWORD"))
		l->password = xstrdup(getenv("KILN_CLICKHOUSE_PASSWORD"));
	ret = 0;
out:
	free(copy);
	return ret;
}

uint64_t ch__frame_id(const char *name, size_t len)
{
	return XXH64(name, len, 0);
}

uint64_t ch__stack_id(const uint64_t *frames, uint32_t depth)
{
	uint8_t small[8 * 128] = { 0 }, *buf = depth <= 128 ? small : xmalloc((size_t)depth * 8);
	uint64_t h;

	/* the ids as little-endian bytes, so every machine gets the same hash */
	for (uint32_t i = 0; i < depth; i++)
		for (int b = 0; b < 8; b++)
			buf[(size_t)i * 8 + b] = (uint8_t)(frames[i] >> (8 * b));
	h = XXH64(buf, (size_t)depth * 8, 0x6b696c6e);
	if (buf != small)
		free(buf);
	return h ? h : 1;	/* 0 is no stack */
}

uint64_t ch__series_id(const char *service, const char *ptype, const char *labels_key)
{
	struct strbuf b = STRBUF_INIT;
	uint64_t h;

	strbuf_add(&b, service, strlen(service) + 1);
	strbuf_add(&b, ptype, strlen(ptype) + 1);
	strbuf_addstr(&b, labels_key);
	h = XXH64(b.buf, b.len, 0);
	strbuf_release(&b);
	return h;
}

static void add_clean(struct strbuf *out, const char *s, char sep)
{
	size_t start = out->len;

	strbuf_addstr(out, s);
	for (size_t j = start; j < out->len; j++)
		if ((unsigned char)out->buf[j] < 0x20)
			out->buf[j] = '?';
	strbuf_addch(out, sep);
}

void ch__labels_key(struct strbuf *out, const struct labels *l)
{
	for (size_t i = 0; i < l->n; i++) {
		add_clean(out, l->v[i].name, '\x1f');
		add_clean(out, l->v[i].value, '\x1e');
	}
}

void ch__labels_parse(struct labels *l, const char *key, size_t len)
{
	const char *end = key + len;

	while (key < end) {
		const char *us = memchr(key, '\x1f', (size_t)(end - key)), *rs;
		if (!us)
			break;
		rs = memchr(us, '\x1e', (size_t)(end - us));
		if (!rs)
			break;
		char *name = xstrndup(key, (size_t)(us - key));
		char *value = xstrndup(us + 1, (size_t)(rs - us - 1));
		labels__set(l, name, value);
		free(name);
		free(value);
		key = rs + 1;
	}
	labels__sort(l);
}

void rb_u32(struct strbuf *b, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	strbuf_add(b, x, 4);
}

void rb_u64(struct strbuf *b, uint64_t v)
{
	uint8_t x[8];
	for (int i = 0; i < 8; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	strbuf_add(b, x, 8);
}

void rb_varint(struct strbuf *b, uint64_t v)
{
	uint8_t x[10];
	size_t n = 0;

	do {
		x[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			x[n] |= 0x80;
		n++;
	} while (v);
	strbuf_add(b, x, n);
}

void rb_str(struct strbuf *b, const char *s, size_t len)
{
	rb_varint(b, len);
	strbuf_add(b, s, len);
}

uint64_t rbr_u64(struct rb_reader *r)
{
	uint64_t v = 0;

	if (r->bad || r->end - r->p < 8) {
		r->bad = true;
		return 0;
	}
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += 8;
	return v;
}

uint32_t rbr_u32(struct rb_reader *r)
{
	uint32_t v = 0;

	if (r->bad || r->end - r->p < 4) {
		r->bad = true;
		return 0;
	}
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)r->p[i] << (8 * i);
	r->p += 4;
	return v;
}

uint64_t rbr_varint(struct rb_reader *r)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (r->bad || r->p >= r->end) {
			r->bad = true;
			return 0;
		}
		uint8_t c = *r->p++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

const char *rbr_str(struct rb_reader *r, size_t *len)
{
	uint64_t n = rbr_varint(r);
	const char *s;

	if (r->bad || n > (uint64_t)(r->end - r->p)) {
		r->bad = true;
		*len = 0;
		return "";
	}
	s = (const char *)r->p;
	r->p += n;
	*len = (size_t)n;
	return s;
}

void ch__quote(struct strbuf *b, const char *s)
{
	strbuf_addch(b, '\'');
	for (; *s; s++) {
		if (*s == '\\' || *s == '\'')
			strbuf_addch(b, '\\');
		strbuf_addch(b, *s);
	}
	strbuf_addch(b, '\'');
}

void ch__gzip(struct strbuf *out, const void *data, size_t len)
{
	z_stream z = { 0 };

	strbuf_reset(out);
	/* level 1: the request is on the upload's critical path, ClickHouse recompresses */
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	strbuf_grow(out, deflateBound(&z, len));
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out->buf;
	z.avail_out = (uInt)(out->alloc - 1);
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		abort();
	out->len = z.total_out;	/* strbuf_setlen only shrinks */
	out->buf[out->len] = 0;
	deflateEnd(&z);
}

static size_t on_data(char *data, size_t size, size_t n, void *arg)
{
	strbuf_add(arg, data, size * n);
	return size * n;
}

/* Idle handles kept for the next calls (each keeps its connections alive). */
#define CH_POOL_IDLE 8

int ch__http_open(struct ch_store *s, char *err, size_t errlen)
{
	s->wcurl = curl_easy_init();
	if (!s->wcurl) {
		errmsg(err, errlen, "failed to open clickhouse '%s': curl_easy_init failed", s->name);
		return -ENOMEM;
	}
	return 0;
}

void ch__http_close(struct ch_store *s)
{
	for (size_t i = 0; i < s->nr_pool; i++)
		curl_easy_cleanup(s->pool[i]);
	free(s->pool);
	s->pool = NULL;
	s->nr_pool = 0;
	if (s->wcurl)
		curl_easy_cleanup(s->wcurl);
	s->wcurl = NULL;
}

/* True for ClickHouse's error codes that say "later": a shard unreachable (210 network
 * error, 279 all connection tries failed, 209 socket timeout), a timeout (159), too many
 * queries (202) or parts (252). */
static bool transient(const char *msg)
{
	static const char *const codes[] = { "Code: 159,", "Code: 202,", "Code: 209,",
					     "Code: 210,", "Code: 252,", "Code: 279," };

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (!strncmp(msg, codes[i], strlen(codes[i])))
			return true;
	return false;
}

/* One attempt on host h with handle c. Returns 0, -EAGAIN (not reachable) or -EIO. */
static int request_one(struct ch_store *s, CURL *c, size_t h, const char *sql,
		       const struct strbuf *body, struct strbuf *out, const char *what, char *err,
		       size_t errlen)
{
	struct strbuf url = STRBUF_INIT, reply = STRBUF_INIT, gz = STRBUF_INIT;
	struct curl_slist *hdr = NULL;
	char *q = NULL;
	long status = 0;
	CURLcode rc;
	int ret = 0;

	strbuf_addf(&url, "%s://%s/?database=%s", s->loc.secure ? "https" : "http", s->loc.hosts[h],
		    s->loc.database);
	/* wait_end_of_query: an error after the first rows is a status, not a torn answer */
	strbuf_addstr(&url, "&enable_http_compression=1&wait_end_of_query=1");
	/* id lists of a fleet's series and stacks are longer than the default 256 KiB */
	strbuf_addstr(&url, "&max_query_size=16777216");
	if (body) {
		q = curl_easy_escape(c, sql, 0);
		strbuf_addf(&url, "&insert_distributed_sync=1&query=%s", q);
		ch__gzip(&gz, body->buf, body->len);
	} else {
		ch__gzip(&gz, sql, strlen(sql));
	}
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url.buf);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, gz.buf);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)gz.len);
	hdr = curl_slist_append(hdr, "Content-Encoding: gzip");
	hdr = curl_slist_append(hdr, "Content-Type: application/octet-stream");
	hdr = curl_slist_append(hdr, "Expect:");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "gzip");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out ? out : &reply);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, s->loc.timeout);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (s->loc.user || s->loc.password) {
		curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(c, CURLOPT_USERNAME, s->loc.user ? s->loc.user : "default");
		curl_easy_setopt(c, CURLOPT_PASSWORD, s->loc.password ? s->loc.password : "");
	}
	if (s->loc.cacert)
		curl_easy_setopt(c, CURLOPT_CAINFO, s->loc.cacert);
	if (s->loc.insecure) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (rc != CURLE_OK) {
		/* a certificate that does not verify is a setting to fix, not an outage */
		bool tls = rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CONNECT_ERROR ||
			   rc == CURLE_SSL_CACERT_BADFILE;
		errmsg(err, errlen, "failed to %s: clickhouse '%s' %s: %s", what, s->loc.hosts[h],
		       tls ? "failed TLS (see cacert=, insecure=)" : "is unavailable",
		       curl_easy_strerror(rc));
		ret = tls ? -EIO : -EAGAIN;
	} else if (status != 200) {
		struct strbuf *msg = out ? out : &reply;
		size_t n = msg->len;
		while (n && (msg->buf[n - 1] == '\n' || msg->buf[n - 1] == ' '))
			n--;
		errmsg(err, errlen, "failed to %s on clickhouse '%s': HTTP %ld: %.*s%s", what,
		       s->loc.hosts[h], status, (int)(n > 300 ? 300 : n), msg->buf,
		       strstr(msg->buf, "for clickhouse-client") ? " (give the HTTP port, 8123)" : "");
		/* 503 (overloaded, shutting down) and the errors of a shard that is down or
		 * busy are the same as unreachable for the caller: try again later */
		ret = status == 503 || transient(msg->buf) ? -EAGAIN : -EIO;
	}
	curl_slist_free_all(hdr);
	curl_free(q);
	strbuf_release(&url);
	strbuf_release(&reply);
	strbuf_release(&gz);
	return ret;
}

int ch__request_on(struct ch_store *s, void *curl, size_t host, const char *sql,
		   const struct strbuf *body, struct strbuf *out, const char *what, char *err,
		   size_t errlen)
{
	size_t start = out ? out->len : 0;
	int ret = -EAGAIN;

	if (host != SIZE_MAX)
		return request_one(s, curl, host, sql, body, out, what, err, errlen);
	/* On a cluster every host has the Distributed tables: any reachable one will do. */
	size_t first = __atomic_load_n(&s->host, __ATOMIC_RELAXED);
	for (size_t i = 0; i < s->loc.nr_hosts && ret == -EAGAIN; i++) {
		size_t h = (first + i) % s->loc.nr_hosts;
		if (out)
			strbuf_setlen(out, start);
		ret = request_one(s, curl, h, sql, body, out, what, err, errlen);
		if (ret != -EAGAIN)
			__atomic_store_n(&s->host, h, __ATOMIC_RELAXED);
	}
	return ret;
}

int ch__request(struct ch_store *s, size_t host, const char *sql, const struct strbuf *body,
		struct strbuf *out, const char *what, char *err, size_t errlen)
{
	CURL *c = NULL;
	int ret;

	pthread_mutex_lock(&s->pool_lock);
	if (s->nr_pool)
		c = s->pool[--s->nr_pool];
	pthread_mutex_unlock(&s->pool_lock);
	if (!c && !(c = curl_easy_init())) {
		errmsg(err, errlen, "failed to %s: curl_easy_init failed", what);
		return -ENOMEM;
	}
	ret = ch__request_on(s, c, host, sql, body, out, what, err, errlen);
	pthread_mutex_lock(&s->pool_lock);
	if (s->nr_pool < CH_POOL_IDLE) {
		if (!s->pool)
			s->pool = xcalloc(CH_POOL_IDLE, sizeof(*s->pool));
		s->pool[s->nr_pool++] = c;
		c = NULL;
	}
	pthread_mutex_unlock(&s->pool_lock);
	if (c)
		curl_easy_cleanup(c);
	return ret;
}
