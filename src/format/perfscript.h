/* `perf script` text → profile, with the semantics of FlameGraph's stackcollapse-perf.pl:
 * each sample is a header line ("comm pid[/tid] [cpu] time: [period] event:") and its
 * callchain, leaf first, one "addr symbol+0xoff (module)" line per frame, ended by a blank
 * line. The stack becomes root first with the process name in front (spaces turned into
 * '_'); symbol offsets are stripped; "[unknown]" becomes "[module basename]"; "a->b"
 * inline chains become a;b_[i]; names are tidied (';' → ':', arguments after the first
 * '(' dropped unless it is a Go method, quotes removed, Java's leading 'L' dropped in a
 * process whose name starts with "java"). A sample counts its period (1 when the header
 * has none), and only samples of the first event type seen are kept. */
#ifndef KILN_FORMAT_PERFSCRIPT_H
#define KILN_FORMAT_PERFSCRIPT_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/profile.h"

struct perfscript_options {
	bool annotate_kernel;	/* "_[k]" on frames of a "[module]" or vmlinux (--kernel) */
	bool annotate_jit;	/* "_[j]" on frames of a /tmp/perf-PID.map (--jit) */
	bool include_pid;	/* process name as "comm-PID" (--pid) */
	bool include_tid;	/* process name as "comm-PID/TID" (--tid) */
	bool count_samples;	/* count each sample 1 instead of its period (not in the script) */
};

/* Adds the samples of perf script text to p. Lines that are neither a header, a frame nor
 * blank are skipped and counted in *skipped (when not NULL), as stackcollapse warns and
 * goes on. Returns 0, or -EINVAL with a message in err when the text holds no sample
 * header at all (it is not perf script output). */
int perfscript__parse(struct profile *p, const char *text, size_t len,
		      const struct perfscript_options *opts, size_t *skipped, char *err,
		      size_t errlen);

/* True when text looks like perf script output: a sample header followed by a frame line
 * within its first lines. */
bool perfscript__detect(const char *text, size_t len);

#endif
