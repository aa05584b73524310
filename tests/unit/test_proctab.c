/* The process table: mappings added, trimmed and looked up; fork, exec and exit records;
 * what reap frees and what it keeps. Uses pids that cannot exist (> pid_max), so that
 * nothing is read from a real process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "agent/proctab.h"

#define P1 0x7ffffff0
#define P2 0x7ffffff1

/* The clock of the records' times and of the table's entries. */
static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct mapping map(uint64_t start, uint64_t end, uint64_t pgoff, const char *path)
{
	struct mapping m = { .start = start, .end = end, .pgoff = pgoff, .prot = PROT_EXEC,
			     .path = path };
	return m;
}

static void test_mmap_lookup_and_trim(void **state)
{
	struct proctab *t = proctab__new(NULL, 0);
	struct mapping a = map(0x1000, 0x5000, 0, "/bin/a"), b = map(0x2000, 0x3000, 0x100, "/b");
	const struct mapping *m;
	char path[] = "/bin/c";
	struct mapping c = map(0x8000, 0x9000, 0, path);

	proctab__mmap(t, P1, &a);
	struct proc *p = proctab__find(t, P1);
	assert_non_null(p);
	assert_string_equal(p->comm, "pid-2147483632");	/* vanished before it was read */
	assert_true(p->selected);
	m = proctab__mapping(p->mm, 0x4fff);
	assert_non_null(m);
	assert_int_equal(m->start, 0x1000);
	assert_null(proctab__mapping(p->mm, 0x5000));
	assert_null(proctab__mapping(p->mm, 0xfff));

	/* b lands in the middle of a: a is split around it, offsets kept right. */
	proctab__mmap(t, P1, &b);
	m = proctab__mapping(p->mm, 0x1800);
	assert_int_equal(m->end, 0x2000);
	assert_string_equal(m->path, "/bin/a");
	m = proctab__mapping(p->mm, 0x2800);
	assert_string_equal(m->path, "/b");
	m = proctab__mapping(p->mm, 0x3000);
	assert_int_equal(m->start, 0x3000);
	assert_int_equal(m->pgoff, 0x2000);
	assert_int_equal(mapping__file_offset(m, 0x3010), 0x2010);

	/* The path is copied: the record's buffer may change. */
	proctab__mmap(t, P1, &c);
	path[1] = 'X';
	assert_string_equal(proctab__mapping(p->mm, 0x8000)->path, "/bin/c");

	assert_true(proctab__first_use(m));
	assert_false(proctab__first_use(m));
	proctab__free(t);
}

static void test_fork_exec_exit_reap(void **state)
{
	struct proctab *t = proctab__new(NULL, 0);
	struct mapping a = map(0x1000, 0x2000, 0, "/bin/a"), n = map(0x7000, 0x8000, 0, "/bin/new");
	const struct mapping *old;
	struct proc *parent, *child;
	const struct proc_mm *old_mm;

	proctab__mmap(t, P1, &a);
	proctab__comm(t, P1, P1, "parent", false);
	parent = proctab__find(t, P1);
	assert_string_equal(parent->comm, "parent");
	proctab__comm(t, P1, P1 + 5, "a-thread", false);	/* thread names are not the process's */
	assert_string_equal(parent->comm, "parent");

	proctab__fork(t, P2, P1, P2, mono_ns());
	child = proctab__find(t, P2);
	assert_non_null(child);
	assert_string_equal(child->comm, "parent");
	old = proctab__mapping(child->mm, 0x1800);
	assert_non_null(old);
	assert_ptr_not_equal(old, proctab__mapping(parent->mm, 0x1800));	/* a copy */

	/* exec: a new address space; the old one stays readable until reap. */
	old_mm = child->mm;
	proctab__comm(t, P2, P2, "newimage", true);
	assert_string_equal(child->comm, "newimage");
	assert_ptr_not_equal(child->mm, old_mm);
	assert_null(proctab__mapping(child->mm, 0x1800));
	assert_ptr_equal(proctab__mapping(old_mm, 0x1800), old);
	proctab__mmap(t, P2, &n);
	assert_non_null(proctab__mapping(child->mm, 0x7800));

	/* A thread's exit is not the process's. */
	proctab__exit(t, P2, P2 + 1);
	assert_false(child->exited);
	proctab__exit(t, P2, P2);
	assert_true(child->exited);
	assert_int_equal(proctab__count(t), 2);
	proctab__reap(t, NULL, NULL);
	assert_int_equal(proctab__count(t), 1);
	assert_null(proctab__find(t, P2));
	assert_non_null(proctab__find(t, P1));
	proctab__free(t);
}

/* A child's exec and mappings can reach the table before its parent's FORK (the FORK
 * was read late, or the start-up scan read the child from /proc): the FORK, older than
 * the entry, must not undo them. An exited entry under the same pid is a reused pid:
 * replaced. */
static void test_fork_after_childs_exec(void **state)
{
	struct proctab *t = proctab__new(NULL, 0);
	struct mapping a = map(0x1000, 0x2000, 0, "/bin/sh"), n = map(0x7000, 0x8000, 0, "/bin/late");
	struct proc *child;
	uint64_t forked = mono_ns();	/* before anything of the child was seen */

	proctab__mmap(t, P1, &a);
	proctab__comm(t, P1, P1, "bash", false);
	proctab__comm(t, P2, P2, "late", true);		/* the child's exec, first */
	proctab__mmap(t, P2, &n);
	proctab__fork(t, P2, P1, P2, forked);		/* then its parent's FORK */
	child = proctab__find(t, P2);
	assert_string_equal(child->comm, "late");
	assert_non_null(proctab__mapping(child->mm, 0x7800));
	assert_null(proctab__mapping(child->mm, 0x1800));
	assert_int_equal(proctab__count(t), 2);

	proctab__exit(t, P2, P2);			/* pid reused after an exit */
	proctab__fork(t, P2, P1, P2, mono_ns());
	child = proctab__find(t, P2);
	assert_false(child->exited);
	assert_string_equal(child->comm, "bash");
	assert_non_null(proctab__mapping(child->mm, 0x1800));
	proctab__reap(t, NULL, NULL);
	assert_int_equal(proctab__count(t), 2);
	proctab__free(t);
}

/* A live entry made before the fork is an older process under the same pid whose EXIT
 * was lost: replaced by the parent's copy. So is any live entry when the time of the
 * fork is unknown (0): the records arrive in time order, so the FORK comes first. */
static void test_fork_replaces_older_entry(void **state)
{
	struct proctab *t = proctab__new(NULL, 0);
	struct mapping a = map(0x1000, 0x2000, 0, "/bin/sh"), o = map(0x7000, 0x8000, 0, "/bin/old");
	struct proc *child;

	proctab__mmap(t, P1, &a);
	proctab__comm(t, P1, P1, "bash", false);
	proctab__comm(t, P2, P2, "old", true);
	proctab__mmap(t, P2, &o);
	proctab__fork(t, P2, P1, P2, mono_ns());
	child = proctab__find(t, P2);
	assert_string_equal(child->comm, "bash");
	assert_non_null(proctab__mapping(child->mm, 0x1800));
	assert_null(proctab__mapping(child->mm, 0x7800));

	proctab__comm(t, P2, P2, "old", true);
	proctab__mmap(t, P2, &o);
	proctab__fork(t, P2, P1, P2, 0);
	child = proctab__find(t, P2);
	assert_string_equal(child->comm, "bash");
	assert_null(proctab__mapping(child->mm, 0x7800));
	proctab__reap(t, NULL, NULL);
	assert_int_equal(proctab__count(t), 2);
	proctab__free(t);
}

static void test_pids_filter_follows_children(void **state)
{
	pid_t want = P1;
	struct proctab *t = proctab__new(&want, 1);

	proctab__comm(t, P1, P1, "wanted", false);
	proctab__comm(t, P2, P2, "other", false);
	assert_true(proctab__find(t, P1)->selected);
	assert_false(proctab__find(t, P2)->selected);
	proctab__fork(t, P2 + 1, P1, P2 + 1, 0);
	assert_true(proctab__find(t, P2 + 1)->selected);
	proctab__fork(t, P2 + 2, P2, P2 + 2, 0);
	assert_false(proctab__find(t, P2 + 2)->selected);
	proctab__free(t);
}

static void test_scan_reads_this_process(void **state)
{
	struct proctab *t = proctab__new(NULL, 0);
	struct proc *self;

	assert_true(proctab__scan(t) > 0);
	self = proctab__find(t, getpid());
	assert_non_null(self);
	assert_string_equal(self->comm, "test_proctab");
	assert_int_equal(self->ref.nspid, getpid());
	/* This function's code is in an executable mapping of the test binary. */
	assert_non_null(proctab__mapping(self->mm, (uint64_t)(uintptr_t)&test_scan_reads_this_process));
	proctab__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mmap_lookup_and_trim),
		cmocka_unit_test(test_fork_exec_exit_reap),
		cmocka_unit_test(test_fork_after_childs_exec),
		cmocka_unit_test(test_fork_replaces_older_entry),
		cmocka_unit_test(test_pids_filter_follows_children),
		cmocka_unit_test(test_scan_reads_this_process),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
