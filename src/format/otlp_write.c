/* OTLP profiles written with protobuf-c (build/gen/otlp_profiles.pb-c.h): see otlp.h. */
#include "format/otlp.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "format/col.h"
#include "otlp_profiles.pb-c.h"
#include "util/hashmap.h"

typedef Otlp__V1development__ExportProfilesServiceRequest Request;
typedef Otlp__V1development__ProfilesDictionary Dictionary;
typedef Otlp__V1development__KeyValue KeyValue;
typedef Otlp__V1development__AnyValue AnyValue;

/* Writing: the tables of one request, each starting with its zero entry. */
struct writer {
	struct hashmap *ids;	/* string -> index + 1 */
	char **strings;
	size_t nstrings;
};

static int32_t intern(struct writer *w, const char *s)
{
	bool created;
	void **slot = hashmap__insert(w->ids, s, strlen(s), &created);

	if (created) {
		w->strings = xrealloc(w->strings, (w->nstrings + 1) * sizeof(*w->strings));
		w->strings[w->nstrings] = (char *)s;	/* borrowed: the profile outlives the write */
		*slot = (void *)(uintptr_t)++w->nstrings;
	}
	return (int32_t)((uintptr_t)*slot - 1);
}

/* A kiln frame's name without its annotation, and the OTLP frame type the annotation
 * says. The name is written into sb. */
static const char *split_frame(const char *frame, struct strbuf *sb)
{
	static const struct { const char *suffix, *type; } types[] = {
		{ "_[k]", "kernel" }, { "_[p]", "cpython" }, { "_[j]", "jvm" }, { "_[js]", "v8js" },
		{ "_[rb]", "ruby" }, { "_[php]", "php" }, { "_[net]", "dotnet" }, { "_[i]", "native" },
	};
	size_t len = strlen(frame);

	strbuf_reset(sb);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		size_t sl = strlen(types[i].suffix);
		if (len > sl && !strcmp(frame + len - sl, types[i].suffix)) {
			strbuf_add(sb, frame, len - sl);
			return types[i].type;
		}
	}
	strbuf_addstr(sb, frame);
	return "native";
}

typedef Otlp__V1development__Location Location;
typedef Otlp__V1development__Line Line;
typedef Otlp__V1development__Function Function;
typedef Otlp__V1development__Stack Stack;
typedef Otlp__V1development__Sample Sample;
typedef Otlp__V1development__KeyValueAndUnit KeyValueAndUnit;

int otlp__write(struct strbuf *out, const struct profile *p, const char *service,
		const struct otlp_attr *attrs, size_t nattrs, uint64_t start_ns,
		uint64_t duration_ns)
{
	size_t nn = profile__nr_names(p), ns = profile__nr_stacks(p), nsets = profile__nr_labelsets(p);
	struct writer w = { .ids = hashmap__new() };
	struct strbuf sb = STRBUF_INIT;
	char **names = xcalloc(nn + 1, sizeof(*names));
	const char *frame_types[] = { "native", "kernel", "cpython", "jvm", "v8js", "ruby", "php",
				      "dotnet" };
	const size_t ntypes = sizeof(frame_types) / sizeof(frame_types[0]);
	AnyValue *type_values = xcalloc(ntypes, sizeof(*type_values));
	KeyValueAndUnit *attr = xcalloc(ntypes + 1, sizeof(*attr)), **attrp = xcalloc(ntypes + 1, sizeof(*attrp));
	Function *fn = xcalloc(nn + 1, sizeof(*fn)), **fnp = xcalloc(nn + 1, sizeof(*fnp));
	Location *loc = xcalloc(nn + 1, sizeof(*loc)), **locp = xcalloc(nn + 1, sizeof(*locp));
	Line *line = xcalloc(nn + 1, sizeof(*line)), **linep = xcalloc(nn + 1, sizeof(*linep));
	int32_t *loc_attr = xcalloc(nn + 1, sizeof(*loc_attr));
	Stack *stack = xcalloc(ns + 1, sizeof(*stack)), **stackp = xcalloc(ns + 1, sizeof(*stackp));
	Otlp__V1development__Mapping map0 = OTLP__V1DEVELOPMENT__MAPPING__INIT, *mapp = &map0;
	Otlp__V1development__Link link0 = OTLP__V1DEVELOPMENT__LINK__INIT, *linkp = &link0;
	int32_t *locs = NULL;
	size_t total_depth = 0;
	int ret = 0;

	intern(&w, "");
	/* frame types as the attribute table: index 1 + type */
	otlp__v1development__key_value_and_unit__init(&attr[0]);
	attrp[0] = &attr[0];
	for (size_t i = 0; i < ntypes; i++) {
		otlp__v1development__any_value__init(&type_values[i]);
		type_values[i].value_case = OTLP__V1DEVELOPMENT__ANY_VALUE__VALUE_STRING_VALUE;
		type_values[i].string_value = (char *)frame_types[i];
		otlp__v1development__key_value_and_unit__init(&attr[i + 1]);
		attr[i + 1].key_strindex = intern(&w, "profile.frame.type");
		attr[i + 1].value = &type_values[i];
		attrp[i + 1] = &attr[i + 1];
	}
	/* one function and one location per frame name: index 1 + frame id */
	otlp__v1development__function__init(&fn[0]);
	otlp__v1development__location__init(&loc[0]);
	fnp[0] = &fn[0];
	locp[0] = &loc[0];
	for (size_t i = 0; i < nn; i++) {
		const char *type = split_frame(profile__name(p, (uint32_t)i), &sb);
		names[i] = strbuf_detach(&sb, NULL);
		otlp__v1development__function__init(&fn[i + 1]);
		fn[i + 1].name_strindex = fn[i + 1].system_name_strindex = intern(&w, names[i]);
		fnp[i + 1] = &fn[i + 1];
		otlp__v1development__line__init(&line[i]);
		line[i].function_index = (int32_t)(i + 1);
		linep[i] = &line[i];
		otlp__v1development__location__init(&loc[i + 1]);
		loc[i + 1].n_lines = 1;
		loc[i + 1].lines = &linep[i];
		for (size_t t = 0; t < ntypes; t++)
			if (!strcmp(type, frame_types[t]))
				loc_attr[i] = (int32_t)(t + 1);
		loc[i + 1].n_attribute_indices = 1;
		loc[i + 1].attribute_indices = &loc_attr[i];
		locp[i + 1] = &loc[i + 1];
	}
	/* one stack per stack, leaf first */
	for (size_t i = 0; i < ns; i++)
		total_depth += profile__stack(p, i).depth;
	locs = xmalloc((total_depth + 1) * sizeof(*locs));
	otlp__v1development__stack__init(&stack[0]);
	stackp[0] = &stack[0];
	for (size_t i = 0, at = 0; i < ns; i++) {
		struct profile_stack s = profile__stack(p, i);
		otlp__v1development__stack__init(&stack[i + 1]);
		stack[i + 1].location_indices = locs + at;
		stack[i + 1].n_location_indices = s.depth;
		for (uint32_t d = s.depth; d-- > 0;)
			locs[at++] = (int32_t)(s.frames[d] + 1);
		stackp[i + 1] = &stack[i + 1];
	}

	/* one resource per label set's (container, process), its samples in one profile */
	struct group { const char *container, *process; size_t n; Sample **samples; } *groups =
		xcalloc(nsets + 1, sizeof(*groups));
	size_t ngroups = 0;
	uint32_t *group_of = xcalloc(nsets + 1, sizeof(*group_of));
	for (size_t set = 0; set < nsets; set++) {
		const char *c = profile__label(p, (uint32_t)set, COL_LABEL_CONTAINER);
		const char *pr = profile__label(p, (uint32_t)set, COL_LABEL_PROCESS);
		size_t g = 0;
		while (g < ngroups && !(!strcmp(groups[g].container ? groups[g].container : "", c ? c : "") &&
					!strcmp(groups[g].process ? groups[g].process : "", pr ? pr : "")))
			g++;
		if (g == ngroups)
			groups[ngroups++] = (struct group){ c, pr, 0, NULL };
		group_of[set] = (uint32_t)g;
	}
	Sample *samples = xcalloc(ns + 1, sizeof(*samples));
	int64_t *values = xcalloc(ns + 1, sizeof(*values));
	for (size_t g = 0; g < ngroups; g++)
		groups[g].samples = xcalloc(ns + 1, sizeof(Sample *));
	for (size_t i = 0; i < ns; i++) {
		struct profile_stack s = profile__stack(p, i);
		struct group *g = &groups[group_of[s.labels < nsets ? s.labels : 0]];
		if (!s.count)
			continue;
		otlp__v1development__sample__init(&samples[i]);
		samples[i].stack_index = (int32_t)(i + 1);
		values[i] = (int64_t)s.count;
		samples[i].values = &values[i];
		samples[i].n_values = 1;
		g->samples[g->n++] = &samples[i];
	}

	struct profile_type t0 = profile__type(p, 0), period;
	int64_t period_value = 0;
	bool has_period = profile__period(p, &period, &period_value);
	Otlp__V1development__ValueType st = OTLP__V1DEVELOPMENT__VALUE_TYPE__INIT,
				       pt = OTLP__V1DEVELOPMENT__VALUE_TYPE__INIT;
	st.type_strindex = intern(&w, t0.type);
	st.unit_strindex = intern(&w, t0.unit);
	if (has_period) {
		pt.type_strindex = intern(&w, period.type);
		pt.unit_strindex = intern(&w, period.unit);
	}
	size_t nres_attrs = nattrs + 3;
	Otlp__V1development__ResourceProfiles *rps = xcalloc(ngroups + 1, sizeof(*rps));
	Otlp__V1development__ResourceProfiles **rpp = xcalloc(ngroups + 1, sizeof(*rpp));
	Otlp__V1development__Resource *res = xcalloc(ngroups + 1, sizeof(*res));
	Otlp__V1development__ScopeProfiles *sps = xcalloc(ngroups + 1, sizeof(*sps));
	Otlp__V1development__ScopeProfiles **spp = xcalloc(ngroups + 1, sizeof(*spp));
	Otlp__V1development__Profile *prs = xcalloc(ngroups + 1, sizeof(*prs));
	Otlp__V1development__Profile **prp = xcalloc(ngroups + 1, sizeof(*prp));
	KeyValue *kvs = xcalloc((ngroups + 1) * nres_attrs, sizeof(*kvs));
	KeyValue **kvp = xcalloc((ngroups + 1) * nres_attrs, sizeof(*kvp));
	AnyValue *avs = xcalloc((ngroups + 1) * nres_attrs, sizeof(*avs));
	Otlp__V1development__InstrumentationScope scope = OTLP__V1DEVELOPMENT__INSTRUMENTATION_SCOPE__INIT;
	scope.name = "kiln";
	size_t nrp = 0;
	for (size_t g = 0; g < ngroups; g++) {
		KeyValue *kv = kvs + g * nres_attrs, **kp = kvp + g * nres_attrs;
		if (!groups[g].n)
			continue;	/* a label set no sample has */
		AnyValue *av = avs + g * nres_attrs;
		size_t k = 0;
		const char *keys[3] = { "service.name", "container.name", "process.executable.name" };
		const char *vals[3] = { service, groups[g].container, groups[g].process };
		for (size_t a = 0; a < 3 + nattrs; a++) {
			const char *key = a < 3 ? keys[a] : attrs[a - 3].key;
			const char *val = a < 3 ? vals[a] : attrs[a - 3].value;
			if (!val || !*val)
				continue;
			otlp__v1development__any_value__init(&av[k]);
			av[k].value_case = OTLP__V1DEVELOPMENT__ANY_VALUE__VALUE_STRING_VALUE;
			av[k].string_value = (char *)val;
			otlp__v1development__key_value__init(&kv[k]);
			kv[k].key = (char *)key;
			kv[k].value = &av[k];
			kp[k] = &kv[k];
			k++;
		}
		otlp__v1development__resource__init(&res[g]);
		res[g].attributes = kp;
		res[g].n_attributes = k;
		otlp__v1development__profile__init(&prs[g]);
		prs[g].sample_type = &st;
		prs[g].samples = groups[g].samples;
		prs[g].n_samples = groups[g].n;
		prs[g].time_unix_nano = start_ns;
		prs[g].duration_nano = duration_ns;
		if (has_period) {
			prs[g].period_type = &pt;
			prs[g].period = period_value;
		}
		prp[g] = &prs[g];
		otlp__v1development__scope_profiles__init(&sps[g]);
		sps[g].scope = &scope;
		sps[g].profiles = &prp[g];
		sps[g].n_profiles = 1;
		spp[g] = &sps[g];
		otlp__v1development__resource_profiles__init(&rps[g]);
		rps[g].resource = &res[g];
		rps[g].scope_profiles = &spp[g];
		rps[g].n_scope_profiles = 1;
		rpp[nrp++] = &rps[g];
	}

	Dictionary dict = OTLP__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT;
	dict.mapping_table = &mapp;
	dict.n_mapping_table = 1;
	dict.location_table = locp;
	dict.n_location_table = nn + 1;
	dict.function_table = fnp;
	dict.n_function_table = nn + 1;
	dict.link_table = &linkp;
	dict.n_link_table = 1;
	dict.attribute_table = attrp;
	dict.n_attribute_table = ntypes + 1;
	dict.stack_table = stackp;
	dict.n_stack_table = ns + 1;
	dict.string_table = w.strings;
	dict.n_string_table = w.nstrings;
	Request req = OTLP__V1DEVELOPMENT__EXPORT_PROFILES_SERVICE_REQUEST__INIT;
	req.dictionary = &dict;
	req.resource_profiles = rpp;
	req.n_resource_profiles = nrp;

	size_t len = otlp__v1development__export_profiles_service_request__get_packed_size(&req);
	strbuf_grow(out, len + 1);
	otlp__v1development__export_profiles_service_request__pack(&req, (uint8_t *)out->buf + out->len);
	out->len += len;
	out->buf[out->len] = 0;

	for (size_t g = 0; g < ngroups; g++)
		free(groups[g].samples);
	free(groups), free(group_of), free(samples), free(values);
	free(rps), free(rpp), free(res), free(sps), free(spp), free(prs), free(prp);
	free(kvs), free(kvp), free(avs);
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names), free(type_values), free(attr), free(attrp), free(fn), free(fnp);
	free(loc), free(locp), free(line), free(linep), free(loc_attr), free(stack), free(stackp);
	free(locs), free(w.strings);
	hashmap__free(w.ids);
	strbuf_release(&sb);
	return ret;
}
