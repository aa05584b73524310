/* A small, focused ELF reader for the Python runtime reader: the address of one symbol
 * by name (.dynsym first, then .symtab), bytes of the file at a virtual address, and the
 * lowest PT_LOAD page, which gives the load bias of a mapping. It exists because the
 * Python reader needs a handful of symbols of one binary at attach time; the general
 * per-binary symbol tables live in symbols/ (to be unified once they land).
 *
 * Everything read from the file is untrusted: lookups are bounded by section sizes. */
#ifndef KILN_RUNTIMES_PYTHON_ELF_H
#define KILN_RUNTIMES_PYTHON_ELF_H

#include <stddef.h>
#include <stdint.h>

struct pyelf;

/* Opens the ELF file at path (e.g. "/proc/12/root/usr/lib/libpython3.11.so.1.0").
 * Returns NULL when it cannot be opened or is not a 64-bit ELF file. */
struct pyelf *pyelf__open(const char *path);
/* Accepts NULL. */
void pyelf__free(struct pyelf *e);

/* Finds a defined symbol by exact name in .dynsym, then (unless dynamic_only) in
 * .symtab. Returns 0 and its st_value in *vaddr, or -ENOENT. */
int pyelf__symbol(struct pyelf *e, const char *name, int dynamic_only, uint64_t *vaddr);
/* Copies len bytes at virtual address vaddr from the file's allocated sections (not
 * .bss). Returns 0, or -ENOENT when no section holds the whole range. */
int pyelf__read(struct pyelf *e, uint64_t vaddr, void *buf, size_t len);
/* Load bias of the mapping that maps the file at offset pgoff to address start:
 * start - (p_vaddr of the PT_LOAD at that offset, page aligned). Returns 0, or -ENOENT. */
int pyelf__bias(struct pyelf *e, uint64_t start, uint64_t pgoff, uint64_t *bias);

#endif
