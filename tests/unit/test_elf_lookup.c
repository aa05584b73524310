/* symbols/elf_lookup: by-name lookups in a shared library built here, with nm and readelf
 * as the oracles — .dynsym before .symtab and dynamic_only, undefined and absent names,
 * reads of .data and .rodata (not .bss, not past a section), the load bias of each
 * PT_LOAD, and files that are not 64-bit ELF. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "symbols/elf_lookup.h"
#include "symtest.h"

static const char lib_c[] =
	"#include <stdio.h>\n"
	"int kiln_data = 0x12345678;\n"
	"const char kiln_version[] = \"kiln-3.14\";\n"
	"int kiln_bss;\n"
	"__attribute__((noinline)) static int kiln_hidden(int x) { return x * 5 + kiln_bss; }\n"
	"int kiln_entry(int x) { printf(\"%d\", x); return kiln_hidden(x); }\n";

static int setup(void **state)
{
	tmpdir_make();
	write_file("lib.c", lib_c);
	return sh("cc -O1 -g -fPIC -shared -o lib.so lib.c && printf 'not an elf file' > text && "
		  "cp lib.so lib32.so && printf '\\001' | dd of=lib32.so bs=1 seek=4 conv=notrunc "
		  "2>/dev/null") ? -1 : 0;
}

static int teardown(void **state)
{
	tmpdir_remove();
	return 0;
}

static void test_symbols(void **state)
{
	struct elf_lookup *e = elf_lookup__open(path_in("lib.so"));
	uint64_t va = 0, want;

	assert_non_null(e);
	/* exported data and functions are in .dynsym */
	want = nm_addr("lib.so", "kiln_data", true);
	assert_true(want);
	assert_int_equal(elf_lookup__symbol(e, "kiln_data", 1, &va), 0);
	assert_int_equal(va, want);
	assert_int_equal(elf_lookup__symbol(e, "kiln_entry", 1, &va), 0);
	assert_int_equal(va, nm_addr("lib.so", "kiln_entry", true));
	/* a static function is only in .symtab */
	want = nm_addr("lib.so", "kiln_hidden", false);
	assert_true(want);
	assert_int_equal(elf_lookup__symbol(e, "kiln_hidden", 1, &va), -ENOENT);
	assert_int_equal(elf_lookup__symbol(e, "kiln_hidden", 0, &va), 0);
	assert_int_equal(va, want);
	/* undefined (printf comes from libc), absent, and a prefix of a real name */
	assert_int_equal(elf_lookup__symbol(e, "printf", 0, &va), -ENOENT);
	assert_int_equal(elf_lookup__symbol(e, "no_such_symbol", 0, &va), -ENOENT);
	assert_int_equal(elf_lookup__symbol(e, "kiln_dat", 0, &va), -ENOENT);
	elf_lookup__free(e);
	elf_lookup__free(NULL);
}

/* Every defined dynamic symbol of a large library (libstdc++: thousands, found through
 * .gnu.hash) and of the same test library linked without .gnu.hash (scanned) resolves to
 * the value nm gives; names hashed to the same bucket but absent do not. */
static void test_hashed(void **state)
{
	const char *lib = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
	char cmd[512], line[4096];
	size_t checked = 0;
	uint64_t va;

	assert_int_equal(sh("cc -O1 -fPIC -shared -Wl,--hash-style=sysv -o sysv.so lib.c"), 0);
	struct elf_lookup *e = elf_lookup__open(path_in("sysv.so"));

	assert_non_null(e);
	assert_int_equal(elf_lookup__symbol(e, "kiln_data", 1, &va), 0);
	assert_int_equal(va, nm_addr("sysv.so", "kiln_data", true));
	assert_int_equal(elf_lookup__symbol(e, "kiln_dat", 1, &va), -ENOENT);
	elf_lookup__free(e);
	e = elf_lookup__open(lib);
	assert_non_null(e);
	/* nm -D prints "value type name@version"; a name defined twice (two versions) is
	 * skipped: either value would do */
	snprintf(cmd, sizeof(cmd), "nm -D --defined-only %s | sed 's/@.*//' | sort -k3 | "
		 "uniq -f2 -u", lib);
	FILE *fp = popen(cmd, "r");

	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp)) {
		unsigned long long want;
		char type, name[4000];

		if (sscanf(line, "%llx %c %3999s", &want, &type, name) != 3 || want == 0)
			continue;
		assert_int_equal(elf_lookup__symbol(e, name, 1, &va), 0);
		assert_int_equal(va, want);
		name[strlen(name) - 1] ^= 1;	/* a near miss */
		if (elf_lookup__symbol(e, name, 1, &va) == 0)
			continue;	/* the near miss is a real name too */
		checked++;
	}
	pclose(fp);
	assert_true(checked > 1000);
	elf_lookup__free(e);
}

static void test_read(void **state)
{
	struct elf_lookup *e = elf_lookup__open(path_in("lib.so"));
	uint64_t data, version, bss;
	char text[16] = "";
	int32_t v = 0;

	assert_non_null(e);
	assert_int_equal(elf_lookup__symbol(e, "kiln_data", 1, &data), 0);
	assert_int_equal(elf_lookup__read(e, data, &v, sizeof(v)), 0);
	assert_int_equal(v, 0x12345678);
	assert_int_equal(elf_lookup__symbol(e, "kiln_version", 1, &version), 0);
	assert_int_equal(elf_lookup__read(e, version, text, 10), 0);
	assert_string_equal(text, "kiln-3.14");
	/* .bss has no bytes in the file */
	assert_int_equal(elf_lookup__symbol(e, "kiln_bss", 1, &bss), 0);
	assert_int_equal(elf_lookup__read(e, bss, &v, sizeof(v)), -ENOENT);
	/* no section holds these ranges */
	assert_int_equal(elf_lookup__read(e, 0, &v, sizeof(v)), -ENOENT);
	assert_int_equal(elf_lookup__read(e, UINT64_MAX - 2, &v, sizeof(v)), -ENOENT);
	assert_int_equal(elf_lookup__read(e, data, text, (size_t)1 << 40), -ENOENT);
	elf_lookup__free(e);
}

static void test_bias(void **state)
{
	struct elf_lookup *e = elf_lookup__open(path_in("lib.so"));
	const uint64_t start = 0x7f1234560000ULL;
	unsigned long long off, vaddr;
	char cmd[600], line[256];
	uint64_t bias, offs[16], vaddrs[16];
	int loads = 0, unique = 0;
	FILE *p;

	assert_non_null(e);
	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' | awk '$1 == \"LOAD\" {print $2, $3}'",
		 path_in("lib.so"));
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p) && loads < 16) {
		assert_int_equal(sscanf(line, "%llx %llx", &off, &vaddr), 2);
		offs[loads] = off & ~0xfffULL;
		vaddrs[loads++] = vaddr & ~0xfffULL;
	}
	pclose(p);
	assert_true(loads >= 2);
	/* Each PT_LOAD whose first file page no other PT_LOAD shares: a page that two share
	 * (the RW segment usually starts inside the last read-only one's page) names both,
	 * and the function answers for the first. */
	for (int i = 0; i < loads; i++) {
		bool shared = false;
		for (int j = 0; j < loads; j++)
			shared |= j != i && offs[j] == offs[i];
		assert_int_equal(elf_lookup__bias(e, start, offs[i], &bias), 0);
		if (!shared) {
			assert_int_equal(bias, start - vaddrs[i]);
			unique++;
		}
	}
	assert_true(unique >= 2);
	/* an offset no PT_LOAD starts at */
	assert_int_equal(elf_lookup__bias(e, start, 0x7fff0000, &bias), -ENOENT);
	elf_lookup__free(e);
}

static void test_not_elf64(void **state)
{
	assert_null(elf_lookup__open(path_in("text")));
	assert_null(elf_lookup__open(path_in("lib32.so")));	/* EI_CLASS says 32-bit */
	assert_null(elf_lookup__open(path_in("no-such-file")));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symbols),
		cmocka_unit_test(test_hashed),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_bias),
		cmocka_unit_test(test_not_elf64),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
