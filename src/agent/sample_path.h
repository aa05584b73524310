/* The per-sample stage of the agent's pipeline: what happens to one decoded sample and
 * to each sideband record, between the sampler (agent/sampler.h) and the stack table
 * (agent/stacks.h).
 *
 * For a sample: find the process (read from /proc when the records missed it; idle and
 * filtered samples are only counted), unwind its user stack (the CFI unwinder in
 * dwarf/smart mode, or the kernel's frame-pointer callchain) and cut it at garbage,
 * find each frame's mapping and pin its binary the first time, attach a runtime reader
 * to a process that may run one and read the runtime frames of the sampled thread, mark
 * the sample per thread when a replace-kind runtime covers the process, and count the
 * resulting stack. COMM, MMAP, FORK and EXIT records keep the process table current and
 * tell the runtimes what processes exec and map (runtimes are recognized by what they
 * map). Nothing here opens perf events: a test feeds it struct sampler_sample values.
 * Not thread-safe: the agent's one consumer thread calls it. */
#ifndef KILN_AGENT_SAMPLE_PATH_H
#define KILN_AGENT_SAMPLE_PATH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/proctab.h"
#include "agent/runtime_set.h"
#include "agent/sampler.h"
#include "agent/stacks.h"
#include "symbols/symbolizer.h"
#include "unwind/unwind.h"

struct sample_path_config {
	struct proctab *procs;		/* the parts it works on, owned by the caller */
	struct symbolizer *sym;
	struct unwinder *unwinder;	/* NULL: the sample's fp callchain is the stack */
	struct stacks *stacks;
	struct runtime_set *runtimes;
	/* Called when a runtime reader starts following a process (the sampler must then
	 * wake the agent per sample); may be NULL. */
	void (*on_follow)(void *ctx);
	void *ctx;
};

/* Counters since the last sample_path__reset_counters(). */
struct sample_path_counters {
	uint64_t idle;		/* samples of the idle task (pid 0) */
	uint64_t filtered;	/* samples of processes outside --pids */
	uint64_t unwind_errors;	/* CFI unwinds that failed (the sampled ip is kept) */
	uint64_t runtime_late;	/* samples of a followed runtime whose runtime stack was not
				 * read: handled too long after they were taken */
};

struct sample_path;

struct sample_path *sample_path__new(const struct sample_path_config *cfg);
/* Frees the stage (not the parts of its config). Accepts NULL. */
void sample_path__free(struct sample_path *sp);

/* The handlers to give the sampler: samples and records go to this stage. */
struct sampler_handlers sample_path__handlers(struct sample_path *sp);

/* Processes one sample (the sampler's sample callback). */
void sample_path__sample(struct sample_path *sp, const struct sampler_sample *smp);

/* Looks at every process of the table once (after the start-up scan): the runtimes are
 * told about the files each maps, and a reader is attached to those that one recognizes,
 * so that runtimes already running are followed from their first sample. */
void sample_path__attach_found(struct sample_path *sp);

struct sample_path_counters sample_path__counters(const struct sample_path *sp);
void sample_path__reset_counters(struct sample_path *sp);

#endif
