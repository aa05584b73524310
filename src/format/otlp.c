/* OTLP profiles read and written with protobuf-c (build/gen/otlp_profiles.pb-c.h): see otlp.h. */
#include "format/otlp.h"
#include "format/otlp_compat.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "otlp_profiles.pb-c.h"
#include "util/log.h"

typedef Otlp__V1development__ExportProfilesServiceRequest Request;
typedef Otlp__V1development__ProfilesDictionary Dictionary;
typedef Otlp__V1development__KeyValue KeyValue;
typedef Otlp__V1development__AnyValue AnyValue;

/* Stacks deeper than this are cut at the root end (Pyroscope truncates at 1,000 too). */
#define MAX_DEPTH 1024
/* Labels one stack may carry. */
#define MAX_LABELS 64

struct reader {
	const Dictionary *d;
	char *err;
	size_t errlen;
	struct strbuf sb;
	char **pool;		/* integer attributes as text, freed with the reader */
	size_t npool;
};

static const char *str(const struct reader *r, int32_t i)
{
	return i > 0 && (size_t)i < r->d->n_string_table ? r->d->string_table[i] : "";
}

/* A string index that is out of the table is an error; 0 is "". */
static bool str_ok(const struct reader *r, int32_t i)
{
	return i >= 0 && (i == 0 || (size_t)i < r->d->n_string_table);
}

/* An attribute's value as label text (strings and integers; others give NULL), valid
 * while the request and the reader are. */
static const char *value_text(struct reader *r, const AnyValue *v)
{
	char num[24];

	if (!v)
		return NULL;
	switch (v->value_case) {
	case OTLP__V1DEVELOPMENT__ANY_VALUE__VALUE_STRING_VALUE:
		return v->string_value;
	case OTLP__V1DEVELOPMENT__ANY_VALUE__VALUE_STRING_VALUE_STRINDEX:
		return str_ok(r, v->string_value_strindex) ? str(r, v->string_value_strindex) : NULL;
	case OTLP__V1DEVELOPMENT__ANY_VALUE__VALUE_INT_VALUE:
		snprintf(num, sizeof(num), "%" PRId64, v->int_value);
		r->pool = xrealloc(r->pool, (r->npool + 1) * sizeof(*r->pool));
		return r->pool[r->npool++] = xstrdup(num);
	default:
		return NULL;
	}
}

/* kiln's label name for an OTLP attribute key, or NULL for one left out. */
static const char *label_name(const char *key)
{
	static const struct { const char *otlp, *kiln; } renamed[] = {
		{ "host.name", "host" }, { "container.name", "container" },
		{ "process.executable.name", "process" }, { "thread.name", "thread" },
		{ "process.pid", NULL }, { "thread.id", NULL }, { "cpu.logical_number", NULL },
		{ "service.name", NULL },	/* the service itself */
		{ "process.executable.path", NULL }, { "profile.frame.type", NULL },
	};

	for (size_t i = 0; i < sizeof(renamed) / sizeof(renamed[0]); i++)
		if (!strcmp(key, renamed[i].otlp))
			return renamed[i].kiln;
	return *key ? key : NULL;
}

struct labelbuf {
	struct profile_label v[MAX_LABELS];
	size_t n;
	const char *container_id;
};

static void add_label(struct labelbuf *b, const char *key, const char *value)
{
	const char *name;

	if (!value)
		return;
	if (!strcmp(key, "container.id")) {
		b->container_id = value;	/* container.name wins when both are there */
		return;
	}
	name = label_name(key);
	if (!name || b->n == MAX_LABELS)
		return;
	for (size_t i = 0; i < b->n; i++)
		if (!strcmp(b->v[i].key, name))
			return;	/* the first occurrence wins, as in Pyroscope */
	b->v[b->n++] = (struct profile_label){ name, value };
}

static void add_keyvalues(struct labelbuf *b, struct reader *r, KeyValue **kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *key = kv[i]->key && *kv[i]->key ? kv[i]->key : str(r, kv[i]->key_strindex);
		add_label(b, key, value_text(r, kv[i]->value));
	}
}

/* Adds the dictionary attributes idx[0..n) to b; false when one is out of the table. */
static bool add_indexed(struct labelbuf *b, struct reader *r, const int32_t *idx, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (idx[i] < 0 || (size_t)idx[i] >= r->d->n_attribute_table)
			return false;
		if (!idx[i])
			continue;
		const Otlp__V1development__KeyValueAndUnit *a = r->d->attribute_table[idx[i]];
		if (!str_ok(r, a->key_strindex))
			return false;
		add_label(b, str(r, a->key_strindex), value_text(r, a->value));
	}
	return true;
}

/* container.id stands for the container when the attributes name none. */
static void finish_labels(struct labelbuf *b)
{
	for (size_t i = 0; i < b->n; i++)
		if (!strcmp(b->v[i].key, "container"))
			return;
	if (b->container_id && b->n < MAX_LABELS)
		b->v[b->n++] = (struct profile_label){ "container", b->container_id };
}

/* The annotation of a location by its profile.frame.type attribute ("" for native, go). */
static const char *frame_suffix(struct reader *r, const Otlp__V1development__Location *loc)
{
	static const struct { const char *type, *suffix; } types[] = {
		{ "kernel", "_[k]" }, { "cpython", "_[p]" }, { "jvm", "_[j]" }, { "v8js", "_[js]" },
		{ "ruby", "_[rb]" }, { "php", "_[php]" }, { "dotnet", "_[net]" },
	};

	for (size_t i = 0; i < loc->n_attribute_indices; i++) {
		int32_t a = loc->attribute_indices[i];
		if (a <= 0 || (size_t)a >= r->d->n_attribute_table)
			continue;
		const Otlp__V1development__KeyValueAndUnit *kv = r->d->attribute_table[a];
		if (kv->value && kv->value->value_case == OTLP__V1DEVELOPMENT__ANY_VALUE__VALUE_INT_VALUE)
			continue;
		const char *v = value_text(r, kv->value);
		if (!v || strcmp(str(r, kv->key_strindex), "profile.frame.type"))
			continue;
		for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++)
			if (!strcmp(v, types[k].type))
				return types[k].suffix;
	}
	return "";
}

/* Interns the frames of location index li into ids (root first within the location: the
 * caller line first). Returns the number added, or -1 for a bad index. */
static int location_frames(struct reader *r, struct profile *p, int32_t li, uint32_t *ids,
			   size_t room)
{
	const Dictionary *d = r->d;
	const Otlp__V1development__Location *loc;
	const char *suffix;
	size_t n = 0;

	if (li <= 0 || (size_t)li >= d->n_location_table)
		return -1;
	loc = d->location_table[li];
	if (loc->mapping_index < 0 || (size_t)loc->mapping_index >= d->n_mapping_table)
		return -1;
	suffix = frame_suffix(r, loc);
	for (size_t k = loc->n_lines; k-- > 0 && n < room;) {
		const Otlp__V1development__Line *line = loc->lines[k];
		if (line->function_index <= 0 || (size_t)line->function_index >= d->n_function_table)
			return -1;
		const Otlp__V1development__Function *f = d->function_table[line->function_index];
		if (!str_ok(r, f->name_strindex) || !str_ok(r, f->filename_strindex))
			return -1;
		const char *name = str(r, f->name_strindex), *file = str(r, f->filename_strindex);
		strbuf_reset(&r->sb);
		strbuf_addstr(&r->sb, *name ? name : "[unknown]");
		if (*suffix && strcmp(suffix, "_[k]") && strcmp(suffix, "_[j]") && *file) {
			if (line->line > 0)
				strbuf_addf(&r->sb, " (%s:%" PRId64 ")", file, line->line);
			else
				strbuf_addf(&r->sb, " (%s)", file);
		}
		/* the last line is the location's own function; the ones before it are inlined */
		strbuf_addstr(&r->sb, k + 1 < loc->n_lines ? "_[i]" : suffix);
		ids[n++] = profile__intern(p, r->sb.buf, r->sb.len);
	}
	if (!loc->n_lines && n < room) {
		const char *file = "";
		if (loc->mapping_index > 0) {
			const Otlp__V1development__Mapping *m = d->mapping_table[loc->mapping_index];
			if (!str_ok(r, m->filename_strindex))
				return -1;
			file = str(r, m->filename_strindex);
			const char *slash = strrchr(file, '/');
			file = slash ? slash + 1 : file;
		}
		strbuf_reset(&r->sb);
		strbuf_addf(&r->sb, "(%s+0x%" PRIx64 ")", *file ? file : "unknown", loc->address);
		ids[n++] = profile__intern(p, r->sb.buf, r->sb.len);
	}
	return (int)n;
}

/* One OTLP Profile into out->p. Returns 0, or -EINVAL with r->err set. */
static int read_profile(struct reader *r, const Otlp__V1development__Profile *pr,
			struct labelbuf *base, struct otlp_profile *out)
{
	const Dictionary *d = r->d;
	uint32_t *ids = xmalloc(MAX_DEPTH * 4 * sizeof(*ids));
	int ret = -EINVAL;

	out->p = profile__new();
	if (pr->sample_type) {
		if (!str_ok(r, pr->sample_type->type_strindex) || !str_ok(r, pr->sample_type->unit_strindex)) {
			errmsg(r->err, r->errlen, "sample type outside the string table");
			goto out;
		}
		struct profile_type t = { str(r, pr->sample_type->type_strindex),
					  str(r, pr->sample_type->unit_strindex) };
		if (*t.type)
			profile__set_types(out->p, &t, 1);
	}
	if (pr->period_type) {
		if (!str_ok(r, pr->period_type->type_strindex) || !str_ok(r, pr->period_type->unit_strindex)) {
			errmsg(r->err, r->errlen, "period type outside the string table");
			goto out;
		}
		if (*str(r, pr->period_type->type_strindex))
			profile__set_period(out->p, str(r, pr->period_type->type_strindex),
					    str(r, pr->period_type->unit_strindex), pr->period);
	}
	struct labelbuf pl = *base;
	if (!add_indexed(&pl, r, pr->attribute_indices, pr->n_attribute_indices)) {
		errmsg(r->err, r->errlen, "profile attribute outside the attribute table");
		goto out;
	}
	for (size_t s = 0; s < pr->n_samples; s++) {
		const Otlp__V1development__Sample *sm = pr->samples[s];
		struct labelbuf sl = pl;
		uint64_t count = 0;
		size_t depth = 0;

		if (sm->stack_index < 0 || (size_t)sm->stack_index >= d->n_stack_table ||
		    !add_indexed(&sl, r, sm->attribute_indices, sm->n_attribute_indices) ||
		    sm->link_index < 0 || (sm->link_index && (size_t)sm->link_index >= d->n_link_table)) {
			errmsg(r->err, r->errlen, "sample %zu refers outside the dictionary", s);
			goto out;
		}
		for (size_t v = 0; v < sm->n_values; v++)
			count += sm->values[v] > 0 ? (uint64_t)sm->values[v] : 0;
		if (!sm->n_values)
			count = sm->n_timestamps_unix_nano;
		const Otlp__V1development__Stack *st = d->stack_table[sm->stack_index];
		/* leaf first on the wire: read root first, cut at the root end when too deep */
		size_t first = st->n_location_indices > MAX_DEPTH ? st->n_location_indices - MAX_DEPTH : 0;
		for (size_t k = st->n_location_indices; k-- > first;) {
			int got = location_frames(r, out->p, st->location_indices[k], ids + depth,
						  MAX_DEPTH * 4 - depth);
			if (got < 0) {
				errmsg(r->err, r->errlen, "sample %zu: location outside the dictionary", s);
				goto out;
			}
			depth += (size_t)got;
		}
		if (!depth || !count)
			continue;
		finish_labels(&sl);
		uint32_t set = profile__labelset(out->p, sl.v, sl.n);
		profile__add_labeled(out->p, ids, (uint32_t)depth, set, count);
	}
	if (pr->time_unix_nano) {
		out->from = (int64_t)(pr->time_unix_nano / 1000000000u);
		out->until = (int64_t)((pr->time_unix_nano + pr->duration_nano) / 1000000000u);
		if (out->until <= out->from)
			out->until = out->from + 1;
	}
	ret = 0;
out:
	free(ids);
	return ret;
}

/* The service of a resource: service.name, else unknown_service:<executable>. */
static char *service_of(struct reader *r, const Otlp__V1development__Resource *res)
{
	const char *name = NULL, *exe = NULL;

	for (size_t i = 0; res && i < res->n_attributes; i++) {
		const KeyValue *kv = res->attributes[i];
		const char *key = kv->key && *kv->key ? kv->key : str(r, kv->key_strindex);
		const char *v = value_text(r, kv->value);
		if (!v || !*v)
			continue;
		if (!strcmp(key, "service.name") && !name)
			name = v;
		else if (!strcmp(key, "process.executable.name") && !exe)
			exe = v;
	}
	if (name)
		return xstrdup(name);
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "unknown_service");
	if (exe)
		strbuf_addf(&sb, ":%s", exe);
	return strbuf_detach(&sb, NULL);
}

void otlp__free(struct otlp_profile *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].service);
		profile__free(v[i].p);
	}
	free(v);
}

int otlp__parse(const void *data, size_t len, struct otlp_profile **out, size_t *n, char *err,
		size_t errlen)
{
	struct strbuf upgraded = STRBUF_INIT;

	if (otlp__earlier_samples(data, len)) {
		strbuf_add(&upgraded, data, len);
		otlp__upgrade_samples(upgraded.buf, upgraded.len);
		data = upgraded.buf;
	}
	Request *req = otlp__v1development__export_profiles_service_request__unpack(NULL, len, data);
	strbuf_release(&upgraded);
	struct reader r = { .err = err, .errlen = errlen, .sb = STRBUF_INIT };
	struct otlp_profile *v = NULL;
	size_t nv = 0, alloc = 0;
	int ret = 0;

	*out = NULL;
	*n = 0;
	if (!req) {
		errmsg(err, errlen, "body is not an ExportProfilesServiceRequest");
		return -EINVAL;
	}
	if (!req->dictionary && req->n_resource_profiles) {
		errmsg(err, errlen, "the request has no dictionary");
		otlp__v1development__export_profiles_service_request__free_unpacked(req, NULL);
		return -EINVAL;
	}
	r.d = req->dictionary;
	for (size_t i = 0; i < req->n_resource_profiles && !ret; i++) {
		const Otlp__V1development__ResourceProfiles *rp = req->resource_profiles[i];
		struct labelbuf res = { .n = 0 };
		if (rp->resource)
			add_keyvalues(&res, &r, rp->resource->attributes, rp->resource->n_attributes);
		for (size_t j = 0; j < rp->n_scope_profiles && !ret; j++) {
			const Otlp__V1development__ScopeProfiles *sp = rp->scope_profiles[j];
			struct labelbuf scope = res;
			if (sp->scope)
				add_keyvalues(&scope, &r, sp->scope->attributes, sp->scope->n_attributes);
			for (size_t k = 0; k < sp->n_profiles && !ret; k++) {
				if (nv == alloc) {
					alloc = alloc ? 2 * alloc : 4;
					v = xrealloc(v, alloc * sizeof(*v));
				}
				memset(&v[nv], 0, sizeof(v[nv]));
				v[nv].service = service_of(&r, rp->resource);
				ret = read_profile(&r, sp->profiles[k], &scope, &v[nv]);
				nv++;
			}
		}
	}
	strbuf_release(&r.sb);
	for (size_t i = 0; i < r.npool; i++)
		free(r.pool[i]);
	free(r.pool);
	otlp__v1development__export_profiles_service_request__free_unpacked(req, NULL);
	if (ret) {
		otlp__free(v, nv);
		return ret;
	}
	*out = v;
	*n = nv;
	return 0;
}
