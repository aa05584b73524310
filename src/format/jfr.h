/* JFR (Java Flight Recorder) recordings, as the JDK (`-XX:StartFlightRecording`) and
 * async-profiler (the Pyroscope Java agent's default upload, `format=jfr`) write them, read
 * into the profile model.
 *
 * A recording is one or more chunks. Each chunk has a header, a metadata event that
 * describes every class (event types, constant-pool types, their fields), checkpoint
 * events holding the constant pools (stack traces, methods, classes, symbols, strings,
 * thread states, ...), and the events. Every value is read as the chunk's own metadata
 * describes it (no field offsets are assumed), with LEB128-compressed integers and strings
 * in each of their encodings (null, empty, constant pool, UTF-8, char array, Latin-1).
 *
 * What is extracted is what Pyroscope extracts, one sample type each (JFR_* below):
 *   jdk.ExecutionSample: cpu, unless the thread state is STATE_SLEEPING; also wall when
 *     the recording's jdk.ActiveSetting "event" is "wall" (async-profiler's wall mode);
 *     each sample is worth period_ns nanoseconds;
 *   profiler.WallClockSample: wall, its "samples" times period_ns;
 *   jdk.ObjectAllocationInNewTLAB / OutsideTLAB: one object and tlabSize /
 *     allocationSize bytes;
 *   jdk.JavaMonitorEnter (mutex) and jdk.ThreadPark (block): one contention and its
 *     duration in nanoseconds (JFR ticks converted with the chunk's ticks per second).
 * Stacks are resolved through the stackTrace, method, class and symbol pools, root first,
 * each frame named "<class>.<method>" with the class in the JVM's internal form
 * ("java/lang/Thread.run"), the method's name alone when its class has no name, generated
 * names merged as Pyroscope merges them (jfr__merge_generated). An
 * event's async-profiler context id ("contextId") is looked up in the labels snapshot
 * (jfr__parse_labels) and its labels become the stack's label set; with a snapshot, an
 * event's span (async-profiler's "spanId", "spanName", "traceIdHi"/"traceIdLo", set by
 * otel-profiling-java) adds Pyroscope's labels profile_id (16 hex digits), span_name (a
 * snapshot string) and trace_id (32 hex digits).
 *
 * Input is untrusted: every length, count and index is checked against the data, nesting
 * and work are bounded, and a malformed recording is an error naming what is wrong. */
#ifndef KILN_FORMAT_JFR_H
#define KILN_FORMAT_JFR_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "util/strbuf.h"

/* The sample types a parsed recording has, in this order (profile__type(p, JFR_CPU)). */
enum jfr_sample_type {
	JFR_CPU,
	JFR_WALL,
	JFR_TLAB_OBJECTS,
	JFR_TLAB_BYTES,
	JFR_OUTSIDE_OBJECTS,
	JFR_OUTSIDE_BYTES,
	JFR_LOCK_COUNT,
	JFR_LOCK_DURATION,
	JFR_PARK_COUNT,
	JFR_PARK_DURATION,
	JFR_NR_TYPES
};

/* What a sample type is stored as: its Pyroscope profile type id
 * ("memory:alloc_in_new_tlab_bytes:bytes:space:bytes"), its legacy service-name suffix
 * ("alloc_in_new_tlab_bytes", "mutex_count", ...) and its render units. */
struct jfr_type_info {
	const char *id;
	const char *suffix;
	const char *units;
};
/* The description of sample type t (< JFR_NR_TYPES). A static struct. */
const struct jfr_type_info *jfr__type_info(enum jfr_sample_type t);

/* Pyroscope's merging of the names the JVM generates, applied to a class or method name
 * in place: "jdk/internal/reflect/GeneratedMethodAccessor31" becomes
 * "jdk/internal/reflect/GeneratedMethodAccessor_", "app/Svc$$Lambda$669.0x00000008" (or
 * "$$Lambda.0x…", "$$Lambda$12/0x…", "$$Lambda$12") "app/Svc$$Lambda_", so that one
 * lambda is one frame however often it was spun. Other names are left as they are. */
void jfr__merge_generated(struct strbuf *name);

/* The labels snapshot sent beside a recording: context id -> label pairs. */
struct jfr_labels;

/* Reads a LabelsSnapshot protobuf (format/jfr_labels.proto) from data[0..len) into *out
 * (free with jfr__free_labels). Every label's name and value must be a string id the
 * snapshot has. Returns 0, or -EINVAL with a message in err. */
int jfr__parse_labels(const void *data, size_t len, struct jfr_labels **out, char *err,
		      size_t errlen);
void jfr__free_labels(struct jfr_labels *l);

/* Counts of what a parse found. */
struct jfr_stats {
	size_t chunks;
	size_t events;		/* events of every kind */
	size_t samples[JFR_NR_TYPES];	/* events that added to each sample type */
	size_t unlabeled;	/* samples whose context id the snapshot lacks */
};

/* Reads the recording in data[0..len) (not gzipped) into the empty profile p, which gets
 * the JFR_NR_TYPES sample types above. labels may be NULL. period_ns is what one CPU or
 * wall sample is worth (> 0). stats may be NULL. Returns 0, or -EINVAL with a message in
 * err (p then holds what was read before the error and should be dropped). */
int jfr__parse(struct profile *p, const void *data, size_t len, const struct jfr_labels *labels,
	       int64_t period_ns, struct jfr_stats *stats, char *err, size_t errlen);

#endif
