/* The agent's upload client (libcurl): sends each session to a kiln server (or a gProfiler
 * Performance Studio) with gProfiler's protocol, and spools what cannot be sent.
 *
 * Protocol: GET /api/v1/health_check at start; per session POST /api/v2/profiles with
 * headers GPROFILER-API-KEY and GPROFILER-SERVICE-NAME, Content-Encoding: gzip, and a JSON
 * body {start_time, end_time (ISO 8601), hostname, profile (the .col text with its header),
 * cpu_avg, mem_avg, spawn_time, gpid}; the gpid the server returns is echoed afterwards.
 *
 * Spool: a session that cannot be delivered (server unreachable, 5xx, 408, 429) is written
 * to spool_dir as its ready-to-send gzip body, under a temporary name then renamed, so a
 * crash never leaves half a file. Before each new session the spool is sent oldest first,
 * each file once: deleted after a 2xx, or after a 4xx that says it will never be accepted.
 * The directory is bounded: the oldest files are dropped to stay under spool_max_bytes.
 *
 * Not thread-safe: one uploader per session loop. */
#ifndef KILN_AGENT_UPLOAD_H
#define KILN_AGENT_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

struct uploader;

/* server: "http://host:port" (scheme optional, trailing '/' ignored). token and service
 * are sent with every request. spool_dir is created when missing; NULL disables spooling.
 * Returns NULL (with a logged message) when spool_dir cannot be created. */
struct uploader *uploader__new(const char *server, const char *token, const char *service,
			       const char *spool_dir, size_t spool_max_bytes);
/* Accepts NULL. */
void uploader__free(struct uploader *u);
/* How an https server is verified: against the system's CAs by default, against ca_file's
 * (PEM) when not NULL; insecure skips checking its certificate and name (a warning says
 * so: anyone on the path may read the profiles and the token). */
void uploader__set_tls(struct uploader *u, const char *ca_file, bool insecure);

/* Asks the server whether it is up. Returns 0 on a 2xx, or a negative errno with a
 * message in err. */
int uploader__health_check(struct uploader *u, char *err, size_t errlen);

/* Sends the spool, then one session: p's .col text (header included) covering
 * [start, end) in unix seconds (both 0: the header's "start_time" and "end_time"). Returns 0 when the server acknowledged it, 1 when it was
 * spooled for later, or a negative errno with a message in err when the server rejected it
 * (4xx) or it could be neither sent nor spooled. */
int uploader__send(struct uploader *u, const struct profile *p, int64_t start, int64_t end,
		   char *err, size_t errlen);

/* Sends spooled sessions, oldest first, until one cannot be delivered. Returns the number
 * sent, or a negative errno. */
int uploader__flush(struct uploader *u, char *err, size_t errlen);

/* Number of sessions waiting in the spool. */
size_t uploader__spooled(struct uploader *u);

#endif
