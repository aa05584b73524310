/* V8's layout and data formats (see node_proc.h): the offsets of one V8 version, from its
 * postmortem metadata where the binary has it; the decoders of source position tables,
 * line ends and scope infos; reading strings and instance types out of the process. */
#include "runtimes/node_proc.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "util/strbuf.h"

#define MAX_IOV 64
#define MAX_CONS_DEPTH 8

size_t nd_read_spans(pid_t pid, const struct nd_span *spans, size_t n)
{
	struct iovec local[MAX_IOV], remote[MAX_IOV];
	size_t done = 0, whole_total = 0;

	while (done < n) {
		size_t k = 0;
		while (k < MAX_IOV && done + k < n) {
			const struct nd_span *sp = &spans[done + k];
			local[k] = (struct iovec){ sp->out, sp->len };
			remote[k] = (struct iovec){ (void *)(uintptr_t)sp->addr, sp->len };
			k++;
		}
		ssize_t got = process_vm_readv(pid, local, k, remote, k, 0);
		size_t whole = 0, want = 0;
		for (; whole < k && got >= (ssize_t)(want + spans[done + whole].len); whole++)
			want += spans[done + whole].len;
		whole_total += whole;
		/* the span that stopped the read is zeroed and skipped: the next go on */
		if (whole < k) {
			memset(spans[done + whole].out, 0, spans[done + whole].len);
			whole++;
		}
		done += whole;
	}
	return whole_total;
}

int nd_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	if (addr < 4096)
		return -EFAULT;
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* The values the metadata lacks or has wrong, per V8 version, each checked against a
 * live process of that node (docs/agent.md says how). Other versions are refused until
 * their values are checked the same way. */
static int known_values(struct nd_layout *l, int major, int minor)
{
	/* V8 11.3 (Node 20), checked against a live node 20.20 */
	static const struct nd_layout v11_3 = {
		.fp_context = -8, .fp_function = -16, .fp_bytecode_array = -32,
		.fp_bytecode_offset = -40, .ft_entry = 1, .ft_construct_entry = 2,
		.map_instance_type = 12,
		.t_jsfunction_first = 2066, .t_jsfunction_last = 2066 + 15,
		.t_sfi = 262, .t_scope_info = 261, .t_script = 167, .t_code = 245,
		.t_fixed_array = 175, .t_first_nonstring = 128,
		.jsf_shared = 24, .jsf_code = 48,
		.sfi_name_or_scope_info = 16, .sfi_script_or_debug_info = 32,
		.sfi_function_data = 8,
		.script_name = 16, .script_source = 8, .script_line_ends = 56,
		/* Code (the former CodeDataContainer): the instructions are elsewhere */
		.code_deopt_data = 16, .code_positions = 24, .code_entry = 40, .code_size = 56,
		.code_flags = 48, .code_kind_mask = 0xf, .kind_baseline = 11, .kind_maglev = 12,
		.kind_turbofan = 13,
		.is_header = 16,
		.deopt_inlined_count = 1, .deopt_literals = 2, .deopt_inlining_positions = 7,
		.deopt_sfi = 6, .deopt_sfi_wrapper = -1,
		.ba_positions = 32, .ba_header = 54,
		.str_length = 12, .seq_chars = 16, .cons_first = 16, .cons_second = 24,
		.thin_actual = 16, .ext_data = 24,
		.scope_flags = 8, .scope_nr_context_locals = 24, .scope_first_vars = 32,
		.fa_length = 8, .fa_data = 16,
	};
	/* V8 10.2 (Node 18: Debian bookworm's libnode108 18.20.4), checked against a live
	 * node 18.20.4: the Code object holds its instructions after a 128-byte header
	 * (v8dbg_class_Code__instruction_start__uintptr_t); its deoptimization data and
	 * source positions, which the metadata lacks, at 16 and 24; the rest as 11.3 */
	static const struct nd_layout v10_2 = {
		.fp_context = -8, .fp_function = -16, .fp_bytecode_array = -32,
		.fp_bytecode_offset = -40, .ft_entry = 1, .ft_construct_entry = 2,
		.map_instance_type = 12,
		.t_jsfunction_first = 2065, .t_jsfunction_last = 2065 + 15,
		.t_sfi = 257, .t_scope_info = 256, .t_script = 170, .t_code = 240,
		.t_fixed_array = 179, .t_first_nonstring = 128,
		.jsf_shared = 24, .jsf_code = 48,
		.sfi_name_or_scope_info = 16, .sfi_script_or_debug_info = 32,
		.sfi_function_data = 8,
		.script_name = 16, .script_source = 8, .script_line_ends = 56,
		.code_deopt_data = 16, .code_positions = 24, .code_header = 128, .code_size = 40,
		.code_flags = 48, .code_kind_mask = 0xf, .kind_baseline = 11, .kind_maglev = 12,
		.kind_turbofan = 13,
		.deopt_inlined_count = 1, .deopt_literals = 2, .deopt_inlining_positions = 7,
		.deopt_sfi = 6, .deopt_sfi_wrapper = -1,
		.ba_positions = 32, .ba_header = 56,
		.str_length = 12, .seq_chars = 16, .cons_first = 16, .cons_second = 24,
		.thin_actual = 16, .ext_data = 24,
		.scope_flags = 8, .scope_nr_context_locals = 24, .scope_first_vars = 32,
		.fa_length = 8, .fa_data = 16,
	};

	/* V8 12.4 (Node 22: the official 22.23.5), checked against a live node 22.23.5: the
	 * JSFunction's code before its shared info; the Code's deoptimization data and
	 * source positions (trusted arrays) at 8 and 16; the InstructionStream's header 32
	 * bytes; the BytecodeArray's positions at 24; TurboFan's code kind 12 (the kinds
	 * lost JS_TO_JS_FUNCTION; Maglev, off by default in Node 22, is the one before) */
	static const struct nd_layout v12_4 = {
		.fp_context = -8, .fp_function = -16, .fp_bytecode_array = -32,
		.fp_bytecode_offset = -40, .ft_entry = 1, .ft_construct_entry = 2,
		.map_instance_type = 12,
		.t_jsfunction_first = 2066, .t_jsfunction_last = 2066 + 15,
		.t_sfi = 274, .t_scope_info = 272, .t_script = 167, .t_code = 206,
		.t_fixed_array = 174, .t_first_nonstring = 128,
		.jsf_shared = 32, .jsf_code = 24,
		.sfi_name_or_scope_info = 16, .sfi_script_or_debug_info = 32,
		.sfi_function_data = -1,
		.script_name = 16, .script_source = 8, .script_line_ends = 56,
		.code_deopt_data = 8, .code_positions = 16, .code_entry = 40, .code_size = 52,
		.code_flags = 48, .code_kind_mask = 0xf, .kind_baseline = 10, .kind_maglev = 11,
		.kind_turbofan = 12,
		.is_header = 32,
		.deopt_inlined_count = 1, .deopt_literals = 2, .deopt_inlining_positions = 7,
		.deopt_sfi = 6, .deopt_sfi_wrapper = -1,
		.ba_positions = 24, .ba_header = 64,
		.str_length = 12, .seq_chars = 16, .cons_first = 16, .cons_second = 24,
		.thin_actual = 16, .ext_data = 24,
		.scope_flags = 8, .scope_nr_context_locals = 24, .scope_first_vars = 32,
		.fa_length = 8, .fa_data = 16,
	};

	/* V8 13.6 (Node 24: the official 24.22.3), checked against a live node 24.22.3: the
	 * JSFunction holds a dispatch handle instead of its code (leaptiering), so an
	 * optimized frame's code is found from its pc; the SharedFunctionInfo's name and
	 * script at 24 and 40; the Code's flags and size at 52 and 56; the deoptimization
	 * data's literals at 3 and inlining positions at 8; the ScopeInfo's position info
	 * before its locals (at 32, 40). Maglev (kind 11) is on by default. */
	static const struct nd_layout v13_6 = {
		.fp_context = -8, .fp_function = -16, .fp_bytecode_array = -32,
		.fp_bytecode_offset = -40, .ft_entry = 1, .ft_construct_entry = 2,
		.map_instance_type = 12,
		.t_jsfunction_first = 2065, .t_jsfunction_last = 2065 + 15,
		.t_sfi = 282, .t_scope_info = 280, .t_script = 167, .t_code = 187,
		.t_fixed_array = 205, .t_first_nonstring = 128,
		.jsf_shared = 32, .jsf_code = -1,
		.sfi_name_or_scope_info = 24, .sfi_script_or_debug_info = 40,
		.sfi_function_data = -1,
		.script_name = 16, .script_source = 8, .script_line_ends = 56,
		.code_deopt_data = 8, .code_positions = 16, .code_entry = 40, .code_size = 56,
		.code_flags = 52, .code_kind_mask = 0xf, .kind_baseline = 10, .kind_maglev = 11,
		.kind_turbofan = 12,
		.is_header = 32,
		.deopt_inlined_count = 1, .deopt_literals = 3, .deopt_inlining_positions = 8,
		.deopt_sfi = 7, .deopt_sfi_wrapper = 8,	/* a SharedFunctionInfoWrapper there */
		.ba_positions = 24, .ba_header = 64,
		.str_length = 12, .seq_chars = 16, .cons_first = 16, .cons_second = 24,
		.thin_actual = 16, .ext_data = 24,
		.scope_flags = 8, .scope_nr_context_locals = 24, .scope_first_vars = 48,
		.fa_length = 8, .fa_data = 16,
	};

	if (major == 13 && minor == 6)
		*l = v13_6;
	else if (major == 12 && minor == 4)
		*l = v12_4;
	else if (major == 11 && minor == 3)
		*l = v11_3;
	else if (major == 10 && minor == 2)
		*l = v10_2;
	else
		return -ENOTSUP;
	return 0;
}

static void take(bool (*get)(void *, const char *, int32_t *), void *ctx, const char *name,
		 int *field)
{
	int32_t v;

	if (get && get(ctx, name, &v) && v > -4096 && v < 4096)
		*field = v;
}

static void take_type(bool (*get)(void *, const char *, int32_t *), void *ctx, const char *name,
		      uint16_t *field)
{
	int32_t v;

	if (get && get(ctx, name, &v) && v > 0 && v < 0x10000)
		*field = (uint16_t)v;
}

int nd_layout__fill(struct nd_layout *l, int major, int minor, int build,
		    bool (*get)(void *ctx, const char *name, int32_t *out), void *ctx)
{
	if (known_values(l, major, minor) < 0)
		return -ENOTSUP;
	l->major = major;
	l->minor = minor;
	l->build = build;
	take(get, ctx, "v8dbg_off_fp_context_or_frame_type", &l->fp_context);
	take(get, ctx, "v8dbg_off_fp_function", &l->fp_function);
	take(get, ctx, "v8dbg_off_fp_bytecode_array", &l->fp_bytecode_array);
	take(get, ctx, "v8dbg_off_fp_bytecode_offset", &l->fp_bytecode_offset);
	take(get, ctx, "v8dbg_frametype_EntryFrame", &l->ft_entry);
	take(get, ctx, "v8dbg_frametype_ConstructEntryFrame", &l->ft_construct_entry);
	take(get, ctx, "v8dbg_class_Map__instance_type__uint16_t", &l->map_instance_type);
	take(get, ctx, "v8dbg_class_JSFunction__shared__SharedFunctionInfo", &l->jsf_shared);
	take(get, ctx, "v8dbg_class_SharedFunctionInfo__name_or_scope_info__Object",
	     &l->sfi_name_or_scope_info);
	take(get, ctx, "v8dbg_class_SharedFunctionInfo__script_or_debug_info__HeapObject",
	     &l->sfi_script_or_debug_info);
	take(get, ctx, "v8dbg_class_SharedFunctionInfo__function_data__Object",
	     &l->sfi_function_data);
	take(get, ctx, "v8dbg_class_Script__name__Object", &l->script_name);
	take(get, ctx, "v8dbg_class_Script__source__Object", &l->script_source);
	take(get, ctx, "v8dbg_class_Script__line_ends__Object", &l->script_line_ends);
	take(get, ctx, "v8dbg_class_Code__deoptimization_data__FixedArray", &l->code_deopt_data);
	take(get, ctx, "v8dbg_class_Code__source_position_table__ByteArray", &l->code_positions);
	take(get, ctx, "v8dbg_class_BytecodeArray__data__uintptr_t", &l->ba_header);
	take(get, ctx, "v8dbg_class_Code__instruction_size__int", &l->code_size);
	take(get, ctx, "v8dbg_class_Code__flags__uint32_t", &l->code_flags);
	if (l->code_header > 0)
		take(get, ctx, "v8dbg_class_Code__instruction_start__uintptr_t", &l->code_header);
	else
		take(get, ctx, "v8dbg_class_InstructionStream__instruction_start__uintptr_t",
		     &l->is_header);
	/* the names 12.4 gives the same fields */
	take(get, ctx, "v8dbg_class_JSFunction__code__Tagged_Code_", &l->jsf_code);
	take(get, ctx, "v8dbg_class_SharedFunctionInfo__name_or_scope_info__Tagged_Object_",
	     &l->sfi_name_or_scope_info);
	take(get, ctx, "v8dbg_class_SharedFunctionInfo__script__Tagged_HeapObject_",
	     &l->sfi_script_or_debug_info);
	take(get, ctx, "v8dbg_class_Code__instruction_start__Address", &l->code_entry);
	take(get, ctx, "v8dbg_class_SharedFunctionInfo__name_or_scope_info__Tagged_NameOrScopeInfoT_",
	     &l->sfi_name_or_scope_info);
	take(get, ctx, "v8dbg_DeoptimizationDataInlinedFunctionCountIndex", &l->deopt_inlined_count);
	take(get, ctx, "v8dbg_DeoptimizationDataLiteralArrayIndex", &l->deopt_literals);
	take(get, ctx, "v8dbg_DeoptimizationDataInliningPositionsIndex",
	     &l->deopt_inlining_positions);
	take(get, ctx, "v8dbg_DeoptimizationDataSharedFunctionInfoIndex", &l->deopt_sfi);
	take(get, ctx, "v8dbg_DeoptimizationDataWrappedSharedFunctionInfoIndex", &l->deopt_sfi);
	take(get, ctx, "v8dbg_class_SharedFunctionInfoWrapper__shared_info__Tagged_SharedFunctionInfo_",
	     &l->deopt_sfi_wrapper);
	take(get, ctx, "v8dbg_class_String__length__int32_t", &l->str_length);
	take(get, ctx, "v8dbg_class_SeqOneByteString__chars__char", &l->seq_chars);
	take(get, ctx, "v8dbg_class_ConsString__first__String", &l->cons_first);
	take(get, ctx, "v8dbg_class_ConsString__second__String", &l->cons_second);
	take(get, ctx, "v8dbg_class_ThinString__actual__String", &l->thin_actual);
	take(get, ctx, "v8dbg_class_FixedArrayBase__length__SMI", &l->fa_length);
	take(get, ctx, "v8dbg_class_FixedArray__data__uintptr_t", &l->fa_data);
	take_type(get, ctx, "v8dbg_type_JSFunction__JS_FUNCTION_TYPE", &l->t_jsfunction_first);
	take_type(get, ctx, "v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", &l->t_sfi);
	take_type(get, ctx, "v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE", &l->t_scope_info);
	take_type(get, ctx, "v8dbg_type_Script__SCRIPT_TYPE", &l->t_script);
	take_type(get, ctx, "v8dbg_type_Code__CODE_TYPE", &l->t_code);
	take_type(get, ctx, "v8dbg_type_FixedArray__FIXED_ARRAY_TYPE", &l->t_fixed_array);
	take_type(get, ctx, "v8dbg_FirstNonstringType", &l->t_first_nonstring);
	l->t_jsfunction_last = (uint16_t)(l->t_jsfunction_first + 15);
	/* the metadata is the binary's: a field past what the reader reads of its object
	 * (or before it) is refused, not read out of bounds */
	const struct { int off, size, room; } f[] = {
		{ l->jsf_shared, 8, ND_JSF_READ }, { l->jsf_code, 8, ND_JSF_READ },
		{ l->sfi_name_or_scope_info, 8, ND_SFI_READ },
		{ l->sfi_script_or_debug_info, 8, ND_SFI_READ },
		{ l->code_entry, 8, ND_CODE_READ }, { l->code_size, 4, ND_CODE_READ },
		{ l->code_flags, 4, ND_CODE_READ }, { l->code_deopt_data, 8, ND_CODE_READ },
		{ l->code_positions, 8, ND_CODE_READ }, { l->ba_positions, 8, ND_BA_READ },
		{ l->map_instance_type, 2, 16 }, { l->script_name, 8, 64 },
		{ l->script_source, 8, 64 }, { l->script_line_ends, 8, 64 },
		{ l->str_length, 4, 32 }, { l->cons_first, 8, 32 }, { l->cons_second, 8, 32 },
		{ l->thin_actual, 8, 32 }, { l->ext_data, 8, 32 },
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (!(l->jsf_code < 0 && f[i].off == l->jsf_code) &&
		    (f[i].off < 0 || f[i].off + f[i].size > f[i].room))
			return -ENOTSUP;
	if (l->sfi_function_data + 8 > ND_SFI_READ)	/* unknown (< 0) is allowed */
		return -ENOTSUP;
	if (l->deopt_sfi >= 16 || l->deopt_sfi_wrapper >= 64)	/* the data's first 16 are read */
		return -ENOTSUP;
	if (l->code_header < 0 || l->code_header > 128 || l->is_header < 0 || l->is_header > 128)
		return -ENOTSUP;
	return 0;
}

/* Reads one VLQ integer (7 bits a byte, zigzag sign) at *i. Returns false at the end or
 * on an overlong one. */
static bool vlq(const uint8_t *b, size_t len, size_t *i, int64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t c;

	do {
		if (*i >= len || shift > 63)
			return false;
		c = b[(*i)++];
		v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	} while (c & 0x80);
	*out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
	return true;
}

/* One unsigned VLQ (7 bits a byte, low first, high bit: more) at *i. */
static bool uvlq(const uint8_t *b, size_t len, size_t *i, uint32_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t c;

	do {
		if (*i >= len || shift > 28)
			return false;
		c = b[(*i)++];
		v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	} while (c & 0x80);
	if (v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* The size of the bytecode at b[off] with its Wide or ExtraWide prefix (which the debug
 * break prefixes mirror), 0 when it runs past len or the table does not know it. */
static uint32_t bytecode_size(const uint8_t (*sizes)[256], uint32_t nr_sizes, const uint8_t *b,
			      uint32_t len, uint32_t off)
{
	uint32_t scale = 0, size, at = off;

	if (b[at] <= 3) {	/* Wide, ExtraWide, DebugBreakWide, DebugBreakExtraWide */
		scale = b[at] == 0 || b[at] == 2 ? 1 : 2;
		if (++at >= len)
			return 0;
	}
	if (b[at] >= nr_sizes || !(size = sizes[scale][b[at]]))
		return 0;
	size += at - off;
	return size <= len - off ? size : 0;
}

uint32_t nd_decode_baseline(const uint8_t *table, size_t table_len, const uint8_t *bytecodes,
			    uint32_t nr_bytes, const uint8_t (*sizes)[256], uint32_t nr_sizes,
			    uint32_t code_size, uint32_t *pc_end, uint64_t *bc_off)
{
	size_t i = 0;
	uint32_t n = 0, end = 0, d;
	int64_t bc = -1;	/* the prologue's */

	for (uint32_t off = 0;;) {
		if (!uvlq(table, table_len, &i, &d) || d > code_size - end)
			return 0;
		end += d;
		pc_end[n] = end;
		bc_off[n++] = (uint64_t)bc;
		if (off == nr_bytes)
			break;
		uint32_t size = bytecode_size(sizes, nr_sizes, bytecodes, nr_bytes, off);
		if (!size)
			return 0;
		bc = off;
		off += size;
	}
	return i == table_len ? n : 0;	/* every entry used, every bytecode given one */
}

uint32_t nd_decode_positions(const uint8_t *b, size_t len, uint32_t *pc_off, uint64_t *pos,
			     uint32_t max)
{
	int64_t code = -1, p = 0, dc, dp;
	size_t i = 0;
	uint32_t n = 0;

	while (n < max && vlq(b, len, &i, &dc) && vlq(b, len, &i, &dp)) {
		/* the sign of the code delta says whether the entry is a statement */
		if (dc > INT32_MAX || dc < -(int64_t)INT32_MAX || dp > (1ll << 48) ||
		    dp < -(1ll << 48) || p > (1ll << 50) || p < -(1ll << 50))
			break;	/* not a table */
		code += dc >= 0 ? dc : -(dc + 1);
		p += dp;
		if (code == -1)
			continue;	/* bytecode's function entry (kFunctionEntryBytecodeOffset) */
		if (code < 0 || code > UINT32_MAX)
			break;
		if (n && code < pc_off[n - 1])
			break;	/* not ascending: not a table */
		pc_off[n] = (uint32_t)code;
		pos[n++] = (uint64_t)p;
	}
	return n;
}

int32_t nd_pos_offset(uint64_t pos)
{
	return (int32_t)((pos >> 1) & 0x3fffffff) - 1;
}

uint32_t nd_pos_inlining(uint64_t pos)
{
	return (uint32_t)((pos >> 31) & 0xffff);
}

uint32_t nd_line_of(const uint32_t *ends, uint32_t nr, int32_t off)
{
	uint32_t lo = 0, hi = nr;

	if (!ends || off < 0)
		return 0;
	while (lo < hi) {	/* the first line end at or after off */
		uint32_t mid = lo + (hi - lo) / 2;
		if (ends[mid] < (uint32_t)off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nr ? lo + 1 : 0;
}

int nd_scope_name_slot(const struct nd_layout *l, const uint8_t *b, size_t len)
{
	if ((size_t)l->scope_nr_context_locals + 8 > len)
		return -1;
	uint64_t v = nd_rd64(b, (size_t)l->scope_nr_context_locals);
	if (!nd_is_smi(v) || nd_smi(v) < 0 || nd_smi(v) > 100000)
		return -1;
	int64_t n = nd_smi(v);
	/* the names inline up to 75 locals, else one hash table; then their infos */
	int64_t off = l->scope_first_vars + 8 * ((n < 75 ? n : 1) + n);
	return off + 8 <= (int64_t)len ? (int)off : -1;
}

int nd_instance_type(struct runtime_proc *rp, uint64_t v)
{
	uint64_t map;
	uint16_t t;

	if (!nd_is_heap(v) || nd_read(rp->pid, nd_untag(v), &map, 8) < 0 || !nd_is_heap(map) ||
	    nd_read(rp->pid, nd_untag(map) + (uint64_t)rp->l.map_instance_type, &t, 2) < 0)
		return -1;
	return t;
}

static void add_chars(struct strbuf *sb, const uint8_t *c, size_t n, bool two)
{
	for (size_t i = 0; i < n; i++) {
		unsigned ch = two ? (unsigned)c[2 * i] | (unsigned)c[2 * i + 1] << 8 : c[i];
		char out = (ch >= 0x20 && ch < 0x7f) || ch == '\n' ? (char)ch : '?';
		strbuf_add(sb, &out, 1);
	}
}

/* Appends the string at v to sb, at most max - sb->len bytes. */
static bool string_into(struct runtime_proc *rp, uint64_t v, struct strbuf *sb, size_t max,
			int depth)
{
	const struct nd_layout *l = &rp->l;
	int t = nd_instance_type(rp, v);
	uint8_t hdr[32];
	int32_t len;

	if (t < 0 || t >= l->t_first_nonstring || depth > MAX_CONS_DEPTH ||
	    nd_read(rp->pid, nd_untag(v), hdr, sizeof(hdr)) < 0)
		return false;
	memcpy(&len, hdr + l->str_length, 4);
	if (len < 0)
		return false;
	bool two = !(t & 8);
	size_t want = sb->len >= max ? 0 : max - sb->len;
	size_t n = (size_t)len < want ? (size_t)len : want;
	uint64_t data;

	switch (t & 7) {
	case 0:		/* sequential */
		data = nd_untag(v) + (uint64_t)l->seq_chars;
		break;
	case 2:		/* external: the resource's cached data */
		data = nd_rd64(hdr, (size_t)l->ext_data);
		break;
	case 1:		/* cons */
		return string_into(rp, nd_rd64(hdr, (size_t)l->cons_first), sb, max, depth + 1) &&
		       string_into(rp, nd_rd64(hdr, (size_t)l->cons_second), sb, max, depth + 1);
	case 5:		/* thin */
		return string_into(rp, nd_rd64(hdr, (size_t)l->thin_actual), sb, max, depth + 1);
	default:	/* sliced: not read */
		return false;
	}
	if (!n)
		return true;
	uint8_t *buf = xmalloc(n * (two ? 2 : 1));
	bool ok = nd_read(rp->pid, data, buf, n * (two ? 2 : 1)) == 0;
	if (ok)
		add_chars(sb, buf, n, two);
	free(buf);
	return ok;
}

char *nd_read_string(struct runtime_proc *rp, uint64_t v, size_t max)
{
	struct strbuf sb = STRBUF_INIT;

	if (!string_into(rp, v, &sb, max, 0)) {
		strbuf_release(&sb);
		return NULL;
	}
	char *s = xstrdup(sb.buf);
	strbuf_release(&sb);
	return s;
}
