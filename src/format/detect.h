/* Recognizing and loading any profile file `kiln report` accepts: gProfiler .col, folded
 * stacks, pprof (gzipped or not), perf script text and JFR recordings. */
#ifndef KILN_FORMAT_DETECT_H
#define KILN_FORMAT_DETECT_H

#include <stddef.h>

#include "profile/profile.h"

enum input_format {
	INPUT_UNKNOWN,
	INPUT_COL,		/* "# {json}" header, then collapsed stacks */
	INPUT_FOLDED,		/* collapsed stacks without a header */
	INPUT_PPROF,		/* profile.proto, raw or gzipped */
	INPUT_PERF_SCRIPT,	/* `perf script` text */
	INPUT_JFR,		/* a JFR recording ("FLR\0" chunks, format/jfr.h) */
};

/* Guesses the format of data from its content: "FLR\0" is JFR, gzip magic or binary bytes mean pprof, a
 * "# {" first line .col, a perf sample header followed by a frame line perf script, and
 * text whose lines all end in a count folded. Returns INPUT_UNKNOWN otherwise. */
enum input_format input__detect(const void *data, size_t len);

/* Name of a format ("col", "folded", "pprof", "perf-script", "jfr", "unknown"). */
const char *input__name(enum input_format fmt);

/* Parses data of format fmt (INPUT_UNKNOWN: detect it) into p. sample_type chooses the
 * pprof sample type (NULL: the first), or the JFR one ("cpu", "wall",
 * "alloc_in_new_tlab_bytes", ...; NULL: the first kind the recording has samples of; CPU
 * and wall samples counted as 10 ms each). perf script is collapsed with kernel frames
 * annotated "_[k]" and JIT frames "_[j]", as kiln's own stacks are. Returns 0, or
 * -EINVAL with a message in err. */
int input__load(struct profile *p, const void *data, size_t len, enum input_format fmt,
		const char *sample_type, char *err, size_t errlen);

/* Number of leading frames that are gProfiler's .col prefix (app-metadata index and
 * container name) in every stack of p: 2 when every stack has at least three frames and
 * starts with a decimal index, else 0. */
unsigned input__col_prefix(const struct profile *p);

#endif
