/* One JFR chunk (format/jfr_chunk.h): the header, the checkpoint events' constant pools,
 * and values read as the metadata (jfr_meta.c) describes them.
 *
 * The layout, all integers LEB128 ("compressed integers", the only kind the JDK and
 * async-profiler write; a chunk without that feature flag is refused):
 *   header: "FLR\0", major, minor (u16), chunk size, constant-pool offset, metadata
 *     offset, start (ns), duration (ns), start ticks, ticks per second (u64), features
 *     (u32), all big-endian, 68 bytes;
 *   every event: size, type id, then its fields; type 0 is the metadata, 1 a checkpoint;
 *   metadata: start, duration, id, a string table, then a tree of elements (name,
 *     attributes, children, all as string-table indexes): root > metadata > class
 *     (id, name, simpleType) > field (name, class, constantPool, dimension);
 *   checkpoint: start, duration, delta to the previous one, a flags byte, then pools:
 *     class id, count, and (key, value) pairs.
 * A string is an encoding byte: 0 null, 1 empty, 2 String-pool key, 3 UTF-8, 4 char
 * array (LEB128 chars), 5 Latin-1, each with its length. */
#include "format/jfr_chunk.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

/* Values read per byte of a chunk at most: real recordings read a few (pools once, each
 * stack trace and method once, events twice); arrays of empty values could read more. */
#define VALUE_BUDGET_PER_BYTE 16

int jfr__fail(struct jfr_chunk *c, const char *fmt, ...)
{
	if (!c->failed && c->err && c->errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	c->failed = true;
	return -EINVAL;
}

static void truncated(struct jfr_rd *r)
{
	jfr__fail(r->c, "value truncated at offset %zu of the chunk",
		  (size_t)(r->p - r->c->base));
	r->p = r->end;
}

uint64_t jfr__varint(struct jfr_rd *r)
{
	uint64_t v = 0;

	if (r->c->failed)
		return 0;
	for (int i = 0; i < 9; i++) {
		if (r->p >= r->end) {
			truncated(r);
			return 0;
		}
		uint8_t b = *r->p++;
		if (i == 8)
			return v | (uint64_t)b << 56;
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return v;
	}
	return v;
}

uint8_t jfr__u8(struct jfr_rd *r)
{
	if (r->c->failed)
		return 0;
	if (r->p >= r->end) {
		truncated(r);
		return 0;
	}
	return *r->p++;
}

static void skip(struct jfr_rd *r, uint64_t n)
{
	if (r->c->failed)
		return;
	if (n > (uint64_t)(r->end - r->p)) {
		truncated(r);
		return;
	}
	r->p += n;
}

static uint64_t be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

uint64_t jfr__count(struct jfr_rd *r, const char *what)
{
	uint64_t n = jfr__varint(r);

	if (!r->c->failed && n > (uint64_t)(r->end - r->p)) {
		jfr__fail(r->c, "%s count %llu at offset %zu is larger than the %zu bytes left",
			  what, (unsigned long long)n, (size_t)(r->p - r->c->base),
			  (size_t)(r->end - r->p));
		return 0;
	}
	return n;
}

static void add_utf8(struct strbuf *out, uint32_t ch)
{
	if (ch < 0x80) {
		strbuf_addch(out, (char)ch);
	} else if (ch < 0x800) {
		strbuf_addch(out, (char)(0xc0 | ch >> 6));
		strbuf_addch(out, (char)(0x80 | (ch & 0x3f)));
	} else {
		if (ch >= 0xd800 && ch <= 0xdfff)	/* a lone UTF-16 half: not UTF-8 */
			ch = 0xfffd;
		strbuf_addch(out, (char)(0xe0 | ch >> 12));
		strbuf_addch(out, (char)(0x80 | ((ch >> 6) & 0x3f)));
		strbuf_addch(out, (char)(0x80 | (ch & 0x3f)));
	}
}

void jfr__read_string(struct jfr_rd *r, struct strbuf *out, bool *null, int depth)
{
	struct jfr_chunk *c = r->c;
	uint8_t enc = jfr__u8(r);
	uint64_t n;

	if (null)
		*null = enc == 0;
	switch (enc) {
	case 0:
	case 1:
		return;
	case 2: {
		uint64_t key = jfr__varint(r);
		struct jfr_rd pr;
		if (!out || c->failed)
			return;
		if (depth >= JFR_MAX_DEPTH) {
			jfr__fail(c, "string pool references nest deeper than %d", JFR_MAX_DEPTH);
			return;
		}
		if (!c->string_cls || jfr__pool(c, c->string_cls, key, &pr)) {
			if (null)
				*null = true;
			return;
		}
		jfr__read_string(&pr, out, null, depth + 1);
		return;
	}
	case 3:
	case 5:
		n = jfr__count(r, "string byte");
		if (c->failed)
			return;
		if (out && enc == 3)
			strbuf_add(out, r->p, n);
		else if (out)
			for (uint64_t i = 0; i < n; i++)
				add_utf8(out, r->p[i]);
		r->p += n;
		return;
	case 4:
		n = jfr__count(r, "string char");
		for (uint64_t i = 0; i < n && !c->failed; i++) {
			uint64_t ch = jfr__varint(r);
			if (out)
				add_utf8(out, ch > 0xffff ? 0xfffd : (uint32_t)ch);
		}
		return;
	default:
		jfr__fail(c, "unknown string encoding %u at offset %zu", enc,
			  (size_t)(r->p - 1 - c->base));
	}
}

static bool is_scalar(const struct jfr_field *f)
{
	return f->cp || (f->cls->prim != JFR_STRUCT && f->cls->prim != JFR_STRING);
}

static uint64_t read_scalar(struct jfr_rd *r, const struct jfr_field *f)
{
	if (f->cp)
		return jfr__varint(r);
	switch (f->cls->prim) {
	case JFR_BOOLEAN:
	case JFR_BYTE:
		return jfr__u8(r);
	case JFR_FLOAT:
	case JFR_DOUBLE: {
		int n = f->cls->prim == JFR_FLOAT ? 4 : 8;
		const uint8_t *at = r->p;
		skip(r, (uint64_t)n);
		return r->c->failed ? 0 : be(at, n);
	}
	default:
		return jfr__varint(r);
	}
}

static int read_one(struct jfr_rd *r, const struct jfr_field *f, int depth);

/* One value (not an array) of field f's class. */
static int read_single(struct jfr_rd *r, const struct jfr_field *f, int depth)
{
	struct jfr_chunk *c = r->c;

	if (!c->budget--)
		return jfr__fail(c, "the chunk has more values than its size allows");
	if (is_scalar(f)) {
		read_scalar(r, f);
	} else if (f->cls->prim == JFR_STRING) {
		jfr__read_string(r, NULL, NULL, depth);
	} else {
		if (depth >= JFR_MAX_DEPTH)
			return jfr__fail(c, "values of class '%s' nest deeper than %d",
					 f->cls->name, JFR_MAX_DEPTH);
		for (size_t i = 0; i < f->cls->nfields && !c->failed; i++)
			read_one(r, &f->cls->fields[i], depth + 1);
	}
	return c->failed ? -EINVAL : 0;
}

static int read_one(struct jfr_rd *r, const struct jfr_field *f, int depth)
{
	if (!f->array)
		return read_single(r, f, depth);
	uint64_t n = jfr__count(r, "array element");
	for (uint64_t i = 0; i < n && !r->c->failed; i++)
		read_single(r, f, depth);
	return r->c->failed ? -EINVAL : 0;
}

int jfr__read_object(struct jfr_rd *r, const struct jfr_class *cls, const char *const *want,
		     size_t n, struct jfr_val *out, int depth)
{
	struct jfr_chunk *c = r->c;

	for (size_t k = 0; k < n; k++)
		out[k] = (struct jfr_val){ 0 };
	if (depth >= JFR_MAX_DEPTH)
		return jfr__fail(c, "values of class '%s' nest deeper than %d", cls->name,
				 JFR_MAX_DEPTH);
	for (size_t i = 0; i < cls->nfields && !c->failed; i++) {
		const struct jfr_field *f = &cls->fields[i];
		struct jfr_val *v = NULL;
		for (size_t k = 0; k < n && !v; k++)
			if (!out[k].f && !strcmp(want[k], f->name))
				v = &out[k];
		if (v)
			*v = (struct jfr_val){ .f = f, .at = r->p, .end = r->end };
		if (!f->array && is_scalar(f)) {
			uint64_t u = read_scalar(r, f);
			if (v)
				v->u = u;
		} else {
			read_one(r, f, depth + 1);
		}
	}
	return c->failed ? -EINVAL : 0;
}

static void pool_key(uint8_t key[16], uint64_t cls, uint64_t k)
{
	memcpy(key, &cls, 8);
	memcpy(key + 8, &k, 8);
}

int jfr__pool(struct jfr_chunk *c, const struct jfr_class *cls, uint64_t key, struct jfr_rd *r)
{
	uint8_t k[16];
	void **slot;

	pool_key(k, cls->id, key);
	slot = hashmap__find(c->pool, k, sizeof(k));
	if (!slot)
		return -ENOENT;
	const struct jfr_entry *e = &c->entries[(uintptr_t)*slot - 1];
	*r = (struct jfr_rd){ c->base + e->off, c->base + e->end, c };
	return 0;
}

int jfr__string(struct jfr_chunk *c, const struct jfr_val *v, struct strbuf *out, bool *null,
		int depth)
{
	struct jfr_rd r;

	strbuf_reset(out);
	*null = true;
	if (!v->f || v->f->array || c->failed)
		return c->failed ? -EINVAL : 0;
	if (depth >= JFR_MAX_DEPTH)
		return jfr__fail(c, "pool references nest deeper than %d", JFR_MAX_DEPTH);
	const struct jfr_class *cls = v->f->cls;
	if (cls->prim == JFR_STRING) {
		if (v->f->cp) {
			if (jfr__pool(c, cls, v->u, &r))
				return 0;
		} else {
			r = (struct jfr_rd){ v->at, v->end, c };
		}
		jfr__read_string(&r, out, null, depth);
		return c->failed ? -EINVAL : 0;
	}
	if (!v->f->cp || cls->prim != JFR_STRUCT || jfr__pool(c, cls, v->u, &r))
		return 0;
	static const char *const names[] = { "string", "name" };
	struct jfr_val f[2];
	if (jfr__read_object(&r, cls, names, 2, f, depth + 1))
		return -EINVAL;
	return jfr__string(c, f[0].f ? &f[0] : &f[1], out, null, depth + 1);
}

int jfr__array(struct jfr_chunk *c, const struct jfr_val *v, struct jfr_rd *r, uint64_t *n)
{
	*n = 0;
	if (!v->f || !v->f->array)
		return 0;
	*r = (struct jfr_rd){ v->at, v->end, c };
	*n = jfr__count(r, "array element");
	return c->failed ? -EINVAL : 0;
}

const struct jfr_class *jfr__class(const struct jfr_chunk *c, uint64_t id)
{
	void **slot = hashmap__find(c->by_id, &id, sizeof(id));

	return slot ? &c->classes[(uintptr_t)*slot - 1] : NULL;
}

const struct jfr_class *jfr__class_named(const struct jfr_chunk *c, const char *name)
{
	for (size_t i = 0; i < c->nclasses; i++)
		if (!strcmp(c->classes[i].name, name))
			return &c->classes[i];
	return NULL;
}

/* The constant pools of the checkpoint event in [r->p, r->end) (size and type read). */
static void read_checkpoint(struct jfr_chunk *c, struct jfr_rd *r)
{
	jfr__varint(r);	/* start */
	jfr__varint(r);	/* duration */
	jfr__varint(r);	/* delta to the previous checkpoint */
	jfr__u8(r);	/* flags */
	uint64_t npools = jfr__count(r, "constant pool");
	for (uint64_t i = 0; i < npools && !c->failed; i++) {
		uint64_t id = jfr__varint(r);
		const struct jfr_class *cls = jfr__class(c, id);
		if (!cls && !c->failed) {
			jfr__fail(c, "constant pool of unknown class id %llu",
				  (unsigned long long)id);
			return;
		}
		uint64_t n = jfr__count(r, "constant");
		struct jfr_field f = { .name = (char *)"constant", .type = id, .cls = cls };
		for (uint64_t k = 0; k < n && !c->failed; k++) {
			uint64_t key = jfr__varint(r);
			uint64_t off = (uint64_t)(r->p - c->base);
			if (read_single(r, &f, 0))
				return;
			uint8_t hk[16];
			bool created;
			pool_key(hk, id, key);
			void **slot = hashmap__insert(c->pool, hk, sizeof(hk), &created);
			if (created) {
				c->entries = xrealloc(c->entries, (c->nentries + 1) * sizeof(*c->entries));
				*slot = (void *)(uintptr_t)++c->nentries;
			}
			c->entries[(uintptr_t)*slot - 1] =
				(struct jfr_entry){ off, (uint64_t)(r->end - c->base) };
		}
	}
}

int jfr__chunk_open(struct jfr_chunk *c, const uint8_t *data, size_t len, uint64_t *chunk_len,
		    char *err, size_t errlen)
{
	*c = (struct jfr_chunk){ .base = data, .err = err, .errlen = errlen };
	c->by_id = hashmap__new();
	c->pool = hashmap__new();
	*chunk_len = 0;
	if (len < JFR_HEADER_SIZE || memcmp(data, "FLR\0", 4))
		return jfr__fail(c, len < JFR_HEADER_SIZE ? "chunk header truncated (%zu bytes)" :
				 "no JFR chunk magic 'FLR' (%zu bytes)", len);
	unsigned major = (unsigned)be(data + 4, 2);
	c->size = be(data + 8, 8);
	c->meta_off = be(data + 24, 8);
	c->start_ns = be(data + 32, 8);
	c->duration_ns = be(data + 40, 8);
	c->start_ticks = be(data + 48, 8);
	c->ticks_per_sec = be(data + 56, 8);
	uint32_t features = (uint32_t)be(data + 64, 4);
	if (major != 2 && major != 1)
		return jfr__fail(c, "unsupported JFR version %u.%u", major, (unsigned)be(data + 6, 2));
	if (c->size < JFR_HEADER_SIZE || c->size > len)
		return jfr__fail(c, "chunk size %llu is not within the %zu bytes given",
				 (unsigned long long)c->size, len);
	if (c->meta_off < JFR_HEADER_SIZE || c->meta_off >= c->size)
		return jfr__fail(c, "metadata offset %llu is outside the chunk of %llu bytes",
				 (unsigned long long)c->meta_off, (unsigned long long)c->size);
	if (!(features & 1))
		return jfr__fail(c, "chunk without compressed integers (features 0x%x): not "
				 "supported", features);
	*chunk_len = c->size;
	c->budget = (size_t)c->size * VALUE_BUDGET_PER_BYTE + 4096;
	if (jfr__read_metadata(c))
		return -EINVAL;
	struct jfr_rd r = { data + JFR_HEADER_SIZE, data + c->size, c };
	while (r.p < r.end && !c->failed) {
		const uint8_t *at = r.p;
		uint64_t size = jfr__varint(&r);
		if (c->failed)
			break;
		if (size < 2 || size > (uint64_t)(r.end - at))
			return jfr__fail(c, "event at offset %zu has size %llu, past the chunk's end",
					 (size_t)(at - data), (unsigned long long)size);
		struct jfr_rd ev = { r.p, at + size, c };
		if (jfr__varint(&ev) == 1)
			read_checkpoint(c, &ev);
		r.p = at + size;
	}
	return c->failed ? -EINVAL : 0;
}

void jfr__chunk_release(struct jfr_chunk *c)
{
	for (size_t i = 0; i < c->nclasses; i++) {
		for (size_t j = 0; j < c->classes[i].nfields; j++)
			free(c->classes[i].fields[j].name);
		free(c->classes[i].fields);
		free(c->classes[i].name);
	}
	free(c->classes);
	free(c->entries);
	hashmap__free(c->by_id);
	hashmap__free(c->pool);
	*c = (struct jfr_chunk){ 0 };
}
