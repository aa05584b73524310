/* The symbols of one ELF binary, gathered once from every source it offers and kept as a
 * sorted table keyed by ELF virtual address:
 *   .symtab; .dynsym; a separate debug file (src/symbols/debugfile.h) when .symtab is
 *   missing; MiniDebugInfo (.gnu_debugdata: an xz-compressed ELF with a .symtab) when
 *   neither is there; Go's .gopclntab (also found without section headers).
 * Function symbols only (STT_FUNC, STT_GNU_IFUNC). A symbol of size 0 extends to the next
 * symbol or to the end of its code section. File offsets (what a mapping gives) turn into
 * virtual addresses through the PT_LOAD program headers. */
#ifndef KILN_SYMBOLS_ELF_H
#define KILN_SYMBOLS_ELF_H

#include <stddef.h>
#include <stdint.h>

#include "symbols/symtab.h"

/* Where the names came from, for tests and debug messages. */
enum elf_source {
	ELF_SRC_SYMTAB = 1 << 0,
	ELF_SRC_DYNSYM = 1 << 1,
	ELF_SRC_DEBUGFILE = 1 << 2,
	ELF_SRC_MINIDEBUG = 1 << 3,
	ELF_SRC_GOPCLNTAB = 1 << 4,
};

struct elf_segment {
	uint64_t offset, filesz, vaddr;
};

struct elf_symbols {
	struct symtab tab;
	struct elf_segment *segs;	/* PT_LOAD headers */
	size_t nr_segs;
	uint8_t build_id[20];
	size_t build_id_len;		/* 0 when the binary has none */
	unsigned sources;		/* enum elf_source bits */
	/* Go: the pc ranges where functions are inlined, each named by their names
	 * outermost first, each followed by '\n' (symbols/goinline.h); empty otherwise */
	struct symtab inl;
	bool go;			/* a Go binary (it has a .gopclntab) */
};

void elf_symbols_init(struct elf_symbols *es);
/* Frees the contents and leaves es as after elf_symbols_init(). */
void elf_symbols_release(struct elf_symbols *es);

/* Reads the symbols of the ELF file open at fd (the caller keeps fd; it is not needed
 * afterwards). path is the file as the process sees it and root the process's root
 * ("/proc/PID/root", or "" for the host): both only serve to find a separate debug file.
 * Returns 0 (possibly with no symbols), -ENOEXEC when fd is not an ELF file, or -EINVAL
 * when it is a corrupt one; es then holds nothing and err (may be NULL) gets the reason. */
int elf_symbols__load(struct elf_symbols *es, int fd, const char *root, const char *path,
		      char *err, size_t errlen);
/* The same for an ELF image in memory (the vDSO). image is copied. */
int elf_symbols__load_image(struct elf_symbols *es, const void *image, size_t size,
			    char *err, size_t errlen);

/* The name of the function at file offset off, or NULL. *vaddr (when not NULL) gets the
 * virtual address off maps to. The name is the raw (mangled) one; it lives as long as es. */
const char *elf_symbols__find(const struct elf_symbols *es, uint64_t off, uint64_t *vaddr);

/* Reads only the GNU build-id of the ELF file at fd (program headers and notes: cheap).
 * Writes at most max bytes to out. Returns its length, or a negative errno (-ENOENT when
 * the file has none, -EINVAL when it is not ELF). */
int elf__build_id(int fd, uint8_t *out, size_t max);

/* The functions inlined at file offset off (Go binaries), outermost first, each followed
 * by '\n', or NULL. Lives as long as es. */
const char *elf_symbols__inlined(const struct elf_symbols *es, uint64_t off);

/* Bytes held. */
size_t elf_symbols__memory(const struct elf_symbols *es);

#endif
