/* JFR recordings (format/jfr.h) and the Java agent's labels snapshot: the input is read
 * as both, the recording with the snapshot's labels when the input is one. Seeds: a
 * recording and a snapshot the Pyroscope Java agent (async-profiler) uploaded here. */
#include "fuzz.h"

#include "format/jfr.h"
#include "profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jfr_labels *labels = NULL;
	struct profile *p = profile__new();
	struct jfr_stats st;
	char err[256];

	jfr__parse_labels(data, size, &labels, err, sizeof(err));
	jfr__parse(p, data, size, labels, 10000000, &st, err, sizeof(err));
	profile__free(p);
	jfr__free_labels(labels);
	return 0;
}
