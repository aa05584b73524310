/* OTLP profiles export over HTTP with libcurl: see otlp_export.h. */
#include "agent/otlp_export.h"

#include <curl/curl.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/otlp.h"
#include "util/log.h"
#include "util/strbuf.h"

#define SEND_TIMEOUT_S 10L
#define CONNECT_TIMEOUT_S 5L
#define OTLP_PATH "/v1development/profiles"

struct otlp_exporter {
	CURL *curl;
	char *url;
	char *service;
	char hostname[256];
};

struct otlp_exporter *otlp_exporter__new(const char *endpoint, const char *service)
{
	struct otlp_exporter *e = xcalloc(1, sizeof(*e));
	struct strbuf url = STRBUF_INIT;
	const char *scheme = strstr(endpoint, "://");

	e->curl = curl_easy_init();
	if (!e->curl)
		abort();
	if (!scheme)
		strbuf_addstr(&url, "http://");
	strbuf_addstr(&url, endpoint);
	while (url.len && url.buf[url.len - 1] == '/')
		strbuf_setlen(&url, url.len - 1);
	/* a URL without a path gets the OTLP one */
	if (!strchr(url.buf + (scheme ? (size_t)(scheme - endpoint) + 3 : 7), '/'))
		strbuf_addstr(&url, OTLP_PATH);
	e->url = strbuf_detach(&url, NULL);
	e->service = xstrdup(service && *service ? service : "kiln");
	if (gethostname(e->hostname, sizeof(e->hostname) - 1))
		snprintf(e->hostname, sizeof(e->hostname), "unknown");
	return e;
}

void otlp_exporter__free(struct otlp_exporter *e)
{
	if (!e)
		return;
	curl_easy_cleanup(e->curl);
	free(e->url);
	free(e->service);
	free(e);
}

static size_t discard(char *data, size_t size, size_t n, void *arg)
{
	(void)data;
	(void)arg;
	return size * n;
}

int otlp_exporter__send(struct otlp_exporter *e, const struct profile *p, uint64_t start_ns,
			uint64_t end_ns, char *err, size_t errlen)
{
	const struct otlp_attr attrs[] = { { "host.name", e->hostname } };
	struct strbuf body = STRBUF_INIT;
	struct curl_slist *headers = NULL;
	long status = 0;
	CURLcode rc;
	int ret;

	ret = otlp__write(&body, p, e->service, attrs, 1, start_ns,
			  end_ns > start_ns ? end_ns - start_ns : 0);
	if (ret) {
		errmsg(err, errlen, "failed to encode the OTLP profiles");
		strbuf_release(&body);
		return ret;
	}
	headers = curl_slist_append(headers, "Content-Type: application/x-protobuf");
	curl_easy_reset(e->curl);
	curl_easy_setopt(e->curl, CURLOPT_URL, e->url);
	curl_easy_setopt(e->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e->curl, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
	curl_easy_setopt(e->curl, CURLOPT_TIMEOUT, SEND_TIMEOUT_S);
	curl_easy_setopt(e->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(e->curl, CURLOPT_POSTFIELDS, body.buf);
	curl_easy_setopt(e->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body.len);
	curl_easy_setopt(e->curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(e->curl, CURLOPT_WRITEFUNCTION, discard);
	rc = curl_easy_perform(e->curl);
	if (rc != CURLE_OK) {
		errmsg(err, errlen, "OTLP export to %s failed: %s", e->url, curl_easy_strerror(rc));
		ret = -EIO;
	} else {
		curl_easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, &status);
		if (status < 200 || status > 299) {
			errmsg(err, errlen, "OTLP export to %s: HTTP %ld", e->url, status);
			ret = -EPROTO;
		}
	}
	curl_slist_free_all(headers);
	strbuf_release(&body);
	return ret;
}
