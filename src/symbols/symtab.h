/* A sorted table of named address ranges: the one lookup structure behind ELF symbols, Go
 * pclntab functions, perf maps and kallsyms.
 *
 *   struct symtab t;
 *   symtab_init(&t);
 *   symtab__add(&t, 0x1000, 0x20, "main", 4);      any order
 *   symtab__finish(&t, SYMTAB_FIRST_WINS, 0);       sort, dedupe, size the unsized
 *   const char *name = symtab__find(&t, 0x1010, NULL);
 *   symtab_release(&t);
 *
 * Each entry costs 16 bytes plus its name. Lookups are binary searches. */
#ifndef KILN_SYMBOLS_SYMTAB_H
#define KILN_SYMBOLS_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym {
	uint64_t addr;
	uint32_t size;		/* 0 only for a "barrier" that ends the entry before it */
	uint32_t name;		/* offset into names, or SYM_BARRIER */
};

#define SYM_BARRIER UINT32_MAX

struct symtab {
	struct sym *syms;
	size_t nr, alloc;
	size_t sorted;		/* entries already in order from the last finish() */
	char *names;		/* NUL-terminated names back to back */
	size_t names_len, names_alloc;
	bool finished;
};

/* Which entry survives when two start at the same address: ELF sources are added best
 * first; perf maps append newer code for a reused address last. */
enum symtab_dup { SYMTAB_FIRST_WINS, SYMTAB_LAST_WINS };

void symtab_init(struct symtab *t);
/* Frees the contents and leaves t as after symtab_init(). */
void symtab_release(struct symtab *t);

/* Adds a range. size 0 means "unknown": finish() extends it to the next entry. name need
 * not be NUL-terminated; names longer than 4 KiB are cut. Ignored once finished. */
void symtab__add(struct symtab *t, uint64_t addr, uint64_t size, const char *name, size_t len);
/* Adds a barrier at addr: an unsized entry before it stops there, and addresses from it up
 * to the next entry resolve to nothing (the end of a code section, for example). */
void symtab__add_barrier(struct symtab *t, uint64_t addr);

/* Drops the entries added after the table had nr entries (symtab__count()), for a
 * source found malformed halfway. Ignored once finished. */
void symtab__rollback(struct symtab *t, size_t nr);

/* Sorts and deduplicates the table and gives every unsized entry the distance to the next
 * one, at most max_unsized bytes (0: no limit; the last unsized entry then gets 4 KiB).
 * Afterwards the table is read-only. */
void symtab__finish(struct symtab *t, enum symtab_dup dup, uint64_t max_unsized);

/* Makes a finished table accept symtab__add() again (a perf map that grew); the next
 * finish() sorts the new entries and merges them with the old in linear time. Sizes
 * given to unsized entries stay. */
void symtab__reopen(struct symtab *t);

/* The name of the entry covering addr, or NULL. When start is not NULL it gets the
 * entry's start address. The name lives as long as the table. */
const char *symtab__find(const struct symtab *t, uint64_t addr, uint64_t *start);

/* Number of entries (barriers included) and bytes held. */
size_t symtab__count(const struct symtab *t);
size_t symtab__memory(const struct symtab *t);

#endif
