/* The runtime readers' per-file cache: a file is inspected once; a file rewritten on disk
 * (new size or mtime) or mapped at another offset is a new one; past its bound the least
 * recently used file is forgotten, not the one just used. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtimes/bincache.h"

struct val {
	int inspected;
	char tag[16];
};

static void inspect(void *value, void *ctx)
{
	struct val *v = value;
	int *calls = ctx;

	(*calls)++;
	v->inspected++;
	snprintf(v->tag, sizeof(v->tag), "call %d", *calls);
}

/* The identity of a private mapping of path, as a reader would take it. */
static bool id_of(const char *path, struct bin_id *id)
{
	int fd = open(path, O_RDONLY);
	void *p = fd >= 0 ? mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	bool ok;

	assert_true(p != MAP_FAILED);
	ok = bin_id__of(id, getpid(), (uint64_t)(uintptr_t)p, (uint64_t)(uintptr_t)p + 4096, 0);
	munmap(p, 4096);
	close(fd);
	return ok;
}

static void test_identity(void **state)
{
	char path[] = "/tmp/kiln-bincache.XXXXXX";
	int fd = mkstemp(path), calls = 0;
	struct bin_id a, b;
	struct bincache *c = bincache__new(sizeof(struct val), 8);
	struct val *v;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0123456789", 10), 10);
	assert_true(id_of(path, &a));
	v = bincache__get(c, &a, inspect, &calls);
	assert_int_equal(v->inspected, 1);
	v = bincache__get(c, &a, inspect, &calls);
	assert_int_equal(calls, 1);	/* the same file: not inspected again */
	assert_string_equal(v->tag, "call 1");
	assert_int_equal(bincache__hits(c), 1);
	/* rewritten in place: same inode, a new size */
	assert_int_equal(write(fd, "abc", 3), 3);
	close(fd);
	assert_true(id_of(path, &b));
	assert_int_equal(a.ino, b.ino);
	assert_null(bincache__find(c, &b));
	bincache__get(c, &b, inspect, &calls);
	assert_int_equal(calls, 2);
	/* the same file at another offset */
	b.pgoff = 0x1000;
	assert_null(bincache__find(c, &b));
	/* a process that is gone has no identity */
	assert_false(bin_id__of(&b, 0x7ffffff0, 0x1000, 0x2000, 0));
	unlink(path);
	bincache__free(c);
}

static void test_bound(void **state)
{
	struct bincache *c = bincache__new(sizeof(struct val), 4);
	struct bin_id id[6];
	int calls = 0;

	memset(id, 0, sizeof(id));
	for (int i = 0; i < 6; i++)
		id[i].ino = (uint64_t)i + 1;
	for (int i = 0; i < 4; i++)
		bincache__get(c, &id[i], inspect, &calls);
	assert_non_null(bincache__find(c, &id[0]));	/* 0 is now the most recent */
	bincache__get(c, &id[4], inspect, &calls);	/* evicts 1, the least recent */
	assert_int_equal(bincache__count(c), 4);
	assert_null(bincache__find(c, &id[1]));
	assert_non_null(bincache__find(c, &id[0]));
	assert_non_null(bincache__find(c, &id[2]));
	/* add over an entry cached: zeroed for the caller to fill again */
	struct val *v = bincache__add(c, &id[2]);

	assert_int_equal(v->inspected, 0);
	assert_int_equal(bincache__count(c), 4);
	bincache__free(c);
	bincache__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
