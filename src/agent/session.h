/* The agent's sampling loop: one sampler, one process table, one symbolizer (and, in
 * dwarf/smart mode, one unwinder) and the runtimes (agent/runtime_set.h) that live across
 * back-to-back sessions. The sampler's records go through the per-sample stage
 * (agent/sample_path.h), which counts raw stacks; session__flush() drains the sampler and
 * runs the flush stage (agent/flush.h), which turns them into a struct profile carrying
 * the .col header (SPEC §2), and starts the next session. Not thread-safe: one thread
 * runs it. */
#ifndef KILN_AGENT_SESSION_H
#define KILN_AGENT_SESSION_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/profile.h"

struct runtime_choices;

enum perf_mode { PERF_MODE_FP, PERF_MODE_DWARF, PERF_MODE_SMART, PERF_MODE_DISABLED };

/* "fp", "dwarf", "smart", "disabled". */
const char *perf_mode__name(enum perf_mode mode);
/* Parses a mode name. Returns 0, or -EINVAL. */
int perf_mode__parse(const char *name, enum perf_mode *mode);

struct session_config {
	unsigned freq;			/* Hz per CPU */
	enum perf_mode mode;
	uint32_t stack_size;		/* dwarf/smart: user stack bytes copied per sample */
	const pid_t *pids;		/* --pids (copied), NULL for every process */
	size_t nr_pids;
	/* Each runtime's mode and flags (runtimes/registry.h), copied; NULL: every runtime
	 * in its default mode. A runtime turned off starts nothing and touches no process. */
	const struct runtime_choices *runtimes;
	const json_t *run_arguments;	/* copied into every header; may be NULL */
	/* Fetches missing debug files (symbols/debuginfod.h); borrowed, must outlive the
	 * session; NULL: none. */
	struct debuginfod *debuginfod;
};

struct session;

/* Opens the perf events, scans /proc and starts sampling. When dwarf/smart was asked but
 * no CFI unwinder is available, falls back to frame pointers with a warning.
 * Returns 0 and *out, or a negative errno with a message in err (-EACCES/-EPERM: not
 * privileged to open perf events, and the message says what is needed). */
int session__open(const struct session_config *cfg, struct session **out, char *err,
		  size_t errlen);
/* Stops sampling and frees everything. Accepts NULL. */
void session__free(struct session *s);

/* Reads samples until duration_ms have passed since the session began or *stop becomes
 * non-zero (a signal handler sets it). Returns 0, or a negative errno on a read error. */
int session__run(struct session *s, uint64_t duration_ms, volatile sig_atomic_t *stop);

/* Ends the session in progress: reads what the rings hold, symbolizes every unique stack,
 * and returns a new profile (the caller frees it) whose metadata is the header. Starts
 * the next session. */
struct profile *session__flush(struct session *s);

/* The perf mode in effect (after any fallback). */
enum perf_mode session__mode(const struct session *s);

#endif
