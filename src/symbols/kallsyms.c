#include "symbols/kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/strbuf.h"

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

/* Parses one line "ffffffff81000000 T name\t[module]" into t. Returns whether it was a
 * text symbol, and whether its address is not 0 (hidden by kptr_restrict). */
static bool parse_line(struct symtab *t, const char *line, const char *end, bool *nonzero)
{
	uint64_t addr = 0;
	const char *p = line, *name;
	size_t nlen;

	for (; p < end && *p != ' '; p++) {
		unsigned c = (unsigned char)*p, v;
		if (c - '0' < 10)
			v = c - '0';
		else if ((c | 0x20) - 'a' < 6)
			v = (c | 0x20) - 'a' + 10;
		else
			return false;
		addr = addr << 4 | v;
	}
	if (p == line || end - p < 4 || p[2] != ' ' || !is_text(p[1]))
		return false;
	name = p + 3;
	for (nlen = 0; name + nlen < end && name[nlen] != ' ' && name[nlen] != '\t'; nlen++)
		;
	if (!nlen)
		return false;
	if (addr)
		*nonzero = true;
	if (is_end_marker(name, nlen))
		symtab__add_barrier(t, addr);
	else
		symtab__add(t, addr, 0, name, nlen);
	return true;
}

int kallsyms__load(struct symtab *t, const char *path)
{
	/* Read in large blocks: /proc/kallsyms is ~100,000 lines, a few MB. */
	size_t cap = 256 << 10, have = 0, n = 0;
	char *buf;
	bool nonzero = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	buf = xmalloc(cap);
	for (;;) {
		ssize_t got = read(fd, buf + have, cap - have);
		char *line = buf, *nl;

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (have)	/* a last line without a newline */
				n += parse_line(t, buf, buf + have, &nonzero);
			break;
		}
		have += (size_t)got;
		while ((nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
			n += parse_line(t, line, nl, &nonzero);
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == cap) {	/* a line longer than the buffer: not kallsyms */
			have = 0;
		}
	}
	free(buf);
	close(fd);
	if (n && !nonzero) {
		symtab_release(t);
		symtab__finish(t, SYMTAB_FIRST_WINS, 0);
		return -EPERM;
	}
	symtab__finish(t, SYMTAB_FIRST_WINS, MAX_KSYM_SIZE);
	return n > 0x7fffffff ? 0x7fffffff : (int)n;
}
