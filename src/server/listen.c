/* Listening addresses, TLS files and the connection budget (listen.h). */
#include "server/listen.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "util/log.h"

/* The global connection limit leaves FD_HEADROOM descriptors for the store. */
#define CONNECTIONS_MAX 8192
#define FD_HEADROOM 256

int listen__parse(const char *listen, struct sockaddr_storage *sa, char *err, size_t errlen)
{
	const char *colon = strrchr(listen, ':');
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE };
	struct addrinfo *res = NULL;
	char host[64];
	size_t hlen;
	char *end;
	long port;

	memset(sa, 0, sizeof(*sa));
	if (!colon || (hlen = (size_t)(colon - listen)) >= sizeof(host))
		goto bad;
	port = strtol(colon + 1, &end, 10);
	if (end == colon + 1 || *end || port < 0 || port > 65535)
		goto bad;
	if (hlen >= 2 && listen[0] == '[' && listen[hlen - 1] == ']')
		snprintf(host, sizeof(host), "%.*s", (int)(hlen - 2), listen + 1);
	else if (hlen && !memchr(listen, ':', hlen))
		snprintf(host, sizeof(host), "%.*s", (int)hlen, listen);
	else if (!hlen)
		snprintf(host, sizeof(host), "127.0.0.1");
	else
		goto bad;	/* an IPv6 address without brackets */
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	if (getaddrinfo(host, colon + 1, &hints, &res) != 0 || !res ||
	    res->ai_addrlen > sizeof(*sa)) {
		if (res)
			freeaddrinfo(res);
		goto bad;
	}
	memcpy(sa, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
bad:
	errmsg(err, errlen, "failed to parse listen address '%s': expected IPV4:PORT or "
	       "[IPV6]:PORT", listen);
	return -EINVAL;
}

int listen__read_tls(const char *cert_file, const char *key_file, struct strbuf *cert,
		     struct strbuf *key, char *err, size_t errlen)
{
	int ret;

	if (!cert_file && !key_file)
		return 0;
	if (!cert_file || !key_file) {
		errmsg(err, errlen, "TLS needs both a certificate and a key (--tls-cert and --tls-key)");
		return -EINVAL;
	}
	if ((ret = strbuf_read_file(cert, cert_file)) || (ret = strbuf_read_file(key, key_file))) {
		errmsg(err, errlen, "failed to read '%s': %s", cert->len ? key_file : cert_file,
		       strerror(-ret));
		return ret;
	}
	if (!cert->len || !key->len) {
		errmsg(err, errlen, "failed to read TLS files: '%s' is empty",
		       cert->len ? key_file : cert_file);
		return -EINVAL;
	}
	return 0;
}

unsigned listen__connection_budget(void)
{
	struct rlimit rl;
	rlim_t n;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 1024 - FD_HEADROOM;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	n = rl.rlim_cur == RLIM_INFINITY ? CONNECTIONS_MAX + FD_HEADROOM : rl.rlim_cur;
	if (n < 2 * FD_HEADROOM)
		return (unsigned)(n / 2);
	n -= FD_HEADROOM;
	return n > CONNECTIONS_MAX ? CONNECTIONS_MAX : (unsigned)n;
}
