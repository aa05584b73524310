/* OTLP profiles (OpenTelemetry's profiles signal, v1development: src/format/otlp_profiles.proto):
 * an ExportProfilesServiceRequest read into profiles, and a profile written as one.
 *
 * Reading: each OTLP Profile becomes one struct otlp_profile: its sample type and period,
 * its stacks root first (a location's inlined functions as frames of their own, "_[i]";
 * interpreter frames named "func (file:line)" and annotated as kiln annotates them:
 * cpython "_[p]", jvm "_[j]", v8js "_[js]", ruby "_[rb]", php "_[php]", dotnet "_[net]",
 * kernel "_[k]"; a location without a function "(module+0xADDR)"), and per stack a label
 * set of the resource's, scope's, profile's and sample's string and integer attributes.
 * Attributes kiln has its own labels for are renamed to them (host.name: host,
 * container.name or else container.id: container, process.executable.name: process,
 * thread.name: thread); process.pid, thread.id and cpu.logical_number are left out (one
 * series per process or CPU is not a label set). A sample counts its values, or its
 * timestamps when it has none. The service is the resource's service.name, else
 * "unknown_service:<process.executable.name>", else "unknown_service", as Pyroscope
 * names it. Every index is checked: a request that refers outside its tables is refused.
 *
 * Writing: the profile's stacks (sample type 0, its period), one ResourceProfiles per
 * (container, process) label pair, with the resource attributes given. */
#ifndef KILN_FORMAT_OTLP_H
#define KILN_FORMAT_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "util/strbuf.h"

struct otlp_profile {
	char *service;
	struct profile *p;	/* one sample type, labels per stack */
	int64_t from, until;	/* unix seconds; 0 when the profile says no time */
};

/* Reads the request in data[0..len) (binary protobuf, not gzipped) into *out (malloc'd,
 * *n entries; free with otlp__free). Returns 0, or -EINVAL with a message in err. */
int otlp__parse(const void *data, size_t len, struct otlp_profile **out, size_t *n, char *err,
		size_t errlen);
void otlp__free(struct otlp_profile *v, size_t n);

/* A resource attribute written with every profile. */
struct otlp_attr {
	const char *key;
	const char *value;
};

/* Appends p as an ExportProfilesServiceRequest to out: service.name service, the
 * attributes attrs[0..nattrs) (host.name, ...), the stacks' container and process labels
 * as container.name and process.executable.name of one resource each, the time window
 * [start_ns, start_ns + duration_ns). Returns 0, or a negative errno. */
int otlp__write(struct strbuf *out, const struct profile *p, const char *service,
		const struct otlp_attr *attrs, size_t nattrs, uint64_t start_ns,
		uint64_t duration_ns);

#endif
