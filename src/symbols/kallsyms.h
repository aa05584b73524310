/* Kernel function names from /proc/kallsyms: vmlinux and module text symbols. */
#ifndef KILN_SYMBOLS_KALLSYMS_H
#define KILN_SYMBOLS_KALLSYMS_H

#include "symbols/symtab.h"

/* Reads the text symbols (types t, T, w, W) of a kallsyms-format file into t and finishes
 * it; module symbols are named without their "[module]" suffix. t must be freshly
 * initialized. Returns the number of symbols, -EPERM when every address reads as zero
 * (kptr_restrict hides them from us), or another negative errno when path is unreadable. */
int kallsyms__load(struct symtab *t, const char *path);

#endif
