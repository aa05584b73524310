/* The agent's pipeline without perf_event: struct sampler_sample values built from real
 * processes (this test's own functions, and a real stack captured by the unwind_deep
 * workload) go through the per-sample stage (agent/sample_path.h) and the flush
 * (agent/flush.h) with the real process table, symbolizer, unwinder and stack table; the
 * stacks that come out are checked. Runtimes are fakes behind the real contract: an
 * interleave reader and a replace-kind collector. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/flush.h"
#include "agent/proctab.h"
#include "agent/runtime_set.h"
#include "agent/sample_path.h"
#include "agent/stacks.h"
#include "format/col.h"
#include "test_unwind_util.h"
#include "util/strbuf.h"

/* Global (not static) so that they are in .symtab under these names. */
void pl_root(void);
void pl_eval_frame(void);
void pl_leaf(void);
#define BODY { __asm__ volatile("nop; nop; nop"); }
__attribute__((noinline, used)) void pl_root(void) BODY
__attribute__((noinline, used)) void pl_eval_frame(void) BODY
__attribute__((noinline, used)) void pl_leaf(void) BODY

/* --- a fake interleave reader: two frames for this process's threads --- */

struct runtime_proc {
	pid_t pid;
};

static const char *const interp[] = { "pl_eval_frame", NULL };

static bool int_likely(const char *path)
{
	return strstr(path, "test_pipeline") != NULL;	/* this test's own binary */
}

static struct runtime_proc *int_attach(const struct proc_ref *p, char *skip_reason)
{
	struct runtime_proc *rp;

	if (p->pid != getpid())
		return NULL;
	rp = calloc(1, sizeof(*rp));
	rp->pid = p->pid;
	return rp;
}

#define TRUNCATED_TID 424244	/* a thread whose read stops early */

static int int_sample(struct runtime_proc *rp, pid_t tid, struct rt_frame *f, int max)
{
	if (max < 2)
		return 0;
	f[0] = (struct rt_frame){ 7, 12, RT_FRAME_ENTRY };
	if (tid == TRUNCATED_TID)
		f[0].flags |= RT_FRAME_TRUNCATED;
	f[1] = (struct rt_frame){ 8, 3, 0 };
	return 2;
}

static void int_name(struct runtime_proc *rp, const struct rt_frame *f, struct strbuf *out)
{
	strbuf_addf(out, "fn%u (app.fake:%u)_[f]", (unsigned)f->id, f->aux);
}

static void int_detach(struct runtime_proc *rp)
{
	free(rp);
}

static const struct runtime_ops fake_interleave = {
	.name = "fakeint", .merge = RUNTIME_INTERLEAVE, .likely = int_likely,
	.interp_symbols = interp, .attach = int_attach, .sample = int_sample,
	.frame_name = int_name, .detach = int_detach,
};

/* --- a fake replace collector: its own stacks for one thread of this process --- */

#define COVERED_TID 424242	/* a thread the collector names; another is not covered */
#define OTHER_TID 424243

struct runtime_collector {
	struct profile *stacks;
	pid_t tids[1];
	struct runtime_stacks out[2];
	pid_t seen, execd;
	int collects;
	bool stopped;
};

static struct runtime_collector *the_collector;

static bool rep_likely(const char *path)
{
	return strstr(path, "libfakevm.so") != NULL;
}

static struct runtime_collector *rep_start(const struct runtime_env *env)
{
	struct runtime_collector *c = calloc(1, sizeof(*c));

	assert_true(runtime_env__flag(env, "fakerep_flag") == false);
	the_collector = c;
	return c;
}

static void rep_exec(struct runtime_collector *c, pid_t pid)
{
	c->execd = pid;
}

static void rep_seen(struct runtime_collector *c, pid_t pid)
{
	c->seen = pid;
}

static bool rep_covers(struct runtime_collector *c, pid_t pid)
{
	return pid == getpid();
}

static size_t rep_collect(struct runtime_collector *c, const struct runtime_stacks **out)
{
	const char *a[] = { "Main.main_[j]", "Main.work_[j]" };
	const char *b[] = { "Main.main_[j]", "Main.idle_[0]" };
	uint32_t ids[2];

	profile__free(c->stacks);
	c->stacks = profile__new();
	for (int i = 0; i < 2; i++)
		ids[i] = profile__intern_str(c->stacks, a[i]);
	profile__add(c->stacks, ids, 2, 6);
	for (int i = 0; i < 2; i++)
		ids[i] = profile__intern_str(c->stacks, b[i]);
	profile__add(c->stacks, ids, 2, 2);
	c->tids[0] = COVERED_TID;
	c->out[0] = (struct runtime_stacks){ .pid = getpid(), .skip_reason = "", .stacks = c->stacks,
					     .samples = 8, .tids = c->tids, .nr_tids = 1 };
	c->out[1] = (struct runtime_stacks){ .pid = getppid(), .skip_reason = "fake VM too old" };
	c->collects++;
	*out = c->out;
	return 2;
}

static void rep_header(struct runtime_collector *c, json_t *meta, size_t merged)
{
	json_object_set_new(meta, "fake_merged", json_integer((json_int_t)merged));
}

static void rep_stop(struct runtime_collector *c)
{
	profile__free(c->stacks);
	c->stopped = true;
}

static const struct runtime_ops fake_replace = {
	.name = "fakerep", .merge = RUNTIME_REPLACE, .likely = rep_likely, .start = rep_start,
	.exec = rep_exec, .seen = rep_seen, .covers = rep_covers, .collect = rep_collect,
	.header = rep_header, .stop = rep_stop,
};

/* --- the pipeline under test --- */

struct fixture {
	struct proctab *procs;
	struct symbolizer *sym;
	struct unwinder *unwinder;
	struct stacks *st;
	struct runtime_set *rs;
	struct sample_path *sp;
	int follows;
	uint64_t ips[3];	/* leaf first: pl_leaf <- pl_eval_frame <- pl_root */
};

static void on_follow(void *ctx)
{
	((struct fixture *)ctx)->follows++;
}

static struct fixture *pipeline(const struct runtime_ops *const *ops, const pid_t *pids,
				size_t nr_pids, enum unwind_mode mode, bool cfi)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct runtime_env env = { .freq = 99 };

	f->procs = proctab__new(pids, nr_pids);
	f->sym = symbolizer__new(0);
	f->unwinder = cfi ? unwinder__new(mode, 0) : NULL;
	f->st = stacks__new();
	f->rs = runtime_set__new(ops, NULL, &env);
	f->sp = sample_path__new(&(struct sample_path_config){
		.procs = f->procs, .sym = f->sym, .unwinder = f->unwinder, .stacks = f->st,
		.runtimes = f->rs, .on_follow = on_follow, .ctx = f });
	/* return addresses point one past their call: the symbolizer is asked for pc - 1 */
	f->ips[0] = (uint64_t)(uintptr_t)&pl_leaf + 1;
	f->ips[1] = (uint64_t)(uintptr_t)&pl_eval_frame + 2;
	f->ips[2] = (uint64_t)(uintptr_t)&pl_root + 2;
	return f;
}

static void detach(struct proc *p, void *ctx)
{
	runtime_set__detach(ctx, p);
}

static void pipeline_free(struct fixture *f)
{
	proctab__for_each(f->procs, detach, f->rs);
	runtime_set__free(f->rs);
	sample_path__free(f->sp);
	stacks__free(f->st);
	unwinder__free(f->unwinder);
	symbolizer__free(f->sym);
	proctab__free(f->procs);
	free(f);
}

static struct profile *flush(struct fixture *f)
{
	json_t *args = json_pack("{s:s}", "python_mode", "auto");
	struct flush_info in = { .freq = 99, .nr_cpus = 2, .perf_mode = "fp",
				 .counters = sample_path__counters(f->sp), .run_arguments = args };
	struct profile *p;

	clock_gettime(CLOCK_REALTIME, &in.start_wall);
	p = flush__session(&(struct flush_parts){ f->st, f->sym, f->procs, f->rs }, &in);
	json_decref(args);
	return p;
}

/* The stack lines of p as the agent's .col writes them ("0;container;process;a;b 3"),
 * each ending in a newline, after a leading newline. */
static char *col_lines(const struct profile *p)
{
	char *buf = NULL, *nl;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(col__write(f, p, true), 0);
	fclose(f);
	nl = strchr(buf, '\n');	/* after the header */
	assert_non_null(nl);
	strbuf_addstr(&sb, nl);
	free(buf);
	return strbuf_detach(&sb, NULL);
}

/* Stack 0 of a profile of one stack, as its .col line. */
static char *stack_line(const struct profile *p)
{
	char *lines, *line;

	assert_int_equal(profile__nr_stacks(p), 1);
	lines = col_lines(p);
	line = xstrdup(lines + 1);
	line[strcspn(line, "\n")] = '\0';
	free(lines);
	return line;
}

/* Whether p holds exactly the stack line want. */
static bool has_stack(const struct profile *p, const char *want)
{
	char *lines = col_lines(p), *needle = xmalloc(strlen(want) + 3);
	bool found;

	snprintf(needle, strlen(want) + 3, "\n%s\n", want);
	found = strstr(lines, needle) != NULL;
	if (!found && getenv("PIPELINE_DEBUG"))
		fprintf(stderr, "want: %s\nhave:%s", want, lines);
	free(needle);
	free(lines);
	return found;
}

static json_int_t header_int(struct profile *p, const char *key)
{
	return json_integer_value(json_object_get(profile__meta(p), key));
}

static struct sampler_sample fp_sample(struct fixture *f, pid_t pid, pid_t tid,
				       const uint64_t *ips, uint32_t n)
{
	return (struct sampler_sample){ .pid = pid, .tid = tid, .user_ips = ips, .nr_user = n };
}

static char comm_prefix[192];	/* "0;;test_pipeline": index, container, process */

/* Frame-pointer callchains (fp mode): counted per unique stack, cut at an address that
 * is not code; idle and filtered samples are only counted; the header says so. */
static void test_native_stacks(void **state)
{
	const struct runtime_ops *const none[] = { NULL };
	pid_t self = getpid();
	struct fixture *f = pipeline(none, &self, 1, UNWIND_DWARF, false);
	uint64_t cut[4];
	struct sampler_sample s;
	struct profile *p;
	char want[512];

	memcpy(cut, f->ips, 2 * sizeof(*cut));
	cut[2] = 12;	/* garbage from code built without frame pointers */
	cut[3] = f->ips[2];
	for (int i = 0; i < 3; i++) {
		s = fp_sample(f, self, self, f->ips, 3);
		sample_path__sample(f->sp, &s);
	}
	s = fp_sample(f, self, self, cut, 4);
	sample_path__sample(f->sp, &s);
	s = fp_sample(f, 0, 0, NULL, 0);		/* the idle task */
	sample_path__sample(f->sp, &s);
	s = fp_sample(f, getppid(), getppid(), f->ips, 3);	/* not in --pids */
	sample_path__sample(f->sp, &s);
	assert_int_equal(sample_path__counters(f->sp).idle, 1);
	assert_int_equal(sample_path__counters(f->sp).filtered, 1);

	p = flush(f);
	snprintf(want, sizeof(want), "%s;pl_root;pl_eval_frame;pl_leaf 3", comm_prefix);
	assert_true(has_stack(p, want));
	snprintf(want, sizeof(want), "%s;pl_eval_frame;pl_leaf 1", comm_prefix);
	assert_true(has_stack(p, want));
	assert_int_equal(profile__nr_stacks(p), 2);
	assert_int_equal(header_int(p, "samples"), 4);
	assert_int_equal(header_int(p, "unique_stacks"), 2);
	assert_int_equal(header_int(p, "idle_samples"), 1);
	assert_int_equal(header_int(p, "filtered_samples"), 1);
	assert_string_equal(json_string_value(json_object_get(json_object_get(profile__meta(p),
		"run_arguments"), "python_mode")), "auto");
	assert_null(json_object_get(profile__meta(p), "fake_merged"));
	assert_int_equal(stacks__samples(f->st), 0);	/* the table starts empty again */
	profile__free(p);
	pipeline_free(f);
}

/* An interleave reader found by what the process maps (the start-up scan) follows it
 * from its first sample; its frames go after the interpreter frame. */
static void test_interleave(void **state)
{
	const struct runtime_ops *const ops[] = { &fake_interleave, NULL };
	struct fixture *f = pipeline(ops, NULL, 0, UNWIND_DWARF, false);
	struct sampler_sample s;
	struct proc *self;
	struct profile *p;
	char want[512];

	proctab__get(f->procs, getpid());
	sample_path__attach_found(f->sp);
	self = proctab__find(f->procs, getpid());
	assert_non_null(self);
	assert_non_null(self->rt);
	assert_int_equal(f->follows, 1);
	for (int i = 0; i < 2; i++) {
		s = fp_sample(f, getpid(), getpid(), f->ips, 3);
		sample_path__sample(f->sp, &s);
	}
	p = flush(f);
	snprintf(want, sizeof(want),
		 "%s;pl_root;pl_eval_frame;fn7 (app.fake:12)_[f];fn8 (app.fake:3)_[f];pl_leaf 2",
		 comm_prefix);
	assert_true(has_stack(p, want));
	assert_int_equal(profile__nr_stacks(p), 1);
	profile__free(p);
	pipeline_free(f);
}

/* A sample handled more than RT_LATE_NS after it was taken keeps its native stack only
 * and is counted in the header; one taken just now gets its runtime frames. */
static void test_interleave_late(void **state)
{
	const struct runtime_ops *const ops[] = { &fake_interleave, NULL };
	struct fixture *f = pipeline(ops, NULL, 0, UNWIND_DWARF, false);
	struct sampler_sample s;
	struct timespec ts;
	struct profile *p;
	uint64_t now;
	char want[512];

	proctab__get(f->procs, getpid());
	sample_path__attach_found(f->sp);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	s = fp_sample(f, getpid(), getpid(), f->ips, 3);
	s.time_mono = true;
	s.time = now - 200 * 1000000ull;	/* read 200 ms late */
	sample_path__sample(f->sp, &s);
	s.time = now;
	sample_path__sample(f->sp, &s);
	s.time_mono = false;	/* a clock we cannot compare with: read */
	s.time = 1;
	sample_path__sample(f->sp, &s);
	assert_int_equal(sample_path__counters(f->sp).runtime_late, 1);
	p = flush(f);
	snprintf(want, sizeof(want),
		 "%s;pl_root;pl_eval_frame;fn7 (app.fake:12)_[f];fn8 (app.fake:3)_[f];pl_leaf 2",
		 comm_prefix);
	assert_true(has_stack(p, want));
	snprintf(want, sizeof(want), "%s;pl_root;pl_eval_frame;pl_leaf 1", comm_prefix);
	assert_true(has_stack(p, want));
	assert_int_equal(header_int(p, "runtime_late_samples"), 1);
	profile__free(p);
	pipeline_free(f);
}

/* A runtime read that stopped early shows "[truncated]" above the frames it read. */
static void test_interleave_truncated(void **state)
{
	const struct runtime_ops *const ops[] = { &fake_interleave, NULL };
	struct fixture *f = pipeline(ops, NULL, 0, UNWIND_DWARF, false);
	struct sampler_sample s;
	struct profile *p;
	char want[512];

	proctab__get(f->procs, getpid());
	sample_path__attach_found(f->sp);
	s = fp_sample(f, getpid(), TRUNCATED_TID, f->ips, 3);
	sample_path__sample(f->sp, &s);
	p = flush(f);
	snprintf(want, sizeof(want),
		 "%s;pl_root;pl_eval_frame;[truncated];fn7 (app.fake:12)_[f];fn8 (app.fake:3)_[f];"
		 "pl_leaf 1", comm_prefix);
	assert_true(has_stack(p, want));
	profile__free(p);
	pipeline_free(f);
}

/* A replace collector: told about execs and the files processes map, it covers this
 * process, so its samples are counted per thread; at the flush the covered thread's
 * samples become the collector's stacks scaled to the same count, the other thread keeps
 * its native stack, and a process it could not profile shows the reason. */
static void test_replace(void **state)
{
	const struct runtime_ops *const ops[] = { &fake_replace, NULL };
	struct fixture *f = pipeline(ops, NULL, 0, UNWIND_DWARF, false);
	struct sampler_handlers h = sample_path__handlers(f->sp);
	struct mapping m = { .start = 0x10000, .end = 0x20000, .path = "/opt/vm/libfakevm.so",
			     .prot = 5 };
	struct sampler_sample s;
	struct profile *p;
	char want[512];

	runtime_set__start(f->rs);
	assert_non_null(the_collector);
	proctab__get(f->procs, getpid());
	/* an exec (of another process: this one's image must stay what it is) */
	h.comm(h.ctx, getppid(), getppid(), "sh", true);
	assert_int_equal(the_collector->execd, getppid());
	h.mmap(h.ctx, getpid(), getpid(), &m);
	assert_int_equal(the_collector->seen, getpid());
	for (int i = 0; i < 3; i++) {
		s = fp_sample(f, getpid(), COVERED_TID, f->ips, 3);
		h.sample(h.ctx, &s);
	}
	s = fp_sample(f, getpid(), OTHER_TID, f->ips, 3);
	h.sample(h.ctx, &s);
	proctab__get(f->procs, getppid());

	p = flush(f);
	assert_int_equal(the_collector->collects, 1);
	/* 3 samples for 6:2 -> 2.25 and 0.75: the largest remainder rounds to 2 and 1 */
	snprintf(want, sizeof(want), "%s;Main.main_[j];Main.work_[j] 2", comm_prefix);
	assert_true(has_stack(p, want));
	snprintf(want, sizeof(want), "%s;Main.main_[j];Main.idle_[0] 1", comm_prefix);
	assert_true(has_stack(p, want));
	snprintf(want, sizeof(want), "%s;pl_root;pl_eval_frame;pl_leaf 1", comm_prefix);
	assert_true(has_stack(p, want));
	assert_int_equal(profile__nr_stacks(p), 3);
	assert_int_equal(header_int(p, "fake_merged"), 1);
	assert_string_equal(proctab__find(f->procs, getppid())->skip_reason, "fake VM too old");
	profile__free(p);
	pipeline_free(f);
	assert_true(the_collector->stopped);
	free(the_collector);
	the_collector = NULL;
}

/* dwarf mode on a real capture: the registers and stack copy unwind_deep took of itself
 * 30 frames deep unwind, through the per-sample stage, to main -> rec x30 -> capture. */
static void test_dwarf_capture(void **state)
{
	char dir[] = "/tmp/kiln-pipeline-test.XXXXXX", exe[128], cmd[160];
	const struct runtime_ops *const none[] = { NULL };
	struct test_capture c;
	struct fixture *f;
	struct sampler_sample s;
	struct profile *p;
	char *line = NULL;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(test_build_workload(dir, "unwind_deep", "-O2 -fomit-frame-pointer"), 0);
	snprintf(exe, sizeof(exe), "%s/unwind_deep", dir);
	assert_int_equal(test_capture_run(&c, exe), 0);
	f = pipeline(none, NULL, 0, UNWIND_DWARF, true);
	if (!f->unwinder) {
		test_capture_release(&c);
		pipeline_free(f);
		skip();
	}
	s = (struct sampler_sample){ .pid = c.pid, .tid = c.pid, .has_regs = true,
				     .ip = c.s.regs.ip, .sp = c.s.regs.sp, .bp = c.s.regs.bp,
				     .stack = c.stack, .stack_len = c.s.stack_len };
	sample_path__sample(f->sp, &s);
	p = flush(f);	/* before the child exits: its binary is pinned, its name known */
	assert_int_equal(profile__nr_stacks(p), 1);
	line = stack_line(p);
	assert_non_null(strstr(line, ";unwind_deep;"));
	assert_non_null(strstr(line, ";main;"));
	assert_non_null(strstr(line, ";capture 1"));
	size_t recs = 0;
	for (const char *q = line; (q = strstr(q, ";rec;")); q += 4)
		recs++;
	assert_true(recs >= 29);	/* the recursion, in order; the last is before capture */
	assert_int_equal(header_int(p, "unwind_errors"), 0);
	free(line);
	profile__free(p);
	pipeline_free(f);
	test_capture_release(&c);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	struct proctab *t = proctab__new(NULL, 0);

	struct proc *self = proctab__get(t, getpid());

	snprintf(comm_prefix, sizeof(comm_prefix), "0;%s;%s", self->container, self->comm);
	proctab__free(t);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_native_stacks),
		cmocka_unit_test(test_interleave),
		cmocka_unit_test(test_interleave_late),
		cmocka_unit_test(test_interleave_truncated),
		cmocka_unit_test(test_replace),
		cmocka_unit_test(test_dwarf_capture),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
