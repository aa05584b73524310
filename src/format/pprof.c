/* pprof: profile.proto messages (protobuf-c, build/gen/profile.pb-c.h), gzipped with zlib.
 *
 * Writing: one Function and one Location per distinct frame name (ids are the profile's
 * frame id + 1), the name kept verbatim with its runtime annotation; a sample per stack,
 * leaf first as pprof wants. Reading: every Line of every Location becomes a frame, so
 * inlined functions stay visible; a Location without lines is named after its mapping
 * and address, "(module+0xOFFSET)", like the agent's unresolved frames. */
#include "format/pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile.pb-c.h"
#include "util/gzip.h"
#include "util/hashmap.h"
#include "util/log.h"

#define PPROF_MAX_INFLATED (1u << 30)	/* refuse to inflate more than 1 GiB */
#define PPROF_DEFAULT_HZ 11		/* the agent's default, when the metadata has none */

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Label Label;

/* The sampling frequency in Hz from the metadata, or 0 when it has none. */
static double meta_frequency(const struct profile *p)
{
	static const char *const keys[] = { "frequency", "sampling_frequency", "profiling_frequency" };
	const json_t *meta = profile__meta_const(p);

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const json_t *v = json_object_get(meta, keys[i]);
		if (json_is_number(v) && json_number_value(v) > 0)
			return json_number_value(v);
	}
	return 0;
}

/* Extra strings of the string table (types, units, labels), after the frame names. */
struct strings {
	char **v;
	size_t n, alloc;
	struct hashmap *ids;	/* string -> index + 1 */
};

/* The string table index of s: 0 for "", else base + its index among the extra ones. */
static int64_t string_index(struct strings *t, const char *s, size_t base)
{
	bool created;
	void **slot;

	if (!*s)
		return 0;
	slot = hashmap__insert(t->ids, s, strlen(s), &created);
	if (created) {
		if (t->n == t->alloc) {
			t->alloc = t->alloc ? t->alloc * 2 : 64;
			t->v = xrealloc(t->v, t->alloc * sizeof(*t->v));
		}
		t->v[t->n] = (char *)s;
		*slot = (void *)(uintptr_t)++t->n;
	}
	return (int64_t)(base + (uintptr_t)*slot - 1);
}

/* The period to write: the profile's own, else, for an untyped profile (its one sample
 * type still "samples"/"count": collapsed stacks, gProfiler's .col), CPU time at the
 * metadata's frequency (PPROF_DEFAULT_HZ when it has none), as gProfiler means them. */
static bool write_period(const struct profile *p, struct profile_type *t, int64_t *period)
{
	double hz;

	if (profile__period(p, t, period))
		return true;
	if (profile__nr_types(p) != 1 || profile__find_type(p, "samples", "count"))
		return false;	/* the index of samples/count must be 0 */
	hz = meta_frequency(p);
	*t = (struct profile_type){ "cpu", "nanoseconds" };
	*period = (int64_t)llround(1e9 / (hz > 0 ? hz : PPROF_DEFAULT_HZ));
	return true;
}

static int encode(struct strbuf *out, const struct profile *p, bool gzip)
{
	size_t nn = profile__nr_names(p), ns = profile__nr_stacks(p), nsamples = 0;
	size_t nt = profile__nr_types(p), nsets = profile__nr_labelsets(p), nv;
	struct profile_type ptype;
	int64_t period = 0;
	bool has_period = write_period(p, &ptype, &period);
	/* a profile that only counts samples also gets its period's type, valued count *
	 * period (pprof's samples/count + cpu/nanoseconds) */
	bool derived = has_period && nt == 1 && !profile__find_type(p, "samples", "count") &&
		       profile__find_type(p, ptype.type, ptype.unit) < 0;
	Profile pr = PERFTOOLS__PROFILES__PROFILE__INIT;
	ValueType *vt, **vtp, pvt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Mapping map = PERFTOOLS__PROFILES__MAPPING__INIT, *mapp = &map;
	struct strings extra = { .ids = hashmap__new() };
	const size_t first_name = 1, base = 1 + nn;	/* "", the frame names, the extra ones */
	Function *funcs = xcalloc(nn ? nn : 1, sizeof(*funcs));
	Function **funcp = xmalloc((nn ? nn : 1) * sizeof(*funcp));
	Location *locs = xcalloc(nn ? nn : 1, sizeof(*locs));
	Location **locp = xmalloc((nn ? nn : 1) * sizeof(*locp));
	Line *lines = xcalloc(nn ? nn : 1, sizeof(*lines));
	Line **linep = xmalloc((nn ? nn : 1) * sizeof(*linep));
	Sample *samples = xcalloc(ns ? ns : 1, sizeof(*samples));
	Sample **samplep = xmalloc((ns ? ns : 1) * sizeof(*samplep));
	Label **setlabels = xcalloc(nsets, sizeof(*setlabels));	/* per label set */
	Label ***setlabelp = xcalloc(nsets, sizeof(*setlabelp));
	size_t *setn = xcalloc(nsets, sizeof(*setn));
	uint64_t *ids = NULL;
	int64_t *values;
	char **strings;
	size_t total_frames = 0, at = 0, len;
	uint8_t *packed;
	int ret;

	nv = nt + derived;
	vt = xcalloc(nv, sizeof(*vt));
	vtp = xmalloc(nv * sizeof(*vtp));
	values = xmalloc((ns ? ns : 1) * nv * sizeof(*values));
	for (size_t i = 0; i < nv; i++) {
		struct profile_type t = i < nt ? profile__type(p, i) : ptype;
		perftools__profiles__value_type__init(&vt[i]);
		vt[i].type = string_index(&extra, t.type, base);
		vt[i].unit = string_index(&extra, t.unit, base);
		vtp[i] = &vt[i];
	}
	if (has_period) {
		pvt.type = string_index(&extra, ptype.type, base);
		pvt.unit = string_index(&extra, ptype.unit, base);
		pr.period_type = &pvt;
		pr.period = period;
	}
	for (size_t i = 1; i < nsets; i++) {
		const struct profile_label *l = profile__labels(p, (uint32_t)i, &setn[i]);
		setlabels[i] = xcalloc(setn[i], sizeof(**setlabels));
		setlabelp[i] = xmalloc(setn[i] * sizeof(**setlabelp));
		size_t k = 0;
		for (size_t j = 0; j < setn[i]; j++) {
			if (!*l[j].value)	/* pprof reads a label without a string as numeric */
				continue;
			perftools__profiles__label__init(&setlabels[i][k]);
			setlabels[i][k].key = string_index(&extra, l[j].key, base);
			setlabels[i][k].str = string_index(&extra, l[j].value, base);
			setlabelp[i][k] = &setlabels[i][k];
			k++;
		}
		setn[i] = k;
	}
	map.id = 1;
	map.filename = string_index(&extra, "kiln", base);
	map.has_functions = 1;
	for (size_t i = 0; i < nn; i++) {
		perftools__profiles__function__init(&funcs[i]);
		funcs[i].id = i + 1;
		funcs[i].name = funcs[i].system_name = (int64_t)(first_name + i);
		funcp[i] = &funcs[i];
		perftools__profiles__line__init(&lines[i]);
		lines[i].function_id = i + 1;
		linep[i] = &lines[i];
		perftools__profiles__location__init(&locs[i]);
		locs[i].id = i + 1;
		locs[i].mapping_id = 1;
		locs[i].n_line = 1;
		locs[i].line = &linep[i];
		locp[i] = &locs[i];
	}
	for (size_t i = 0; i < ns; i++)
		total_frames += profile__stack(p, i).depth;
	ids = xmalloc((total_frames ? total_frames : 1) * sizeof(*ids));
	for (size_t i = 0; i < ns; i++) {
		struct profile_stack s = profile__stack(p, i);
		Sample *smp = &samples[nsamples];
		bool any = false;
		for (size_t t = 0; t < nt; t++)
			any |= s.values[t] != 0;
		if (!any)
			continue;
		perftools__profiles__sample__init(smp);
		smp->location_id = &ids[at];
		smp->n_location_id = s.depth;
		for (uint32_t j = s.depth; j-- > 0;)	/* leaf first */
			ids[at++] = (uint64_t)s.frames[j] + 1;
		smp->value = &values[nv * nsamples];
		smp->n_value = nv;
		for (size_t t = 0; t < nt; t++)
			smp->value[t] = (int64_t)s.values[t];
		if (derived)
			smp->value[nt] = (int64_t)s.count * period;
		if (s.labels && s.labels < nsets) {
			smp->n_label = setn[s.labels];
			smp->label = setlabelp[s.labels];
		}
		samplep[nsamples++] = smp;
	}
	strings = xmalloc((first_name + nn + extra.n) * sizeof(*strings));
	strings[0] = "";
	for (size_t i = 0; i < nn; i++)
		strings[first_name + i] = (char *)profile__name(p, (uint32_t)i);
	for (size_t i = 0; i < extra.n; i++)
		strings[base + i] = extra.v[i];
	pr.n_sample_type = nv, pr.sample_type = vtp;
	pr.n_sample = nsamples, pr.sample = samplep;
	pr.n_mapping = 1, pr.mapping = &mapp;
	pr.n_location = nn, pr.location = locp;
	pr.n_function = nn, pr.function = funcp;
	pr.n_string_table = base + extra.n, pr.string_table = strings;

	len = perftools__profiles__profile__get_packed_size(&pr);
	packed = xmalloc(len ? len : 1);
	perftools__profiles__profile__pack(&pr, packed);
	if (gzip) {
		ret = gzip__compress(out, packed, len);
	} else {
		strbuf_add(out, packed, len);
		ret = 0;
	}
	free(packed);
	for (size_t i = 1; i < nsets; i++)
		free(setlabels[i]), free(setlabelp[i]);
	free(setlabels), free(setlabelp), free(setn), free(vt), free(vtp);
	free(extra.v);
	hashmap__free(extra.ids);
	free(strings), free(funcs), free(funcp), free(locs), free(locp), free(lines), free(linep);
	free(samples), free(samplep), free(ids), free(values);
	return ret;
}

int pprof__write(struct strbuf *out, const struct profile *p)
{
	return encode(out, p, true);
}

int pprof__write_raw(struct strbuf *out, const struct profile *p)
{
	return encode(out, p, false);
}

/* Inflates gzip data into out, refusing more than PPROF_MAX_INFLATED bytes. */
static int gunzip(const void *data, size_t len, struct strbuf *out, char *err, size_t errlen)
{
	char why[128] = "";
	int ret = gzip__decompress_why(out, data, len, PPROF_MAX_INFLATED, why,
				       sizeof(why));

	if (ret == -EFBIG)
		errmsg(err, errlen, "gzip data inflates to more than %u bytes", PPROF_MAX_INFLATED);
	else if (ret < 0)
		errmsg(err, errlen, "corrupt gzip data: %s", why[0] ? why : strerror(-ret));
	return ret < 0 ? -EINVAL : 0;
}

struct reader {
	const Profile *pr;
	struct profile *p;
	struct hashmap *locs;	/* location id -> Location * */
	struct hashmap *funcs;	/* function id -> Function * */
	struct hashmap *maps;	/* mapping id -> Mapping * */
	char *err;
	size_t errlen;
};

static const char *str_at(const struct reader *r, int64_t i)
{
	return i >= 0 && (uint64_t)i < r->pr->n_string_table ? r->pr->string_table[i] : NULL;
}

static void *by_id(struct hashmap *m, uint64_t id)
{
	void **slot = hashmap__find(m, &id, sizeof(id));
	return slot ? *slot : NULL;
}

static int index_ids(struct hashmap *m, void **items, size_t n, size_t id_off, const char *what,
		     struct reader *r)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t id;
		bool created;
		memcpy(&id, (char *)items[i] + id_off, sizeof(id));
		void **slot = hashmap__insert(m, &id, sizeof(id), &created);
		if (!created || !id) {
			errmsg(r->err, r->errlen, "%s id %" PRIu64 " is %s", what, id,
			       id ? "duplicated" : "zero");
			return -EINVAL;
		}
		*slot = items[i];
	}
	return 0;
}

/* Appends the frames of location id, leaf first, to *frames. */
static int add_location(struct reader *r, uint64_t id, uint32_t **frames, size_t *n, size_t *alloc)
{
	const Location *loc = by_id(r->locs, id);
	char buf[256];

	if (!loc) {
		errmsg(r->err, r->errlen, "sample refers to missing location %" PRIu64, id);
		return -EINVAL;
	}
	for (size_t k = 0; k < (loc->n_line ? loc->n_line : 1); k++) {
		const char *name;
		if (loc->n_line) {
			const Function *fn = by_id(r->funcs, loc->line[k]->function_id);
			name = fn ? str_at(r, fn->name) : NULL;
			if (!name) {
				errmsg(r->err, r->errlen, "location %" PRIu64 " has a bad function", id);
				return -EINVAL;
			}
		} else {
			const Mapping *m = by_id(r->maps, loc->mapping_id);
			const char *file = m ? str_at(r, m->filename) : NULL;
			if (m && file && *file)
				snprintf(buf, sizeof(buf), "(%s+0x%" PRIx64 ")", strrchr(file, '/') ?
					 strrchr(file, '/') + 1 : file,
					 loc->address - m->memory_start + m->file_offset);
			else
				snprintf(buf, sizeof(buf), "(unknown+0x%" PRIx64 ")", loc->address);
			name = buf;
		}
		if (*n == *alloc) {
			*alloc = *alloc ? *alloc * 2 : 64;
			*frames = xrealloc(*frames, *alloc * sizeof(**frames));
		}
		(*frames)[(*n)++] = profile__intern_str(r->p, name);
	}
	return 0;
}

/* The label set of a sample: its string labels (numeric ones are not kept). */
static uint32_t sample_labels(struct reader *r, const Sample *smp, struct profile_label **buf,
			      size_t *alloc)
{
	size_t n = 0;

	for (size_t i = 0; i < smp->n_label; i++) {
		const char *k = str_at(r, smp->label[i]->key), *v = str_at(r, smp->label[i]->str);
		if (!k || !*k || !v || !smp->label[i]->str)
			continue;
		if (n == *alloc) {
			*alloc = *alloc ? *alloc * 2 : 8;
			*buf = xrealloc(*buf, *alloc * sizeof(**buf));
		}
		(*buf)[n++] = (struct profile_label){ k, v };
	}
	return profile__labelset(r->p, *buf, n);
}

/* The sample types to read: every one (sample_type NULL), or the one named. Sets *only
 * to the index of the one named, or -1. */
static int read_types(struct reader *r, const char *sample_type, long *only)
{
	const Profile *pr = r->pr;
	struct profile_type *t;
	size_t vi;
	int ret;

	*only = -1;
	if (sample_type) {
		for (vi = 0; vi < pr->n_sample_type; vi++) {
			const char *n = str_at(r, pr->sample_type[vi]->type);
			if (n && !strcmp(n, sample_type))
				break;
		}
		if (vi == pr->n_sample_type) {
			errmsg(r->err, r->errlen, "profile has no sample type '%s'", sample_type);
			return -EINVAL;
		}
		*only = (long)vi;
		struct profile_type one = { sample_type, str_at(r, pr->sample_type[vi]->unit) };
		if (!one.unit)
			one.unit = "";
		return profile__set_types(r->p, &one, 1);
	}
	if (!pr->n_sample_type) {
		if (pr->n_sample) {
			errmsg(r->err, r->errlen, "profile has samples but no sample type");
			return -EINVAL;
		}
		return 0;
	}
	t = xmalloc(pr->n_sample_type * sizeof(*t));
	for (vi = 0; vi < pr->n_sample_type; vi++) {
		t[vi].type = str_at(r, pr->sample_type[vi]->type);
		t[vi].unit = str_at(r, pr->sample_type[vi]->unit);
		if (!t[vi].type || !t[vi].unit)
			break;
	}
	ret = vi < pr->n_sample_type ? -1 : profile__set_types(r->p, t, pr->n_sample_type);
	free(t);
	if (ret)
		errmsg(r->err, r->errlen, "sample type %zu has %s", vi,
		       vi < pr->n_sample_type ? "a bad string index" : "the type and unit of another");
	return ret ? -EINVAL : 0;
}

static int read_profile(struct reader *r, const char *sample_type)
{
	const Profile *pr = r->pr;
	size_t n, alloc = 0, alloc_lab = 0, nt;
	struct profile_label *lab = NULL;
	uint32_t *frames = NULL;
	uint64_t *vals;
	long only;
	int ret;

	ret = read_types(r, sample_type, &only);
	if (ret)
		return ret;
	nt = pr->n_sample_type;
	vals = xmalloc((nt ? nt : 1) * sizeof(*vals));
	ret = index_ids(r->locs, (void **)pr->location, pr->n_location, offsetof(Location, id),
			"location", r);
	if (!ret)
		ret = index_ids(r->funcs, (void **)pr->function, pr->n_function,
				offsetof(Function, id), "function", r);
	if (!ret)
		ret = index_ids(r->maps, (void **)pr->mapping, pr->n_mapping, offsetof(Mapping, id),
				"mapping", r);
	for (size_t s = 0; !ret && s < pr->n_sample; s++) {
		const Sample *smp = pr->sample[s];
		if (smp->n_value != nt) {
			errmsg(r->err, r->errlen, "sample %zu has %zu values for %zu sample types", s,
			       smp->n_value, nt);
			ret = -EINVAL;
			break;
		}
		for (size_t t = 0; t < nt; t++) {
			if ((only < 0 || (long)t == only) && smp->value[t] < 0) {
				errmsg(r->err, r->errlen, "sample %zu has a negative value", s);
				ret = -EINVAL;
			}
		}
		if (ret)
			break;
		n = 0;
		for (size_t l = 0; !ret && l < smp->n_location_id; l++)
			ret = add_location(r, smp->location_id[l], &frames, &n, &alloc);
		if (ret)
			break;
		for (size_t i = 0; i < n / 2; i++) {	/* pprof is leaf first; profiles root first */
			uint32_t t = frames[i];
			frames[i] = frames[n - 1 - i];
			frames[n - 1 - i] = t;
		}
		if (only >= 0)
			vals[0] = (uint64_t)smp->value[only];
		else
			for (size_t t = 0; t < nt; t++)
				vals[t] = (uint64_t)smp->value[t];
		profile__add_values(r->p, frames, (uint32_t)n, sample_labels(r, smp, &lab, &alloc_lab),
				    vals);
	}
	free(frames);
	free(vals);
	free(lab);
	if (!ret && pr->time_nanos > 0) {
		json_object_set_new(profile__meta(r->p), "time_nanos", json_integer(pr->time_nanos));
		if (pr->duration_nanos > 0)
			json_object_set_new(profile__meta(r->p), "duration_nanos",
					    json_integer(pr->duration_nanos));
	}
	if (!ret && pr->period_type && str_at(r, pr->period_type->type) &&
	    str_at(r, pr->period_type->unit))
		profile__set_period(r->p, str_at(r, pr->period_type->type),
				    str_at(r, pr->period_type->unit), pr->period);
	if (!ret && pr->period > 0 && pr->period_type && str_at(r, pr->period_type->unit) &&
	    !strcmp(str_at(r, pr->period_type->unit), "nanoseconds"))
		json_object_set_new(profile__meta(r->p), "frequency",
				    json_real(1e9 / (double)pr->period));
	return ret;
}

int pprof__parse(struct profile *p, const void *data, size_t len, const char *sample_type,
		 char *err, size_t errlen)
{
	struct strbuf raw = STRBUF_INIT;
	struct reader r = { .p = profile__new(), .err = err, .errlen = errlen };
	Profile *pr;
	int ret;

	if (len >= 2 && ((const uint8_t *)data)[0] == 0x1f && ((const uint8_t *)data)[1] == 0x8b) {
		ret = gunzip(data, len, &raw, err, errlen);
		if (ret) {
			profile__free(r.p);
			strbuf_release(&raw);
			return ret;
		}
		data = raw.buf;
		len = raw.len;
	}
	/* Zero bytes would decode as an empty message, which no pprof writer produces (its
	 * string table starts with ""): the upload or file is truncated or missing. */
	pr = len ? perftools__profiles__profile__unpack(NULL, len, data) : NULL;
	if (!pr) {
		errmsg(err, errlen, "not a pprof profile: %s",
		       len ? "protobuf decoding failed" : "empty input");
		profile__free(r.p);
		strbuf_release(&raw);
		return -EINVAL;
	}
	r.pr = pr;
	r.locs = hashmap__new();
	r.funcs = hashmap__new();
	r.maps = hashmap__new();
	ret = read_profile(&r, sample_type);
	if (!ret) {	/* all or nothing: p changes only when the whole profile was valid */
		static const char *const keys[] = { "frequency", "time_nanos", "duration_nanos" };
		profile__merge(p, r.p);
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			json_t *v = json_object_get(profile__meta(r.p), keys[i]);
			if (v)
				json_object_set(profile__meta(p), keys[i], v);
		}
	}
	hashmap__free(r.locs);
	hashmap__free(r.funcs);
	hashmap__free(r.maps);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	profile__free(r.p);
	strbuf_release(&raw);
	return ret;
}
