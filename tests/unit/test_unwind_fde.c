/* Listing .eh_frame's FDEs in the order of .eh_frame_hdr's search table gives exactly the
 * FDEs a walk of the section gives, sorted; a search table that lies (points between
 * FDEs, names another address, claims more entries than it holds) falls back to the
 * walk, never to a wrong or missing range. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dwarf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/fde.h"
#include "unwind/table.h"
#include "util/strbuf.h"

static int range_cmp(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (x->hi > y->hi) - (x->hi < y->hi);
}

static Elf_Scn *section(Elf *elf, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *n;

	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    strcmp(n, name) == 0)
			return scn;
	return NULL;
}

/* Reads path whole into memory (so that a test may corrupt its copy). */
static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	off_t size = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
	char *buf;

	if (size <= 0) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	buf = xmalloc((size_t)size);
	assert_int_equal(pread(fd, buf, (size_t)size, 0), size);
	close(fd);
	*len = (size_t)size;
	return buf;
}

/* The walk's FDEs, sorted, must equal the search table's, which must be sorted unless the
 * table lied (then the list is the walk's). Returns the number of FDEs. */
static size_t same_as_walk(char *img, size_t len, bool sorted)
{
	Elf *elf = elf_memory(img, len);
	Elf_Scn *eh, *hdr;
	struct fde_list walk = { 0 }, hdrl = { 0 };

	assert_non_null(elf);
	eh = section(elf, ".eh_frame");
	hdr = section(elf, ".eh_frame_hdr");
	assert_non_null(eh);
	assert_non_null(hdr);
	int nw = fde_list_add(&walk, elf, eh, true), nh = fde_list_add_sorted(&hdrl, elf, eh, hdr, NULL);

	assert_true(nw > 0);
	assert_int_equal(nw, nh);
	assert_int_equal(walk.n, hdrl.n);
	for (size_t i = 1; sorted && i < hdrl.n; i++)
		assert_true(hdrl.v[i - 1].lo <= hdrl.v[i].lo);
	qsort(walk.v, walk.n, sizeof(*walk.v), range_cmp);
	qsort(hdrl.v, hdrl.n, sizeof(*hdrl.v), range_cmp);	/* equal lo: any order */
	assert_memory_equal(walk.v, hdrl.v, walk.n * sizeof(*walk.v));
	fde_list_release(&walk);
	fde_list_release(&hdrl);
	elf_end(elf);
	return (size_t)nw;
}

static void test_same_fdes(void **state)
{
	const char *files[] = { "/proc/self/exe", "/lib/x86_64-linux-gnu/libc.so.6",
				"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
				"/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus" };
	int checked = 0;

	elf_version(EV_CURRENT);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t len;
		char *img = slurp(files[i], &len);

		if (!img)
			continue;	/* not on this machine: the others still check */
		printf("%s: %zu FDEs\n", files[i], same_as_walk(img, len, true));
		free(img);
		checked++;
	}
	assert_true(checked >= 2);
}

/* Where .eh_frame_hdr's table lies in the copy img: its entries, and their count. */
static uint8_t *table_of(char *img, size_t len, uint32_t **count)
{
	Elf *elf = elf_memory(img, len);
	GElf_Shdr sh;

	assert_non_null(elf);
	assert_non_null(gelf_getshdr(section(elf, ".eh_frame_hdr"), &sh));
	elf_end(elf);
	uint8_t *p = (uint8_t *)img + sh.sh_offset;

	assert_int_equal(p[0], 1);
	assert_int_equal(p[1] & 0x0f, DW_EH_PE_sdata4);	/* eh_frame_ptr, 4 bytes */
	*count = (uint32_t *)(p + 8);
	return p + 12;
}

static void test_lying_table(void **state)
{
	size_t len;
	char *img = slurp("/lib/x86_64-linux-gnu/libc.so.6", &len);
	uint32_t *count;
	uint8_t *tab;
	int32_t v;

	assert_non_null(img);
	elf_version(EV_CURRENT);
	tab = table_of(img, len, &count);
	/* an entry that points 1 byte into its FDE */
	memcpy(&v, tab + 8 * 10 + 4, 4);
	v += 1;
	memcpy(tab + 8 * 10 + 4, &v, 4);
	same_as_walk(img, len, false);
	v -= 1;
	memcpy(tab + 8 * 10 + 4, &v, 4);
	/* an entry whose address is not its FDE's */
	memcpy(&v, tab + 8 * 20, 4);
	v += 16;
	memcpy(tab + 8 * 20, &v, 4);
	same_as_walk(img, len, false);
	v -= 16;
	memcpy(tab + 8 * 20, &v, 4);
	/* more entries than the section holds */
	*count = 0x7fffffff;
	same_as_walk(img, len, false);
	free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_fdes),
		cmocka_unit_test(test_lying_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
