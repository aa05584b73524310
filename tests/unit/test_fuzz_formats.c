/* Robustness of the parsers of outside input (.col/folded, pprof, perf script): seeds
 * mutated at random (bit flips, truncation, inserted and overwritten bytes, splices) and
 * pure noise, under ASan and UBSan. Every input must give 0 or -EINVAL with a message,
 * never a crash, a leak or undefined behaviour; what parses is rendered again.
 * Bounded: KILN_FUZZ_ITERATIONS (default 3000) per parser, seed KILN_FUZZ_SEED. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "format/col.h"
#include "format/detect.h"
#include "format/html.h"
#include "format/perfscript.h"
#include "format/pprof.h"
#include "util/strbuf.h"

static uint64_t rng_state;
static unsigned iterations;

static uint64_t rnd(void)	/* xorshift64* */
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static size_t below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

/* A mutated copy of seed in out. */
static void mutate(struct strbuf *out, const char *seed, size_t len)
{
	strbuf_reset(out);
	switch (rnd() % 6) {
	case 0:		/* noise */
		for (size_t i = below(512); i > 0; i--)
			strbuf_addch(out, (char)rnd());
		return;
	case 1:		/* truncation */
		strbuf_add(out, seed, below(len + 1));
		return;
	default:
		strbuf_add(out, seed, len);
	}
	for (int k = 1 + (int)below(8); k > 0 && out->len; k--) {
		size_t at = below(out->len);
		switch (rnd() % 5) {
		case 0: out->buf[at] ^= (char)(1u << below(8)); break;
		case 1: out->buf[at] = (char)rnd(); break;
		case 2: out->buf[at] = "\n; #{}0\t\x80\xff"[below(11)]; break;
		case 3: {	/* duplicate a slice elsewhere */
			size_t from = below(out->len), n = below(out->len - from + 1);
			char *copy = xstrndup(out->buf + from, n);
			struct strbuf t = STRBUF_INIT;
			strbuf_add(&t, out->buf, at);
			strbuf_add(&t, copy, n);
			strbuf_add(&t, out->buf + at, out->len - at);
			strbuf_reset(out);
			strbuf_add(out, t.buf, t.len);
			strbuf_release(&t);
			free(copy);
			break;
		}
		default: strbuf_setlen(out, at); break;
		}
	}
}

static void check(int ret, const char *err, struct profile *p)
{
	FILE *devnull;

	if (ret) {
		assert_int_equal(ret, -EINVAL);
		assert_true(err[0] != '\0');
		return;
	}
	devnull = fopen("/dev/null", "w");
	assert_non_null(devnull);
	assert_int_equal(html__write(devnull, p, NULL), 0);
	assert_int_equal(col__write(devnull, p, true), 0);
	fclose(devnull);
}

static void test_fuzz_col(void **state)
{
	static const char seed[] =
		"# {\"hostname\": \"h\", \"frequency\": 11, \"x\": [1, {\"y\": null}]}\n"
		"0;;python3;main;work (app.py:3)_[p];deflate 12\n"
		"0;c1;java;Foo.bar_[j];do_syscall_64_[k] 3\r\n\n# comment\n"
		"1;;go;runtime.goexit;main.main 18446744073709551615\n";
	struct strbuf in = STRBUF_INIT;

	for (unsigned i = 0; i < iterations; i++) {
		struct profile *p = profile__new();
		char err[256] = "";
		mutate(&in, seed, sizeof(seed) - 1);
		check(col__parse(p, in.buf, in.len, err, sizeof(err)), err, p);
		profile__free(p);
	}
	strbuf_release(&in);
}

static void test_fuzz_pprof(void **state)
{
	struct profile *src = profile__new();
	const char *a[] = { "main", "work (app.py:3)_[p]", "deflate" }, *b[] = { "main", "x_[k]" };
	struct strbuf gz = STRBUF_INIT, in = STRBUF_INIT;
	uint8_t *raw = xmalloc(1 << 16);
	z_stream zs = { 0 };
	size_t rawlen;

	profile__add_names(src, a, 3, 7);
	profile__add_names(src, b, 2, 2);
	assert_int_equal(pprof__write(&gz, src), 0);
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)gz.buf, zs.avail_in = (uInt)gz.len;
	zs.next_out = raw, zs.avail_out = 1 << 16;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	rawlen = zs.total_out;
	inflateEnd(&zs);
	for (unsigned i = 0; i < iterations; i++) {
		struct profile *p = profile__new();
		char err[256] = "";
		bool gzipped = rnd() % 4 == 0;
		mutate(&in, gzipped ? gz.buf : (const char *)raw, gzipped ? gz.len : rawlen);
		check(pprof__parse(p, in.buf, in.len, rnd() % 2 ? NULL : "cpu", err, sizeof(err)),
		      err, p);
		profile__free(p);
	}
	free(raw);
	strbuf_release(&gz);
	strbuf_release(&in);
	profile__free(src);
}

static void test_fuzz_perfscript_and_detect(void **state)
{
	static const char seed[] =
		"sh 23210  1021.526759:    2004008 cpu-clock:ppp: \n"
		"\tffffffff8225fd19 pvm_irq_enable+0x19 ([kernel.kallsyms])\n"
		"\t            ddcc a->b(int) (/usr/lib/ld.so)\n\n"
		"V8 WorkerThread 1/2 [000] 9.1:    1000 cycles: \n"
		"\t432c [unknown] (/tmp/perf-12.map)\n\n";
	struct perfscript_options o = { .annotate_kernel = true, .annotate_jit = true,
					.include_tid = true };
	struct strbuf in = STRBUF_INIT;

	for (unsigned i = 0; i < iterations; i++) {
		struct profile *p = profile__new(), *q = profile__new();
		char err[256] = "";
		mutate(&in, seed, sizeof(seed) - 1);
		check(perfscript__parse(p, in.buf, in.len, &o, NULL, err, sizeof(err)), err, p);
		err[0] = '\0';
		input__detect(in.buf, in.len);
		check(input__load(q, in.buf, in.len, INPUT_UNKNOWN, NULL, err, sizeof(err)), err, q);
		profile__free(p);
		profile__free(q);
	}
	strbuf_release(&in);
}

int main(void)
{
	const char *it = getenv("KILN_FUZZ_ITERATIONS"), *seed = getenv("KILN_FUZZ_SEED");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fuzz_col),
		cmocka_unit_test(test_fuzz_pprof),
		cmocka_unit_test(test_fuzz_perfscript_and_detect),
	};

	iterations = it ? (unsigned)strtoul(it, NULL, 10) : 3000;
	rng_state = seed ? strtoull(seed, NULL, 0) : 0x6b696c6eULL;
	if (!rng_state)
		rng_state = 1;
	printf("fuzz: %u iterations per parser, seed %#llx\n", iterations,
	       (unsigned long long)rng_state);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
