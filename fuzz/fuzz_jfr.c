/* JFR recordings (format/jfr.h) and the Java agent's labels snapshot. An input that
 * starts with "FLR" is a recording read alone (and as a snapshot, which it is not); any
 * other is a 2-byte little-endian length n, a snapshot of n bytes, and the recording that
 * follows, read with the snapshot's labels (context ids, span names). Seeds: a recording
 * and a snapshot the Pyroscope Java agent (async-profiler) uploaded here, and the two of
 * one upload together. */
#include "fuzz.h"

#include "format/jfr.h"
#include "profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jfr_labels *labels = NULL;
	struct profile *p = profile__new();
	const uint8_t *jfr = data, *lab = data;
	size_t jlen = size, llen = size;
	struct jfr_stats st;
	char err[256];

	if (size >= 2 && memcmp(data, "FLR", size < 3 ? size : 3)) {
		size_t n = (size_t)data[0] | (size_t)data[1] << 8;
		lab = data + 2;
		llen = n < size - 2 ? n : size - 2;
		jfr = lab + llen;
		jlen = size - 2 - llen;
	}
	jfr__parse_labels(lab, llen, &labels, err, sizeof(err));
	jfr__parse(p, jfr, jlen, labels, 10000000, &st, err, sizeof(err));
	profile__free(p);
	jfr__free_labels(labels);
	return 0;
}
