/* The PHP reader on real php processes (Debian's php8.2; skipped when it is not
 * installed): attaching and reading a live stack, --php-proc-filter, a copy whose version
 * string says 9.2 (skipped with the reason), and a php that execs or is killed while it
 * is read. Run under ASan and UBSan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtimes/php_proc.h"
#include "runtimes/registry.h"
#include "runtimes/runtime.h"

/* Starts `php -n -r code` and returns its pid, or -1. */
static pid_t start_php(const char *php, const char *code)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl(php, php, "-n", "-r", code, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void stop_php(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/* Attaches to pid, waiting for its exec to show. */
static struct runtime_proc *attach_when_up(pid_t pid, char *reason)
{
	struct proc_ref p = { pid, pid };
	struct runtime_proc *rp = NULL;

	for (int i = 0; i < 200 && !rp && !reason[0]; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		rp = php_runtime.attach(&p, reason);
	}
	return rp;
}

/* --php-proc-filter: the option, its value in run_arguments and in the runtime's env,
 * and a php process whose name and command line do not match is left alone. */
static void test_proc_filter(void **state)
{
	const char *php = "/usr/bin/php8.2";
	struct option opts[4];
	struct runtime_choices c;
	json_t *obj = json_object();
	char reason[128] = "";

	assert_int_equal(runtime_cli__value_options(opts, 4, 900), 1);
	assert_string_equal(opts[0].name, "php-proc-filter");
	assert_int_equal(opts[0].has_arg, required_argument);
	runtime_choices_init(&c);
	assert_int_equal(runtime_choices__apply_value(&c, 900, 901, "x"), -ENOENT);
	assert_int_equal(runtime_choices__apply_value(&c, 900, 900, NULL), -EINVAL);
	assert_int_equal(runtime_choices__apply_value(&c, 900, 900, "first"), 0);
	assert_int_equal(runtime_choices__apply_value(&c, 900, 900, "^nomatch$"), 0);
	runtime_choices__to_json(&c, obj);
	assert_string_equal(json_string_value(json_object_get(obj, "php_proc_filter")), "^nomatch$");
	json_decref(obj);
	struct runtime_env env = { .mode = "auto", .values = c.values };
	assert_string_equal(runtime_env__value(&env, "php_proc_filter"), "^nomatch$");
	assert_null(runtime_env__value(&env, "other"));
	if (access(php, X_OK) != 0) {
		runtime_choices_release(&c);
		skip();
		return;
	}
	struct runtime_collector *col = php_runtime.start(&env);
	assert_non_null(col);
	pid_t pid = start_php(php, "while (true) usleep(1000);");
	assert_true(pid > 0);
	assert_null(attach_when_up(pid, reason));
	assert_string_equal(reason, "");
	php_runtime.stop(col);
	/* the filter matches the command line */
	c.values[1] = "usleep";
	col = php_runtime.start(&env);
	struct runtime_proc *rp = attach_when_up(pid, reason);
	assert_non_null(rp);
	php_runtime.detach(rp);
	php_runtime.stop(col);
	stop_php(pid);
	runtime_choices_release(&c);
}

/* A php whose version has no layout: skipped with the reason, never read. Debian's php
 * copied with its version string changed to 9.2. */
static void test_unsupported_version(void **state)
{
	const char *php = "/usr/bin/php8.2";
	char copy[] = "/tmp/kiln-test-php.XXXXXX", exe[64], reason[128] = "";
	FILE *in, *out;
	size_t n, cap = 64 << 20, len;
	char *buf, *at;

	if (access(php, X_OK) != 0 || !mkdtemp(copy)) {
		skip();
		return;
	}
	snprintf(exe, sizeof(exe), "%s/php", copy);
	in = fopen(php, "rb");
	assert_non_null(in);
	buf = malloc(cap);
	len = fread(buf, 1, cap, in);
	fclose(in);
	at = memmem(buf, len, "X-Powered-By: PHP/8.", 20);
	assert_non_null(at);
	at[18] = '9';
	out = fopen(exe, "wb");
	assert_non_null(out);
	n = fwrite(buf, 1, len, out);
	fclose(out);
	free(buf);
	assert_int_equal(n, len);
	chmod(exe, 0755);
	pid_t pid = start_php(exe, "while (true) usleep(1000);");
	assert_true(pid > 0);
	assert_null(attach_when_up(pid, reason));
	assert_non_null(strstr(reason, "unsupported php 9.2."));
	/* what was learnt about the file is forgotten: the same answer, looked up again */
	php_attach__forget();
	php_attach__forget();
	reason[0] = 0;
	assert_null(attach_when_up(pid, reason));
	assert_non_null(strstr(reason, "unsupported php 9.2."));
	stop_php(pid);
	unlink(exe);
	rmdir(copy);
}

/* Whether the frame name at f (up to ';' or the end) is one the exec test's script can
 * show. */
static bool script_frame(const char *f)
{
	static const char *const ok[] = { "<eval> (Command line code:", "nap (Command line code:",
					  "usleep_[php]", "microtime_[php]", "pcntl_exec_[php]",
					  "[unknown]_[php]" };

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strncmp(f, ok[i], strlen(ok[i])))
			return true;
	return false;
}

/* A php that execs another program, and one that is killed, while they are read: frames
 * of the PHP script or none (an error), never a crash or a frame made of the new image's
 * bytes. */
static void test_exec_and_exit_mid_read(void **state)
{
	const char *php = "/usr/bin/php8.2";
	char reason[128] = "";
	struct strbuf sb = STRBUF_INIT;
	struct rt_frame fr[64];
	int php_stacks = 0, after = 0;

	if (access(php, X_OK) != 0) {
		skip();
		return;
	}
	pid_t pid = start_php(php, "function nap() { $t = microtime(true) + 0.3; "
				   "while (microtime(true) < $t) usleep(100); } nap(); "
				   "pcntl_exec('/bin/sleep', ['10']);");
	struct runtime_proc *rp = attach_when_up(pid, reason);
	assert_non_null(rp);
	for (int i = 0; i < 4000; i++) {
		int n = php_runtime.sample(rp, pid, fr, 64);
		char exe[64], target[256];
		ssize_t len;
		strbuf_reset(&sb);
		for (int k = 0; k < n; k++) {
			strbuf_addch(&sb, ';');
			php_runtime.frame_name(rp, &fr[k], &sb);
		}
		if (n > 0) {
			/* only the script's own functions, or frames it could not read */
			for (const char *f = sb.buf + 1; f; f = strchr(f, ';') ? strchr(f, ';') + 1 : NULL)
				if (!script_frame(f))
					fail_msg("a frame not of the script: '%s'", sb.buf);
			php_stacks++;
		}
		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
		len = readlink(exe, target, sizeof(target) - 1);
		if (len > 0 && !memcmp(target, "/usr/bin/sleep", 14) && ++after > 200)
			break;
		usleep(500);
	}
	assert_true(php_stacks > 0);
	assert_true(after > 0);	/* sampled the new image too */
	php_runtime.detach(rp);
	/* killed while read */
	reason[0] = 0;
	stop_php(pid);
	pid = start_php(php, "while (true) usleep(100);");
	rp = attach_when_up(pid, reason);
	assert_non_null(rp);
	kill(pid, SIGKILL);
	for (int i = 0; i < 100; i++)
		assert_true(php_runtime.sample(rp, pid, fr, 64) <= 64);
	int status;
	waitpid(pid, &status, 0);
	assert_true(php_runtime.sample(rp, pid, fr, 64) < 0);	/* gone */
	php_runtime.detach(rp);
	strbuf_release(&sb);
}

/* Debian's php, when installed: attach, read its version, and see its stack. */
static void test_real_php(void **state)
{
	const char *php = "/usr/bin/php8.2";
	char reason[128] = "";
	struct strbuf sb = STRBUF_INIT;
	struct rt_frame fr[64];
	bool seen = false;
	int status;

	if (access(php, X_OK) != 0) {
		skip();
		return;
	}
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(php, php, "-n", "-r", "function nap() { while (true) usleep(1000); } nap();",
		      (char *)NULL);
		_exit(127);
	}
	struct proc_ref p = { pid, pid };
	struct runtime_proc *rp = NULL;
	for (int i = 0; i < 200 && !seen; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		if (!rp)
			rp = php_runtime.attach(&p, reason);
		if (!rp)
			continue;
		int n = php_runtime.sample(rp, pid, fr, 64);
		strbuf_reset(&sb);
		for (int k = 0; k < n; k++) {
			strbuf_addch(&sb, ';');
			php_runtime.frame_name(rp, &fr[k], &sb);
		}
		seen = strstr(sb.buf, ";nap (Command line code:1)_[php];usleep_[php]") != NULL;
	}
	assert_non_null(rp);
	assert_int_equal(strncmp(rp->version, "8.2.", 4), 0);
	if (!seen)
		print_error("last stack: %s\n", sb.buf);
	assert_true(seen);
	php_runtime.detach(rp);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	/* the process is gone: attaching fails quietly */
	assert_null(php_runtime.attach(&p, reason));
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_php),
		cmocka_unit_test(test_proc_filter),
		cmocka_unit_test(test_unsupported_version),
		cmocka_unit_test(test_exec_and_exit_mid_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
