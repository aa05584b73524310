/* Connect unary calls: content types, errors, and proto3 JSON over protobuf-c descriptors.
 *
 * The JSON side builds and reads the C structures protobuf-c generates, through the
 * field descriptors' offsets, so that a message decoded from JSON is freed like one
 * unpacked from binary (protobuf_c_message_free_unpacked, system allocator). Only proto3
 * fields occur in our schemas: singular (label NONE) and repeated. Bytes fields are not
 * carried in JSON (none of the requests we serve has one). */
#include "server/connect.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

/* Nesting beyond this in a JSON body is refused (ours are three deep). */
#define MAX_DEPTH 16

static const struct {
	const char *code;
	unsigned status;
} codes[] = {
	{ "invalid_argument", 400 }, { "unauthenticated", 401 }, { "permission_denied", 403 },
	{ "not_found", 404 }, { "resource_exhausted", 429 }, { "unimplemented", 501 },
	{ "unavailable", 503 }, { "deadline_exceeded", 504 }, { "internal", 500 },
};

void connect__error(struct response *resp, const char *code, const char *fmt, ...)
{
	unsigned status = 500;
	va_list ap;

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (!strcmp(codes[i].code, code))
			status = codes[i].status;
	va_start(ap, fmt);
	resp__errorv(resp, status, code, fmt, ap);
	va_end(ap);
}

void connect__error_at(struct response *resp, unsigned status, const char *code,
		       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	resp__errorv(resp, status, code, fmt, ap);
	va_end(ap);
}

static bool is_json(const char *ctype)
{
	return ctype && !strncmp(ctype, "application/json", 16);
}

/* The field's name in proto3 JSON: lowerCamelCase of the declared name. */
static void json_name(const char *name, char *out, size_t size)
{
	size_t o = 0;
	bool up = false;

	for (const char *p = name; *p && o + 1 < size; p++) {
		if (*p == '_') {
			up = true;
			continue;
		}
		out[o++] = up && *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;
		up = false;
	}
	out[o] = 0;
}

static const ProtobufCFieldDescriptor *find_field(const ProtobufCMessageDescriptor *d,
						  const char *key)
{
	char jn[128];

	for (unsigned i = 0; i < d->n_fields; i++) {
		json_name(d->fields[i].name, jn, sizeof(jn));
		if (!strcmp(key, jn) || !strcmp(key, d->fields[i].name))
			return &d->fields[i];
	}
	return NULL;
}

static size_t elem_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	default:	/* 32-bit integers, enums, bools, floats */
		return 4;
	}
}

/* A JSON number or a decimal string as an integer within [min, max]. */
static bool json_int(json_t *v, double min, double max, int64_t *out, uint64_t *uout)
{
	char *end;

	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		if ((double)i < min || (double)i > max)
			return false;
		*out = i;
		*uout = (uint64_t)i;
		return true;
	}
	if (json_is_real(v)) {
		double d = json_real_value(v);
		/* beyond 2^53 a double is no exact integer (and the casts below would overflow) */
		if (d != floor(d) || d < min || d > max || fabs(d) > 9007199254740992.0)
			return false;
		*out = (int64_t)d;
		*uout = (uint64_t)d;
		return true;
	}
	if (!json_is_string(v) || !*json_string_value(v))
		return false;
	errno = 0;
	if (min < 0) {
		long long x = strtoll(json_string_value(v), &end, 10);
		if (errno || *end || (double)x < min || (double)x > max)
			return false;
		*out = x;
		*uout = (uint64_t)x;
	} else {
		if (json_string_value(v)[0] == '-')
			return false;
		unsigned long long x = strtoull(json_string_value(v), &end, 10);
		if (errno || *end || (double)x > max)
			return false;
		*uout = x;
		*out = (int64_t)x;
	}
	return true;
}

static ProtobufCMessage *from_json(const ProtobufCMessageDescriptor *d, json_t *v, int depth,
				   char *err, size_t errlen);

/* Stores one JSON value of field f at dst (an element of its type). */
static int set_value(const ProtobufCFieldDescriptor *f, void *dst, json_t *v, int depth,
		     char *err, size_t errlen)
{
	int64_t i = 0;
	uint64_t u = 0;

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
		if (!json_int(v, -2147483648.0, 2147483647.0, &i, &u))
			goto bad;
		*(int32_t *)dst = (int32_t)i;
		return 0;
	case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
		if (!json_int(v, 0, 4294967295.0, &i, &u))
			goto bad;
		*(uint32_t *)dst = (uint32_t)u;
		return 0;
	case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
		if (!json_int(v, -9223372036854775808.0, 9223372036854775807.0, &i, &u))
			goto bad;
		*(int64_t *)dst = i;
		return 0;
	case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
		if (!json_int(v, 0, 18446744073709551615.0, &i, &u))
			goto bad;
		*(uint64_t *)dst = u;
		return 0;
	case PROTOBUF_C_TYPE_FLOAT: case PROTOBUF_C_TYPE_DOUBLE: {
		double d;
		if (json_is_number(v))
			d = json_number_value(v);
		else if (json_is_string(v) && !strcmp(json_string_value(v), "NaN"))
			d = NAN;
		else if (json_is_string(v) && !strcmp(json_string_value(v), "Infinity"))
			d = INFINITY;
		else if (json_is_string(v) && !strcmp(json_string_value(v), "-Infinity"))
			d = -INFINITY;
		else
			goto bad;
		if (f->type == PROTOBUF_C_TYPE_FLOAT)
			*(float *)dst = (float)d;
		else
			*(double *)dst = d;
		return 0;
	}
	case PROTOBUF_C_TYPE_BOOL:
		if (!json_is_boolean(v))
			goto bad;
		*(protobuf_c_boolean *)dst = json_is_true(v);
		return 0;
	case PROTOBUF_C_TYPE_ENUM: {
		const ProtobufCEnumDescriptor *ed = f->descriptor;
		if (json_is_string(v)) {
			const ProtobufCEnumValue *ev =
				protobuf_c_enum_descriptor_get_value_by_name(ed, json_string_value(v));
			if (!ev)
				goto bad;
			*(int *)dst = ev->value;
			return 0;
		}
		if (!json_int(v, -2147483648.0, 2147483647.0, &i, &u))
			goto bad;
		*(int *)dst = (int)i;	/* proto3 keeps unknown enum numbers */
		return 0;
	}
	case PROTOBUF_C_TYPE_STRING:
		if (!json_is_string(v))
			goto bad;
		*(char **)dst = xstrndup(json_string_value(v), json_string_length(v));
		return 0;
	case PROTOBUF_C_TYPE_MESSAGE:
		*(ProtobufCMessage **)dst = from_json(f->descriptor, v, depth + 1, err, errlen);
		return *(ProtobufCMessage **)dst ? 0 : -EINVAL;
	case PROTOBUF_C_TYPE_BYTES:
		errmsg(err, errlen, "field '%s': bytes are not accepted in JSON", f->name);
		return -EINVAL;
	}
bad:
	errmsg(err, errlen, "field '%s': invalid value", f->name);
	return -EINVAL;
}

static int set_field(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, json_t *v,
		     int depth, char *err, size_t errlen)
{
	char *base = (char *)m;

	if (json_is_null(v))
		return 0;	/* proto3 JSON: null is the default */
	if (f->label != PROTOBUF_C_LABEL_REPEATED) {
		if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE) {
			/* a key given twice replaces the first value */
			void **slot = (void **)(base + f->offset);
			if (f->type == PROTOBUF_C_TYPE_MESSAGE && *slot)
				protobuf_c_message_free_unpacked(*slot, NULL);
			else if (f->type == PROTOBUF_C_TYPE_STRING && *slot &&
				 *slot != protobuf_c_empty_string)
				free(*slot);
			*slot = NULL;
			if (f->type == PROTOBUF_C_TYPE_STRING)
				*slot = (void *)protobuf_c_empty_string;
		}
		return set_value(f, base + f->offset, v, depth, err, errlen);
	}
	if (!json_is_array(v)) {
		errmsg(err, errlen, "field '%s': expected an array", f->name);
		return -EINVAL;
	}
	size_t *n = (size_t *)(base + f->quantifier_offset), es = elem_size(f->type);
	void **arr = (void **)(base + f->offset);
	if (*n)	{	/* a repeated key given twice: only the last counts */
		errmsg(err, errlen, "field '%s' given twice", f->name);
		return -EINVAL;
	}
	if (!json_array_size(v))
		return 0;
	*arr = xcalloc(json_array_size(v), es);
	for (size_t i = 0; i < json_array_size(v); i++) {
		if (json_is_null(json_array_get(v, i)) ||
		    set_value(f, (char *)*arr + i * es, json_array_get(v, i), depth, err, errlen)) {
			if (json_is_null(json_array_get(v, i)))
				errmsg(err, errlen, "field '%s': null in an array", f->name);
			return -EINVAL;
		}
		(*n)++;	/* counted as set: freed with the message on failure */
	}
	return 0;
}

static ProtobufCMessage *from_json(const ProtobufCMessageDescriptor *d, json_t *v, int depth,
				   char *err, size_t errlen)
{
	ProtobufCMessage *m;
	const char *key;
	json_t *val;

	if (depth > MAX_DEPTH || !json_is_object(v)) {
		errmsg(err, errlen, depth > MAX_DEPTH ? "JSON nested too deep"
						      : "expected a JSON object for %s", d->name);
		return NULL;
	}
	m = xmalloc(d->sizeof_message);
	d->message_init(m);
	json_object_foreach(v, key, val) {
		const ProtobufCFieldDescriptor *f = find_field(d, key);
		if (!f)
			continue;	/* unknown fields are ignored, as in binary */
		if (set_field(m, f, val, depth, err, errlen)) {
			protobuf_c_message_free_unpacked(m, NULL);
			return NULL;
		}
	}
	return m;
}

ProtobufCMessage *connect__from_json(const ProtobufCMessageDescriptor *desc, json_t *v,
				     char *err, size_t errlen)
{
	return from_json(desc, v, 0, err, errlen);
}

static json_t *to_json(const ProtobufCMessage *m);

/* One element of field f at src as JSON, or NULL for a value JSON leaves out. */
static json_t *value_json(const ProtobufCFieldDescriptor *f, const void *src)
{
	char num[32];

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
		return json_integer(*(const int32_t *)src);
	case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
		return json_integer(*(const uint32_t *)src);
	case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
		snprintf(num, sizeof(num), "%lld", (long long)*(const int64_t *)src);
		return json_string(num);
	case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
		snprintf(num, sizeof(num), "%llu", (unsigned long long)*(const uint64_t *)src);
		return json_string(num);
	case PROTOBUF_C_TYPE_FLOAT: case PROTOBUF_C_TYPE_DOUBLE: {
		double d = f->type == PROTOBUF_C_TYPE_FLOAT ? *(const float *)src
							     : *(const double *)src;
		if (isnan(d))
			return json_string("NaN");
		if (isinf(d))
			return json_string(d > 0 ? "Infinity" : "-Infinity");
		return json_real(d);
	}
	case PROTOBUF_C_TYPE_BOOL:
		return json_boolean(*(const protobuf_c_boolean *)src);
	case PROTOBUF_C_TYPE_ENUM: {
		const ProtobufCEnumValue *ev =
			protobuf_c_enum_descriptor_get_value(f->descriptor, *(const int *)src);
		return ev ? json_string(ev->name) : json_integer(*(const int *)src);
	}
	case PROTOBUF_C_TYPE_STRING: {
		const char *s = *(char *const *)src;
		/* jansson refuses invalid UTF-8: such a name is sent with '?' in its place */
		json_t *j = json_string(s ? s : "");
		if (!j && s) {
			char *c = xstrdup(s);
			for (char *p = c; *p; p++)
				if ((unsigned char)*p >= 0x80)
					*p = '?';
			j = json_string(c);
			free(c);
		}
		return j;
	}
	case PROTOBUF_C_TYPE_MESSAGE:
		return *(ProtobufCMessage *const *)src ? to_json(*(ProtobufCMessage *const *)src)
						       : NULL;
	case PROTOBUF_C_TYPE_BYTES:
		return NULL;
	}
	return NULL;
}

/* True when a singular proto3 field holds its default, which JSON leaves out. */
static bool is_default(const ProtobufCFieldDescriptor *f, const void *src)
{
	switch (elem_size(f->type)) {
	case 8:
		if (f->type == PROTOBUF_C_TYPE_STRING)
			return !*(char *const *)src || !**(char *const *)src;
		if (f->type == PROTOBUF_C_TYPE_MESSAGE)
			return !*(void *const *)src;
		return !*(const uint64_t *)src;
	case 4:
		return !*(const uint32_t *)src;
	default:
		return !((const ProtobufCBinaryData *)src)->len;
	}
}

static json_t *to_json(const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	const char *base = (const char *)m;
	json_t *o = json_object();
	char jn[128];

	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		json_t *v;
		json_name(f->name, jn, sizeof(jn));
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)(base + f->quantifier_offset), es = elem_size(f->type);
			const char *arr = *(char *const *)(base + f->offset);
			if (!n)
				continue;
			v = json_array();
			for (size_t k = 0; k < n; k++) {
				json_t *e = value_json(f, arr + k * es);
				if (e)
					json_array_append_new(v, e);
			}
		} else {
			if (is_default(f, base + f->offset))
				continue;
			v = value_json(f, base + f->offset);
		}
		if (v)
			json_object_set_new(o, jn, v);
	}
	return o;
}

json_t *connect__to_json(const ProtobufCMessage *msg)
{
	return to_json(msg);
}

ProtobufCMessage *connect__decode(struct request *r, struct response *resp,
				  const ProtobufCMessageDescriptor *desc)
{
	const char *ctype = req__header(r, "Content-Type");
	ProtobufCMessage *m;
	char err[256];

	if (!is_json(ctype) && (!ctype || strncmp(ctype, "application/proto", 17))) {
		connect__error_at(resp, 415, "invalid_argument", "unsupported Content-Type '%.64s': "
				  "send application/proto or application/json", ctype ? ctype : "");
		return NULL;
	}
	if (req__gunzip_body(r, resp, false))
		return NULL;
	if (!is_json(ctype)) {
		m = protobuf_c_message_unpack(desc, NULL, r->body.len,
					      (const uint8_t *)r->body.buf);
		if (!m)
			connect__error(resp, "invalid_argument", "body is not a %s", desc->name);
		return m;
	}
	json_error_t jerr;
	json_t *v = r->body.len ? json_loadb(r->body.buf, r->body.len, JSON_REJECT_DUPLICATES, &jerr)
				: json_object();
	if (!v) {
		connect__error(resp, "invalid_argument", "body is not JSON: %s", jerr.text);
		return NULL;
	}
	m = from_json(desc, v, 0, err, sizeof(err));
	json_decref(v);
	if (!m)
		connect__error(resp, "invalid_argument", "invalid %s: %s", desc->name, err);
	return m;
}

void connect__reply(const struct request *r, struct response *resp, const ProtobufCMessage *msg)
{
	if (is_json(req__header(r, "Content-Type"))) {
		resp__json(resp, 200, to_json(msg));
		return;
	}
	size_t len = protobuf_c_message_get_packed_size(msg);
	strbuf_reset(&resp->body);
	strbuf_grow(&resp->body, len + 1);
	protobuf_c_message_pack(msg, (uint8_t *)resp->body.buf);
	resp->body.len = len;
	resp->body.buf[len] = 0;
	resp->status = 200;
	resp->content_type = "application/proto";
}

void connect__reply_packed(const struct request *r, struct response *resp,
			   const ProtobufCMessageDescriptor *desc, const void *data, size_t len)
{
	if (is_json(req__header(r, "Content-Type"))) {
		ProtobufCMessage *m = protobuf_c_message_unpack(desc, NULL, len, data);
		if (!m) {
			connect__error(resp, "internal", "failed to encode the answer");
			return;
		}
		resp__json(resp, 200, to_json(m));
		protobuf_c_message_free_unpacked(m, NULL);
		return;
	}
	strbuf_reset(&resp->body);
	strbuf_add(&resp->body, data, len);
	resp->status = 200;
	resp->content_type = "application/proto";
}

/* Milliseconds [start, end) as the store's seconds, rounded outwards; end 0 is now and
 * start 0 is an hour before (or all time when all_time). */
int connect__range_ms(struct response *resp, int64_t start, int64_t end, bool all_time,
		       int64_t *from, int64_t *until)
{
	int64_t now = req__now();

	if (start < 0 || end < 0 || end / 1000 > now + 86400 * 366) {
		connect__error(resp, "invalid_argument", "start and end are milliseconds since the "
			       "epoch, not negative and not far in the future");
		return -EINVAL;
	}
	*until = end ? (end + 999) / 1000 : now + 1;
	*from = start ? start / 1000 : all_time ? 0 : *until - 3600;
	if (*from >= *until) {
		connect__error(resp, "invalid_argument", "start must be before end");
		return -EINVAL;
	}
	return 0;
}
