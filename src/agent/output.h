/* Where sessions go on disk: profile_<time>.col (and .html) in the output directory, the
 * last_profile.col and last_flamegraph.html symlinks replaced atomically, and with
 * --rotating-output only the newest session kept. */
#ifndef KILN_AGENT_OUTPUT_H
#define KILN_AGENT_OUTPUT_H

#include <stdbool.h>

#include "profile/profile.h"

struct output {
	const char *dir;	/* borrowed */
	bool flamegraph;
	bool rotating;
};

/* Creates dir when missing. Returns 0, or a negative errno (with a message logged). */
int output__init(struct output *o, const char *dir, bool flamegraph, bool rotating);

/* Writes p as profile_<end time>.col (+ .html), each through a temporary file renamed into
 * place, points the last_* symlinks at them and, when rotating, deletes the files the
 * symlinks pointed at before. Returns 0, or a negative errno (with a message logged). */
int output__write(struct output *o, const struct profile *p);

#endif
