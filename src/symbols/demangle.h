/* Demangling of C++ (Itanium ABI, through libstdc++'s __cxa_demangle) and Rust legacy
 * symbol names (the same mangling plus a hash and $-escapes, tidied here). */
#ifndef KILN_SYMBOLS_DEMANGLE_H
#define KILN_SYMBOLS_DEMANGLE_H

#include "util/strbuf.h"

/* Appends the demangled form of name to out, or name itself when it is not mangled or
 * does not demangle. Returns 1 when it demangled, 0 when name was copied as is. */
int demangle__append(const char *name, struct strbuf *out);

#endif
