/* Lists the pc range of every FDE of a .eh_frame or .debug_frame section. libdw finds
 * the frame state at a given pc but has no call that lists the FDEs, so this walks the
 * section with dwarf_next_cfi() and decodes each FDE's initial_location per its CIE. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "unwind/fde.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

#define ENC_OMIT 0xff
#define ENC_BAD 0xfe

static uint64_t read_uleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (*p < end) {
		uint8_t b = *(*p)++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static int64_t read_sleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;

	while (*p < end) {
		b = *(*p)++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* Reads a value of DW_EH_PE format (enc & 0x0f). Returns false when it does not fit. */
static bool read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t *v)
{
	size_t size;
	const uint8_t *q = *p;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: case DW_EH_PE_udata8: case DW_EH_PE_sdata8: size = 8; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: size = 4; break;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: size = 2; break;
	case DW_EH_PE_uleb128: *v = read_uleb(p, end); return *p <= end;
	case DW_EH_PE_sleb128: *v = (uint64_t)read_sleb(p, end); return *p <= end;
	default: return false;
	}
	if ((size_t)(end - q) < size)
		return false;
	if (size == 8) {
		memcpy(v, q, 8);
	} else if (size == 4) {
		uint32_t x;
		memcpy(&x, q, 4);
		*v = (enc & 0x08) ? (uint64_t)(int64_t)(int32_t)x : x;
	} else {
		uint16_t x;
		memcpy(&x, q, 2);
		*v = (enc & 0x08) ? (uint64_t)(int64_t)(int16_t)x : x;
	}
	*p = q + size;
	return true;
}

/* The FDE pointer encoding a CIE declares with its 'R' augmentation. */
static uint8_t cie_encoding(const Dwarf_CIE *cie, bool eh_frame)
{
	const char *aug = cie->augmentation ? cie->augmentation : "";
	const uint8_t *p = cie->augmentation_data, *end = p + cie->augmentation_data_size;
	uint8_t enc = DW_EH_PE_absptr;

	if (!eh_frame || aug[0] != 'z')
		return aug[0] == '\0' ? DW_EH_PE_absptr : ENC_BAD;
	if (!p)
		return ENC_BAD;
	for (const char *c = aug + 1; *c; c++) {
		if (*c == 'L') {
			p++;
		} else if (*c == 'R') {
			if (p >= end)
				return ENC_BAD;
			enc = *p++;
		} else if (*c == 'P') {
			uint64_t ignored;

			if (p >= end)
				return ENC_BAD;
			uint8_t penc = *p++;
			if (!read_encoded(&p, end, penc & 0x0f, &ignored))
				return ENC_BAD;
		} else if (*c != 'S' && *c != 'B') {
			break;	/* unknown: 'R' usually came first */
		}
		if (p > end)
			return ENC_BAD;
	}
	return enc;
}

static void push(struct fde_list *l, uint64_t lo, uint64_t hi)
{
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 256;
		l->v = xrealloc(l->v, l->alloc * sizeof(*l->v));
	}
	l->v[l->n].lo = lo;
	l->v[l->n].hi = hi;
	l->n++;
}

int fde_list_add(struct fde_list *l, Elf *elf, Elf_Scn *scn, bool eh_frame)
{
	GElf_Shdr shdr;
	Elf_Data *data;
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);

	if (!ident || !gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
		return -EINVAL;
	if ((shdr.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return -EINVAL;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || data->d_size == 0)
		return -ENODATA;

	struct hashmap *cies = hashmap__new();	/* CIE offset -> encoding + 1 */
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	int added = 0;

	while (off < data->d_size && dwarf_next_cfi(ident, data, eh_frame, off, &next, &e) == 0) {
		if (next <= off)
			break;
		if (dwarf_cfi_cie_p(&e)) {
			off = next;
			continue;
		}
		Dwarf_Off cie_off = e.fde.CIE_pointer;
		void **slot = hashmap__find(cies, &cie_off, sizeof(cie_off));
		uintptr_t enc1;

		if (slot) {
			enc1 = (uintptr_t)*slot;
		} else {
			Dwarf_CFI_Entry c;
			Dwarf_Off cnext;
			bool created;

			if (dwarf_next_cfi(ident, data, eh_frame, cie_off, &cnext, &c) == 0 &&
			    dwarf_cfi_cie_p(&c))
				enc1 = (uintptr_t)cie_encoding(&c.cie, eh_frame) + 1;
			else
				enc1 = ENC_BAD + 1;
			*hashmap__insert(cies, &cie_off, sizeof(cie_off), &created) = (void *)enc1;
		}
		uint8_t enc = (uint8_t)(enc1 - 1);
		const uint8_t *p = e.fde.start, *end = e.fde.end;
		uint64_t lo, len;
		uint64_t field = shdr.sh_addr + (uint64_t)(p - (const uint8_t *)data->d_buf);

		off = next;
		if (enc == ENC_BAD || enc == ENC_OMIT || (enc & DW_EH_PE_indirect))
			continue;
		if (!read_encoded(&p, end, enc, &lo) || !read_encoded(&p, end, enc & 0x0f, &len))
			continue;
		if ((enc & 0x70) == DW_EH_PE_pcrel)
			lo += field;
		else if ((enc & 0x70) != DW_EH_PE_absptr)
			continue;	/* datarel/textrel: not used for FDEs on x86_64 */
		if (len == 0 || lo + len < lo)
			continue;
		push(l, lo, lo + len);
		added++;
	}
	hashmap__free(cies);
	return added;
}

void fde_list_release(struct fde_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}
