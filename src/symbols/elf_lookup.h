/* Looking things up in one ELF file by name, for the runtime readers (Python's
 * _PyRuntime, its type objects, version strings): the address of a symbol of any type by
 * exact name (.dynsym first, then .symtab), bytes of the file at a virtual address, and the
 * load bias of a mapping. symbols/elf.h, by contrast, gathers a binary's function symbols
 * by address for symbolization.
 *
 * Everything read from the file is untrusted: lookups are bounded by section sizes. */
#ifndef KILN_SYMBOLS_ELF_LOOKUP_H
#define KILN_SYMBOLS_ELF_LOOKUP_H

#include <stddef.h>
#include <stdint.h>

struct elf_lookup;

/* Opens the ELF file at path (e.g. "/proc/12/root/usr/lib/libpython3.11.so.1.0").
 * Returns NULL when it cannot be opened or is not a 64-bit ELF file. */
struct elf_lookup *elf_lookup__open(const char *path);
/* Accepts NULL. */
void elf_lookup__free(struct elf_lookup *e);

/* Finds a defined symbol by exact name in .dynsym, then (unless dynamic_only) in
 * .symtab. Returns 0 and its st_value in *vaddr, or -ENOENT. */
int elf_lookup__symbol(struct elf_lookup *e, const char *name, int dynamic_only, uint64_t *vaddr);
/* The same, also giving the symbol's st_size (an array's bytes) in *size. */
int elf_lookup__object(struct elf_lookup *e, const char *name, int dynamic_only, uint64_t *vaddr,
		       uint64_t *size);
/* Copies len bytes at virtual address vaddr from the file's allocated sections (not
 * .bss). Returns 0, or -ENOENT when no section holds the whole range. */
int elf_lookup__read(struct elf_lookup *e, uint64_t vaddr, void *buf, size_t len);
/* Load bias of the mapping that maps the file at offset pgoff to address start:
 * start - (p_vaddr of the PT_LOAD at that offset, page aligned). Returns 0, or -ENOENT. */
int elf_lookup__bias(struct elf_lookup *e, uint64_t start, uint64_t pgoff, uint64_t *bias);

#endif
