/* pprof (profile.proto, via protobuf-c): what `go tool pprof` reads and what the Pyroscope
 * SDKs push. */
#ifndef KILN_FORMAT_PPROF_H
#define KILN_FORMAT_PPROF_H

#include <stddef.h>

#include "profile/profile.h"
#include "util/strbuf.h"

/* Encodes p as a gzipped pprof profile (sample types "samples/count" and "cpu/nanoseconds"
 * from the metadata's frequency, 11 Hz when it has none) appended to out. Frame names are
 * kept verbatim as function names. Returns 0, or a negative errno. */
int pprof__write(struct strbuf *out, const struct profile *p);

/* Decodes a pprof profile (gzipped or not) and adds its stacks to p, using the sample
 * type sample_type (e.g. "cpu"; NULL: the first one). Inlined functions become frames of
 * their own; a location without symbols becomes "(module+0xOFFSET)". Sets the metadata's
 * "frequency" from a period in nanoseconds, and "time_nanos" and "duration_nanos" when the
 * profile has them. Returns 0, or -EINVAL with a message in err
 * when the data is not a valid profile (then p is unchanged). */
int pprof__parse(struct profile *p, const void *data, size_t len, const char *sample_type,
		 char *err, size_t errlen);

#endif
