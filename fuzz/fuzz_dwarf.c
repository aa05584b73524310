/* DWARF call frame information of an ELF image (unwind/fde.h): the FDE ranges of its
 * .eh_frame and .debug_frame, then the rows of the first FDEs, as the unwinder builds
 * its tables from a binary. */
#include "fuzz.h"

#include <gelf.h>

#include "unwind/fde.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fde_list l = { 0 };
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	char *image;
	Elf *elf;

	if (size < 64)
		return 0;
	image = fuzz_cstr(data, size);	/* libelf may read the image in place */
	elf_version(EV_CURRENT);
	elf = elf_memory(image, size);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".eh_frame"))
			fde_list_add(&l, elf, scn, true);
		else if (!strcmp(name, ".debug_frame"))
			fde_list_add(&l, elf, scn, false);
	}
	Dwarf_CFI *cfi = l.n ? dwarf_getcfi_elf(elf) : NULL;
	for (size_t i = 0; cfi && i < l.n && i < 32; i++) {
		struct fde_rows rv = { 0 };
		fde_compile(cfi, l.v[i].lo & ~0xfffull, l.v[i].lo, l.v[i].hi, &rv);
		fde_compile(cfi, l.v[i].lo & ~0xfffull, l.v[i].lo, l.v[i].hi, NULL);
		free(rv.v);
	}
	if (cfi)
		dwarf_cfi_end(cfi);
out:
	fde_list_release(&l);
	if (elf)
		elf_end(elf);
	free(image);
	return 0;
}
