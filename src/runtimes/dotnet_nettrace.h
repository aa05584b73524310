/* Internal to runtimes/dotnet*.c: an incremental decoder of the NetTrace (V4/V5) stream a
 * CoreCLR EventPipe session writes on its diagnostics socket. It hands over the events
 * kiln needs: the sample profiler's thread samples (thread id and managed stack) and the
 * JIT's method load / rundown events (address range and name). The stream is input from
 * another process: every length is checked, and a stream that is not NetTrace is an
 * error, never a crash or an unbounded buffer. */
#ifndef KILN_RUNTIMES_DOTNET_NETTRACE_H
#define KILN_RUNTIMES_DOTNET_NETTRACE_H

#include <stddef.h>
#include <stdint.h>

/* One thread sample: ips are leaf first (the runtime's order). */
struct nettrace_sample {
	uint64_t tid;		/* the OS thread id in the process's pid namespace */
	const uint64_t *ips;
	uint32_t nr_ips;
};

/* One method the JIT compiled (MethodLoadVerbose, rundown MethodDC*Verbose). */
struct nettrace_method {
	uint64_t start;
	uint32_t size;
	const char *ns;		/* "Ratio.Work": the type's full name, ASCII ('?' for others) */
	const char *name;	/* "Alpha" */
};

/* What the decoder calls for each event it understands; either may be NULL. The
 * structures are valid during the call only. */
struct nettrace_sink {
	void *ctx;
	void (*sample)(void *ctx, const struct nettrace_sample *s);
	void (*method)(void *ctx, const struct nettrace_method *m);
};

struct nettrace;

/* A decoder at the start of a stream, calling sink (copied). Never NULL. */
struct nettrace *nettrace__new(const struct nettrace_sink *sink);
/* Frees it. Accepts NULL. */
void nettrace__free(struct nettrace *nt);

/* Feeds the next len bytes of the stream; events complete in what was fed so far are
 * decoded and handed to the sink, the rest is kept (at most one block: a block larger
 * than 64 MiB is an error). Returns 0 when more is expected, 1 when the stream's end
 * mark was decoded (bytes after it are ignored), or -EPROTO when the stream is not
 * NetTrace or is corrupt (the decoder then stays failed). */
int nettrace__feed(struct nettrace *nt, const void *buf, size_t len);

/* Counts for tests and the profile header: events decoded by kind. */
struct nettrace_stats {
	uint64_t blocks, samples, methods, skipped;
};
void nettrace__stats(const struct nettrace *nt, struct nettrace_stats *out);

#endif
