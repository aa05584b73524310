/* Regular expressions from queries (util/re.h): what users write compiles and matches
 * whole strings; the inputs that made glibc's regcomp take seconds and gigabytes
 * (issue 19: chained repetition, nested counted repetition of nullable groups) compile
 * within the budget or are refused with a message, and match in linear time (the
 * classic exponential-backtracking subjects are answered). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "server/selector.h"
#include "store/store.h"
#include "util/re.h"

static void expect(const char *pattern, const char *subject, bool want)
{
	char err[256];
	struct re *re = re__compile(pattern, err, sizeof(err));

	if (!re)
		fail_msg("'%s' did not compile: %s", pattern, err);
	if (re__full_match(re, subject) != want)
		fail_msg("'%s' on '%.40s': expected %s", pattern, subject, want ? "a match" : "none");
	re__free(re);
}

static void test_known_answers(void **state)
{
	expect("web-[0-9]+", "web-12", true);
	expect("web-[0-9]+", "web-12x", false);	/* whole string */
	expect("web-[0-9]+", "xweb-12", false);
	expect("a|b", "b", true);
	expect("a|b", "ab", false);
	expect(".*", "", true);
	expect(".*", "line\nbreak", true);		/* '.' takes a newline, as regcomp did */
	expect("(foo|bar)+baz", "foobarbaz", true);
	expect("[[:alpha:]_]+", "ab_c", true);
	expect("[[:alpha:]_]+", "ab1", false);
	expect("a{2,3}", "aaa", true);
	expect("a{2,3}", "aaaa", false);
	expect("us-(east|west)-[12]", "us-west-2", true);
	expect("\\.", ".", true);
	expect("", "", true);
	expect("", "x", false);
}

static void test_attacks(void **state)
{
	char err[256], subject[4096];
	struct re *re;

	/* issue 19: 4.1 s and 899 MB in regcomp with 20 '+', 3.27 GB with 22 */
	re = re__compile("a++++++++++++++++++++++", err, sizeof(err));
	if (re) {	/* RE2 reads a++ as a possessive-less a+: fine, as long as it is linear */
		memset(subject, 'a', sizeof(subject) - 2);
		subject[sizeof(subject) - 2] = '!';
		subject[sizeof(subject) - 1] = 0;
		assert_false(re__full_match(re, subject));
		subject[sizeof(subject) - 2] = 'a';
		assert_true(re__full_match(re, subject));
		re__free(re);
	} else {
		assert_non_null(strstr(err, "invalid regular expression"));
	}
	/* nested counted repetition of nullable groups: minutes in regcomp; too big here */
	assert_null(re__compile("((((a*){1,32}){1,64}){1,64})", err, sizeof(err)));
	assert_non_null(strstr(err, "invalid regular expression"));
	assert_null(re__compile("((a{1000}){1000}){1000}", err, sizeof(err)));
	/* exponential backtracking subjects: answered (linear time) */
	re = re__compile("(a|aa)*b", err, sizeof(err));
	assert_non_null(re);
	memset(subject, 'a', 3000);
	subject[3000] = 0;
	assert_false(re__full_match(re, subject));
	re__free(re);
	re = re__compile("(([a-z]*[a-z]*){1,20}){1,20}b", err, sizeof(err));
	if (re) {
		assert_false(re__full_match(re, subject));
		re__free(re);
	}
	/* back-references are not RE2 (exponential to match) */
	assert_null(re__compile("(a)\\1", err, sizeof(err)));
	/* invalid syntax keeps a message */
	assert_null(re__compile("(ab", err, sizeof(err)));
	assert_non_null(strstr(err, "(ab"));
	/* too long */
	memset(subject, 'a', RE_MAX_LEN + 1);
	subject[RE_MAX_LEN + 1] = 0;
	assert_null(re__compile(subject, err, sizeof(err)));
	assert_non_null(strstr(err, "longer than"));
	subject[RE_MAX_LEN] = 0;
	re = re__compile(subject, err, sizeof(err));
	assert_non_null(re);
	re__free(re);
	re__free(NULL);
}

/* Through the selector, as a query arrives. */
static void test_selector(void **state)
{
	struct store_query q;
	struct labels l;
	char err[256];

	labels_init(&l);
	store_query_init(&q);
	assert_int_equal(selector__parse(&q, "app.cpu{x=~\"((((a*){1,32}){1,64}){1,64})\"}", false,
					 err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "invalid regular expression"));
	assert_int_equal(selector__parse(&q, "app.cpu{h=~\"web-[0-9]+\",y!~\"a{2}\"}", false, err,
					 sizeof(err)), 0);
	assert_int_equal(q.n, 2);
	labels__set(&l, "h", "web-7");
	assert_true(store_query__matches(&q, &l));
	labels__set(&l, "y", "aa");
	assert_false(store_query__matches(&q, &l));
	store_query_release(&q);
	labels_release(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_answers),
		cmocka_unit_test(test_attacks),
		cmocka_unit_test(test_selector),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
