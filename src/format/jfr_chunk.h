/* Inside the JFR reader (format/jfr.h): one chunk's header, its metadata (the classes and
 * their fields) and its constant pools, and a bounded reader of values as the metadata
 * describes them. Shared by jfr_chunk.c (the chunk) and jfr.c (the events). */
#ifndef KILN_FORMAT_JFR_CHUNK_H
#define KILN_FORMAT_JFR_CHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/hashmap.h"
#include "util/strbuf.h"

#define JFR_HEADER_SIZE 68
#define JFR_MAX_DEPTH 32	/* nesting of values, elements and pool references */

enum jfr_prim {
	JFR_STRUCT,	/* not a primitive: the class's fields, in order */
	JFR_BOOLEAN, JFR_BYTE, JFR_SHORT, JFR_CHAR, JFR_INT, JFR_LONG, JFR_FLOAT, JFR_DOUBLE,
	JFR_STRING,
};

struct jfr_class;

struct jfr_field {
	char *name;
	uint64_t type;
	const struct jfr_class *cls;	/* the class of type, resolved after the metadata */
	bool cp;			/* the value is a key into cls's constant pool */
	bool array;
};

struct jfr_class {
	uint64_t id;
	char *name;
	enum jfr_prim prim;
	struct jfr_field *fields;
	size_t nfields;
};

/* One constant-pool entry: where its value lies in the chunk. */
struct jfr_entry {
	uint64_t off, end;
};

struct jfr_chunk {
	const uint8_t *base;
	uint64_t size;			/* of the chunk, header included */
	uint64_t meta_off, start_ns, duration_ns, start_ticks, ticks_per_sec;
	struct jfr_class *classes;
	size_t nclasses;
	struct hashmap *by_id;		/* class id -> index + 1 */
	struct jfr_entry *entries;
	size_t nentries;
	struct hashmap *pool;		/* (class id, key) -> entry index + 1 */
	const struct jfr_class *string_cls;	/* java.lang.String, or NULL */
	size_t budget;			/* values left to read before the input is refused */
	bool failed;
	char *err;
	size_t errlen;
};

/* A reader of [p, end) in the chunk c. A read past end, or any other fault, sets
 * c->failed (the first message stays in c->err) and reads zeros from then on. */
struct jfr_rd {
	const uint8_t *p, *end;
	struct jfr_chunk *c;
};

/* Sets the chunk's error (the first one wins) and c->failed. Returns -EINVAL. */
int jfr__fail(struct jfr_chunk *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

uint64_t jfr__varint(struct jfr_rd *r);
uint8_t jfr__u8(struct jfr_rd *r);
/* A count of things each at least one byte long (what names them in the message),
 * checked against what is left of r; 0 with c->failed when larger. */
uint64_t jfr__count(struct jfr_rd *r, const char *what);
/* Reads a string at r, appending its text to out as UTF-8 (out NULL: skipped); *null
 * (may be NULL) says it was null or an unresolvable pool key. Pool references nest at
 * most JFR_MAX_DEPTH. */
void jfr__read_string(struct jfr_rd *r, struct strbuf *out, bool *null, int depth);
/* Reads the metadata event at c->meta_off into c's classes (format/jfr_meta.c). Returns
 * 0, or -EINVAL with c->failed. */
int jfr__read_metadata(struct jfr_chunk *c);

/* Opens the chunk at data[0..len): header, metadata, constant pools. Sets *chunk_len to
 * the chunk's size (the next chunk starts there). Returns 0, or -EINVAL with the message
 * in err; call jfr__chunk_release either way. */
int jfr__chunk_open(struct jfr_chunk *c, const uint8_t *data, size_t len, uint64_t *chunk_len,
		    char *err, size_t errlen);
void jfr__chunk_release(struct jfr_chunk *c);

const struct jfr_class *jfr__class(const struct jfr_chunk *c, uint64_t id);
/* The class named name, or NULL. */
const struct jfr_class *jfr__class_named(const struct jfr_chunk *c, const char *name);

/* A field's value as jfr__read_object found it. */
struct jfr_val {
	const struct jfr_field *f;	/* NULL: the class has no such field */
	const uint8_t *at;		/* where the value starts */
	const uint8_t *end;		/* the end of the reader it was read with */
	uint64_t u;			/* an integer, a boolean, or a pool key (f->cp) */
};

/* Reads one value of class cls at r (its fields in metadata order), setting out[i] for
 * the fields named want[0..n) (out[i].f NULL for a field cls lacks). Returns 0, or
 * -EINVAL with c->failed. */
int jfr__read_object(struct jfr_rd *r, const struct jfr_class *cls, const char *const *want,
		     size_t n, struct jfr_val *out, int depth);
/* Positions *r at the entry key of cls's constant pool. Returns 0, or -ENOENT when the
 * pool has no such entry (c is not failed for that). */
int jfr__pool(struct jfr_chunk *c, const struct jfr_class *cls, uint64_t key, struct jfr_rd *r);
/* The text of a string-like value into out (reset first): a string (inline or in the
 * String pool) or a pool reference to a class with a "string" or "name" field (Symbol,
 * ThreadState, ...). *null is set when the value is null or unresolvable. Returns 0 or
 * -EINVAL (c->failed). */
int jfr__string(struct jfr_chunk *c, const struct jfr_val *v, struct strbuf *out, bool *null,
		int depth);
/* Reads the array value v: sets *n to its element count and *r to its first element.
 * Returns 0, or -EINVAL. */
int jfr__array(struct jfr_chunk *c, const struct jfr_val *v, struct jfr_rd *r, uint64_t *n);

#endif
