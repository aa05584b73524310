/* Regular expressions from outside (query selectors), matched in linear time by RE2.
 * glibc's regcomp copies a repeated sub-expression once per repetition, so chained or
 * nested repetition (`a++++++++++++++++++++`, `((a*){1,32}){1,64}`) costs exponential
 * time and memory to compile, and back-references exponential time to match: a single
 * query could take gigabytes. RE2 compiles within a memory budget and matches in time
 * linear in the subject; its syntax is Go's and Pyroscope's (RE2), a superset of POSIX
 * extended for what selectors use, without back-references. */
#ifndef KILN_UTIL_RE_H
#define KILN_UTIL_RE_H

#include <stdbool.h>
#include <stddef.h>

/* The longest pattern accepted, in bytes. */
#define RE_MAX_LEN 1024
/* Memory budget of one compiled expression (RE2's max_mem), in bytes. */
#define RE_MAX_MEM (2u << 20)

struct re;

/* Compiles pattern (RE2 syntax, '.' also matching a newline) to match whole strings.
 * Returns it (free with re__free), or NULL with a message in err: too long, invalid, or
 * too large for RE_MAX_MEM. Never allocates more than about RE_MAX_MEM for it. */
struct re *re__compile(const char *pattern, char *err, size_t errlen);

/* True when all of s matches re. Time linear in strlen(s). */
bool re__full_match(const struct re *re, const char *s);

/* Frees re; NULL is fine. */
void re__free(struct re *re);

#endif
