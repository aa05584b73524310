/* The CRuby reader: the version table and its parser, the succinct index table that maps
 * instructions to lines (against a brute-force rank of tables built here the way iseq.c
 * builds them), and reads of live Ruby 3.1 processes (Debian's /usr/bin/ruby): the
 * known-answer workload's stack with its files and lines, each thread of a
 * multi-threaded program as its own stack, fiber switches and GCs, C function frames
 * named, a process that exits while read, a process that is not Ruby left alone. Skips the live parts when no ruby is installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <sys/mman.h>

#include "python_harness.h"
#include "runtimes/ruby.h"
#include "runtimes/ruby_layout.h"
#include "runtimes/ruby_proc.h"

#define RUBY "/usr/bin/ruby"

static void test_layout_versions(void **state)
{
	struct rb_layout l;
	const int ok[][2] = { { 2, 7 }, { 3, 0 }, { 3, 1 }, { 3, 2 }, { 3, 3 }, { 3, 4 } };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(rb_layout__for_version(ok[i][0], ok[i][1], &l), 0);
		assert_int_equal(l.major, ok[i][0]);
		assert_int_equal(l.minor, ok[i][1]);
		/* what the walk relies on */
		assert_true(l.cfp_size == 56 || l.cfp_size == 64);
		assert_true(l.body_read >= l.body_succ + 8 && l.body_read >= l.body_ii_size + 4);
		assert_true(l.insn_entry_size == 8 || l.insn_entry_size == 12);
	}
	assert_int_equal(rb_layout__for_version(2, 6, &l), -ENOTSUP);
	assert_int_equal(rb_layout__for_version(3, 5, &l), -ENOTSUP);
	assert_int_equal(rb_layout__for_version(4, 0, &l), -ENOTSUP);
	(void)state;
}

static void test_parse_version(void **state)
{
	int a = 0, b = 0;
	assert_int_equal(rb_layout__parse_version("3.1.2", 6, &a, &b), 0);
	assert_int_equal(a, 3);
	assert_int_equal(b, 1);
	assert_int_equal(rb_layout__parse_version("2.7.8p225", 10, &a, &b), 0);
	assert_int_equal(b, 7);
	assert_int_equal(rb_layout__parse_version("3.4", 3, &a, &b), 0);
	assert_int_equal(b, 4);
	/* not NUL-terminated: the length bounds it */
	assert_int_equal(rb_layout__parse_version("3.12", 3, &a, &b), 0);
	assert_int_equal(b, 1);
	assert_int_equal(rb_layout__parse_version("", 1, &a, &b), -EINVAL);
	assert_int_equal(rb_layout__parse_version("3", 2, &a, &b), -EINVAL);
	assert_int_equal(rb_layout__parse_version("3.", 3, &a, &b), -EINVAL);
	assert_int_equal(rb_layout__parse_version("x3.1", 5, &a, &b), -EINVAL);
	assert_int_equal(rb_layout__parse_version("1234.1", 7, &a, &b), -EINVAL);
	(void)state;
}

/* A succinct index table of the sorted positions pos[0..n) (all < max), as iseq.c's
 * succ_index_table_create lays it out: 6 immediate words of nine 7-bit ranks, then
 * 512-bit blocks {u32 rank, u64 seven 9-bit small-block ranks, u64 bits[8]}. */
static uint8_t *build_succ(const uint32_t *pos, size_t n, uint32_t max, size_t *len)
{
	size_t nblocks = max > 54 ? (max - 54 + 511) / 512 : 0;
	*len = 48 + nblocks * 80;
	uint8_t *t = calloc(1, *len);
	size_t r = 0;
	for (uint32_t j = 0; j < 6; j++) {
		uint64_t w = 0;
		for (uint32_t i = 0; i < 9; i++) {
			if (r < n && pos[r] == j * 9 + i)
				r++;
			w |= (uint64_t)r << (7 * i);
		}
		memcpy(t + j * 8, &w, 8);
	}
	for (size_t b = 0; b < nblocks; b++) {
		uint8_t *blk = t + 48 + b * 80;
		uint32_t rank = (uint32_t)r;
		uint64_t small = 0, bits[8] = { 0 };
		for (uint32_t k = 0; k < 512; k++) {
			uint32_t x = 54 + (uint32_t)b * 512 + k;
			if (k % 64 == 0 && k)
				small |= (uint64_t)(r - rank) << (9 * (k / 64 - 1));
			if (r < n && pos[r] == x) {
				bits[k / 64] |= 1ull << (k % 64);
				r++;
			}
		}
		memcpy(blk, &rank, 4);
		memcpy(blk + 8, &small, 8);
		memcpy(blk + 16, bits, 64);
	}
	return t;
}

static void test_succ_index_known(void **state)
{
	uint32_t max = 3000, pos[400];
	size_t n = 0, len;
	srand(7);
	pos[n++] = 0;	/* the first instruction always starts an entry */
	for (uint32_t x = 1; x < max && n < 400; x++)
		if (rand() % 9 == 0)
			pos[n++] = x;
	uint8_t *t = build_succ(pos, n, max, &len);
	for (uint32_t x = 0; x < max; x++) {
		int want = -1;
		for (size_t i = 0; i < n && pos[i] <= x; i++)
			want = (int)i;
		size_t off, sl;
		rb_layout__succ_span(x, &off, &sl);
		assert_true(off + sl <= len);
		assert_int_equal(rb_layout__succ_index(t + off, sl, x, (uint32_t)n), want);
	}
	/* a short span, or a rank beyond the entries, is refused */
	assert_int_equal(rb_layout__succ_index(t, 4, 3, (uint32_t)n), -1);
	assert_int_equal(rb_layout__succ_index(t + 48, 80, 2000, 2), -1);
	assert_int_equal(rb_layout__succ_index(NULL, 80, 2000, 2), -1);
	free(t);
	(void)state;
}

static void test_succ_index_random(void **state)
{
	uint8_t buf[80];
	srand(11);
	for (int k = 0; k < 20000; k++) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)rand();
		uint32_t pos = (uint32_t)rand() % 100000, nr = (uint32_t)rand() % 5000;
		size_t off, len;
		rb_layout__succ_span(pos, &off, &len);
		int r = rb_layout__succ_index(buf, len, pos, nr);
		assert_true(r == -1 || (r >= 0 && (uint32_t)r < nr));
	}
	(void)state;
}

/* A reader state over this process itself, with the 3.1 layout, for reads of hand-made
 * memory. */
static struct runtime_proc *self_proc(void)
{
	struct runtime_proc *rp = calloc(1, sizeof(*rp));
	rp->pid = rp->nspid = getpid();
	assert_int_equal(rb_layout__for_version(3, 1, &rp->l), 0);
	rp->threads = hashmap__new();
	rp->iseq_by_addr = hashmap__new();
	rp->line_cache = hashmap__new();
	rp->cfunc_by_id = hashmap__new();
	return rp;
}

static void test_random_memory(void **state)
{
	struct rt_frame fr[RB_MAX_FRAMES];
	uint64_t *mem = malloc(64 * 1024);
	size_t words = 64 * 1024 / 8;
	srand(13);
	for (int round = 0; round < 300; round++) {
		struct runtime_proc *rp = self_proc();
		rp->symbols = round % 2 ? (uint64_t)(uintptr_t)(mem + rand() % words) : 0;
		/* words that are random, small, or pointers into the buffer: the walk follows
		 * some of them a few levels deep */
		for (size_t i = 0; i < words; i++) {
			int k = rand() % 4;
			mem[i] = k == 0 ? (uint64_t)rand() << 32 | (uint64_t)rand()
			       : k == 1 ? (uint64_t)(rand() % 64)
			       : (uint64_t)(uintptr_t)(mem + rand() % words);
		}
		/* a plausible execution context: a VM stack inside the buffer, cfp in it */
		uint64_t *ec = mem + rand() % (words - 8);
		ec[0] = (uint64_t)(uintptr_t)(mem + 64);
		ec[1] = (words - 128) / (round % 3 + 1);
		ec[2] = ec[0] + 8 * (ec[1] - 8 * (uint64_t)(rand() % 64 + 1)) - 64;
		int n = rb_walk__stack(rp, (uint64_t)(uintptr_t)ec, NULL, fr, RB_MAX_FRAMES);
		assert_true(n <= RB_MAX_FRAMES);
		struct strbuf sb = STRBUF_INIT;
		for (int i = 0; i < n; i++)
			ruby_runtime.frame_name(rp, &fr[i], &sb);
		strbuf_release(&sb);
		char *s = rb_read_string(rp, (uint64_t)(uintptr_t)(mem + rand() % words));
		free(s);
		uint64_t v;
		(void)rb_read_array_entry(rp, (uint64_t)(uintptr_t)(mem + rand() % words),
					  (uint64_t)(rand() % 8), &v);
		ruby_runtime.detach(rp);
	}
	free(mem);
	(void)state;
}

/* A read that ends at an unmapped page is cut there, never past it. */
static void test_truncated_reads(void **state)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m + pg, pg, PROT_NONE), 0);
	memset(m, 0x41, pg);
	uint8_t buf[64];
	assert_int_equal(rb_read(getpid(), (uint64_t)(uintptr_t)(m + pg - 16), buf, 64), 16);
	assert_true(rb_read_all(getpid(), (uint64_t)(uintptr_t)(m + pg - 16), buf, 64) < 0);
	uint64_t addrs[3] = { (uint64_t)(uintptr_t)m, (uint64_t)(uintptr_t)(m + pg - 8),
			      (uint64_t)(uintptr_t)m };
	uint8_t out[3 * 16];
	assert_int_equal(rb_read_many(getpid(), addrs, 3, 16, out), 1);
	assert_int_equal(out[16], 0);	/* a partly read entry is zeroed */
	/* a string whose head crosses into the unmapped page */
	struct runtime_proc *rp = self_proc();
	uint64_t *str = (uint64_t *)(m + pg - 24);
	str[0] = RB_T_STRING | RB_FL_USER1;
	assert_null(rb_read_string(rp, (uint64_t)(uintptr_t)str));
	/* an execution context at the end of the page */
	struct rt_frame fr[8];
	uint64_t *ec = (uint64_t *)(m + pg - 16);
	ec[0] = (uint64_t)(uintptr_t)m;
	ec[1] = 16;
	assert_true(rb_walk__stack(rp, (uint64_t)(uintptr_t)ec, NULL, fr, 8) < 0);
	ruby_runtime.detach(rp);
	munmap(m, 2 * pg);
	(void)state;
}

/* The frames of thread tid as ";name;name...", or "" when none. */
static void read_stack(struct runtime_proc *rp, pid_t tid, struct strbuf *sb, uint32_t *flags0)
{
	struct rt_frame fr[RB_MAX_FRAMES];
	int n = ruby_runtime.sample(rp, tid, fr, RB_MAX_FRAMES);
	strbuf_reset(sb);
	for (int k = 0; k < n; k++) {
		strbuf_addch(sb, ';');
		ruby_runtime.frame_name(rp, &fr[k], sb);
	}
	if (flags0)
		*flags0 = n > 0 ? fr[0].flags : 0;
}

static void test_known_answer(void **state)
{
	char script[512], want[2][1800];
	if (access(RUBY, X_OK) < 0)
		skip();
	workload_path("ruby_ratio.rb", script, sizeof(script));
	pid_t pid = start_python(RUBY, script, "30");
	assert_true(pid > 0);
	char reason[128] = "";
	struct proc_ref p = { pid, pid };
	struct runtime_proc *rp = ruby_runtime.attach(&p, reason);
	assert_non_null(rp);
	assert_string_equal(reason, "");
	/* Debian's libruby does not export ruby_global_symbols: found in rb_id2str's code */
	assert_true(rp->symbols != 0);
	assert_int_equal(rp->l.major, 3);
	for (int leaf = 0; leaf < 2; leaf++) {
		const char *f = leaf ? "beta" : "alpha";
		char tag[32];
		snprintf(tag, sizeof(tag), "main-%s", f);
		int l_main = marker_line(script, tag);
		snprintf(tag, sizeof(tag), "dispatch-%s", f);
		snprintf(want[leaf], sizeof(want[0]), ";<main> (%s:%d)_[rb];dispatch (%s:%d)_[rb];%s (%s:",
			 script, l_main, script, marker_line(script, tag), f, script);
	}
	struct strbuf sb = STRBUF_INIT;
	int good = 0, reads = 400, entry = 0;
	for (int i = 0; i < reads; i++) {
		uint32_t fl;
		read_stack(rp, pid, &sb, &fl);
		for (int leaf = 0; leaf < 2; leaf++)
			if (!strncmp(sb.buf, want[leaf], strlen(want[leaf]))) {
				/* the leaf's line is in its loop */
				int line = atoi(sb.buf + strlen(want[leaf]));
				int mark = marker_line(script, leaf ? "beta" : "alpha");
				good += line >= mark - 2 && line <= mark + 1;
			}
		entry += (fl & RT_FRAME_ENTRY) != 0;
		jitter_sleep();
	}
	printf("ruby_ratio.rb: %d/%d reads have <main>;dispatch;alpha|beta with files and lines\n",
	       good, reads);
	assert_true(good >= reads * 9 / 10);
	assert_true(entry >= good);
	strbuf_release(&sb);
	ruby_runtime.detach(rp);
	stop_python(pid);
	(void)state;
}

static void test_threads_own_stacks(void **state)
{
	char script[512], path[64];
	if (access(RUBY, X_OK) < 0)
		skip();
	workload_path("ruby_threads.rb", script, sizeof(script));
	pid_t pid = start_python(RUBY, script, "30");
	assert_true(pid > 0);
	char reason[128] = "";
	struct proc_ref p = { pid, pid };
	struct runtime_proc *rp = ruby_runtime.attach(&p, reason);
	assert_non_null(rp);
	struct strbuf sb = STRBUF_INIT;
	int seen = 0, bad = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		int k = 0;
		for (int i = 0; tid > 0 && i < 100; i++) {
			read_stack(rp, tid, &sb, NULL);
			if (strstr(sb.buf, ";thread_a (") && strstr(sb.buf, ";spin_a ("))
				k |= 1;
			if (strstr(sb.buf, ";thread_b (") && strstr(sb.buf, ";spin_b ("))
				k |= 2;
			/* the main thread, in join (or still in the flush after "ready",
			 * waiting for the lock the spinning threads hold) */
			if (!strncmp(sb.buf, ";<main> (", 9) && !strstr(sb.buf, ";thread_") &&
			    (strstr(sb.buf, ";join (cfunc)_[rb]") || strstr(sb.buf, ";flush (cfunc)_[rb]")))
				k |= 4;
			if (strstr(sb.buf, "spin_a") && strstr(sb.buf, "spin_b"))
				k |= 8;
			jitter_sleep();
		}
		bad += k != 0 && k != 1 && k != 2 && k != 4;
		seen |= k;
	}
	if (d)
		closedir(d);
	printf("ruby_threads.rb: seen mask %d, mixed %d\n", seen, bad);
	assert_int_equal(bad, 0);
	assert_int_equal(seen & 7, 7);
	strbuf_release(&sb);
	ruby_runtime.detach(rp);
	stop_python(pid);
	(void)state;
}

/* Fiber switches and GCs (compaction included) while the thread is read: each read is
 * the fiber's stack or the main fiber's, never a mix, and most reads get one. */
static void test_fiber_and_gc(void **state)
{
	char script[512];
	if (access(RUBY, X_OK) < 0)
		skip();
	workload_path("ruby_fiber.rb", script, sizeof(script));
	pid_t pid = start_python(RUBY, script, "30");
	assert_true(pid > 0);
	char reason[128] = "";
	struct proc_ref p = { pid, pid };
	struct runtime_proc *rp = ruby_runtime.attach(&p, reason);
	assert_non_null(rp);
	struct strbuf sb = STRBUF_INIT;
	int fiber = 0, main_f = 0, mixed = 0, reads = 600;
	for (int i = 0; i < reads; i++) {
		read_stack(rp, pid, &sb, NULL);
		bool f = strstr(sb.buf, ";fiber_side (") != NULL, m = strstr(sb.buf, ";main_side (") != NULL;
		fiber += f && !m && !strncmp(sb.buf, ";block in <main> (", 18);
		main_f += m && !f && !strncmp(sb.buf, ";<main> (", 9);
		mixed += f && m;
		jitter_sleep();
	}
	printf("ruby_fiber.rb: %d reads in the fiber, %d in the main fiber, %d mixed, of %d\n",
	       fiber, main_f, mixed, reads);
	assert_int_equal(mixed, 0);
	assert_true(fiber > reads / 10 && main_f > reads / 20);
	strbuf_release(&sb);
	ruby_runtime.detach(rp);
	stop_python(pid);
	(void)state;
}

/* Forgets the thread list and makes the next walk of it not due: reads go through the
 * main ractor's running_ec. */
static void force_running_ec(struct runtime_proc *rp)
{
	rb_thread__clear(rp);
	rp->last_scan_ns = rb_now_ns();
}

/* A thread missing from the list is read through running_ec only when it holds the lock:
 * the single-threaded workload's main thread always gets its stack that way, and in the
 * threaded one no thread ever gets another's. */
static void test_running_ec_fallback(void **state)
{
	char script[512], path[64];
	if (access(RUBY, X_OK) < 0)
		skip();
	workload_path("ruby_ratio.rb", script, sizeof(script));
	pid_t pid = start_python(RUBY, script, "30");
	assert_true(pid > 0);
	char reason[128] = "";
	struct proc_ref p = { pid, pid };
	struct runtime_proc *rp = ruby_runtime.attach(&p, reason);
	assert_non_null(rp);
	struct strbuf sb = STRBUF_INIT;
	int got = 0;
	for (int i = 0; i < 100; i++) {
		force_running_ec(rp);
		read_stack(rp, pid, &sb, NULL);
		got += strstr(sb.buf, ";dispatch (") != NULL;
		jitter_sleep();
	}
	printf("ruby_ratio.rb through running_ec: %d/100 reads\n", got);
	assert_true(got >= 80);
	ruby_runtime.detach(rp);
	stop_python(pid);

	workload_path("ruby_threads.rb", script, sizeof(script));
	pid = start_python(RUBY, script, "30");
	assert_true(pid > 0);
	p = (struct proc_ref){ pid, pid };
	rp = ruby_runtime.attach(&p, reason);
	assert_non_null(rp);
	/* which spin function each thread runs, from the thread list */
	pid_t tids[16];
	int kind[16], nt = 0, wrong = 0, hits = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	struct dirent *de;
	while (d && (de = readdir(d)) && nt < 16) {
		pid_t tid = (pid_t)atoi(de->d_name);
		if (tid <= 0)
			continue;
		/* a thread may not have started its method yet: look a few times */
		int k = 0;
		for (int i = 0; i < 100 && !k && tid != pid; i++) {
			read_stack(rp, tid, &sb, NULL);
			k = strstr(sb.buf, ";spin_a (") ? 1 : strstr(sb.buf, ";spin_b (") ? 2 : 0;
			jitter_sleep();
		}
		tids[nt] = tid;
		kind[nt++] = k;
	}
	if (d)
		closedir(d);
	for (int i = 0; i < 300; i++) {
		int t = i % nt;
		if (!kind[t] && tids[t] != pid)
			continue;	/* never seen in its method: nothing to compare with */
		force_running_ec(rp);
		read_stack(rp, tids[t], &sb, NULL);
		int k = strstr(sb.buf, ";spin_a (") ? 1 : strstr(sb.buf, ";spin_b (") ? 2 : 0;
		hits += sb.len > 0;
		wrong += sb.len > 0 && k != kind[t];
		jitter_sleep();
	}
	printf("ruby_threads.rb through running_ec: %d reads, %d of another thread\n", hits, wrong);
	assert_int_equal(wrong, 0);
	assert_true(hits > 0);
	strbuf_release(&sb);
	ruby_runtime.detach(rp);
	stop_python(pid);
	(void)state;
}

static void test_exit_mid_read(void **state)
{
	char script[512];
	if (access(RUBY, X_OK) < 0)
		skip();
	workload_path("ruby_ratio.rb", script, sizeof(script));
	pid_t pid = start_python(RUBY, script, "30");
	assert_true(pid > 0);
	char reason[128] = "";
	struct proc_ref p = { pid, pid };
	struct runtime_proc *rp = ruby_runtime.attach(&p, reason);
	assert_non_null(rp);
	struct rt_frame fr[RB_MAX_FRAMES];
	assert_true(ruby_runtime.sample(rp, pid, fr, RB_MAX_FRAMES) > 0);
	stop_python(pid);
	for (int i = 0; i < 50; i++)
		assert_true(ruby_runtime.sample(rp, pid, fr, RB_MAX_FRAMES) <= 0);
	/* names come from the caches: the process is gone */
	struct strbuf sb = STRBUF_INIT;
	ruby_runtime.frame_name(rp, &fr[0], &sb);
	assert_non_null(strstr(sb.buf, "_[rb]"));
	strbuf_release(&sb);
	ruby_runtime.detach(rp);
	(void)state;
}

static void test_not_ruby(void **state)
{
	char reason[128] = "";
	struct proc_ref p = { getpid(), getpid() };
	assert_null(ruby_runtime.attach(&p, reason));
	assert_string_equal(reason, "");
	assert_true(ruby_runtime.likely("/usr/bin/ruby3.1"));
	assert_true(ruby_runtime.likely("/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1.2"));
	assert_false(ruby_runtime.likely("/usr/bin/python3"));
	assert_false(ruby_runtime.likely("/usr/lib/librubberband.so"));
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_versions),
		cmocka_unit_test(test_parse_version),
		cmocka_unit_test(test_succ_index_known),
		cmocka_unit_test(test_succ_index_random),
		cmocka_unit_test(test_random_memory),
		cmocka_unit_test(test_truncated_reads),
		cmocka_unit_test(test_known_answer),
		cmocka_unit_test(test_threads_own_stacks),
		cmocka_unit_test(test_fiber_and_gc),
		cmocka_unit_test(test_running_ec_fallback),
		cmocka_unit_test(test_exit_mid_read),
		cmocka_unit_test(test_not_ruby),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
