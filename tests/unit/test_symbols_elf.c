/* ELF symbol sources, each on a real binary built by the test: .symtab, .dynsym of a
 * stripped library, MiniDebugInfo, separate debug files (debuglink, build-id), C++ and
 * Rust demangling, and Go's pclntab in a stripped binary (also without section headers). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "symbols/demangle.h"
#include "symbols/elf.h"
#include "symbols/gopclntab.h"
#include "symbols/symtab.h"
#include "symtest.h"

static const char prog_c[] =
	"#include <stdio.h>\n"
	"__attribute__((noinline)) int alpha(int x) { return x * 3 + 1; }\n"
	"__attribute__((noinline)) static int beta(int x) { return alpha(x) ^ 7; }\n"
	"__attribute__((noinline)) int gamma_fn(int x) { volatile int v = x; return beta(v) + 2; }\n"
	"__asm__(\".text\\n.globl asm_entry\\nasm_entry:\\n\\tnop\\n\\tret\\n\");\n"
	"int main(int argc, char **argv) { (void)argv; printf(\"%d\\n\", gamma_fn(argc)); return 0; }\n";

static const char lib_c[] =
	"__attribute__((noinline)) static int lib_helper(int x) { return x * 5; }\n"
	"int lib_alpha(int x) { return lib_helper(x) + 1; }\n"
	"int lib_beta(int x) { return lib_alpha(x) - 1; }\n";

static int setup(void **state)
{
	tmpdir_make();
	write_file("prog.c", prog_c);
	write_file("lib.c", lib_c);
	return sh("cc -O0 -g -Wl,--build-id -o prog prog.c") ? -1 : 0;
}

static int teardown(void **state)
{
	tmpdir_remove();
	return 0;
}

static void test_symtab_basics(void **state)
{
	struct symtab t;
	uint64_t start = 0;

	symtab_init(&t);
	symtab__add(&t, 0x2000, 0x10, "b", 1);
	symtab__add(&t, 0x1000, 0x100, "a", 1);
	symtab__add(&t, 0x1000, 0, "a_alias", 7);	/* same address, unsized: loses */
	symtab__add(&t, 0x3000, 0, "c", 1);		/* unsized: ends at the barrier */
	symtab__add_barrier(&t, 0x3040);
	symtab__add(&t, 0x1010, 0x8, "inner", 5);	/* inside a */
	symtab__add(&t, 0x1030, 0, "label", 5);		/* unsized inside a: a keeps it */
	symtab__finish(&t, SYMTAB_FIRST_WINS, 0);
	assert_string_equal(symtab__find(&t, 0x1000, &start), "a");
	assert_int_equal(start, 0x1000);
	assert_string_equal(symtab__find(&t, 0x1012, NULL), "inner");
	assert_string_equal(symtab__find(&t, 0x1020, NULL), "a");	/* back to the encloser */
	assert_string_equal(symtab__find(&t, 0x1034, NULL), "a");
	assert_null(symtab__find(&t, 0x1100, NULL));	/* gap after a sized symbol */
	assert_string_equal(symtab__find(&t, 0x200f, NULL), "b");
	assert_null(symtab__find(&t, 0x2010, NULL));
	assert_string_equal(symtab__find(&t, 0x303f, NULL), "c");
	assert_null(symtab__find(&t, 0x3040, NULL));
	assert_null(symtab__find(&t, 0xfff, NULL));
	symtab_release(&t);

	/* perf maps: a later blob at a reused address wins */
	symtab_init(&t);
	symtab__add(&t, 0x5000, 0x10, "old", 3);
	symtab__add(&t, 0x5000, 0x10, "new", 3);
	symtab__finish(&t, SYMTAB_LAST_WINS, 0);
	assert_string_equal(symtab__find(&t, 0x5008, NULL), "new");
	symtab_release(&t);
}

/* Differential: a table of sized entries grown in chunks (reopen, add, finish: a perf map
 * that grows) answers every lookup as the same entries added at once do. */
static void test_symtab_reopen_matches_one_pass(void **state)
{
	struct symtab once, grown;
	uint64_t x = 12345, addr;
	int dup, i, chunk;

	for (dup = 0; dup < 2; dup++) {
		symtab_init(&once);
		symtab_init(&grown);
		for (chunk = 0; chunk < 5; chunk++) {
			symtab__reopen(&grown);
			for (i = 0; i < 300; i++) {
				char name[32];
				uint64_t a, size;

				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				a = 0x1000 + (x % 4000) * 4;	/* many shared addresses */
				size = 4 + (x >> 24) % 40;	/* perf maps size everything */
				snprintf(name, sizeof(name), "f%d_%d", chunk, i);
				symtab__add(&once, a, size, name, strlen(name));
				symtab__add(&grown, a, size, name, strlen(name));
			}
			symtab__finish(&grown, dup ? SYMTAB_LAST_WINS : SYMTAB_FIRST_WINS, 64);
		}
		symtab__finish(&once, dup ? SYMTAB_LAST_WINS : SYMTAB_FIRST_WINS, 64);
		for (addr = 0xff0; addr < 0x1000 + 4 * 4000 + 64; addr++) {
			const char *a = symtab__find(&once, addr, NULL), *b = symtab__find(&grown, addr, NULL);

			assert_string_equal(a ? a : "-", b ? b : "-");
		}
		symtab_release(&once);
		symtab_release(&grown);
	}
}

static void test_symtab(void **state)
{
	struct elf_symbols es;
	uint64_t a = nm_addr("prog", "alpha", false), b = nm_addr("prog", "beta", false);

	assert_true(a && b);
	elf_symbols_init(&es);
	assert_int_equal(load_file(&es, "prog", ""), 0);
	assert_true(es.sources & ELF_SRC_SYMTAB);
	assert_string_equal(at(&es, a), "alpha");
	assert_string_equal(at(&es, a + 1), "alpha");
	assert_string_equal(at(&es, b + 2), "beta");
	assert_string_equal(at(&es, nm_addr("prog", "main", false)), "main");
	/* an assembly label without type or size, as in ld.so's _start */
	assert_string_equal(at(&es, nm_addr("prog", "asm_entry", false) + 1), "asm_entry");
	assert_int_equal(es.build_id_len, 20);
	/* PLT stubs are named as objdump names them */
	a = objdump_addr("prog", "printf@plt");
	assert_true(a);
	assert_string_equal(at(&es, a + 4), "printf@plt");
	elf_symbols_release(&es);
}

static void test_dynsym_only(void **state)
{
	struct elf_symbols es;
	uint64_t a, b;

	assert_int_equal(sh("cc -O0 -fPIC -shared -o libt.so lib.c && strip --strip-all libt.so"), 0);
	a = nm_addr("libt.so", "lib_alpha", true);
	b = nm_addr("libt.so", "lib_beta", true);
	assert_true(a && b);
	elf_symbols_init(&es);
	assert_int_equal(load_file(&es, "libt.so", ""), 0);
	assert_int_equal(es.sources, ELF_SRC_DYNSYM);
	assert_string_equal(at(&es, a + 4), "lib_alpha");
	assert_string_equal(at(&es, b), "lib_beta");

	/* a versioned global is named as .dynsym names it, ahead of a local alias */
	write_file("v.c", "int foo_impl(int x) { return x + 1; }\n"
			  "__asm__(\".symver foo_impl,foo@@V1\");\n");
	write_file("v.map", "V1 { global: foo; local: *; };\n");
	assert_int_equal(sh("cc -O0 -fPIC -shared -Wl,--version-script=v.map -o libv.so v.c"), 0);
	a = nm_addr("libv.so", "foo@@V1", false);
	assert_true(a);
	assert_int_equal(load_file(&es, "libv.so", ""), 0);
	assert_true(es.sources & ELF_SRC_SYMTAB);
	assert_string_equal(at(&es, a), "foo");
	elf_symbols_release(&es);
}

static void test_minidebuginfo(void **state)
{
	struct elf_symbols es;
	uint64_t b = nm_addr("prog", "beta", false), g = nm_addr("prog", "gamma_fn", false);

	/* The way Fedora builds .gnu_debugdata: the function symbols that .dynsym lacks, in
	 * an otherwise empty ELF, xz-compressed into a section of the stripped binary. */
	assert_int_equal(sh("cp prog mini && "
			    "nm -D mini --format=posix --defined-only | awk '{print $1}' | sort > dynsyms && "
			    "nm mini --format=posix --defined-only | awk '$2 ~ /[Tt]/ {print $1}' | sort > funcsyms && "
			    "comm -13 dynsyms funcsyms > keep && "
			    "objcopy --only-keep-debug mini mini.dbg && "
			    "objcopy -S --remove-section .gdb_index --remove-section .comment "
			    "--keep-symbols=keep mini.dbg mini.dbg2 && "
			    "xz -f mini.dbg2 && strip --strip-all mini && "
			    "objcopy --add-section .gnu_debugdata=mini.dbg2.xz mini"), 0);
	elf_symbols_init(&es);
	assert_int_equal(load_file(&es, "mini", ""), 0);
	assert_true(es.sources & ELF_SRC_MINIDEBUG);
	assert_false(es.sources & ELF_SRC_SYMTAB);
	assert_string_equal(at(&es, b), "beta");
	assert_string_equal(at(&es, g + 3), "gamma_fn");
	elf_symbols_release(&es);
}

static void test_debuglink(void **state)
{
	struct elf_symbols es;
	uint64_t a = nm_addr("prog", "alpha", false);

	/* no build-id, so only the debuglink can lead to the debug file */
	assert_int_equal(sh("cc -O0 -g -Wl,--build-id=none -o dl prog.c && "
			    "objcopy --only-keep-debug dl dl.debug && strip --strip-all dl && "
			    "objcopy --add-gnu-debuglink=dl.debug dl"), 0);
	a = nm_addr("dl.debug", "alpha", false);
	assert_true(a);
	elf_symbols_init(&es);
	assert_int_equal(load_file(&es, "dl", ""), 0);
	assert_true(es.sources & ELF_SRC_DEBUGFILE);
	assert_string_equal(at(&es, a), "alpha");

	/* .debug/ beside the binary works too */
	assert_int_equal(sh("mkdir -p .debug && mv dl.debug .debug/"), 0);
	assert_int_equal(load_file(&es, "dl", ""), 0);
	assert_true(es.sources & ELF_SRC_DEBUGFILE);
	assert_string_equal(at(&es, a + 1), "alpha");

	/* /usr/lib/debug/<dir of the binary>/ inside the process's root */
	assert_int_equal(sh("d=root/usr/lib/debug$(pwd) && mkdir -p $d && cp .debug/dl.debug $d/ && "
			    "rm .debug/dl.debug"), 0);
	assert_int_equal(load_file(&es, "dl", ""), 0);
	assert_false(es.sources & ELF_SRC_DEBUGFILE);
	assert_int_equal(load_file(&es, "dl", path_in("root")), 0);
	assert_true(es.sources & ELF_SRC_DEBUGFILE);
	assert_string_equal(at(&es, a), "alpha");
	assert_int_equal(sh("mv root/usr/lib/debug$(pwd)/dl.debug .debug/"), 0);

	/* a debug file whose CRC does not match is not used */
	assert_int_equal(sh("printf x >> .debug/dl.debug"), 0);
	assert_int_equal(load_file(&es, "dl", ""), 0);
	assert_false(es.sources & ELF_SRC_DEBUGFILE);
	assert_string_equal(at(&es, a), "");
	elf_symbols_release(&es);
}

static void test_build_id_dir(void **state)
{
	struct elf_symbols es;
	char cmd[512];
	uint64_t a = nm_addr("prog", "alpha", false);

	/* the process's root is tmpdir/root: its /usr/lib/debug/.build-id holds the file */
	snprintf(cmd, sizeof(cmd),
		 "cp prog bid && objcopy --only-keep-debug bid bid.debug && strip --strip-all bid && "
		 "id=$(readelf -n bid | awk '/Build ID/ {print $3}') && "
		 "d=root/usr/lib/debug/.build-id/$(echo $id | cut -c1-2) && mkdir -p $d && "
		 "mv bid.debug $d/$(echo $id | cut -c3-).debug");
	assert_int_equal(sh("%s", cmd), 0);
	elf_symbols_init(&es);
	assert_int_equal(load_file(&es, "bid", ""), 0);
	assert_false(es.sources & ELF_SRC_DEBUGFILE);	/* not on the host */
	assert_int_equal(load_file(&es, "bid", path_in("root")), 0);
	assert_true(es.sources & ELF_SRC_DEBUGFILE);
	assert_string_equal(at(&es, a), "alpha");
	elf_symbols_release(&es);
}

static void test_cxx_demangle(void **state)
{
	struct strbuf out = STRBUF_INIT, want = STRBUF_INIT;
	struct elf_symbols es;
	const char *mangled;
	char cmd[512];
	FILE *p;

	if (!have_cmd("c++")) {
		fprintf(stderr, "skipped: no C++ compiler\n");
		skip();
	}
	write_file("w.cc", "namespace ns { struct Widget { int spin(int); };\n"
			   "__attribute__((noinline)) int Widget::spin(int x) { return x + 1; } }\n"
			   "int main() { ns::Widget w; return w.spin(1) - 2; }\n");
	assert_int_equal(sh("c++ -O0 -o w w.cc"), 0);
	elf_symbols_init(&es);
	assert_int_equal(load_file(&es, "w", ""), 0);
	mangled = at(&es, nm_addr("w", "_ZN2ns6Widget4spinEi", false));
	assert_string_equal(mangled, "_ZN2ns6Widget4spinEi");
	assert_int_equal(demangle__append(mangled, &out), 1);
	/* c++filt is the oracle */
	snprintf(cmd, sizeof(cmd), "echo %s | c++filt", mangled);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(strbuf_read_fd(&want, fileno(p)), 0);
	pclose(p);
	strbuf_setlen(&want, strcspn(want.buf, "\n"));
	assert_string_equal(out.buf, want.buf);
	assert_string_equal(out.buf, "ns::Widget::spin(int)");

	/* not mangled: copied; Rust legacy: hash dropped, escapes decoded */
	strbuf_reset(&out);
	assert_int_equal(demangle__append("main.alpha", &out), 0);
	assert_string_equal(out.buf, "main.alpha");
	strbuf_reset(&out);
	assert_int_equal(demangle__append("_ZN4core3fmt5write17h0123456789abcdefE", &out), 1);
	assert_string_equal(out.buf, "core::fmt::write");
	strbuf_reset(&out);
	demangle__append("_ZN60_$LT$alloc..string..String$u20$as$u20$core..fmt..Display$GT$3fmt17h2b6e3e4e7b8c9d0aE", &out);
	assert_string_equal(out.buf, "<alloc::string::String as core::fmt::Display>::fmt");
	/* hostile nesting (as deep as a 4 KiB name allows) is refused or named, never a crash */
	{
		char deep[4097];

		memcpy(deep, "_Z1fI", 5);
		memset(deep + 5, 'P', sizeof(deep) - 5);
		memcpy(deep + sizeof(deep) - 4, "iEv", 4);
		strbuf_reset(&out);
		demangle__append(deep, &out);
		assert_true(out.len > 0);
		memset(deep + 2, 'A', sizeof(deep) - 3);
		deep[sizeof(deep) - 1] = '\0';
		strbuf_reset(&out);
		demangle__append(deep, &out);
		assert_true(out.len > 0);
	}
	strbuf_reset(&out);
	assert_int_equal(demangle__append("_Zgarbage", &out), 0);
	assert_string_equal(out.buf, "_Zgarbage");
	strbuf_release(&out);
	strbuf_release(&want);
	elf_symbols_release(&es);
}

static const char go_src[] =
	"package main\n"
	"import (\"fmt\"; \"reflect\")\n"
	"//go:noinline\nfunc alpha(n int) int { return n*3 + 1 }\n"
	"//go:noinline\nfunc beta(n int) int { return alpha(n) ^ 7 }\n"
	"func main() {\n"
	"  fmt.Printf(\"%x %x %d\\n\", reflect.ValueOf(alpha).Pointer(), reflect.ValueOf(beta).Pointer(), beta(2))\n"
	"}\n";

/* Clears e_shoff/e_shnum/e_shstrndx of an ELF64 file, as sstrip-like tools do. */
static void drop_section_headers(const char *path)
{
	int fd = open(path, O_RDWR);
	unsigned char zero[8] = { 0 };

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, zero, 8, 0x28), 8);	/* e_shoff */
	assert_int_equal(pwrite(fd, zero, 2, 0x3c), 2);	/* e_shnum */
	assert_int_equal(pwrite(fd, zero, 2, 0x3e), 2);	/* e_shstrndx */
	close(fd);
}

static void test_go_pclntab(void **state)
{
	struct elf_symbols es;
	unsigned long long a = 0, b = 0;
	FILE *p;
	char cmd[512];
	int n = 0;

	if (!have_cmd("go")) {
		fprintf(stderr, "skipped: 'go' is not installed (Debian package golang-go)\n");
		skip();
	}
	write_file("gop.go", go_src);
	assert_int_equal(sh("GOFLAGS= GO111MODULE=off go build -ldflags='-s -w' -o gop gop.go"), 0);
	snprintf(cmd, sizeof(cmd), "%s/gop", tmpdir);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%llx %llx %d", &a, &b, &n), 3);
	pclose(p);
	assert_int_equal(nm_addr("gop", "main.alpha", false), 0);	/* really stripped */

	elf_symbols_init(&es);
	assert_int_equal(load_file(&es, "gop", ""), 0);
	assert_true(es.sources & ELF_SRC_GOPCLNTAB);
	assert_string_equal(at(&es, a), "main.alpha");
	assert_string_equal(at(&es, a + 8), "main.alpha");
	assert_string_equal(at(&es, b + 1), "main.beta");
	assert_true(symtab__count(&es.tab) > 1000);	/* the runtime's functions too */

	/* without section headers the table is found by its magic */
	assert_int_equal(sh("cp gop gop-noshdr"), 0);
	drop_section_headers(path_in("gop-noshdr"));
	assert_int_equal(load_file(&es, "gop-noshdr", ""), 0);
	assert_true(es.sources & ELF_SRC_GOPCLNTAB);
	assert_string_equal(at(&es, a), "main.alpha");
	assert_string_equal(at(&es, b), "main.beta");

	/* PIE keeps the table in .data.rel.ro.gopclntab; nm on an unstripped twin is the oracle */
	assert_int_equal(sh("GOFLAGS= GO111MODULE=off go build -buildmode=pie -o gpie gop.go && "
			    "GOFLAGS= GO111MODULE=off go build -buildmode=pie -ldflags='-s -w' "
			    "-o gpie-s gop.go"), 0);
	a = nm_addr("gpie", "main.alpha", false);
	assert_true(a);
	assert_int_equal(load_file(&es, "gpie-s", ""), 0);
	assert_true(es.sources & ELF_SRC_GOPCLNTAB);
	assert_string_equal(at(&es, a + 2), "main.alpha");
	assert_string_equal(at(&es, nm_addr("gpie", "main.beta", false)), "main.beta");
	elf_symbols_release(&es);
}

/* A pclntab written by hand after the runtime's layouts (runtime/symtab.go of each Go
 * release), for the formats the installed Go does not produce. */
struct pcw {
	uint8_t buf[1024];
	bool be;
	unsigned ps;
};

static void put(struct pcw *w, size_t at, unsigned n, uint64_t v)
{
	unsigned i;

	for (i = 0; i < n; i++)
		w->buf[at + i] = (uint8_t)(v >> (8 * (w->be ? n - 1 - i : i)));
}

static void put_magic(struct pcw *w, uint32_t magic)
{
	put(w, 0, 4, magic);
	w->buf[4] = w->buf[5] = 0;
	w->buf[6] = 1;
	w->buf[7] = (uint8_t)w->ps;
}

/* Two functions at 0x401000 (0x40 bytes) and 0x401040 (0x20 bytes). */
static size_t build_pclntab(struct pcw *w, int version)
{
	const unsigned ps = w->ps;
	const uint64_t pc[3] = { 0x401000, 0x401040, 0x401060 };
	size_t names, ftab, funcs, i;

	memset(w->buf, 0, sizeof(w->buf));
	if (version == 12) {
		put_magic(w, 0xfffffffb);
		put(w, 8, ps, 2);
		ftab = 8 + ps;
		funcs = ftab + 5 * ps;
		names = funcs + 2 * (ps + 4);
		for (i = 0; i < 2; i++) {
			put(w, ftab + 2 * i * ps, ps, pc[i]);
			put(w, ftab + (2 * i + 1) * ps, ps, funcs + i * (ps + 4));
			put(w, funcs + i * (ps + 4), ps, pc[i]);
			put(w, funcs + i * (ps + 4) + ps, 4, names + i * 16);
		}
		put(w, ftab + 4 * ps, ps, pc[2]);
	} else if (version == 116) {
		put_magic(w, 0xfffffffa);
		put(w, 8, ps, 2);
		names = 8 + 7 * ps;
		ftab = names + 32;
		funcs = 5 * ps;		/* relative to ftab */
		put(w, 8 + 2 * ps, ps, names);
		put(w, 8 + 6 * ps, ps, ftab);
		for (i = 0; i < 2; i++) {
			put(w, ftab + 2 * i * ps, ps, pc[i]);
			put(w, ftab + (2 * i + 1) * ps, ps, funcs + i * (ps + 4));
			put(w, ftab + funcs + i * (ps + 4), ps, pc[i]);
			put(w, ftab + funcs + i * (ps + 4) + ps, 4, i * 16);
		}
		put(w, ftab + 4 * ps, ps, pc[2]);
	} else {
		put_magic(w, version == 118 ? 0xfffffff0 : 0xfffffff1);
		put(w, 8, ps, 2);
		put(w, 8 + 2 * ps, ps, pc[0]);	/* textStart */
		names = 8 + 8 * ps;
		ftab = names + 32;
		funcs = 5 * 4;
		put(w, 8 + 3 * ps, ps, names);
		put(w, 8 + 7 * ps, ps, ftab);
		for (i = 0; i < 2; i++) {
			put(w, ftab + 8 * i, 4, pc[i] - pc[0]);
			put(w, ftab + 8 * i + 4, 4, funcs + i * 8);
			put(w, ftab + funcs + i * 8, 4, pc[i] - pc[0]);
			put(w, ftab + funcs + i * 8 + 4, 4, i * 16);
		}
		put(w, ftab + 16, 4, pc[2] - pc[0]);
	}
	memcpy(w->buf + names, "main.alpha", 11);
	memcpy(w->buf + names + 16, "main.(*T).beta", 15);
	return version == 12 ? names + 32 : ftab + 200;
}

static void test_pclntab_formats(void **state)
{
	static const int versions[] = { 12, 116, 118, 120 };
	size_t v, len;
	int order;

	for (v = 0; v < sizeof(versions) / sizeof(versions[0]); v++) {
		for (order = 0; order < 4; order++) {
			struct pcw w = { .be = order & 1, .ps = order & 2 ? 4 : 8 };
			struct symtab t;
			uint8_t shifted[1100];

			len = build_pclntab(&w, versions[v]);
			symtab_init(&t);
			assert_int_equal(gopclntab__load(w.buf, len, 0, &t), 2);
			symtab__finish(&t, SYMTAB_FIRST_WINS, 0);
			assert_string_equal(symtab__find(&t, 0x401000, NULL), "main.alpha");
			assert_string_equal(symtab__find(&t, 0x40103f, NULL), "main.alpha");
			assert_string_equal(symtab__find(&t, 0x401050, NULL), "main.(*T).beta");
			assert_null(symtab__find(&t, 0x401060, NULL));
			symtab_release(&t);
			/* found by its magic behind other bytes */
			memset(shifted, 0xff, 76);
			memcpy(shifted + 76, w.buf, len);
			assert_int_equal(gopclntab__scan(shifted, len + 76), 76);
			/* every truncation is refused or names nothing wrong */
			for (; len > 0; len -= 7) {
				symtab_init(&t);
				if (gopclntab__load(w.buf, len, 0, &t) > 0) {
					symtab__finish(&t, SYMTAB_FIRST_WINS, 0);
					assert_string_equal(symtab__find(&t, 0x401000, NULL), "main.alpha");
				}
				symtab_release(&t);
				if (len < 7)
					break;
			}
		}
	}
}

static void test_gopclntab_rejects_garbage(void **state)
{
	struct symtab t;
	uint8_t buf[256];
	size_t i;

	symtab_init(&t);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(gopclntab__load(buf, sizeof(buf), 0, &t), -EINVAL);
	/* a 1.18 header claiming more functions than fit */
	buf[0] = 0xf0, buf[1] = buf[2] = buf[3] = 0xff, buf[6] = 1, buf[7] = 8;
	buf[8] = 0xff, buf[9] = 0xff;
	assert_int_equal(gopclntab__load(buf, sizeof(buf), 0, &t), -EINVAL);
	/* plausible counts, offsets pointing anywhere */
	buf[8] = 3, buf[9] = 0;
	for (i = 16; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 37);
	assert_true(gopclntab__load(buf, sizeof(buf), 0, &t) < 0 || symtab__count(&t) <= 3);
	assert_int_equal(gopclntab__scan(buf, 8), -1);
	symtab_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symtab_basics),
		cmocka_unit_test(test_symtab_reopen_matches_one_pass),
		cmocka_unit_test(test_symtab),
		cmocka_unit_test(test_dynsym_only),
		cmocka_unit_test(test_minidebuginfo),
		cmocka_unit_test(test_debuglink),
		cmocka_unit_test(test_build_id_dir),
		cmocka_unit_test(test_cxx_demangle),
		cmocka_unit_test(test_go_pclntab),
		cmocka_unit_test(test_pclntab_formats),
		cmocka_unit_test(test_gopclntab_rejects_garbage),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
