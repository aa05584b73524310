#include "symbols/kallsyms.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An unsized kernel symbol ends at the next one; this bounds the last of a module. */
#define MAX_KSYM_SIZE (256u << 10)

static bool is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/* Symbols that mark the end of a text region rather than start a function. */
static bool is_end_marker(const char *name, size_t len)
{
	return (len == 6 && !memcmp(name, "_etext", 6)) ||
	       (len == 10 && !memcmp(name, "_einittext", 10));
}

int kallsyms__load(struct symtab *t, const char *path)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0, n = 0;
	bool nonzero = false;
	ssize_t len;

	if (!f)
		return -errno;
	while ((len = getline(&line, &cap, f)) > 0) {
		char *end, *name;
		unsigned long long addr = strtoull(line, &end, 16);
		size_t nlen;

		if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
			continue;
		if (!is_text(end[1]))
			continue;
		name = end + 3;
		nlen = strcspn(name, " \t\n");
		if (!nlen)
			continue;
		if (addr)
			nonzero = true;
		if (is_end_marker(name, nlen))
			symtab__add_barrier(t, addr);
		else
			symtab__add(t, addr, 0, name, nlen);
		n++;
	}
	free(line);
	fclose(f);
	if (n && !nonzero) {
		symtab_release(t);
		symtab__finish(t, SYMTAB_FIRST_WINS, 0);
		return -EPERM;
	}
	symtab__finish(t, SYMTAB_FIRST_WINS, MAX_KSYM_SIZE);
	return n > 0x7fffffff ? 0x7fffffff : (int)n;
}
