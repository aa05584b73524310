/* The standalone flamegraph page: self-contained, hostile frame names cannot break out of
 * the data, skip_frames drops the prefix, the diff page carries both columns. The page is
 * rendered in a real browser by tests/e2e/flamegraph_html.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/html.h"
#include "ui/assets.h"

static char *render(const struct profile *a, const struct profile *b,
		    const struct html_options *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(b ? html__write_diff(f, a, b, o) : html__write(f, a, o), 0);
	fclose(f);
	return buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void test_self_contained(void **state)
{
	struct profile *p = profile__new();
	const char *s1[] = { "0", "", "py", "main", "work (app.py:3)_[p]" };
	const char *s2[] = { "0", "", "</script><script>alert(1)</script>", "<!--", "a&b\"c\\" };
	struct html_options o = { .title = "<b>t</b>", .skip_frames = 2 };
	char *page;

	profile__add_names(p, s1, 5, 7);
	profile__add_names(p, s2, 5, 3);
	page = render(p, NULL, &o);
	/* nothing to fetch: no URL at all, no external script or stylesheet */
	assert_null(strstr(page, "http://"));
	assert_null(strstr(page, "https://"));
	assert_null(strstr(page, "src="));
	assert_null(strstr(page, "<link"));
	/* three script elements (data, renderer, boot) and nothing a name could close */
	assert_int_equal(count(page, "<script"), 3);
	assert_int_equal(count(page, "</script"), 3);
	assert_null(strstr(page, "<!--"));
	assert_non_null(strstr(page, "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"));
	assert_non_null(strstr(page, "a\\u0026b\\\"c\\\\"));
	assert_non_null(strstr(page, "<title>&lt;b&gt;t&lt;/b&gt;</title>"));
	/* the renderer is embedded and the data uses it */
	assert_non_null(strstr(page, asset__find("flamegraph.js")->data));
	assert_non_null(strstr(page, "KilnFlame.fromStacks"));
	/* the skipped prefix (index, container) is gone; the process name stays */
	assert_non_null(strstr(page, "\"names\":[\"py\",\"main\",\"work (app.py:3)_[p]\""));
	assert_null(strstr(page, "\"counts2\":"));
	free(page);
	profile__free(p);
}

static void test_prefix_encoding(void **state)
{
	struct profile *p = profile__new();
	const char *a[] = { "m", "x", "y" }, *b[] = { "m", "x", "z" }, *c[] = { "m", "a" };
	char *page;

	profile__add_names(p, a, 3, 1);
	profile__add_names(p, b, 3, 2);
	profile__add_names(p, c, 2, 4);
	page = render(p, NULL, NULL);
	/* ids m0 x1 y2 z3 a4; sorted by name: m;a, m;x;y, m;x;z, each sharing a prefix */
	assert_non_null(strstr(page, "\"stacks\":[[0,0,4],\n[1,1,2],\n[2,3]],\n\"counts\":[4,1,2]"));
	assert_non_null(strstr(page, "<title>kiln flamegraph</title>"));
	free(page);
	profile__free(p);
}

static void test_diff(void **state)
{
	struct profile *a = profile__new(), *b = profile__new();
	const char *x[] = { "m", "x" }, *y[] = { "m", "y" };
	char *page;

	profile__add_names(a, x, 2, 10);
	profile__add_names(b, y, 2, 5);
	profile__add_names(b, x, 2, 1);
	page = render(a, b, NULL);
	assert_non_null(strstr(page, "\"counts\":[10,0]"));
	assert_non_null(strstr(page, "\"counts2\":[1,5]"));
	assert_non_null(strstr(page, "A: 10 samples, B: 6 samples"));
	free(page);
	profile__free(a);
	profile__free(b);
}

static void test_empty_profile(void **state)
{
	struct profile *p = profile__new();
	char *page = render(p, NULL, NULL);

	assert_non_null(strstr(page, "\"stacks\":[],\n\"counts\":[]"));
	free(page);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_contained),
		cmocka_unit_test(test_prefix_encoding),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_empty_profile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
