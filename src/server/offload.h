/* A pool of threads for the server's read routes. libmicrohttpd's pool threads each serve
 * many connections, one request at a time: a slow query run on one of them holds up
 * every connection that thread serves, uploads included, whatever the store's locks.
 * So a query's connection is suspended and its handler runs here; the connection is
 * resumed when the answer is ready (server/server.c). */
#ifndef KILN_SERVER_OFFLOAD_H
#define KILN_SERVER_OFFLOAD_H

#include <stdbool.h>

struct offload;

/* Starts threads worker threads (at least 1). Returns NULL when none could start. */
struct offload *offload__new(unsigned threads);
/* Queues fn(arg) for a worker and returns true; returns false once offload__stop has
 * begun (the caller then runs it itself). */
bool offload__run(struct offload *o, void (*fn)(void *arg), void *arg);
/* Runs what is queued, joins the workers and frees o. Accepts NULL. */
void offload__stop(struct offload *o);

#endif
