/* The raw stack table: counting, and symbolizing into gProfiler's layout with kernel
 * frames, a skip reason and runtime frames interleaved at the interpreter's frames. The
 * user frames are functions of this test binary, named by the real symbolizer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/proctab.h"
#include "agent/stacks.h"
#include "format/col.h"
#include "util/strbuf.h"

/* Global (not static) so that they are in .symtab under these names. */
void stk_root(void);
void _PyEval_EvalFrameDefault(void);
void stk_leaf(void);
#define BODY { __asm__ volatile("nop; nop; nop"); }
__attribute__((noinline, used)) void stk_root(void) BODY
__attribute__((noinline, used)) void _PyEval_EvalFrameDefault(void) BODY
__attribute__((noinline, used)) void stk_leaf(void) BODY

static const char *const interp[] = { "_PyEval_EvalFrameDefault", NULL };

static void fake_name(struct runtime_proc *rp, const struct rt_frame *f, struct strbuf *out)
{
	strbuf_addf(out, "py%u (app.py:%u)_[p]", (unsigned)f->id, f->aux);
}

static const struct runtime_ops fake_runtime = {
	.name = "fake", .interp_symbols = interp, .frame_name = fake_name,
};

struct fixture {
	struct proctab *procs;
	struct symbolizer *sym;
	struct stacks *st;
	struct proc *self;
	uint64_t ips[3];
	const struct mapping *maps[3];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->procs = proctab__new(NULL, 0);
	f->sym = symbolizer__new(0);
	f->st = stacks__new();
	f->self = proctab__get(f->procs, getpid());
	/* Leaf first; return addresses point one past their call, hence the +2 (the
	 * symbolizer is asked for pc - 1). */
	f->ips[0] = (uint64_t)(uintptr_t)&stk_leaf + 1;
	f->ips[1] = (uint64_t)(uintptr_t)&_PyEval_EvalFrameDefault + 2;
	f->ips[2] = (uint64_t)(uintptr_t)&stk_root + 2;
	for (int i = 0; i < 3; i++) {
		f->maps[i] = proctab__mapping(f->self->mm, f->ips[i]);
		assert_non_null(f->maps[i]);
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	stacks__free(f->st);
	symbolizer__free(f->sym);
	proctab__free(f->procs);
	free(f);
	return 0;
}

/* The one stack of p, as "a;b;c count": its line in the agent's .col output. */
static char *only_stack(struct profile *p)
{
	char *buf = NULL, *line, *nl;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_int_equal(profile__nr_stacks(p), 1);
	assert_int_equal(col__write(f, p, true), 0);
	fclose(f);
	line = strchr(buf, '\n');	/* after the header */
	assert_non_null(line);
	line = xstrdup(line + 1);
	nl = strchr(line, '\n');
	assert_non_null(nl);
	*nl = '\0';
	free(buf);
	return line;
}

static void test_native_and_kernel(void **state)
{
	struct fixture *f = *state;
	uint64_t kips[1] = { 0xffffffffffff0000ull };	/* in no kernel symbol */
	struct stack_sample s = {
		.proc = f->self, .mm = f->self->mm, .comm = "worker", .kernel_ips = kips,
		.nr_kernel = 1, .user_ips = f->ips, .user_maps = f->maps, .nr_user = 3,
	};
	struct profile *p = profile__new();
	char *line;

	stacks__add(f->st, &s);
	stacks__add(f->st, &s);
	assert_int_equal(stacks__unique(f->st), 1);
	assert_int_equal(stacks__samples(f->st), 2);
	stacks__symbolize(f->st, f->sym, p, NULL);
	line = only_stack(p);
	assert_string_equal(line, "0;;worker;stk_root;_PyEval_EvalFrameDefault;stk_leaf;"
				  "(kernel+0xffffffffffff0000)_[k] 2");
	free(line);
	stacks__clear(f->st);
	assert_int_equal(stacks__unique(f->st), 0);
	profile__free(p);
}

static void test_runtime_frames_interleave(void **state)
{
	struct fixture *f = *state;
	struct rt_frame rt[3] = { { 1, 10, RT_FRAME_ENTRY }, { 2, 20, 0 }, { 3, 30, 0 } };
	struct stack_sample s = {
		.proc = f->self, .mm = f->self->mm, .comm = "python3", .user_ips = f->ips,
		.user_maps = f->maps, .nr_user = 3, .rt_ops = &fake_runtime,
		.rt = (struct runtime_proc *)f, .rt_frames = rt, .nr_rt = 3,
	};
	struct profile *p = profile__new();
	char *line;

	stacks__add(f->st, &s);
	stacks__symbolize(f->st, f->sym, p, NULL);
	line = only_stack(p);
	assert_string_equal(line, "0;;python3;stk_root;_PyEval_EvalFrameDefault;"
				  "py1 (app.py:10)_[p];py2 (app.py:20)_[p];py3 (app.py:30)_[p];"
				  "stk_leaf 1");
	free(line);
	profile__free(p);
}

static void test_runtime_frames_without_interpreter_frame(void **state)
{
	struct fixture *f = *state;
	struct rt_frame rt[1] = { { 7, 1, RT_FRAME_ENTRY } };
	struct stack_sample s = {
		.proc = f->self, .mm = f->self->mm, .comm = "python3", .user_ips = f->ips,
		.user_maps = f->maps, .nr_user = 1, .rt_ops = &fake_runtime,
		.rt = (struct runtime_proc *)f, .rt_frames = rt, .nr_rt = 1,
	};
	struct profile *p = profile__new();
	json_t *containers = json_array();
	char *line;

	/* perf-mode fp stopped before the interpreter: runtime frames follow the name. */
	snprintf(f->self->container, sizeof(f->self->container), "web");
	snprintf(f->self->skip_reason, sizeof(f->self->skip_reason), "testing");
	stacks__add(f->st, &s);
	stacks__symbolize(f->st, f->sym, p, containers);
	line = only_stack(p);
	assert_string_equal(line, "0;web;python3;[Profiling skipped: testing];"
				  "py7 (app.py:1)_[p];stk_leaf 1");
	assert_int_equal(json_array_size(containers), 1);
	assert_string_equal(json_string_value(json_array_get(containers, 0)), "web");
	f->self->container[0] = f->self->skip_reason[0] = '\0';
	json_decref(containers);
	free(line);
	profile__free(p);
}

static bool tid_is_java(const void *ctx, pid_t tid)
{
	return tid == *(const pid_t *)ctx;
}

/* JVM samples are kept per thread so that the Java threads' can be taken out (and
 * replaced by the JVM agent's stacks); the others stay and symbolize as before. */
static void test_take_threads(void **state)
{
	struct fixture *f = *state;
	struct stack_sample s = {
		.proc = f->self, .mm = f->self->mm, .comm = "java", .user_ips = f->ips,
		.user_maps = f->maps, .nr_user = 3,
	};
	pid_t java_tid = 1001;
	struct profile *p = profile__new();
	char *line;

	s.tid = java_tid;
	stacks__add(f->st, &s);
	stacks__add(f->st, &s);
	stacks__add(f->st, &s);
	s.tid = 1002;	/* a GC thread, say */
	stacks__add(f->st, &s);
	s.tid = 0;	/* counted without a thread */
	stacks__add(f->st, &s);
	assert_int_equal(stacks__unique(f->st), 3);
	assert_int_equal(stacks__take_threads(f->st, getpid() + 1, tid_is_java, &java_tid), 0);
	assert_int_equal(stacks__take_threads(f->st, getpid(), tid_is_java, &java_tid), 3);
	assert_int_equal(stacks__take_threads(f->st, getpid(), tid_is_java, &java_tid), 0);
	assert_int_equal(stacks__unique(f->st), 2);
	stacks__symbolize(f->st, f->sym, p, NULL);
	line = only_stack(p);	/* the two remaining keys name the same frames */
	assert_string_equal(line, "0;;java;stk_root;_PyEval_EvalFrameDefault;stk_leaf 2");
	free(line);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_native_and_kernel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_take_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runtime_frames_interleave, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runtime_frames_without_interpreter_frame,
						setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
