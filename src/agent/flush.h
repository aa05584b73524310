/* The flush stage of the agent's pipeline: the end of one session, from the counted
 * stacks to a struct profile. In order: the collectors' stacks replace the stacks of
 * the threads they cover (agent/runtime_set.h), every unique stack is symbolized once
 * (agent/stacks.h), the runtimes add their header keys, the .col header is filled
 * (SPEC §2: times, host, counters, run arguments), and then the stack table is emptied,
 * readers retired by exec are freed and exited processes are reaped. Nothing here reads
 * perf events: the caller drains the sampler first and passes its figures in. */
#ifndef KILN_AGENT_FLUSH_H
#define KILN_AGENT_FLUSH_H

#include <jansson.h>
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

#include "agent/proctab.h"
#include "agent/runtime_set.h"
#include "agent/sample_path.h"
#include "agent/stacks.h"
#include "profile/profile.h"
#include "symbols/symbolizer.h"

/* The parts a flush works on, owned by the caller. */
struct flush_parts {
	struct stacks *stacks;
	struct symbolizer *sym;
	struct proctab *procs;
	struct runtime_set *runtimes;
};

/* What the header says about the session beyond its stacks. */
struct flush_info {
	struct timespec start_wall;		/* CLOCK_REALTIME at the session's start */
	struct rusage start_usage;		/* the agent's RUSAGE_SELF then */
	unsigned freq;				/* Hz per CPU */
	unsigned nr_cpus;			/* CPUs sampled */
	const char *perf_mode;			/* "fp", "dwarf", "smart", "disabled" */
	uint64_t lost;				/* records the kernel dropped this session */
	struct sample_path_counters counters;	/* this session's */
	const json_t *run_arguments;		/* copied into the header; may be NULL */
};

/* Ends the session: returns a new profile (the caller frees it) whose metadata is the
 * .col header, and leaves the stack table empty, the retired readers freed and the
 * exited processes reaped (their symbolizer state forgotten). */
struct profile *flush__session(const struct flush_parts *parts, const struct flush_info *info);

#endif
