/* The time-ordered merge of the perf rings, on rings built in memory as the kernel lays
 * them out (a control page with data_head/data_tail, data pages that records wrap
 * around): an exec's COMM and MMAP2 in one CPU's ring come out before the samples that
 * follow them in another's; records later than the bound stay in their ring for the next
 * pass; a full queue, a corrupt ring and many rings with interleaved times. The records
 * that come out are decoded by the real decoder, sample_id trailer included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agent/records.h"
#include "agent/recqueue.h"
#include "agent/ringmerge.h"

#define TYPE (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)
#define MAX_RINGS 40

struct fake_ring {
	struct perf_event_mmap_page page;
	uint8_t *data;
};

static struct fake_ring fakes[MAX_RINGS];
static struct merge_ring rings[MAX_RINGS];

static void rings_init(unsigned nr, uint64_t size)
{
	for (unsigned i = 0; i < nr; i++) {
		memset(&fakes[i].page, 0, sizeof(fakes[i].page));
		fakes[i].data = calloc(1, size);
		rings[i].page = &fakes[i].page;
		rings[i].data = fakes[i].data;
		rings[i].size = size;
	}
}

static void rings_release(unsigned nr)
{
	for (unsigned i = 0; i < nr; i++)
		free(fakes[i].data);
}

/* Appends len bytes at ring i's head, across its end if need be, as the kernel does. */
static void ring_put(unsigned i, const void *rec, size_t len)
{
	struct merge_ring *r = &rings[i];
	uint64_t head = r->page->data_head;

	assert_true(head + len - r->page->data_tail <= r->size);
	for (size_t k = 0; k < len; k++)
		fakes[i].data[(head + k) & (r->size - 1)] = ((const uint8_t *)rec)[k];
	r->page->data_head = head + len;
}

/* A sample of pid at time on cpu: header, TID, TIME, CPU. */
static void put_sample(unsigned ring, uint32_t pid, uint64_t time)
{
	struct { struct perf_event_header h; uint64_t tid, time, cpu; } rec = {
		{ PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(rec) },
		(uint64_t)pid | (uint64_t)pid << 32, time, ring };
	ring_put(ring, &rec, sizeof(rec));
}

/* COMM (exec) of pid, with the sample_id that sample_id_all appends: TID, TIME, CPU. */
static void put_comm(unsigned ring, uint32_t pid, const char *name, uint64_t time)
{
	struct { struct perf_event_header h; uint64_t pidtid; char comm[16];
		 uint64_t id_tid, id_time, id_cpu; } rec = {
		{ PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, sizeof(rec) },
		(uint64_t)pid | (uint64_t)pid << 32, "", (uint64_t)pid | (uint64_t)pid << 32,
		time, ring };
	snprintf(rec.comm, sizeof(rec.comm), "%s", name);
	ring_put(ring, &rec, sizeof(rec));
}

/* What the decoder saw, in order. */
struct seen {
	char what[64][24];
	unsigned n;
};

static void on_sample(void *ctx, const struct sampler_sample *s)
{
	struct seen *w = ctx;

	assert_true(w->n < 64);
	snprintf(w->what[w->n++], sizeof(w->what[0]), "s%d@%llu", (int)s->pid,
		 (unsigned long long)s->time);
}

static void on_comm(void *ctx, pid_t pid, pid_t tid, const char *comm, bool exec)
{
	struct seen *w = ctx;

	assert_true(w->n < 64);
	snprintf(w->what[w->n++], sizeof(w->what[0]), "%s%s", exec ? "exec:" : "", comm);
}

static const struct record_decoder layout = { .sample_type = TYPE, .sample_id_all = true,
					      .mono_clock = true };

/* Decodes everything queued into w. */
static void drain(struct recqueue *q, struct seen *w)
{
	static struct record_decoder d;
	struct sampler_handlers h = { w, on_sample, on_comm, NULL, NULL, NULL };
	const uint8_t *rec;
	size_t len;

	d = layout;
	recqueue__commit(q);
	while ((rec = recqueue__peek(q, &len))) {
		struct perf_event_header hdr;
		memcpy(&hdr, rec, sizeof(hdr));
		records__handle(&d, &hdr, rec, &h);
		recqueue__pop(q);
	}
	assert_int_equal(d.stats.bad, 0);
}

/* CPU 0 runs the exec (COMM at 100), the process then runs on CPU 1; CPU 1's ring also
 * holds an older sample of another process. Ring after ring, CPU 0's records would come
 * first or last; merged, each comes at its time. */
static void test_exec_before_samples_of_other_cpu(void **state)
{
	struct ringmerge *m = ringmerge__new(2);
	struct recqueue *q = recqueue__new(4096);
	struct merge_result res;
	struct seen w = { 0 };

	rings_init(2, 1024);
	put_sample(1, 7, 50);
	put_comm(0, 42, "cc1plus", 100);
	put_sample(1, 42, 150);
	put_sample(0, 9, 200);
	put_sample(1, 42, 250);
	ringmerge__pass(m, rings, &layout, q, 1000, &res);
	assert_int_equal(res.moved, 5);
	assert_false(res.held);
	assert_int_equal(res.bad, 0);
	drain(q, &w);
	assert_int_equal(w.n, 5);
	assert_string_equal(w.what[0], "s7@50");
	assert_string_equal(w.what[1], "exec:cc1plus");
	assert_string_equal(w.what[2], "s42@150");
	assert_string_equal(w.what[3], "s9@200");
	assert_string_equal(w.what[4], "s42@250");
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(fakes[i].page.data_tail, fakes[i].page.data_head);
	rings_release(2);
	recqueue__free(q);
	ringmerge__free(m);
}

/* A record later than the bound (written while the pass ran) waits in its ring, and so
 * does everything behind it there; the next pass merges it. */
static void test_bound_holds_records(void **state)
{
	struct ringmerge *m = ringmerge__new(2);
	struct recqueue *q = recqueue__new(4096);
	struct merge_result res;
	struct seen w = { 0 };

	rings_init(2, 1024);
	put_sample(0, 1, 10);
	put_sample(0, 1, 300);
	put_sample(1, 2, 20);
	put_sample(1, 2, 200);
	ringmerge__pass(m, rings, &layout, q, 100, &res);
	assert_int_equal(res.moved, 2);
	assert_true(res.held);
	assert_int_equal(fakes[0].page.data_tail, 32);
	assert_int_equal(fakes[1].page.data_tail, 32);
	put_comm(0, 3, "late", 400);
	ringmerge__pass(m, rings, &layout, q, 1000, &res);
	assert_int_equal(res.moved, 3);
	assert_false(res.held);
	drain(q, &w);
	assert_int_equal(w.n, 5);
	assert_string_equal(w.what[0], "s1@10");
	assert_string_equal(w.what[1], "s2@20");
	assert_string_equal(w.what[2], "s2@200");
	assert_string_equal(w.what[3], "s1@300");
	assert_string_equal(w.what[4], "exec:late");
	rings_release(2);
	recqueue__free(q);
	ringmerge__free(m);
}

/* Records that wrap the ring's end, their time included, and a queue that fills: what it
 * cannot take waits in the rings, in order. */
static void test_wrap_and_full_queue(void **state)
{
	struct ringmerge *m = ringmerge__new(2);
	struct recqueue *q = recqueue__new(64);	/* two 32-byte samples with their framing */
	struct merge_result res;
	struct seen w = { 0 };
	uint64_t t = 1;
	int full = 0;

	rings_init(2, 128);
	/* move both rings' positions to 120 and 100, so that the next records wrap */
	fakes[0].page.data_head = fakes[0].page.data_tail = 120;
	fakes[1].page.data_head = fakes[1].page.data_tail = 100;
	for (int k = 0; k < 3; k++) {
		put_sample(0, 1, t++);
		put_sample(1, 2, t++);
	}
	for (int pass = 0; pass < 12 && w.n < 6; pass++) {
		ringmerge__pass(m, rings, &layout, q, 1000, &res);
		assert_true(res.moved >= 1);
		full += res.queue_full;
		drain(q, &w);
	}
	assert_true(full > 0);
	assert_int_equal(w.n, 6);
	for (unsigned k = 0; k < 6; k++) {
		char want[24];
		snprintf(want, sizeof(want), "s%u@%u", k % 2 + 1, k + 1);
		assert_string_equal(w.what[k], want);
	}
	rings_release(2);
	recqueue__free(q);
	ringmerge__free(m);
}

/* A record whose size runs past the head: the rest of that ring is dropped and counted,
 * the other ring still merges. */
static void test_corrupt_ring(void **state)
{
	struct ringmerge *m = ringmerge__new(2);
	struct recqueue *q = recqueue__new(4096);
	struct merge_result res;
	struct seen w = { 0 };
	struct perf_event_header bad = { PERF_RECORD_SAMPLE, 0, 4000 };
	uint8_t pad[24] = { 0 };

	rings_init(2, 1024);
	ring_put(0, &bad, sizeof(bad));
	ring_put(0, pad, sizeof(pad));
	put_sample(1, 2, 5);
	ringmerge__pass(m, rings, &layout, q, 1000, &res);
	assert_int_equal(res.bad, 1);
	assert_int_equal(res.moved, 1);
	assert_int_equal(fakes[0].page.data_tail, 32);
	drain(q, &w);
	assert_int_equal(w.n, 1);
	assert_string_equal(w.what[0], "s2@5");
	rings_release(2);
	recqueue__free(q);
	ringmerge__free(m);
}

/* Many rings with interleaved times: the heap yields them in order, every one once. */
static void test_many_rings_sorted(void **state)
{
	const unsigned nr = 37, per = 20;
	struct ringmerge *m = ringmerge__new(nr);
	struct recqueue *q = recqueue__new(1 << 16);
	struct merge_result res;
	const uint8_t *rec;
	uint64_t last = 0;
	unsigned n = 0;
	size_t len;

	rings_init(nr, 1024);
	for (unsigned i = 0; i < nr; i++)
		for (unsigned k = 0; k < per; k++)
			put_sample(i, i + 1, (uint64_t)k * nr * 7 % 1000 + (i * 13) % 97 + k * 2000);
	ringmerge__pass(m, rings, &layout, q, UINT64_MAX, &res);
	assert_int_equal(res.moved, nr * per);
	recqueue__commit(q);
	while ((rec = recqueue__peek(q, &len))) {
		uint64_t time;
		assert_int_equal(len, 32);
		memcpy(&time, rec + 16, 8);
		assert_true(time >= last);
		last = time;
		n++;
		recqueue__pop(q);
	}
	assert_int_equal(n, nr * per);
	rings_release(nr);
	recqueue__free(q);
	ringmerge__free(m);
}

/* Where the time lies: after TID in a sample, in the sample_id at the end of the others;
 * nowhere without sample_id_all, or in a record too short. */
static void test_time_offset(void **state)
{
	struct record_decoder plain = { .sample_type = TYPE };

	assert_int_equal(records__time_offset(&layout, PERF_RECORD_SAMPLE, 32), 16);
	assert_int_equal(records__time_offset(&layout, PERF_RECORD_SAMPLE, 20), -1);
	assert_int_equal(records__time_offset(&layout, PERF_RECORD_COMM, 48), 32);
	assert_int_equal(records__time_offset(&layout, PERF_RECORD_MMAP2, 16), -1);
	assert_int_equal(records__time_offset(&plain, PERF_RECORD_COMM, 48), -1);
	assert_int_equal(records__time_offset(&plain, PERF_RECORD_SAMPLE, 32), 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_before_samples_of_other_cpu),
		cmocka_unit_test(test_bound_holds_records),
		cmocka_unit_test(test_wrap_and_full_queue),
		cmocka_unit_test(test_corrupt_ring),
		cmocka_unit_test(test_many_rings_sorted),
		cmocka_unit_test(test_time_offset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
