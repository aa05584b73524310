/* The flush stage: see flush.h. */
#include "agent/flush.h"

#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cmd/cmd.h"

static json_t *iso_time(const struct timespec *ts)
{
	struct tm tm;
	char buf[64];

	gmtime_r(&ts->tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ".%06ld+00:00",
		 ts->tv_nsec / 1000);
	return json_string(buf);
}

static double tv_sec(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

static void fill_header(const struct flush_parts *s, const struct flush_info *in,
			struct profile *p, json_t *containers)
{
	json_t *h = profile__meta(p), *md = json_object();
	json_t *args = in->run_arguments ? json_deep_copy(in->run_arguments) : json_object();
	struct timespec end;
	struct rusage ru;
	struct utsname un;
	char host[256] = "";
	double cpu;

	clock_gettime(CLOCK_REALTIME, &end);
	getrusage(RUSAGE_SELF, &ru);
	uname(&un);
	gethostname(host, sizeof(host) - 1);
	cpu = tv_sec(&ru.ru_utime) + tv_sec(&ru.ru_stime) - tv_sec(&in->start_usage.ru_utime) -
	      tv_sec(&in->start_usage.ru_stime);

	json_object_set_new(h, "start_time", iso_time(&in->start_wall));
	json_object_set_new(h, "end_time", iso_time(&end));
	json_object_set_new(h, "hostname", json_string(host));
	json_object_set_new(h, "kernel_release", json_string(un.release));
	json_object_set_new(h, "kernel_version", json_string(un.version));
	json_object_set_new(h, "cpu_count", json_integer(in->nr_cpus));
	json_object_set_new(h, "frequency", json_integer(in->freq));
	/* what a sample stands for: samples/count (the default type), cpu time per sample */
	profile__set_period(p, "cpu", "nanoseconds", in->freq ? (1000000000 + in->freq / 2) / in->freq : 0);
	json_object_set_new(h, "perf_mode", json_string(in->perf_mode));
	json_object_set_new(h, "agent_version", json_string(KILN_VERSION));
	json_object_set_new(h, "samples", json_integer((json_int_t)stacks__samples(s->stacks)));
	json_object_set_new(h, "lost", json_integer((json_int_t)in->lost));
	json_object_set_new(h, "idle_samples", json_integer((json_int_t)in->counters.idle));
	json_object_set_new(h, "filtered_samples", json_integer((json_int_t)in->counters.filtered));
	json_object_set_new(h, "unique_stacks", json_integer((json_int_t)stacks__unique(s->stacks)));
	json_object_set_new(h, "unwind_errors", json_integer((json_int_t)in->counters.unwind_errors));
	json_object_set_new(h, "runtime_late_samples",
			    json_integer((json_int_t)in->counters.runtime_late));
	json_object_set_new(h, "processes", json_integer((json_int_t)proctab__count(s->procs)));
	json_object_set_new(h, "agent_cpu_seconds", json_real(cpu));
	json_object_set_new(h, "agent_peak_rss_kb", json_integer(ru.ru_maxrss));
	json_object_set_new(h, "symbolizer_bytes",
			    json_integer((json_int_t)symbolizer__memory(s->sym)));
	json_object_set_new(h, "containers", containers);
	json_object_set_new(h, "run_arguments", json_deep_copy(args));
	/* gProfiler's own keys, so that its tools read the file. */
	json_object_set_new(h, "container_names_enabled", json_true());
	json_object_set_new(h, "application_metadata", json_pack("[n]"));
	json_object_set_new(h, "application_metadata_enabled", json_true());
	json_object_set_new(h, "profiling_mode", json_string("cpu"));
	json_object_set_new(md, "hostname", json_string(host));
	json_object_set_new(md, "system_name", json_string(un.sysname));
	json_object_set_new(md, "kernel_release", json_string(un.release));
	json_object_set_new(md, "kernel_version", json_string(un.version));
	json_object_set_new(md, "processors", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
	json_object_set_new(md, "agent_version", json_string(KILN_VERSION));
	json_object_set_new(md, "pid", json_integer(getpid()));
	json_object_set_new(md, "run_arguments", args);
	json_object_set_new(md, "profiling_mode", json_string("cpu"));
	json_object_set_new(md, "sampling_event", json_string("cpu-clock"));
	json_object_set_new(md, "sampling_frequency", json_integer(in->freq));
	json_object_set_new(h, "metadata", md);
}

static void forget_proc(struct proc *p, void *ctx)
{
	const struct flush_parts *s = ctx;

	runtime_set__detach(s->runtimes, p);
	symbolizer__forget_process(s->sym, p->ref.pid);
}

struct profile *flush__session(const struct flush_parts *parts, const struct flush_info *info)
{
	struct profile *p = profile__new();
	json_t *containers = json_array();

	runtime_set__merge(parts->runtimes, parts->stacks, parts->procs, p);
	stacks__symbolize(parts->stacks, parts->sym, p, containers);
	runtime_set__header(parts->runtimes, profile__meta(p));
	fill_header(parts, info, p, containers);
	stacks__clear(parts->stacks);
	runtime_set__release_retired(parts->runtimes);
	proctab__reap(parts->procs, forget_proc, (void *)parts);
	/* a session's process and stack state is freed here: give it back to the system */
	malloc_trim(0);
	return p;
}
