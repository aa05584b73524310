/* symbols/symcache: the per-binary table cache, driven directly with mappings of binaries
 * built here (nm as the oracle): the table answers for the binary; inode, build-id and a
 * same-build-id copy lead to one entry; a pinned binary is still read after it is deleted
 * while an unpinned one is not; files that are not there and mappings without a file give
 * NULL; a one-byte budget keeps only the table in use and re-reads an evicted one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "symbols/symcache.h"
#include "symtest.h"

static const char prog_c[] =
	"__attribute__((noinline)) int alpha(int x) { return x * 3 + 1; }\n"
	"int main(int argc, char **argv) { (void)argv; return alpha(argc); }\n";

static int setup(void **state)
{
	tmpdir_make();
	write_file("prog.c", prog_c);
	return sh("cc -O0 -Wl,--build-id -o prog prog.c && cp prog prog-copy && "
		  "cc -O0 -fPIC -shared -Wl,--build-id -o lib.so prog.c && "
		  "cc -O0 -Wl,--build-id=none -o nb1 prog.c && cp nb1 nb2") ? -1 : 0;
}

static int teardown(void **state)
{
	tmpdir_remove();
	return 0;
}

/* The file offset of alpha in name, through its PT_LOAD headers. */
static uint64_t alpha_off(const char *name)
{
	struct elf_symbols es;
	uint64_t va = nm_addr(name, "alpha", false), off = 0;

	assert_true(va);
	elf_symbols_init(&es);
	assert_int_equal(load_file(&es, name, ""), 0);
	for (size_t i = 0; i < es.nr_segs; i++)
		if (va >= es.segs[i].vaddr && va - es.segs[i].vaddr < es.segs[i].filesz)
			off = va - es.segs[i].vaddr + es.segs[i].offset;
	elf_symbols_release(&es);
	assert_true(off);
	return off;
}

static const char *name_at(const struct elf_symbols *es, uint64_t off)
{
	const char *n = es ? elf_symbols__find(es, off, NULL) : NULL;

	return n ? n : "";
}

static void test_one_entry_per_binary(void **state)
{
	struct symcache *c = symcache__new(0);
	struct proc_ref p = { getpid(), getpid() };
	char prog[512], copy[512];
	const struct elf_symbols *es, *again;
	struct mapping by_ino, by_id, cp;
	uint64_t off = alpha_off("prog"), mem;

	snprintf(prog, sizeof(prog), "%s", path_in("prog"));
	snprintf(copy, sizeof(copy), "%s", path_in("prog-copy"));
	by_ino = file_mapping(prog);
	es = symcache__get(c, &p, &by_ino);
	assert_non_null(es);
	assert_string_equal(name_at(es, off), "alpha");
	mem = symcache__memory(c);
	assert_int_equal(mem, elf_symbols__memory(es));
	assert_true(mem > 0);
	/* the same inode again */
	assert_ptr_equal(symcache__get(c, &p, &by_ino), es);
	/* only the build-id the kernel gave */
	by_id = by_ino;
	by_id.ino = 0, by_id.maj = by_id.min = 0;
	by_id.build_id_len = (uint8_t)es->build_id_len;
	memcpy(by_id.build_id, es->build_id, es->build_id_len);
	assert_true(by_id.build_id_len > 0);
	assert_ptr_equal(symcache__get(c, &p, &by_id), es);
	/* a copy (another inode) whose build-id is read from the file */
	cp = file_mapping(copy);
	assert_true(cp.ino != by_ino.ino);
	again = symcache__get(c, &p, &cp);
	assert_ptr_equal(again, es);
	assert_int_equal(symcache__memory(c), mem);
	symcache__free(c);
	symcache__free(NULL);
}

static void test_pin_outlives_the_file(void **state)
{
	struct symcache *c = symcache__new(0);
	struct proc_ref p = { getpid(), getpid() };
	char nb1[512], nb2[512];
	struct mapping m1, m2;
	uint64_t off = alpha_off("nb1");

	snprintf(nb1, sizeof(nb1), "%s", path_in("nb1"));
	snprintf(nb2, sizeof(nb2), "%s", path_in("nb2"));
	m1 = file_mapping(nb1);
	m2 = file_mapping(nb2);
	assert_int_equal(symcache__pin(c, &p, &m1), 0);
	assert_int_equal(symcache__memory(c), 0);	/* pinned, not parsed yet */
	assert_int_equal(unlink(nb1), 0);
	assert_int_equal(unlink(nb2), 0);
	assert_string_equal(name_at(symcache__get(c, &p, &m1), off), "alpha");
	/* never pinned: gone with its file, and the failure is remembered */
	assert_null(symcache__get(c, &p, &m2));
	assert_null(symcache__get(c, &p, &m2));
	symcache__free(c);
}

static void test_no_file(void **state)
{
	struct symcache *c = symcache__new(0);
	struct proc_ref p = { getpid(), getpid() };
	struct mapping heap = { .start = 0x1000, .end = 0x2000, .prot = PROT_READ, .path = "[heap]" };
	struct mapping missing = heap, none = heap;

	missing.path = path_in("no-such-binary");
	missing.ino = 12345;
	none.path = NULL;
	assert_int_equal(symcache__pin(c, &p, &heap), -ENOENT);
	assert_null(symcache__get(c, &p, &heap));
	assert_int_equal(symcache__pin(c, &p, &none), -ENOENT);
	assert_null(symcache__get(c, &p, &none));
	assert_true(symcache__pin(c, &p, &missing) < 0);
	assert_null(symcache__get(c, &p, &missing));
	assert_int_equal(symcache__memory(c), 0);
	symcache__free(c);
}

static void test_budget(void **state)
{
	struct symcache *c = symcache__new(1);
	struct proc_ref p = { getpid(), getpid() };
	char prog[512], lib[512];
	struct mapping a, b;
	uint64_t off_a = alpha_off("prog"), off_b = alpha_off("lib.so"), mem_a, mem_b;
	const struct elf_symbols *es;

	snprintf(prog, sizeof(prog), "%s", path_in("prog"));
	snprintf(lib, sizeof(lib), "%s", path_in("lib.so"));
	a = file_mapping(prog);
	b = file_mapping(lib);
	es = symcache__get(c, &p, &a);
	assert_string_equal(name_at(es, off_a), "alpha");
	mem_a = symcache__memory(c);
	es = symcache__get(c, &p, &b);
	assert_string_equal(name_at(es, off_b), "alpha");
	mem_b = symcache__memory(c);
	assert_int_equal(mem_b, elf_symbols__memory(es));	/* a was evicted */
	es = symcache__get(c, &p, &a);				/* and is read again */
	assert_string_equal(name_at(es, off_a), "alpha");
	assert_int_equal(symcache__memory(c), mem_a);
	symcache__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_entry_per_binary),
		cmocka_unit_test(test_pin_outlives_the_file),
		cmocka_unit_test(test_no_file),
		cmocka_unit_test(test_budget),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
