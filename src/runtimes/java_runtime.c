/* Java behind the runtime contract (runtime.h), replace kind: the session of java.c
 * attaches libkiln-jvm.so to the JVMs the agent sees and, at each flush, hands over the
 * stacks their agents counted for their Java threads. */
#include <stdlib.h>
#include <string.h>

#include "runtimes/java.h"
#include "util/strbuf.h"

struct runtime_collector {
	struct java_session *js;
	struct runtime_stacks *view;	/* the last collect's results, as the contract's */
	size_t nr_view;
	uint64_t agent_cpu_us;		/* of the last collect, summed over the JVMs */
};

static struct runtime_collector *java_start(const struct runtime_env *env)
{
	struct java_opts jo = {
		.frequency = env->freq,
		.thread_names = runtime_env__flag(env, "java_collect_thread_names"),
		.pids = env->pids,
		.nr_pids = env->nr_pids,
		.exec_events = true,
	};
	struct java_session *js = java_session__start(&jo);	/* NULL: logged */
	struct runtime_collector *c;

	if (!js)
		return NULL;
	c = xcalloc(1, sizeof(*c));
	c->js = js;
	return c;
}

static void java_exec(struct runtime_collector *c, pid_t pid)
{
	java_session__note_exec(c->js, pid);
}

static void java_seen(struct runtime_collector *c, pid_t pid)
{
	java_session__note_seen(c->js, pid);
}

static bool java_covers(struct runtime_collector *c, pid_t pid)
{
	return java_session__attached(c->js, pid);
}

static size_t java_collect(struct runtime_collector *c, const struct runtime_stacks **out)
{
	const struct java_result *r;
	size_t nr;

	java_session__collect(c->js, false);
	r = java_session__results(c->js, &nr);
	free(c->view);
	c->view = xcalloc(nr + 1, sizeof(*c->view));
	c->nr_view = nr;
	c->agent_cpu_us = 0;
	for (size_t i = 0; i < nr; i++) {
		c->view[i] = (struct runtime_stacks){
			.pid = r[i].pid, .skip_reason = r[i].skip_reason, .stacks = r[i].stacks,
			.samples = r[i].samples, .tids = r[i].tids, .nr_tids = r[i].nr_tids,
		};
		c->agent_cpu_us += r[i].agent_cpu_us;
	}
	*out = c->view;
	return nr;
}

static void java_header(struct runtime_collector *c, json_t *meta, size_t merged)
{
	json_object_set_new(meta, "jvms_profiled", json_integer((json_int_t)merged));
	/* CPU of the agents' threads inside the JVMs, since each was loaded */
	json_object_set_new(meta, "jvm_agent_cpu_seconds",
			    json_real((double)c->agent_cpu_us / 1e6));
}

static void java_stop(struct runtime_collector *c)
{
	if (!c)
		return;
	java_session__stop(c->js);
	free(c->view);
	free(c);
}

const struct runtime_ops java_runtime = {
	.name = "java",
	.merge = RUNTIME_REPLACE,
	.likely = jvm__is_jvm_lib,
	.start = java_start,
	.exec = java_exec,
	.seen = java_seen,
	.covers = java_covers,
	.collect = java_collect,
	.header = java_header,
	.stop = java_stop,
};
