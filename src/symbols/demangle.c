#include "symbols/demangle.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* From libstdc++ (linked with -lstdc++): the Itanium C++ ABI demangler. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Rust legacy names demangle as C++ into "a::b::h0123456789abcdef" with $-escapes such
 * as "$LT$" and "$u7b$" in the path components. */
static bool is_rust_hash(const char *s, size_t len)
{
	size_t i;

	if (len != 19 || s[0] != ':' || s[1] != ':' || s[2] != 'h')
		return false;
	for (i = 3; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static const struct {
	const char *esc;
	char c;
} rust_escapes[] = {
	{ "$SP$", '@' }, { "$BP$", '*' }, { "$RF$", '&' }, { "$LT$", '<' }, { "$GT$", '>' },
	{ "$LP$", '(' }, { "$RP$", ')' }, { "$C$", ',' },
};

/* Appends a Rust legacy path with its escapes decoded; false when it is not one. */
static bool append_rust(const char *d, struct strbuf *out)
{
	size_t len = strlen(d), i, n, start = out->len;

	if (len < 19 || !is_rust_hash(d + len - 19, 19))
		return false;
	len -= 19;
	for (i = 0; i < len;) {
		/* rustc writes a component that starts with '$' as "_$" */
		if (d[i] == '_' && i + 1 < len && d[i + 1] == '$' &&
		    (i == 0 || (i >= 2 && d[i - 1] == ':' && d[i - 2] == ':'))) {
			i++;
			continue;
		}
		if (d[i] == '$') {
			bool done = false;

			for (n = 0; n < sizeof(rust_escapes) / sizeof(rust_escapes[0]); n++) {
				size_t el = strlen(rust_escapes[n].esc);

				if (i + el <= len && !memcmp(d + i, rust_escapes[n].esc, el)) {
					strbuf_addch(out, rust_escapes[n].c);
					i += el;
					done = true;
					break;
				}
			}
			if (!done && i + 2 < len && d[i + 1] == 'u') {
				char *end;
				unsigned long cp = strtoul(d + i + 2, &end, 16);

				if (*end == '$' && end > d + i + 2 && cp >= 0x20 && cp < 0x7f) {
					strbuf_addch(out, (char)cp);
					i = (size_t)(end - d) + 1;
					done = true;
				}
			}
			if (!done) {
				strbuf_setlen(out, start);
				return false;
			}
		} else if (d[i] == '.' && i + 1 < len && d[i + 1] == '.') {
			strbuf_addstr(out, "::");	/* ".." stands for "::" inside a component */
			i += 2;
		} else {
			strbuf_addch(out, d[i++]);
		}
	}
	return true;
}

int demangle__append(const char *name, struct strbuf *out)
{
	char *d;
	int status = -1;

	if (name[0] != '_' || name[1] != 'Z') {
		strbuf_addstr(out, name);
		return 0;
	}
	d = __cxa_demangle(name, NULL, NULL, &status);
	if (!d || status != 0) {
		free(d);
		strbuf_addstr(out, name);
		return 0;
	}
	if (!append_rust(d, out))
		strbuf_addstr(out, d);
	free(d);
	return 1;
}
