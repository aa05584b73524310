/* OTLP over gRPC: the HTTP/2 listener of `kiln serve --otlp-grpc-listen` (libnghttp2),
 * cleartext with prior knowledge (h2c, what gRPC clients send to an http:// endpoint), or
 * TLS (ALPN "h2", GnuTLS) when the server has a certificate. It serves one method,
 * OTLP_GRPC_EXPORT: a unary call whose one length-prefixed message (gzip with
 * grpc-encoding: gzip) is handed to the OTLP/HTTP route's ingest (ingest__otlp) with the
 * same limits and the same tokens (the `authorization` metadata, `x-scope-orgid`);
 * the answer's HTTP status becomes a grpc-status trailer with the message in
 * grpc-message. Bounded: a message as sent at most max_body_bytes (and
 * max_decoded_bytes inflated), GRPC_MAX_STREAMS concurrent streams a connection,
 * GRPC_MAX_CONNECTIONS connections, client_connections of them per client address (as
 * on the HTTP port), and a connection silent for GRPC_IDLE_TIMEOUT seconds is closed
 * (GOAWAY). Each connection has its own thread, blocking I/O. */
#ifndef KILN_SERVER_GRPC_H
#define KILN_SERVER_GRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OTLP_GRPC_EXPORT \
	"/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"
#define GRPC_DEFAULT_PORT 4317
#define GRPC_MAX_STREAMS 16
#define GRPC_MAX_CONNECTIONS 256
#define GRPC_IDLE_TIMEOUT 60

/* gRPC status codes kiln answers with. */
enum grpc_code {
	GRPC_OK = 0,
	GRPC_INVALID_ARGUMENT = 3,
	GRPC_PERMISSION_DENIED = 7,
	GRPC_RESOURCE_EXHAUSTED = 8,
	GRPC_UNIMPLEMENTED = 12,
	GRPC_INTERNAL = 13,
	GRPC_UNAVAILABLE = 14,
	GRPC_UNAUTHENTICATED = 16,
};

struct server;
struct grpc_listener;
struct strbuf;

/* Binds listen ("ADDR:PORT", as --listen; port 0 picks one) and starts accepting for srv
 * (TLS with srv's certificate when it has one). Returns the listener, or NULL with err
 * set when the address cannot be parsed or bound or TLS cannot be set up. */
struct grpc_listener *grpc__start(struct server *srv, const char *listen, char *err,
				  size_t errlen);
/* The port bound. */
uint16_t grpc__port(const struct grpc_listener *g);
/* Stops accepting, ends every connection (after the call it is running) and waits for
 * their threads. Accepts NULL. */
void grpc__stop(struct grpc_listener *g);

/* Splits a unary request body into its one message: a flag byte (1: compressed), a
 * 4-byte big-endian length, the message, nothing after it. Returns 0 with *msg, *len
 * and *compressed set, or -EINVAL with err saying what is wrong. */
int grpc__unframe(const void *body, size_t size, const void **msg, size_t *len,
		  bool *compressed, char *err, size_t errlen);
/* Appends msg as one uncompressed length-prefixed message to out. */
void grpc__frame(struct strbuf *out, const void *msg, size_t len);
/* The gRPC code for an HTTP status of kiln's handlers (200: GRPC_OK). */
enum grpc_code grpc__code_of(unsigned http_status);
/* Appends s percent-encoded as grpc-message wants it (bytes outside 0x20..0x7e and '%'). */
void grpc__percent_encode(struct strbuf *out, const char *s);

#endif
