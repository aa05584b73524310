/* Opening the ELF file behind a mapping, as the sampled process sees it, and its separate
 * debug file. Internal to src/unwind/.
 *
 * The unwinder keeps a binary's CFI open for as long as it compiles FDEs lazily, so a
 * mapping of the file would turn a truncation on disk (a package upgrade that rewrites a
 * library in place) into SIGBUS. It reads instead what it needs (the ELF and section
 * headers, notes, .gnu_debuglink and the CFI sections) with pread into a private
 * anonymous copy of the file's size: untouched pages cost no memory, and later changes to
 * the file cannot reach the copy. No descriptor stays open. */
#ifndef KILN_UNWIND_BINARY_H
#define KILN_UNWIND_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <libelf.h>

#include "symbols/mapping.h"

struct unwind_elf {
	Elf *elf;
	void *map;		/* the sparse copy of a file, or NULL */
	size_t map_len;
	void *mem;		/* the vDSO image copy, or NULL */
	size_t bytes;		/* memory the copy holds (pages read) */
	/* the file when it was read, to tell whether it changed since */
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_ns;
	/* read lazily (unwind_elf_open_lazy): .eh_frame left unread, at this file offset */
	bool lazy;
	uint64_t eh_off, eh_len;
};

/* Reads the binary of mapping m of process p through binary__open() (map_files, the
 * process's root, the host); "[vdso]" is read from kiln's own vDSO (the kernel maps the
 * same image in every process). Returns 0, or a negative errno (-ENOENT for memory with
 * no file, -ENOEXEC for a file that is not a 64-bit ELF, -EIO for a short read). Close
 * with unwind_elf_close(). */
int unwind_elf_open(struct unwind_elf *b, const struct proc_ref *p, const struct mapping *m);

/* The same, but leaves .eh_frame unread when .eh_frame_hdr's search table is there (libdw
 * then reads only the entries a lookup finds through it), and the Go sections: what
 * compiling more FDEs of a table already listed needs, without copying the whole section
 * (megabytes for a large binary) each time a closed CFI is read again. Read the entries
 * with unwind_elf_read_eh() before libdw looks at them. */
int unwind_elf_open_lazy(struct unwind_elf *b, const struct proc_ref *p, const struct mapping *m);

/* Reads into lazy b the .eh_frame entry at offset off of the section and the CIE it
 * names, from the file of mapping m of p, when that file is still the one b was read from
 * (device, inode, size, mtime). Returns 0 (also for b not lazy), or a negative errno:
 * -ESTALE for another file, -EIO for an entry that does not fit the section. */
int unwind_elf_read_eh(struct unwind_elf *b, const struct proc_ref *p, const struct mapping *m,
		       uint64_t off);

/* Reads the separate debug file of binary b (mapping m of p) when it holds .debug_frame,
 * found by debugfile__open() (build-id directory, .gnu_debuglink with its CRC) under the
 * process's root and on the host. Returns 0, or -ENOENT. */
int unwind_elf_open_debug(struct unwind_elf *d, const struct unwind_elf *b,
			  const struct proc_ref *p, const struct mapping *m);

/* True when a and b were read from the same unchanged file: device, inode, size and
 * modification time (two vDSO copies are the same). */
bool unwind_elf_same_file(const struct unwind_elf *a, const struct unwind_elf *b);

/* Releases b (accepts one already closed, or one whose open failed). */
void unwind_elf_close(struct unwind_elf *b);

#endif
