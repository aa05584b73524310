/* The runtime registry as kiln record uses it: the options it declares, the modes each
 * accepts, the extra flags, and the run_arguments it writes (keys, values and order that
 * gProfiler's tools and the e2e tests read). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/registry.h"

#define BASE 1000

static struct option opts[64];
static size_t nr_opts;

/* The val of long option name, or -1. */
static int val_of(const char *name)
{
	for (size_t i = 0; i < nr_opts; i++)
		if (!strcmp(opts[i].name, name))
			return opts[i].val;
	return -1;
}

static void test_options(void **state)
{
	static const char *const want[] = { "python-mode", "java-mode", "no-java",
					    "java-collect-thread-names", "nodejs-mode", "ruby-mode",
					    "no-ruby", "php-mode", "dotnet-mode" };

	nr_opts = runtime_cli__options(opts, 64, BASE);
	assert_int_equal(nr_opts, runtime_cli__nr_options());
	assert_int_equal(nr_opts, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < nr_opts; i++) {
		assert_string_equal(opts[i].name, want[i]);
		assert_int_equal(opts[i].val, BASE + (int)i);
		assert_int_equal(opts[i].has_arg,
				 strstr(want[i], "-mode") ? required_argument : no_argument);
	}
	/* a table too small is filled, not overrun */
	assert_int_equal(runtime_cli__options(opts, 3, BASE), 3);
	nr_opts = runtime_cli__options(opts, 64, BASE);
}

static void test_modes_and_flags(void **state)
{
	struct runtime_choices c;

	runtime_choices_init(&c);
	assert_true(runtime_choices__enabled(&c, "python"));
	assert_true(runtime_choices__enabled(&c, "java"));
	assert_true(runtime_choices__enabled(&c, "nodejs"));	/* SPEC: auto, now that it has a reader */
	assert_true(runtime_choices__enabled(&c, "php"));	/* SPEC: auto, now that it has a reader */
	assert_true(runtime_choices__enabled(&c, "unknown"));
	assert_null(c.given[0]);

	assert_int_equal(runtime_choices__apply(&c, BASE, val_of("python-mode"), "py-spy"), 0);
	assert_string_equal(runtime_choices__mode(&c, "python"), "py-spy");
	assert_int_equal(runtime_choices__apply(&c, BASE, val_of("python-mode"), "rbspy"), -EINVAL);
	assert_string_equal(runtime_choices__mode(&c, "python"), "py-spy");
	assert_int_equal(runtime_choices__apply(&c, BASE, val_of("python-mode"), "none"), 0);
	assert_false(runtime_choices__enabled(&c, "python"));
	assert_int_equal(runtime_choices__apply(&c, BASE, val_of("java-mode"), "ap"), 0);
	assert_true(runtime_choices__enabled(&c, "java"));
	assert_int_equal(runtime_choices__apply(&c, BASE, val_of("no-java"), NULL), 0);
	assert_string_equal(runtime_choices__mode(&c, "java"), "disabled");
	assert_false(runtime_choices__enabled(&c, "java"));
	assert_int_equal(runtime_choices__apply(&c, BASE, val_of("java-collect-thread-names"),
						NULL), 0);
	assert_string_equal(c.given[0], "java_collect_thread_names");
	assert_null(c.given[1]);
	assert_int_equal(runtime_choices__apply(&c, BASE, val_of("nodejs-mode"), "attach-maps"), 0);
	assert_int_equal(runtime_choices__apply(&c, BASE, val_of("nodejs-mode"), "auto"), 0);
	assert_int_equal(runtime_choices__apply(&c, BASE, val_of("nodejs-mode"), "rbspy"), -EINVAL);
	assert_int_equal(runtime_choices__apply(&c, BASE, val_of("dotnet-mode"), "dotnet-trace"), 0);
	assert_int_equal(runtime_choices__apply(&c, BASE, BASE - 1, "auto"), -ENOENT);
	assert_int_equal(runtime_choices__apply(&c, BASE, BASE + (int)nr_opts, "auto"), -ENOENT);

	struct runtime_choices copy;
	runtime_choices_copy(&copy, &c);
	assert_string_equal(runtime_choices__mode(&copy, "dotnet"), "dotnet-trace");
	assert_string_equal(copy.given[0], "java_collect_thread_names");
	runtime_choices_release(&copy);
	runtime_choices_copy(&copy, NULL);
	assert_string_equal(runtime_choices__mode(&copy, "java"), "auto");
	runtime_choices_release(&copy);
	runtime_choices_release(&c);
}

/* The run_arguments keys of the runtimes, in gProfiler's order, with their defaults. */
static void test_run_arguments(void **state)
{
	static const char *const keys[] = { "python_mode", "java_mode",
					    "java_collect_thread_names", "nodejs_mode", "ruby_mode",
					    "php_mode", "dotnet_mode" };
	struct runtime_choices c;
	json_t *obj = json_object();
	char *text;

	runtime_choices_init(&c);
	assert_int_equal(runtime_choices__apply(&c, BASE, val_of("no-ruby"), NULL), 0);
	runtime_choices__to_json(&c, obj);
	assert_int_equal(json_object_size(obj), sizeof(keys) / sizeof(keys[0]));
	text = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_string_equal(text, "{\"python_mode\":\"auto\",\"java_mode\":\"auto\","
				  "\"java_collect_thread_names\":false,\"nodejs_mode\":\"auto\","
				  "\"ruby_mode\":\"disabled\",\"php_mode\":\"auto\","
				  "\"dotnet_mode\":\"auto\"}");
	free(text);
	json_decref(obj);
	runtime_choices_release(&c);
}

/* Every declared runtime with a reader is in the ops list, and the other way round. */
static void test_decls_match_ops(void **state)
{
	const struct runtime_ops *const *ops = runtime_registry__ops();
	size_t with_ops = 0, nr_ops = 0;

	for (const struct runtime_decl *d = runtime_decls; d->name; d++) {
		assert_non_null(d->modes);
		assert_non_null(d->default_mode);
		if (!d->ops)
			continue;
		assert_string_equal(d->ops->name, d->name);
		assert_ptr_equal(ops[with_ops], d->ops);	/* in declaration order */
		with_ops++;
	}
	while (ops[nr_ops])
		nr_ops++;
	assert_int_equal(with_ops, nr_ops);
	assert_true(nr_ops >= 2);	/* python and java */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_modes_and_flags),
		cmocka_unit_test(test_run_arguments),
		cmocka_unit_test(test_decls_match_ops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
