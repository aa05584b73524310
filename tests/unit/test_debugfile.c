/* symbols/debugfile: finding a separate debug file by build-id and by .gnu_debuglink
 * under a process's root, with real binaries split by objcopy — the file found is the one
 * placed (same inode), a build-id or CRC that does not match is refused, " (deleted)"
 * paths work, a directory is no debug file — and the CRC-32 against its check value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gelf.h>

#include "symbols/debugfile.h"
#include "symtest.h"

static const char prog_c[] = "int main(void) { return 0; }\n";

static int setup(void **state)
{
	tmpdir_make();
	write_file("prog.c", prog_c);
	elf_version(EV_CURRENT);
	return sh("cc -g -Wl,--build-id -o bid prog.c && objcopy --only-keep-debug bid bid.debug &&"
		  " strip --strip-all bid && cc -g -Wl,--build-id -O1 -o other prog.c -DX=1 &&"
		  " objcopy --only-keep-debug other other.debug &&"
		  " cc -g -Wl,--build-id=none -o dl prog.c && objcopy --only-keep-debug dl dl.debug &&"
		  " strip --strip-all dl && objcopy --add-gnu-debuglink=dl.debug dl") ? -1 : 0;
}

static int teardown(void **state)
{
	tmpdir_remove();
	return 0;
}

/* debugfile__open for the binary name in tmpdir, mapped as path in a process whose root
 * is root: the inode of the file found, or the negative errno. */
static long long find(const char *name, const char *root, const char *path)
{
	int fd = open(path_in(name), O_RDONLY | O_CLOEXEC), dfd;
	Elf *e;
	struct stat st;
	long long ret;

	assert_true(fd >= 0);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	dfd = debugfile__open(e, root, path);
	elf_end(e);
	close(fd);
	if (dfd < 0)
		return dfd;
	assert_int_equal(fstat(dfd, &st), 0);
	ret = (long long)st.st_ino;
	close(dfd);
	return ret;
}

static long long inode_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (long long)st.st_ino;
}

static void test_crc32(void **state)
{
	uint32_t crc = 1;
	int fd;

	write_file("check", "123456789");
	fd = open(path_in("check"), O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(debugfile__crc32(fd, &crc), 0);
	assert_int_equal(crc, 0xcbf43926);	/* CRC-32's check value */
	close(fd);
	write_file("empty", "");
	fd = open(path_in("empty"), O_RDONLY);
	assert_int_equal(debugfile__crc32(fd, &crc), 0);
	assert_int_equal(crc, 0);
	close(fd);
}

static void test_build_id(void **state)
{
	char root[600];

	snprintf(root, sizeof(root), "%s", path_in("root"));
	assert_int_equal(sh("id=$(readelf -n bid | awk '/Build ID/ {print $3}') && "
			    "d=root/usr/lib/debug/.build-id/$(echo $id | cut -c1-2) && mkdir -p $d &&"
			    " cp bid.debug $d/$(echo $id | cut -c3-).debug && echo $d/$(echo $id |"
			    " cut -c3-).debug > where"), 0);
	struct strbuf where = STRBUF_INIT;
	assert_int_equal(strbuf_read_file(&where, path_in("where")), 0);
	strbuf_setlen(&where, where.len - 1);
	long long want = inode_of(path_in(where.buf));

	assert_int_equal(find("bid", root, "/usr/bin/bid"), want);
	assert_int_equal(find("bid", NULL, "/usr/bin/bid"), -ENOENT);	/* not on the host */
	/* another binary's debug file under bid's build-id is refused */
	assert_int_equal(sh("cp other.debug %s", where.buf), 0);
	assert_int_equal(find("bid", root, "/usr/bin/bid"), -ENOENT);
	/* and so is a directory */
	assert_int_equal(sh("rm %s && mkdir %s", where.buf, where.buf), 0);
	assert_int_equal(find("bid", root, "/usr/bin/bid"), -ENOENT);
	strbuf_release(&where);
}

static void test_debuglink(void **state)
{
	char root[600];

	snprintf(root, sizeof(root), "%s", path_in("root2"));
	/* <dir>/.debug/<name> under the process's root, also for a deleted binary */
	assert_int_equal(sh("mkdir -p root2/opt/app/.debug && cp dl.debug root2/opt/app/.debug/"), 0);
	long long want = inode_of(path_in("root2/opt/app/.debug/dl.debug"));
	assert_int_equal(find("dl", root, "/opt/app/dl"), want);
	assert_int_equal(find("dl", root, "/opt/app/dl (deleted)"), want);
	assert_int_equal(find("dl", root, "/elsewhere/dl"), -ENOENT);
	/* /usr/lib/debug/<dir>/<name> */
	assert_int_equal(sh("mkdir -p root2/usr/lib/debug/srv && cp dl.debug root2/usr/lib/debug/srv/"),
			 0);
	assert_int_equal(find("dl", root, "/srv/dl"),
			 inode_of(path_in("root2/usr/lib/debug/srv/dl.debug")));
	/* a debug file whose CRC does not match is not used */
	assert_int_equal(sh("printf x >> root2/opt/app/.debug/dl.debug"), 0);
	assert_int_equal(find("dl", root, "/opt/app/dl"), -ENOENT);
	/* a path the process cannot have mapped gives nothing */
	assert_int_equal(find("dl", root, "dl"), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32),
		cmocka_unit_test(test_build_id),
		cmocka_unit_test(test_debuglink),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
