/* The HTTP client of the server unit tests: one request with libcurl to the server under
 * test, on loopback. Each test file wraps it in the shape its requests take (which token,
 * which headers); only this file talks to curl. Include after cmocka.h. */
#ifndef KILN_TESTS_HTTP_CLIENT_H
#define KILN_TESTS_HTTP_CLIENT_H

#include <curl/curl.h>
#include <stdint.h>
#include <string.h>

#include "util/strbuf.h"

struct http_req {
	const char *const *headers;	/* "Name: value" lines, NULL-terminated; or NULL */
	const char *header_lines;	/* more of them, joined by '\n'; or NULL */
	const char *userpwd;		/* basic auth "user:password", or NULL */
	const void *body;		/* POSTed when not NULL (len bytes) */
	size_t len;
	struct strbuf *headers_out;	/* the response's header lines, or NULL */
	const char *cainfo;		/* verify TLS with this CA file, or NULL */
	long timeout;			/* seconds, 0: none */
};

static inline size_t http_client__on_data(char *d, size_t size, size_t n, void *arg)
{
	strbuf_add(arg, d, size * n);
	return size * n;
}

/* Sends r to url and fills reply (reset first) with the body. Returns the HTTP status,
 * or -1 when the request did not complete (connection refused, TLS refused, timeout). */
static inline long http_client__do(const char *url, const struct http_req *r, struct strbuf *reply)
{
	struct curl_slist *h = curl_slist_append(NULL, "Expect:");
	CURL *c = curl_easy_init();
	long status = -1;

	for (size_t i = 0; r->headers && r->headers[i]; i++)
		h = curl_slist_append(h, r->headers[i]);
	for (const char *p = r->header_lines; p && *p;) {
		size_t len = strcspn(p, "\n");
		struct strbuf line = STRBUF_INIT;

		strbuf_add(&line, p, len);
		h = curl_slist_append(h, line.buf);
		strbuf_release(&line);
		p += len + (p[len] == '\n');
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, http_client__on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, reply);
	if (r->headers_out) {
		strbuf_reset(r->headers_out);
		curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, http_client__on_data);
		curl_easy_setopt(c, CURLOPT_HEADERDATA, r->headers_out);
	}
	if (r->userpwd) {
		curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
		curl_easy_setopt(c, CURLOPT_USERPWD, r->userpwd);
	}
	if (r->body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)r->len);
	}
	if (r->cainfo)
		curl_easy_setopt(c, CURLOPT_CAINFO, r->cainfo);
	if (r->timeout)
		curl_easy_setopt(c, CURLOPT_TIMEOUT, r->timeout);
	strbuf_reset(reply);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return status;
}

/* http_client__do to http://127.0.0.1:port/path; a request that does not complete fails
 * the test. Returns the HTTP status. */
static inline long http_client__at(uint16_t port, const char *path, const struct http_req *r,
				   struct strbuf *reply)
{
	struct strbuf url = STRBUF_INIT;

	strbuf_addf(&url, "http://127.0.0.1:%u%s", port, path);
	long status = http_client__do(url.buf, r, reply);
	if (status < 0)
		fail_msg("request to '%s' did not complete", url.buf);
	strbuf_release(&url);
	return status;
}

#endif
