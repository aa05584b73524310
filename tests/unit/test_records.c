/* The kernel record decoder: hand-built PERF_RECORD_SAMPLE, MMAP2, COMM, FORK, EXIT, LOST
 * and THROTTLE records, laid out as the kernel writes them for the sampler's sample_type,
 * decoded into the sampler's callbacks; then truncated and hostile ones, which must be
 * counted as bad and reach no callback. Records are built at an odd address, so that a
 * decoder that reads them unaligned would trip UBSan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <sys/mman.h>

#include "agent/records.h"

/* A record under construction: header first, fields appended. */
struct rec {
	uint8_t mem[1 + 16384];
	uint8_t *p;	/* mem + 1: deliberately unaligned */
	size_t len;
};

static void rec_start(struct rec *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = 0 };

	memset(r->mem, 0xa5, sizeof(r->mem));
	r->p = r->mem + 1;
	memcpy(r->p, &h, sizeof(h));
	r->len = sizeof(h);
}

static void put(struct rec *r, const void *v, size_t n)
{
	assert_true(r->len + n <= sizeof(r->mem) - 1);
	memcpy(r->p + r->len, v, n);
	r->len += n;
}

static void put64(struct rec *r, uint64_t v)
{
	put(r, &v, 8);
}

static void put_pidtid(struct rec *r, uint32_t a, uint32_t b)
{
	put64(r, (uint64_t)a | (uint64_t)b << 32);
}

/* Pads to 8 bytes as the kernel does for strings. */
static void put_str(struct rec *r, const char *s)
{
	size_t n = strlen(s) + 1, pad = (8 - n % 8) % 8;
	uint8_t zero[8] = { 0 };

	put(r, s, n);
	put(r, zero, pad);
}

/* Sets the header's size to what was built (or to size when not 0) and decodes. */
static void feed(struct record_decoder *d, struct rec *r, size_t size,
		 const struct sampler_handlers *h)
{
	struct perf_event_header hdr;

	memcpy(&hdr, r->p, sizeof(hdr));
	hdr.size = (uint16_t)(size ? size : r->len);
	memcpy(r->p, &hdr, sizeof(hdr));
	records__handle(d, &hdr, r->p, h);
}

/* What the callbacks saw. */
struct seen {
	int samples, comms, mmaps, forks, exits;
	struct sampler_sample smp;
	uint64_t kips[RECORDS_MAX_CHAIN], uips[RECORDS_MAX_CHAIN];
	uint8_t stack[256];
	pid_t pid, tid, ppid;
	char text[256];
	bool exec;
	struct mapping m;
	uint64_t fork_time;
};

static void on_sample(void *ctx, const struct sampler_sample *s)
{
	struct seen *w = ctx;

	w->samples++;
	w->smp = *s;
	assert_true(s->nr_kernel <= RECORDS_MAX_CHAIN && s->nr_user <= RECORDS_MAX_CHAIN);
	memcpy(w->kips, s->kernel_ips, s->nr_kernel * sizeof(uint64_t));
	memcpy(w->uips, s->user_ips, s->nr_user * sizeof(uint64_t));
	if (s->stack) {
		assert_true(s->stack_len <= sizeof(w->stack));
		memcpy(w->stack, s->stack, s->stack_len);
	}
}

static void on_comm(void *ctx, pid_t pid, pid_t tid, const char *comm, bool exec)
{
	struct seen *w = ctx;

	w->comms++;
	w->pid = pid;
	w->tid = tid;
	w->exec = exec;
	snprintf(w->text, sizeof(w->text), "%s", comm);
}

static void on_mmap(void *ctx, pid_t pid, pid_t tid, const struct mapping *m)
{
	struct seen *w = ctx;

	w->mmaps++;
	w->pid = pid;
	w->tid = tid;
	w->m = *m;
	snprintf(w->text, sizeof(w->text), "%s", m->path);
	w->m.path = w->text;
}

static void on_fork(void *ctx, pid_t pid, pid_t ppid, pid_t tid, uint64_t time)
{
	struct seen *w = ctx;

	w->forks++;
	w->pid = pid;
	w->ppid = ppid;
	w->tid = tid;
	w->fork_time = time;
}

static void on_exit_rec(void *ctx, pid_t pid, pid_t tid)
{
	struct seen *w = ctx;

	w->exits++;
	w->pid = pid;
	w->tid = tid;
}

static struct sampler_handlers handlers(struct seen *w)
{
	memset(w, 0, sizeof(*w));
	return (struct sampler_handlers){ w, on_sample, on_comm, on_mmap, on_fork, on_exit_rec };
}

#define FP_TYPE (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN)
#define DWARF_TYPE (FP_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

static void sample_head(struct rec *r, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	rec_start(r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	put_pidtid(r, pid, tid);
	put64(r, time);
	put64(r, cpu);	/* cpu, res */
}

static void test_sample_callchain(void **state)
{
	static struct record_decoder d = { .sample_type = FP_TYPE };
	static struct rec r;
	struct seen w;
	struct sampler_handlers h = handlers(&w);
	uint64_t chain[] = { (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000010, 0xffffffff81000020,
			     (uint64_t)PERF_CONTEXT_USER, 0x401000, 0x402000, 0x403000,
			     (uint64_t)PERF_CONTEXT_GUEST_KERNEL, 0xdead };

	sample_head(&r, 1234, 1235, 987654321, 3);
	put64(&r, sizeof(chain) / 8);
	put(&r, chain, sizeof(chain));
	feed(&d, &r, 0, &h);
	assert_int_equal(w.samples, 1);
	assert_int_equal(w.smp.pid, 1234);
	assert_int_equal(w.smp.tid, 1235);
	assert_int_equal(w.smp.time, 987654321);
	assert_int_equal(w.smp.cpu, 3);
	assert_int_equal(w.smp.nr_kernel, 2);
	assert_int_equal(w.kips[0], 0xffffffff81000010);
	assert_int_equal(w.kips[1], 0xffffffff81000020);
	/* the guest frame after PERF_CONTEXT_GUEST_KERNEL is not ours */
	assert_int_equal(w.smp.nr_user, 3);
	assert_int_equal(w.uips[0], 0x401000);
	assert_int_equal(w.uips[2], 0x403000);
	assert_false(w.smp.has_regs);
	assert_null(w.smp.stack);
	assert_int_equal(d.stats.samples, 1);
	assert_int_equal(d.stats.bad, 0);
}

static void test_sample_long_chain_is_capped(void **state)
{
	static struct record_decoder d = { .sample_type = FP_TYPE };
	static struct rec r;
	struct seen w;
	struct sampler_handlers h = handlers(&w);
	const uint64_t nr = RECORDS_MAX_CHAIN + 100;

	sample_head(&r, 7, 7, 1, 0);
	put64(&r, nr + 1);
	put64(&r, (uint64_t)PERF_CONTEXT_USER);
	for (uint64_t i = 0; i < nr; i++)
		put64(&r, 0x400000 + i);
	feed(&d, &r, 0, &h);
	assert_int_equal(w.samples, 1);
	assert_int_equal(w.smp.nr_user, RECORDS_MAX_CHAIN);
	assert_int_equal(w.uips[0], 0x400000);
	assert_int_equal(w.uips[RECORDS_MAX_CHAIN - 1], 0x400000 + RECORDS_MAX_CHAIN - 1);
	assert_int_equal(d.stats.bad, 0);
}

static void test_sample_regs_and_stack(void **state)
{
	static struct record_decoder d = { .sample_type = DWARF_TYPE };
	static struct rec r;
	struct seen w;
	struct sampler_handlers h = handlers(&w);
	uint8_t stack[64];

	for (size_t i = 0; i < sizeof(stack); i++)
		stack[i] = (uint8_t)(i * 3);
	sample_head(&r, 42, 43, 5, 1);
	put64(&r, 2);
	put64(&r, (uint64_t)PERF_CONTEXT_KERNEL);
	put64(&r, 0xffffffff81234567);
	put64(&r, PERF_SAMPLE_REGS_ABI_64);
	put64(&r, 0x7ffd0100);	/* bp, sp, ip: increasing register bit order */
	put64(&r, 0x7ffd0000);
	put64(&r, 0x401234);
	put64(&r, sizeof(stack));
	put(&r, stack, sizeof(stack));
	put64(&r, 40);		/* dyn_size: the kernel copied less than asked */
	feed(&d, &r, 0, &h);
	assert_int_equal(w.samples, 1);
	assert_true(w.smp.has_regs);
	assert_int_equal(w.smp.bp, 0x7ffd0100);
	assert_int_equal(w.smp.sp, 0x7ffd0000);
	assert_int_equal(w.smp.ip, 0x401234);
	assert_int_equal(w.smp.nr_kernel, 1);
	assert_int_equal(w.smp.stack_len, 40);
	assert_memory_equal(w.stack, stack, 40);

	/* dyn_size larger than the copy (hostile): clamped to what is there */
	sample_head(&r, 42, 43, 6, 1);
	put64(&r, 0);
	put64(&r, PERF_SAMPLE_REGS_ABI_64);
	put64(&r, 1);
	put64(&r, 2);
	put64(&r, 3);
	put64(&r, sizeof(stack));
	put(&r, stack, sizeof(stack));
	put64(&r, 1u << 20);
	feed(&d, &r, 0, &h);
	assert_int_equal(w.samples, 2);
	assert_int_equal(w.smp.stack_len, sizeof(stack));
	assert_int_equal(w.smp.nr_kernel + w.smp.nr_user, 0);

	/* a kernel thread: no user registers, no stack */
	sample_head(&r, 0, 0, 7, 0);
	put64(&r, 0);
	put64(&r, PERF_SAMPLE_REGS_ABI_NONE);
	put64(&r, 0);
	feed(&d, &r, 0, &h);
	assert_int_equal(w.samples, 3);
	assert_false(w.smp.has_regs);
	assert_null(w.smp.stack);
	assert_int_equal(w.smp.stack_len, 0);
	assert_int_equal(d.stats.bad, 0);
}

static void test_sample_truncated_and_hostile(void **state)
{
	static struct record_decoder d = { .sample_type = DWARF_TYPE };
	static struct rec r;
	struct seen w;
	struct sampler_handlers h = handlers(&w);
	size_t full;

	/* a complete record first, then every shorter size of it */
	sample_head(&r, 1, 1, 1, 0);
	put64(&r, 1);
	put64(&r, (uint64_t)PERF_CONTEXT_USER);
	put64(&r, PERF_SAMPLE_REGS_ABI_64);
	put64(&r, 1);
	put64(&r, 2);
	put64(&r, 3);
	put64(&r, 16);
	put64(&r, 0x1111);
	put64(&r, 0x2222);
	put64(&r, 16);
	full = r.len;
	feed(&d, &r, 0, &h);
	assert_int_equal(w.samples, 1);
	for (size_t size = sizeof(struct perf_event_header); size < full; size++)
		feed(&d, &r, size, &h);
	assert_int_equal(w.samples, 1);
	assert_int_equal(d.stats.bad, full - sizeof(struct perf_event_header));

	/* a callchain that claims more frames than the record holds */
	d.stats.bad = 0;
	sample_head(&r, 1, 1, 1, 0);
	put64(&r, 100);
	put64(&r, 0x401000);
	feed(&d, &r, 0, &h);
	/* and one whose length would overflow nr * 8 */
	sample_head(&r, 1, 1, 1, 0);
	put64(&r, UINT64_MAX / 4);
	feed(&d, &r, 0, &h);
	/* a stack copy larger than the record */
	sample_head(&r, 1, 1, 1, 0);
	put64(&r, 0);
	put64(&r, PERF_SAMPLE_REGS_ABI_64);
	put64(&r, 1);
	put64(&r, 2);
	put64(&r, 3);
	put64(&r, 4096);
	put64(&r, 0);
	feed(&d, &r, 0, &h);
	/* a header that claims less than itself */
	feed(&d, &r, 4, &h);
	assert_int_equal(w.samples, 1);
	assert_int_equal(d.stats.bad, 4);
}

static void test_mmap2(void **state)
{
	static struct record_decoder d = { .sample_type = FP_TYPE };
	static struct rec r;
	struct seen w;
	struct sampler_handlers h = handlers(&w);
	uint32_t maj = 8, min = 1;
	uint64_t ino = 123456, gen = 0;
	uint8_t bid[24] = { 20, 0, 0, 0 };
	size_t path_off, cut;

	rec_start(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	put_pidtid(&r, 100, 101);
	put64(&r, 0x7f0000001000);	/* addr */
	put64(&r, 0x2000);		/* len */
	put64(&r, 0x3000);		/* pgoff */
	put(&r, &maj, 4);
	put(&r, &min, 4);
	put(&r, &ino, 8);
	put(&r, &gen, 8);
	put64(&r, PROT_READ | PROT_EXEC);	/* prot, flags */
	put_str(&r, "/usr/lib/libc.so.6");
	feed(&d, &r, 0, &h);
	assert_int_equal(w.mmaps, 1);
	assert_int_equal(w.pid, 100);
	assert_int_equal(w.tid, 101);
	assert_int_equal(w.m.start, 0x7f0000001000);
	assert_int_equal(w.m.end, 0x7f0000003000);
	assert_int_equal(w.m.pgoff, 0x3000);
	assert_int_equal(w.m.maj, 8);
	assert_int_equal(w.m.min, 1);
	assert_int_equal(w.m.ino, 123456);
	assert_int_equal(w.m.prot, PROT_READ | PROT_EXEC);
	assert_int_equal(w.m.build_id_len, 0);
	assert_string_equal(w.text, "/usr/lib/libc.so.6");

	/* the same with a build id instead of device and inode; a size byte above 20 is
	 * clamped */
	for (int i = 0; i < 20; i++)
		bid[4 + i] = (uint8_t)(0xb0 + i);
	bid[0] = 200;
	rec_start(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	put_pidtid(&r, 100, 100);
	put64(&r, 0x400000);
	put64(&r, 0x1000);
	put64(&r, 0);
	put(&r, bid, sizeof(bid));
	put64(&r, PROT_EXEC);
	path_off = r.len;
	put_str(&r, "/bin/x");
	feed(&d, &r, 0, &h);
	assert_int_equal(w.mmaps, 2);
	assert_int_equal(w.m.build_id_len, MAPPING_BUILD_ID_MAX);
	assert_int_equal(w.m.build_id[0], 0xb0);
	assert_int_equal(w.m.build_id[19], 0xb0 + 19);
	assert_int_equal(w.m.ino, 0);
	assert_string_equal(w.text, "/bin/x");
	assert_int_equal(d.stats.bad, 0);

	/* truncated anywhere before the path's NUL, or a path without one: refused */
	cut = path_off + strlen("/bin/x");
	for (size_t size = sizeof(struct perf_event_header); size <= cut; size++)
		feed(&d, &r, size, &h);
	assert_int_equal(w.mmaps, 2);
	assert_int_equal(d.stats.bad, cut + 1 - sizeof(struct perf_event_header));
	rec_start(&r, PERF_RECORD_MMAP2, 0);
	put_pidtid(&r, 1, 1);
	put64(&r, 0x400000);
	put64(&r, 0x1000);
	put64(&r, 0);
	put(&r, bid, sizeof(bid));
	put64(&r, PROT_EXEC);
	put(&r, "/bin/no-nul-here", 16);
	feed(&d, &r, 0, &h);
	assert_int_equal(w.mmaps, 2);
	assert_int_equal(d.stats.bad, cut + 2 - sizeof(struct perf_event_header));
}

static void test_comm(void **state)
{
	static struct record_decoder d = { .sample_type = FP_TYPE };
	static struct rec r;
	struct seen w;
	struct sampler_handlers h = handlers(&w);

	rec_start(&r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	put_pidtid(&r, 300, 301);
	put_str(&r, "python3");
	feed(&d, &r, 0, &h);
	assert_int_equal(w.comms, 1);
	assert_int_equal(w.pid, 300);
	assert_int_equal(w.tid, 301);
	assert_true(w.exec);
	assert_string_equal(w.text, "python3");

	rec_start(&r, PERF_RECORD_COMM, 0);	/* a thread renamed itself */
	put_pidtid(&r, 300, 302);
	put_str(&r, "worker-1");
	feed(&d, &r, 0, &h);
	assert_int_equal(w.comms, 2);
	assert_false(w.exec);
	assert_string_equal(w.text, "worker-1");
	assert_int_equal(d.stats.bad, 0);

	/* no name at all, and a name without a NUL */
	rec_start(&r, PERF_RECORD_COMM, 0);
	put_pidtid(&r, 300, 302);
	feed(&d, &r, 0, &h);
	rec_start(&r, PERF_RECORD_COMM, 0);
	put_pidtid(&r, 300, 302);
	put(&r, "abcdefgh", 8);
	feed(&d, &r, 0, &h);
	feed(&d, &r, 12, &h);	/* pid/tid cut in half */
	assert_int_equal(w.comms, 2);
	assert_int_equal(d.stats.bad, 3);
}

static void test_fork_exit_lost_throttle(void **state)
{
	static struct record_decoder d = { .sample_type = FP_TYPE };
	static struct rec r;
	struct seen w;
	struct sampler_handlers h = handlers(&w);

	rec_start(&r, PERF_RECORD_FORK, 0);
	put_pidtid(&r, 500, 400);	/* pid, ppid */
	put_pidtid(&r, 501, 401);	/* tid, ptid */
	put64(&r, 99);			/* time */
	feed(&d, &r, 0, &h);
	assert_int_equal(w.forks, 1);
	assert_int_equal(w.pid, 500);
	assert_int_equal(w.ppid, 400);
	assert_int_equal(w.tid, 501);

	rec_start(&r, PERF_RECORD_EXIT, 0);
	put_pidtid(&r, 500, 400);
	put_pidtid(&r, 500, 400);
	put64(&r, 100);
	feed(&d, &r, 0, &h);
	assert_int_equal(w.exits, 1);
	assert_int_equal(w.forks, 1);
	assert_int_equal(w.pid, 500);
	assert_int_equal(w.tid, 500);
	feed(&d, &r, 16, &h);	/* the tid is missing */
	assert_int_equal(w.exits, 1);
	assert_int_equal(d.stats.bad, 1);

	rec_start(&r, PERF_RECORD_LOST, 0);
	put64(&r, 1);	/* id */
	put64(&r, 17);	/* lost */
	feed(&d, &r, 0, &h);
	feed(&d, &r, 0, &h);
	assert_int_equal(d.stats.lost, 34);
	rec_start(&r, PERF_RECORD_THROTTLE, 0);
	put64(&r, 1);
	put64(&r, 1);
	put64(&r, 1);
	feed(&d, &r, 0, &h);
	assert_int_equal(d.stats.throttled, 1);

	/* record types the sampler does not ask for are ignored, not bad */
	rec_start(&r, PERF_RECORD_SWITCH, 0);
	feed(&d, &r, 0, &h);
	assert_int_equal(d.stats.bad, 1);
	assert_int_equal(w.samples + w.comms + w.mmaps, 0);
}

/* With sample_id_all every record but a sample ends with TID, TIME and CPU (24 bytes
 * here): not part of the path, the name or the FORK's fields, and a record too short to
 * hold it is bad. The FORK's own time reaches the handler only in CLOCK_MONOTONIC. */
static void put_id(struct rec *r, uint64_t time)
{
	put_pidtid(r, 1, 1);
	put64(r, time);
	put64(r, 2);	/* cpu, res */
}

static void test_sample_id_all(void **state)
{
	static struct record_decoder d = { .sample_type = FP_TYPE, .sample_id_all = true,
					   .mono_clock = true };
	static struct record_decoder other_clock = { .sample_type = FP_TYPE,
						     .sample_id_all = true };
	static struct rec r;
	struct seen w;
	struct sampler_handlers h = handlers(&w);
	uint8_t ids[24] = { 0 };

	rec_start(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	put_pidtid(&r, 100, 101);
	put64(&r, 0x1000);
	put64(&r, 0x2000);
	put64(&r, 0);
	put(&r, ids, sizeof(ids));
	put64(&r, PROT_READ | PROT_EXEC);
	put_str(&r, "/usr/bin/cc1plus");
	put_id(&r, 5000);
	feed(&d, &r, 0, &h);
	assert_int_equal(w.mmaps, 1);
	assert_string_equal(w.text, "/usr/bin/cc1plus");
	assert_int_equal(w.m.end, 0x3000);

	rec_start(&r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	put_pidtid(&r, 100, 100);
	put_str(&r, "cc1plus");
	put_id(&r, 5001);
	feed(&d, &r, 0, &h);
	assert_int_equal(w.comms, 1);
	assert_true(w.exec);
	assert_string_equal(w.text, "cc1plus");

	rec_start(&r, PERF_RECORD_FORK, 0);
	put_pidtid(&r, 500, 400);
	put_pidtid(&r, 500, 400);
	put64(&r, 4999);		/* the FORK's own time */
	put_id(&r, 4999);
	feed(&d, &r, 0, &h);
	assert_int_equal(w.forks, 1);
	assert_int_equal(w.pid, 500);
	assert_int_equal(w.ppid, 400);
	assert_int_equal(w.fork_time, 4999);
	feed(&other_clock, &r, 0, &h);
	assert_int_equal(w.forks, 2);
	assert_int_equal(w.fork_time, 0);
	assert_int_equal(d.stats.bad, 0);

	/* the sample_id cut short, and a COMM whose name would need the trailer's bytes */
	feed(&d, &r, 8 + 16, &h);
	rec_start(&r, PERF_RECORD_COMM, 0);
	put_pidtid(&r, 100, 100);
	put(&r, "abcdefgh", 8);
	put_id(&r, 1);
	feed(&d, &r, 0, &h);
	assert_int_equal(w.forks, 2);
	assert_int_equal(w.comms, 1);
	assert_int_equal(d.stats.bad, 2);
}

static void test_handlers_may_be_null(void **state)
{
	static struct record_decoder d = { .sample_type = FP_TYPE };
	static struct rec r;
	struct sampler_handlers none = { 0 };

	sample_head(&r, 1, 1, 1, 0);
	put64(&r, 0);
	feed(&d, &r, 0, &none);
	rec_start(&r, PERF_RECORD_COMM, 0);
	put_pidtid(&r, 1, 1);
	put_str(&r, "x");
	feed(&d, &r, 0, &none);
	assert_int_equal(d.stats.samples, 1);
	assert_int_equal(d.stats.bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample_callchain),
		cmocka_unit_test(test_sample_long_chain_is_capped),
		cmocka_unit_test(test_sample_regs_and_stack),
		cmocka_unit_test(test_sample_truncated_and_hostile),
		cmocka_unit_test(test_mmap2),
		cmocka_unit_test(test_comm),
		cmocka_unit_test(test_fork_exit_lost_throttle),
		cmocka_unit_test(test_sample_id_all),
		cmocka_unit_test(test_handlers_may_be_null),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
