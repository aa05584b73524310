/* The Ruby, PHP and Node.js frame decoders (runtimes/ruby_layout.h, php_layout.h,
 * node_proc.h) on bytes as a target process's memory would hold them: Ruby's succinct
 * line index, PHP's zend_string and zend_function fingerprint, under every layout the
 * tables have, V8's source position tables and scope infos. The first byte picks the
 * decoder and the version. */
#include "fuzz.h"

#include "runtimes/node_proc.h"
#include "runtimes/php_layout.h"
#include "runtimes/ruby_layout.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int rb[][2] = { { 2, 7 }, { 3, 0 }, { 3, 1 }, { 3, 2 }, { 3, 3 }, { 3, 4 } };
	static const int php[][2] = { { 7, 4 }, { 8, 0 }, { 8, 1 }, { 8, 2 }, { 8, 3 }, { 8, 4 } };
	uint32_t pos, entries;

	if (size < 9)
		return 0;
	pos = (uint32_t)data[1] | (uint32_t)data[2] << 8 | (uint32_t)data[3] << 16;
	entries = (uint32_t)data[4] | (uint32_t)data[5] << 8 | (uint32_t)data[6] << 16;
	if ((data[0] & 3) == 2 && (data[0] & 4)) {
		static uint32_t pc[1024];
		static uint64_t p[1024];
		struct nd_layout l;
		if (nd_layout__fill(&l, 11, 3, 244, NULL, NULL))
			return 0;
		uint32_t n = nd_decode_positions(data + 7, size - 7, pc, p, 1024);
		for (uint32_t i = 0; i < n; i++)
			nd_line_of(pc, n, nd_pos_offset(p[i]) + (int32_t)nd_pos_inlining(p[i]));
		nd_scope_name_slot(&l, data + 7, size - 7);
		/* a bytecode offset table after the bytecodes, sized by the first bytes */
		static uint8_t sizes[3][256];
		uint32_t nb = pos % (uint32_t)(size - 7 + 1);
		for (int s = 0; s < 3; s++)
			for (int b = 0; b < 256; b++)
				sizes[s][b] = (uint8_t)(1 + (b * (s + 1)) % 9);
		size_t tl = size - 7 - nb < 1024 ? size - 7 - nb : 1024;	/* pc's room */
		nd_decode_baseline(data + 7 + nb, tl, data + 7, nb, sizes, 256, entries, pc, p);
	} else if (data[0] & 1) {
		struct rb_layout l;
		int major, minor;
		size_t off, len;
		if (rb_layout__for_version(rb[(data[0] >> 1) % 6][0], rb[(data[0] >> 1) % 6][1], &l))
			return 0;
		rb_layout__succ_span(pos, &off, &len);
		rb_layout__succ_index(data + 7, size - 7, pos, entries);
		rb_layout__parse_version((const char *)data + 7, size - 7, &major, &minor);
	} else {
		struct php_layout l;
		struct php_fn_print f;
		struct strbuf s = STRBUF_INIT;
		char ver[32];
		int major, minor;
		if (php_layout__for_version(php[(data[0] >> 1) % 6][0], php[(data[0] >> 1) % 6][1], &l))
			return 0;
		php_layout__string(&l, data + 7, size - 7, &s);
		if (!php_layout__fn_print(&l, data + 7, size - 7, &f))
			php_layout__line(&f, data[1] & 1, pos);
		php_layout__parse_version((const char *)data + 7, size - 7, &major, &minor, ver,
					  sizeof(ver));
		strbuf_release(&s);
	}
	return 0;
}
