/* The metadata event of a JFR chunk (format/jfr_chunk.h): its string table and its tree
 * of elements, root > metadata > class (id, name) > field (name, class, constantPool,
 * dimension), into the chunk's classes, each field's class resolved. */
#include "format/jfr_chunk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

/* The metadata's string table while its elements are read. */
struct meta {
	struct jfr_chunk *c;
	char **strings;
	uint64_t nstrings;
};

static const char *meta_string(struct meta *m, struct jfr_rd *r)
{
	uint64_t i = jfr__varint(r);

	if (m->c->failed)
		return "";
	if (i >= m->nstrings) {
		jfr__fail(m->c, "metadata string index %llu is out of its %llu strings",
			  (unsigned long long)i, (unsigned long long)m->nstrings);
		return "";
	}
	return m->strings[i] ? m->strings[i] : "";
}

static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return !errno && !*end;
}

/* One element with its children; cls: the index + 1 of the class being described (a
 * "field" child belongs to it), 0 outside a class. */
static void read_element(struct meta *m, struct jfr_rd *r, int depth, size_t cls)
{
	struct jfr_chunk *c = m->c;
	const char *name = meta_string(m, r);
	uint64_t nattr = jfr__count(r, "metadata attribute");
	const char *id = NULL, *aname = NULL, *type = NULL, *pool = NULL, *dim = NULL;

	if (depth >= JFR_MAX_DEPTH) {
		jfr__fail(c, "metadata elements nest deeper than %d", JFR_MAX_DEPTH);
		return;
	}
	for (uint64_t i = 0; i < nattr && !c->failed; i++) {
		const char *k = meta_string(m, r), *v = meta_string(m, r);
		if (!strcmp(k, "id"))
			id = v;
		else if (!strcmp(k, "name"))
			aname = v;
		else if (!strcmp(k, "class"))
			type = v;
		else if (!strcmp(k, "constantPool"))
			pool = v;
		else if (!strcmp(k, "dimension"))
			dim = v;
	}
	size_t child_cls = 0;
	if (c->failed)
		return;
	if (!strcmp(name, "class") && !cls) {
		uint64_t cid;
		if (!id || !aname || !parse_u64(id, &cid)) {
			jfr__fail(c, "metadata class '%.64s' has no valid id", aname ? aname : "");
			return;
		}
		c->classes = xrealloc(c->classes, (c->nclasses + 1) * sizeof(*c->classes));
		c->classes[c->nclasses] = (struct jfr_class){ .id = cid, .name = xstrdup(aname) };
		child_cls = ++c->nclasses;
	} else if (!strcmp(name, "field") && cls) {
		struct jfr_class *k = &c->classes[cls - 1];
		uint64_t t, d = 0;
		if (!aname || !type || !parse_u64(type, &t) || (dim && !parse_u64(dim, &d)) || d > 1) {
			jfr__fail(c, "field '%.64s' of class '%.64s' has no valid class or dimension",
				  aname ? aname : "", k->name);
			return;
		}
		k->fields = xrealloc(k->fields, (k->nfields + 1) * sizeof(*k->fields));
		k->fields[k->nfields++] = (struct jfr_field){
			.name = xstrdup(aname), .type = t, .cp = pool && !strcmp(pool, "true"),
			.array = d == 1,
		};
	}
	uint64_t nchild = jfr__count(r, "metadata element");
	for (uint64_t i = 0; i < nchild && !c->failed; i++)
		read_element(m, r, depth + 1, child_cls);
}

static enum jfr_prim prim_of(const char *name)
{
	static const struct { const char *name; enum jfr_prim prim; } prims[] = {
		{ "boolean", JFR_BOOLEAN }, { "byte", JFR_BYTE }, { "short", JFR_SHORT },
		{ "char", JFR_CHAR }, { "int", JFR_INT }, { "long", JFR_LONG },
		{ "float", JFR_FLOAT }, { "double", JFR_DOUBLE }, { "java.lang.String", JFR_STRING },
	};
	for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
		if (!strcmp(prims[i].name, name))
			return prims[i].prim;
	return JFR_STRUCT;
}

int jfr__read_metadata(struct jfr_chunk *c)
{
	struct jfr_rd r = { c->base + c->meta_off, c->base + c->size, c };
	struct meta m = { c, NULL, 0 };
	struct strbuf sb = STRBUF_INIT;

	uint64_t size = jfr__varint(&r);
	if (!c->failed && (size > c->size - c->meta_off || size < 2))
		return jfr__fail(c, "metadata event size %llu runs past the chunk",
				 (unsigned long long)size);
	r.end = c->base + c->meta_off + size;
	if (jfr__varint(&r) != 0 && !c->failed)
		return jfr__fail(c, "the metadata offset %llu is not a metadata event",
				 (unsigned long long)c->meta_off);
	jfr__varint(&r);	/* start */
	jfr__varint(&r);	/* duration */
	jfr__varint(&r);	/* metadata id */
	m.nstrings = jfr__count(&r, "metadata string");
	m.strings = xcalloc(m.nstrings ? m.nstrings : 1, sizeof(*m.strings));
	for (uint64_t i = 0; i < m.nstrings && !c->failed; i++) {
		bool null;
		strbuf_reset(&sb);
		uint8_t enc = r.p < r.end ? *r.p : 0;
		if (enc == 2) {
			jfr__fail(c, "metadata string %llu refers to a constant pool",
				  (unsigned long long)i);
			break;
		}
		jfr__read_string(&r, &sb, &null, 0);
		m.strings[i] = xstrndup(sb.buf ? sb.buf : "", sb.len);
	}
	if (!c->failed)
		read_element(&m, &r, 0, 0);
	for (uint64_t i = 0; i < m.nstrings; i++)
		free(m.strings[i]);
	free(m.strings);
	strbuf_release(&sb);
	if (c->failed)
		return -EINVAL;
	for (size_t i = 0; i < c->nclasses; i++) {
		bool created;
		void **slot = hashmap__insert(c->by_id, &c->classes[i].id, 8, &created);
		if (!created)
			return jfr__fail(c, "metadata describes class id %llu twice",
					 (unsigned long long)c->classes[i].id);
		*slot = (void *)(uintptr_t)(i + 1);
		c->classes[i].prim = prim_of(c->classes[i].name);
		if (c->classes[i].prim == JFR_STRING)
			c->string_cls = &c->classes[i];
	}
	for (size_t i = 0; i < c->nclasses; i++) {
		for (size_t j = 0; j < c->classes[i].nfields; j++) {
			struct jfr_field *f = &c->classes[i].fields[j];
			f->cls = jfr__class(c, f->type);
			if (!f->cls)
				return jfr__fail(c, "field '%.64s' of class '%.64s' has unknown class "
						 "id %llu", f->name, c->classes[i].name,
						 (unsigned long long)f->type);
		}
	}
	return 0;
}
