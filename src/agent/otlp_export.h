/* `kiln record --otlp-endpoint URL`: each session also sent as OTLP profiles over HTTP
 * (format/otlp.h; POST <URL>/v1development/profiles, binary protobuf), so that kiln's
 * agent feeds an OpenTelemetry Collector or any OTLP profiles receiver. A failed send is
 * logged and dropped (the .col upload keeps its spool); each send is bounded in time. */
#ifndef KILN_AGENT_OTLP_EXPORT_H
#define KILN_AGENT_OTLP_EXPORT_H

#include <stdint.h>

#include "profile/profile.h"

struct otlp_exporter;

/* endpoint: "http://host:4318" (the path /v1development/profiles is added when it has
 * none) or the full URL; service: the resource's service.name (NULL: "kiln"). */
struct otlp_exporter *otlp_exporter__new(const char *endpoint, const char *service);
/* Accepts NULL. */
void otlp_exporter__free(struct otlp_exporter *e);

/* Sends p, covering [start_ns, end_ns). Returns 0 on a 2xx, or a negative errno with a
 * message in err. */
int otlp_exporter__send(struct otlp_exporter *e, const struct profile *p, uint64_t start_ns,
			uint64_t end_ns, char *err, size_t errlen);

#endif
