/* Hostile binaries and the cache's bounds: truncated and bit-flipped ELF files (plain,
 * MiniDebugInfo, Go without section headers) must give unresolved frames, never a crash
 * (this runs under ASan and UBSan); eviction keeps memory under the budget. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <elf.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sysmacros.h>

#include "symbols/gopclntab.h"
#include "symbols/symbolizer.h"
#include "symtest.h"

static const char prog_c[] =
	"__attribute__((noinline)) int alpha(int x) { return x * 3 + 1; }\n"
	"__attribute__((noinline)) static int beta(int x) { return alpha(x) ^ 7; }\n"
	"int main(int argc, char **argv) { (void)argv; return beta(argc); }\n";

static int setup(void **state)
{
	tmpdir_make();
	write_file("prog.c", prog_c);
	return sh("cc -O0 -g -o prog prog.c && cc -O0 -fPIC -shared -o lib.so prog.c && "
		  "cp prog mini && nm mini --format=posix --defined-only | "
		  "awk '$2 ~ /[Tt]/ {print $1}' > keep && objcopy --only-keep-debug mini mini.dbg && "
		  "objcopy -S --keep-symbols=keep mini.dbg mini.small && xz -f mini.small && "
		  "strip --strip-all mini && objcopy --add-section .gnu_debugdata=mini.small.xz mini")
		       ? -1 : 0;
}

static int teardown(void **state)
{
	tmpdir_remove();
	return 0;
}

/* The file offset of virtual address va, through es's PT_LOAD headers. */
static uint64_t va_to_off(const struct elf_symbols *es, uint64_t va)
{
	size_t i;

	for (i = 0; i < es->nr_segs; i++)
		if (va >= es->segs[i].vaddr && va - es->segs[i].vaddr < es->segs[i].filesz)
			return va - es->segs[i].vaddr + es->segs[i].offset;
	fail_msg("no segment holds 0x%llx", (unsigned long long)va);
	return 0;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void write_bytes(const char *path, const uint8_t *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static uint64_t get_uint(const uint8_t *p, size_t n, bool big)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[big ? n - 1 - i : i] << (8 * i);
	return v;
}

/* What elf_symbols__load must answer for a file of len bytes starting with d, by its
 * contract: -ENOEXEC when the file does not start with an ELF identification (magic,
 * class 32/64, byte order, version 1: what makes a file ELF); -EINVAL when it does but its
 * header, or the program or section header table the header points to, runs past the end
 * of the file (corrupt); else 0. Counts of PN_XNUM or 0 (the real one in section 0) are
 * taken as they are. */
static int expected_load(const uint8_t *d, size_t len)
{
	bool is64, big;
	uint64_t phoff, phnum, shoff, shnum;

	if (len < EI_NIDENT || memcmp(d, ELFMAG, SELFMAG) ||
	    (d[EI_CLASS] != ELFCLASS32 && d[EI_CLASS] != ELFCLASS64) ||
	    (d[EI_DATA] != ELFDATA2LSB && d[EI_DATA] != ELFDATA2MSB) || d[EI_VERSION] != EV_CURRENT)
		return -ENOEXEC;
	is64 = d[EI_CLASS] == ELFCLASS64;
	big = d[EI_DATA] == ELFDATA2MSB;
	if (len < (is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		return -EINVAL;
	phoff = is64 ? get_uint(d + 0x20, 8, big) : get_uint(d + 0x1c, 4, big);
	phnum = is64 ? get_uint(d + 0x38, 2, big) : get_uint(d + 0x2c, 2, big);
	if (phnum && phnum != PN_XNUM && (phoff >= len || (len - phoff) / (is64 ? sizeof(Elf64_Phdr)
							: sizeof(Elf32_Phdr)) < phnum))
		return -EINVAL;
	shoff = is64 ? get_uint(d + 0x28, 8, big) : get_uint(d + 0x20, 4, big);
	shnum = is64 ? get_uint(d + 0x3c, 2, big) : get_uint(d + 0x30, 2, big);
	if (shnum && (shoff >= len || (len - shoff) / (is64 ? sizeof(Elf64_Shdr)
							: sizeof(Elf32_Shdr)) < shnum))
		return -EINVAL;
	return 0;
}

/* Symbolizes a few offsets of the file at path through the whole API and directly: both
 * give the answer the file calls for (see expected_load), and agree on which offsets have
 * a symbol. */
static void poke(const char *path, const uint64_t *offs, size_t n)
{
	struct symbolizer *s = symbolizer__new(0);
	struct proc_ref p = { getpid(), getpid() };
	struct mapping m = file_mapping(path);
	struct strbuf out = STRBUF_INIT, data = STRBUF_INIT;
	struct elf_symbols es;
	char unresolved[128];
	size_t i;
	int ret, want;

	assert_int_equal(strbuf_read_file(&data, path), 0);
	want = expected_load((const uint8_t *)data.buf, data.len);
	elf_symbols_init(&es);
	ret = load_file(&es, path + strlen(tmpdir) + 1, "");
	if (ret != want)
		fail_msg("load of a %zu-byte file gave %d, its header calls for %d", data.len, ret,
			 want);
	for (i = 0; i < n; i++) {
		const char *direct = elf_symbols__find(&es, offs[i], NULL);

		strbuf_reset(&out);
		ret = symbolizer__user(s, &p, &m, m.start + offs[i], &out);
		snprintf(unresolved, sizeof(unresolved), "(%s+0x%llx)", strrchr(path, '/') + 1,
			 (unsigned long long)offs[i]);
		/* the symbolizer finds a symbol exactly where the direct lookup does */
		assert_int_equal(ret, direct ? 0 : -ENOENT);
		if (!direct)
			assert_string_equal(out.buf, unresolved);
		else
			assert_string_not_equal(out.buf, unresolved);
		assert_true(out.len > 0);
		assert_null(strchr(out.buf, ';'));
		assert_null(strchr(out.buf, '\n'));
	}
	elf_symbols_release(&es);
	strbuf_release(&data);
	strbuf_release(&out);
	symbolizer__free(s);
}

/* Truncates name at many sizes and flips bytes in many copies, poking each. hot_off and
 * hot_len name a region to flip in more often (headers, a table). */
static void mangle(const char *name, const uint64_t *offs, size_t n, uint64_t hot_off,
		   size_t hot_len, int rounds)
{
	struct strbuf data = STRBUF_INIT;
	char bad[512];
	size_t cuts[16], nc = 0, i;
	int r;

	snprintf(bad, sizeof(bad), "%s", path_in("bad"));
	assert_int_equal(strbuf_read_file(&data, path_in(name)), 0);
	assert_true(data.len > 4096);
	cuts[nc++] = 0, cuts[nc++] = 1, cuts[nc++] = 16, cuts[nc++] = 63, cuts[nc++] = 64;
	cuts[nc++] = 65, cuts[nc++] = 200, cuts[nc++] = 1000, cuts[nc++] = data.len / 4;
	cuts[nc++] = data.len / 2, cuts[nc++] = data.len - 200, cuts[nc++] = data.len - 1;
	cuts[nc++] = hot_off + hot_len / 2;
	for (i = 0; i < nc; i++) {
		write_bytes(bad, (const uint8_t *)data.buf, cuts[i] < data.len ? cuts[i] : data.len);
		poke(bad, offs, n);
	}
	for (r = 0; r < rounds; r++) {
		uint8_t *copy = xmalloc(data.len);
		int flips = 1 + (int)(rng() % 16), f;

		memcpy(copy, data.buf, data.len);
		for (f = 0; f < flips; f++) {
			uint64_t where;

			switch (r % 3) {
			case 0:
				where = rng() % 0x400;	/* ELF and program headers */
				break;
			case 1:
				where = hot_off + rng() % (hot_len ? hot_len : 1);
				break;
			default:
				where = rng() % data.len;
			}
			if (where < data.len)
				copy[where] ^= (uint8_t)(1u << (rng() % 8)) | (r & 1 ? 0xff : 0);
		}
		write_bytes(bad, copy, data.len);
		free(copy);
		poke(bad, offs, n);
	}
	unlink(bad);
	strbuf_release(&data);
}

static void test_corrupt_elf(void **state)
{
	struct elf_symbols es;
	uint64_t offs[3];
	struct stat st;

	elf_symbols_init(&es);
	assert_int_equal(load_file(&es, "prog", ""), 0);
	offs[0] = va_to_off(&es, nm_addr("prog", "alpha", false));
	offs[1] = va_to_off(&es, nm_addr("prog", "beta", false)) + 3;
	offs[2] = 0x10;
	elf_symbols_release(&es);
	poke(path_in("prog"), offs, 3);
	assert_int_equal(stat(path_in("prog"), &st), 0);
	/* section headers sit at the end of the file */
	mangle("prog", offs, 3, (uint64_t)st.st_size - 0x800, 0x800, 120);
	/* MiniDebugInfo: flip inside the xz stream (near the end, before the headers) */
	assert_int_equal(stat(path_in("mini"), &st), 0);
	mangle("mini", offs, 3, (uint64_t)st.st_size - 0x1400, 0xc00, 60);
}

static void test_corrupt_go(void **state)
{
	static const char go_src[] =
		"package main\n//go:noinline\nfunc alpha(n int) int { return n*3 + 1 }\n"
		"func main() { println(alpha(2)) }\n";
	struct strbuf data = STRBUF_INIT;
	struct elf_symbols es;
	uint64_t offs[2];
	ssize_t at;

	if (!have_cmd("go")) {
		fprintf(stderr, "skipped: 'go' is not installed (Debian package golang-go)\n");
		skip();
	}
	write_file("g.go", go_src);
	assert_int_equal(sh("GOFLAGS= GO111MODULE=off go build -ldflags='-s -w' -o g g.go"), 0);
	elf_symbols_init(&es);
	assert_int_equal(load_file(&es, "g", ""), 0);
	assert_true(es.sources & ELF_SRC_GOPCLNTAB);
	offs[0] = es.nr_segs ? es.segs[0].offset + 0x1000 : 0;
	offs[1] = offs[0] + 0x2345;
	elf_symbols_release(&es);
	assert_int_equal(strbuf_read_file(&data, path_in("g")), 0);
	at = gopclntab__scan((const uint8_t *)data.buf, data.len);
	assert_true(at > 0);
	strbuf_release(&data);
	/* flips in the pclntab header and function table */
	mangle("g", offs, 2, (uint64_t)at, 0x4000, 90);
}

static void test_eviction_bounds_memory(void **state)
{
	struct symbolizer *big = symbolizer__new(0), *tiny = symbolizer__new(1);
	struct proc_ref p = { getpid(), getpid() };
	char prog_path[512], lib_path[512];
	struct mapping prog, lib;
	struct strbuf out = STRBUF_INIT;
	struct elf_symbols es;
	uint64_t a_prog, a_lib, one;

	/* path_in() reuses its buffers: the mappings need their own */
	snprintf(prog_path, sizeof(prog_path), "%s", path_in("prog"));
	snprintf(lib_path, sizeof(lib_path), "%s", path_in("lib.so"));
	prog = file_mapping(prog_path);
	lib = file_mapping(lib_path);
	elf_symbols_init(&es);
	assert_int_equal(load_file(&es, "prog", ""), 0);
	a_prog = prog.start + va_to_off(&es, nm_addr("prog", "alpha", false));
	assert_int_equal(load_file(&es, "lib.so", ""), 0);
	a_lib = lib.start + va_to_off(&es, nm_addr("lib.so", "alpha", false));
	elf_symbols_release(&es);

	assert_int_equal(symbolizer__user(big, &p, &prog, a_prog, &out), 0);
	one = symbolizer__memory(big);
	assert_int_equal(symbolizer__user(big, &p, &lib, a_lib, &out), 0);
	assert_true(symbolizer__memory(big) > one);	/* both kept */

	/* a budget of one byte keeps only the binary in use */
	assert_int_equal(symbolizer__user(tiny, &p, &prog, a_prog, &out), 0);
	assert_int_equal(symbolizer__memory(tiny), one);
	assert_int_equal(symbolizer__user(tiny, &p, &lib, a_lib, &out), 0);
	assert_true(symbolizer__memory(tiny) < symbolizer__memory(big));
	strbuf_reset(&out);
	assert_int_equal(symbolizer__user(tiny, &p, &prog, a_prog + 1, &out), 0);	/* re-read */
	assert_string_equal(out.buf, "alpha");
	assert_int_equal(symbolizer__memory(tiny), one);
	strbuf_release(&out);
	symbolizer__free(big);
	symbolizer__free(tiny);
}

/* One binary is parsed once, whichever way its mappings name it: by inode, by build-id,
 * or as a copy (another inode) with the same build-id. */
static void test_cache_shares_binaries(void **state)
{
	struct symbolizer *s = symbolizer__new(0);
	struct proc_ref p = { getpid(), getpid() };
	char prog_path[512], copy_path[512];
	struct strbuf out = STRBUF_INIT;
	struct elf_symbols es;
	struct mapping by_ino, by_id, copy;
	uint64_t off, one;

	snprintf(prog_path, sizeof(prog_path), "%s", path_in("prog"));
	snprintf(copy_path, sizeof(copy_path), "%s", path_in("prog-copy"));
	assert_int_equal(sh("cp prog prog-copy"), 0);
	elf_symbols_init(&es);
	assert_int_equal(load_file(&es, "prog", ""), 0);
	off = va_to_off(&es, nm_addr("prog", "alpha", false));
	by_ino = file_mapping(prog_path);
	by_id = by_ino;
	by_id.ino = 0, by_id.maj = by_id.min = 0;
	by_id.build_id_len = (uint8_t)es.build_id_len;
	memcpy(by_id.build_id, es.build_id, es.build_id_len);
	copy = file_mapping(copy_path);
	elf_symbols_release(&es);
	assert_true(copy.ino != by_ino.ino);

	assert_int_equal(symbolizer__user(s, &p, &by_ino, by_ino.start + off, &out), 0);
	one = symbolizer__memory(s);
	assert_int_equal(symbolizer__user(s, &p, &by_id, by_id.start + off, &out), 0);
	assert_int_equal(symbolizer__pin(s, &p, &copy), 0);
	assert_int_equal(symbolizer__user(s, &p, &copy, copy.start + off, &out), 0);
	assert_int_equal(symbolizer__memory(s), one);
	assert_string_equal(out.buf, "alphaalphaalpha");
	strbuf_release(&out);
	symbolizer__free(s);
}

static int count_fds(void)
{
	char path[64];
	int n = 0, fd;

	for (fd = 0; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n += access(path, F_OK) == 0;
	}
	return n;
}

/* Pinning keeps descriptors only up to a share of RLIMIT_NOFILE, then parses at once. */
static void test_pinning_bounds_descriptors(void **state)
{
	struct rlimit old, low = { 64, 64 };
	struct proc_ref p = { getpid(), getpid() };
	struct symbolizer *s;
	int i, before;

	/* no build-id: every copy is another binary (another inode) */
	assert_int_equal(sh("cc -O0 -Wl,--build-id=none -o nobid prog.c && "
			    "for i in $(seq 0 39); do cp nobid nobid$i; done"), 0);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low.rlim_max = old.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	s = symbolizer__new(0);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	before = count_fds();
	for (i = 0; i < 40; i++) {
		char name[32], path[512];
		struct mapping m;

		snprintf(name, sizeof(name), "nobid%d", i);
		snprintf(path, sizeof(path), "%s", path_in(name));
		m = file_mapping(path);
		assert_int_equal(symbolizer__pin(s, &p, &m), 0);
	}
	assert_true(count_fds() - before <= 16);	/* 64 / 4 */
	assert_true(symbolizer__memory(s) > 0);		/* the rest were parsed at once */
	symbolizer__free(s);
	assert_int_equal(count_fds(), before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corrupt_elf),
		cmocka_unit_test(test_corrupt_go),
		cmocka_unit_test(test_eviction_bounds_memory),
		cmocka_unit_test(test_cache_shares_binaries),
		cmocka_unit_test(test_pinning_bounds_descriptors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
