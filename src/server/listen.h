/* What a listening socket of `kiln serve` needs before it opens: the address parsed, the
 * TLS certificate and key read, and the connection budget the descriptor limit allows.
 * Shared by every listener (the HTTP one of server.c, and any other protocol's). */
#ifndef KILN_SERVER_LISTEN_H
#define KILN_SERVER_LISTEN_H

#include <stddef.h>
#include <sys/socket.h>

#include "util/strbuf.h"

/* Parses "IPV4:PORT", "[IPV6]:PORT", "localhost:PORT" or ":PORT" (loopback) into sa.
 * Returns 0, or -EINVAL with err set (the address quoted). */
int listen__parse(const char *listen, struct sockaddr_storage *sa, char *err, size_t errlen);

/* Reads the PEM certificate and key files (both NULL: no TLS, returns 0 with cert and key
 * left empty). Returns 0, or a negative errno with err set: one of the two missing, a
 * file unreadable or empty. */
int listen__read_tls(const char *cert_file, const char *key_file, struct strbuf *cert,
		     struct strbuf *key, char *err, size_t errlen);

/* Raises the descriptor limit to its hard limit and returns how many connections fit
 * below it with descriptors to spare for the store (at most 8,192). */
unsigned listen__connection_budget(void);

#endif
