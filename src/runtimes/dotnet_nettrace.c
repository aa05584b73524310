/* The NetTrace decoder (dotnet_nettrace.h). Layout (PerfView's NetTraceFormat_v5.md,
 * checked against a .NET Core 3.1 stream): "Nettrace", a length-prefixed
 * "!FastSerialization.1", then objects
 *   BeginObject(5) BeginObject(5) Null(1) i32 version, i32 minReader, i32 len, name,
 *   EndObject(6), body, EndObject(6)
 * ended by Null(1). The Trace object's body is fixed (48 bytes); every other object is a
 * block: i32 size, padding to 4 bytes of the stream, size bytes. */
#include "runtimes/dotnet_nettrace.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

#define MAX_BLOCK (64u << 20)
#define MAX_IPS 4096
#define TAG_NULL 1
#define TAG_BEGIN 5
#define TAG_END 6
#define TRACE_BODY 48
#define SAMPLE_PROVIDER "Microsoft-DotNETCore-SampleProfiler"

enum meta_kind { META_OTHER, META_SAMPLE, META_METHOD };

struct stack {
	uint32_t id;
	size_t off;	/* into stack_ips */
	uint32_t n;
};

struct nettrace {
	struct nettrace_sink sink;
	unsigned char *buf;
	size_t len, cap;
	uint64_t consumed;	/* stream offset of buf[0] */
	bool header_done, failed, ended;
	uint8_t *meta;		/* meta_kind per metadata id */
	size_t nr_meta;
	struct stack *stacks;	/* ids ascending; cleared at each sequence point */
	size_t nr_stacks, alloc_stacks;
	uint64_t *stack_ips;
	size_t nr_ips, alloc_ips;
	struct nettrace_stats st;
};

/* A bounded reader over one block's bytes. */
struct rd {
	const unsigned char *p, *end;
	bool bad;
};

static bool rd_need(struct rd *r, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return false;
	}
	return true;
}

static uint64_t rd_le(struct rd *r, size_t n)
{
	uint64_t v = 0;

	if (!rd_need(r, n))
		return 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static uint64_t rd_var(struct rd *r)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (!rd_need(r, 1))
			return 0;
		unsigned char b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

/* Reads a NUL-terminated UTF-16LE string into out (ASCII, '?' for others). */
static void rd_utf16z(struct rd *r, char *out, size_t size)
{
	size_t n = 0;

	for (;;) {
		uint16_t c = (uint16_t)rd_le(r, 2);
		if (r->bad || !c)
			break;
		if (n + 1 < size)
			out[n++] = c < 0x80 ? (char)c : '?';
	}
	out[n] = '\0';
}

struct nettrace *nettrace__new(const struct nettrace_sink *sink)
{
	struct nettrace *nt = xcalloc(1, sizeof(*nt));

	if (sink)
		nt->sink = *sink;
	return nt;
}

void nettrace__free(struct nettrace *nt)
{
	if (!nt)
		return;
	free(nt->buf);
	free(nt->meta);
	free(nt->stacks);
	free(nt->stack_ips);
	free(nt);
}

void nettrace__stats(const struct nettrace *nt, struct nettrace_stats *out)
{
	*out = nt->st;
}

static void set_meta(struct nettrace *nt, uint64_t id, enum meta_kind kind)
{
	if (!id || id > 1u << 20)
		return;
	if (id >= nt->nr_meta) {
		size_t n = (size_t)id + 64;
		nt->meta = xrealloc(nt->meta, n);
		memset(nt->meta + nt->nr_meta, META_OTHER, n - nt->nr_meta);
		nt->nr_meta = n;
	}
	nt->meta[id] = (uint8_t)kind;
}

static enum meta_kind meta_of(const struct nettrace *nt, uint64_t id)
{
	return id < nt->nr_meta ? (enum meta_kind)nt->meta[id] : META_OTHER;
}

/* A metadata event's payload: i32 id, provider, i32 event id, name, ... */
static void decode_metadata(struct nettrace *nt, struct rd *r)
{
	char provider[96];
	uint32_t id = (uint32_t)rd_le(r, 4), event;
	enum meta_kind kind = META_OTHER;

	rd_utf16z(r, provider, sizeof(provider));
	event = (uint32_t)rd_le(r, 4);
	if (r->bad)
		return;
	if (!strcmp(provider, SAMPLE_PROVIDER) && event == 0)
		kind = META_SAMPLE;
	else if ((!strcmp(provider, "Microsoft-Windows-DotNETRuntime") ||
		  !strcmp(provider, "Microsoft-Windows-DotNETRuntimeRundown")) &&
		 (event == 143 || event == 144))	/* Method{Load,DCStart,DCEnd}Verbose */
		kind = META_METHOD;
	set_meta(nt, id, kind);
}

static void decode_method(struct nettrace *nt, struct rd *r)
{
	char ns[256], name[128];
	struct nettrace_method m;

	rd_le(r, 8);	/* MethodID */
	rd_le(r, 8);	/* ModuleID */
	m.start = rd_le(r, 8);
	m.size = (uint32_t)rd_le(r, 4);
	rd_le(r, 4);	/* MethodToken */
	rd_le(r, 4);	/* MethodFlags */
	rd_utf16z(r, ns, sizeof(ns));
	rd_utf16z(r, name, sizeof(name));
	if (r->bad || !m.size)
		return;
	m.ns = ns;
	m.name = name;
	nt->st.methods++;
	if (nt->sink.method)
		nt->sink.method(nt->sink.ctx, &m);
}

static const struct stack *find_stack(const struct nettrace *nt, uint32_t id)
{
	size_t lo = 0, hi = nt->nr_stacks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (nt->stacks[mid].id == id)
			return &nt->stacks[mid];
		if (nt->stacks[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void decode_sample(struct nettrace *nt, uint64_t tid, uint32_t stack_id)
{
	const struct stack *s = find_stack(nt, stack_id);
	struct nettrace_sample smp = { .tid = tid };

	if (s) {
		smp.ips = nt->stack_ips + s->off;
		smp.nr_ips = s->n;
	}
	nt->st.samples++;
	if (nt->sink.sample)
		nt->sink.sample(nt->sink.ctx, &smp);
}

/* EventBlock and MetadataBlock: u16 header size, u16 flags, timestamps; then events
 * with compressed headers (flags bit 0), the only kind runtimes since 3.0 write. */
static int decode_events(struct nettrace *nt, struct rd *r, bool metadata)
{
	const unsigned char *start = r->p;
	uint16_t hsize = (uint16_t)rd_le(r, 2), flags = (uint16_t)rd_le(r, 2);
	/* a compressed header keeps the previous event's value of each field it omits */
	uint64_t meta_id = 0, tid = 0, payload = 0;
	uint32_t stack_id = 0;

	if (r->bad || hsize < 4 || hsize > r->end - start)
		return -EPROTO;
	if (!(flags & 1))
		return -EPROTO;
	r->p = start + hsize;
	while (r->p < r->end) {
		unsigned char f = (unsigned char)rd_le(r, 1);
		if (f & 0x01)
			meta_id = rd_var(r);
		if (f & 0x02) {
			rd_var(r);	/* sequence number delta */
			rd_var(r);	/* capture thread id */
			rd_var(r);	/* processor number */
		}
		if (f & 0x04)
			tid = rd_var(r);
		if (f & 0x08)
			stack_id = (uint32_t)rd_var(r);
		rd_var(r);	/* timestamp delta */
		if (f & 0x10 && rd_need(r, 16))
			r->p += 16;
		if (f & 0x20 && rd_need(r, 16))
			r->p += 16;
		if (f & 0x80)
			payload = rd_var(r);
		if (r->bad || payload > (uint64_t)(r->end - r->p))
			return -EPROTO;
		struct rd pr = { r->p, r->p + payload, false };
		r->p += payload;
		if (metadata) {
			decode_metadata(nt, &pr);
			continue;
		}
		switch (meta_of(nt, meta_id)) {
		case META_SAMPLE:
			decode_sample(nt, tid, stack_id);
			break;
		case META_METHOD:
			decode_method(nt, &pr);
			break;
		default:
			nt->st.skipped++;
		}
	}
	return 0;
}

/* StackBlock: u32 first id, u32 count, count x (u32 size, size bytes of ips). */
static int decode_stacks(struct nettrace *nt, struct rd *r)
{
	uint32_t first = (uint32_t)rd_le(r, 4), count = (uint32_t)rd_le(r, 4);

	if (r->bad)
		return -EPROTO;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t size = (uint32_t)rd_le(r, 4), n = size / 8;
		if (r->bad || size % 8 || n > MAX_IPS || !rd_need(r, size))
			return -EPROTO;
		if (nt->nr_stacks && nt->stacks[nt->nr_stacks - 1].id >= first + i)
			nt->nr_stacks = 0, nt->nr_ips = 0;	/* ids restarted */
		if (nt->nr_stacks == nt->alloc_stacks) {
			nt->alloc_stacks = nt->alloc_stacks ? 2 * nt->alloc_stacks : 256;
			nt->stacks = xrealloc(nt->stacks, nt->alloc_stacks * sizeof(*nt->stacks));
		}
		if (nt->nr_ips + n > nt->alloc_ips) {
			nt->alloc_ips = 2 * (nt->nr_ips + n) + 1024;
			nt->stack_ips = xrealloc(nt->stack_ips, nt->alloc_ips * sizeof(uint64_t));
		}
		nt->stacks[nt->nr_stacks++] = (struct stack){ first + i, nt->nr_ips, n };
		for (uint32_t k = 0; k < n; k++)
			nt->stack_ips[nt->nr_ips++] = rd_le(r, 8);
	}
	return 0;
}

static int decode_block(struct nettrace *nt, const char *type, const unsigned char *p,
			size_t len)
{
	struct rd r = { p, p + len, false };

	nt->st.blocks++;
	if (!strcmp(type, "EventBlock"))
		return decode_events(nt, &r, false);
	if (!strcmp(type, "MetadataBlock"))
		return decode_events(nt, &r, true);
	if (!strcmp(type, "StackBlock"))
		return decode_stacks(nt, &r);
	if (!strcmp(type, "SPBlock")) {	/* a sequence point: earlier stack ids expire */
		nt->nr_stacks = 0;
		nt->nr_ips = 0;
	}
	return 0;	/* blocks of other kinds are skipped */
}

/* Decodes one object at the start of the buffer. Returns the bytes it took, 0 when the
 * buffer does not hold all of it yet, or -EPROTO. */
static long decode_object(struct nettrace *nt, const unsigned char *base, size_t len,
			  uint64_t at)
{
	struct rd r = { base, base + len, false };
	char type[32];
	uint32_t name_len;
	uint64_t size, pad;

	if (!rd_need(&r, 1))
		return 0;
	if (*r.p == TAG_NULL) {
		nt->ended = true;
		return 1;
	}
	if (!rd_need(&r, 15))
		return 0;
	if (r.p[0] != TAG_BEGIN || r.p[1] != TAG_BEGIN || r.p[2] != TAG_NULL)
		return -EPROTO;
	r.p += 3;
	rd_le(&r, 8);	/* version, minimum reader version */
	name_len = (uint32_t)rd_le(&r, 4);
	if (!name_len || name_len >= sizeof(type))
		return -EPROTO;
	if (!rd_need(&r, name_len + 1))
		return 0;
	memcpy(type, r.p, name_len);
	type[name_len] = '\0';
	r.p += name_len;
	if (*r.p++ != TAG_END)
		return -EPROTO;
	if (!strcmp(type, "Trace")) {
		if (!rd_need(&r, TRACE_BODY + 1))
			return 0;
		r.p += TRACE_BODY;
		if (*r.p++ != TAG_END)
			return -EPROTO;
		return r.p - base;
	}
	if (!rd_need(&r, 4))
		return 0;
	size = rd_le(&r, 4);
	if (size > MAX_BLOCK)
		return -EPROTO;
	pad = (4 - (at + (uint64_t)(r.p - base)) % 4) % 4;
	if (!rd_need(&r, pad + size + 1))
		return 0;
	r.p += pad;
	if (r.p[size] != TAG_END || decode_block(nt, type, r.p, size) < 0)
		return -EPROTO;
	return r.p + size + 1 - base;
}

static long decode_header(struct nettrace *nt, const unsigned char *base, size_t len)
{
	static const char magic[] = "Nettrace\x14\0\0\0!FastSerialization.1";
	size_t n = sizeof(magic) - 1;

	if (memcmp(base, magic, len < n ? len : n))
		return -EPROTO;
	if (len < n)
		return 0;
	nt->header_done = true;
	return (long)n;
}

int nettrace__feed(struct nettrace *nt, const void *buf, size_t len)
{
	size_t off = 0;

	if (nt->failed)
		return -EPROTO;
	if (nt->ended)
		return 1;
	if (nt->len + len > nt->cap) {
		if (nt->len + len > MAX_BLOCK + 4096) {
			nt->failed = true;
			return -EPROTO;
		}
		nt->cap = 2 * (nt->len + len);
		nt->buf = xrealloc(nt->buf, nt->cap);
	}
	memcpy(nt->buf + nt->len, buf, len);
	nt->len += len;
	while (!nt->ended && off < nt->len) {
		const unsigned char *p = nt->buf + off;
		long took = nt->header_done ? decode_object(nt, p, nt->len - off, nt->consumed + off)
					    : decode_header(nt, p, nt->len - off);
		if (took < 0) {
			nt->failed = true;
			return -EPROTO;
		}
		if (!took)
			break;
		off += (size_t)took;
	}
	memmove(nt->buf, nt->buf + off, nt->len - off);
	nt->len -= off;
	nt->consumed += off;
	return nt->ended ? 1 : 0;
}
