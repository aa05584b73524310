/* ELF symbol tables from an image (symbols/elf.h: section headers, .symtab/.dynsym,
 * .gnu_debugdata, notes), looked up at a few offsets. */
#include "fuzz.h"

#include "symbols/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_symbols es;
	char err[256];

	elf_symbols_init(&es);
	if (!elf_symbols__load_image(&es, data, size, err, sizeof(err))) {
		uint64_t vaddr;
		for (uint64_t off = 0; off < 4096; off += 512)
			elf_symbols__find(&es, off, &vaddr);
	}
	elf_symbols_release(&es);
	return 0;
}
