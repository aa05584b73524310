/* pprof (profile.proto, via protobuf-c): what `go tool pprof` reads and what the Pyroscope
 * SDKs push. */
#ifndef KILN_FORMAT_PPROF_H
#define KILN_FORMAT_PPROF_H

#include <stddef.h>

#include "profile/profile.h"
#include "util/strbuf.h"

/* Encodes p as a gzipped pprof profile appended to out: every sample type of p, its period
 * and the string labels of each stack (labels with an empty value are left out). A
 * profile whose one sample type is "samples"/"count" and that has a period also gets the
 * period's type, valued count * period (with a "cpu"/"nanoseconds" period: both, as Go's
 * CPU profiles have). A profile without a period whose one sample type is
 * "samples"/"count" (collapsed stacks) is taken as CPU samples at the metadata's frequency
 * (11 Hz when it has none). Frame names are kept verbatim as function names. Returns 0,
 * or a negative errno. */
int pprof__write(struct strbuf *out, const struct profile *p);
/* The same profile message not gzipped (what a protobuf field or a Connect answer holds). */
int pprof__write_raw(struct strbuf *out, const struct profile *p);

/* Decodes a pprof profile (gzipped or not) and adds its stacks to p (profile__merge: sample
 * types matched by type and unit) with every sample type, or only sample_type (e.g.
 * "cpu") when not NULL, the period and the string labels of each sample. Inlined
 * functions become frames of their own; a location without symbols becomes
 * "(module+0xOFFSET)". Sets the metadata's "frequency" from a period in nanoseconds, and
 * "time_nanos" and "duration_nanos" when the profile has them. Returns 0, or -EINVAL with a message in err
 * when the data is not a valid profile (then p is unchanged). */
int pprof__parse(struct profile *p, const void *data, size_t len, const char *sample_type,
		 char *err, size_t errlen);

#endif
