#include "profile/ptype.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

/* Sample types with a legacy suffix, in order of preference (the first one a profile has
 * is what "app.<suffix>" meant before types were stored). */
static const struct { const char *type, *suffix, *name; } types[] = {
	{ "samples", "cpu", "process_cpu" }, { "cpu", "cpu", "process_cpu" },
	{ "wall", "wall", "wall" },
	{ "inuse_space", "inuse_space", "memory" }, { "space", "inuse_space", "memory" },
	{ "inuse_objects", "inuse_objects", "memory" }, { "objects", "inuse_objects", "memory" },
	{ "alloc_space", "alloc_space", "memory" }, { "alloc_objects", "alloc_objects", "memory" },
	{ "contentions", "mutex_count", "mutex" }, { "delay", "mutex_duration", "mutex" },
	{ "goroutine", "goroutines", "goroutine" },
	/* the Java agent's JFR allocation events (format/jfr.h) */
	{ "alloc_in_new_tlab_objects", "alloc_in_new_tlab_objects", "memory" },
	{ "alloc_in_new_tlab_bytes", "alloc_in_new_tlab_bytes", "memory" },
	{ "alloc_outside_tlab_objects", "alloc_outside_tlab_objects", "memory" },
	{ "alloc_outside_tlab_bytes", "alloc_outside_tlab_bytes", "memory" },
};

static const struct { const char *suffix, *id; } legacy[] = {
	{ "cpu", PTYPE_CPU_SAMPLES },
	{ "wall", "wall:wall:nanoseconds:wall:nanoseconds" },
	{ "inuse_space", "memory:inuse_space:bytes:space:bytes" },
	{ "inuse_objects", "memory:inuse_objects:count:space:bytes" },
	{ "alloc_space", "memory:alloc_space:bytes:space:bytes" },
	{ "alloc_objects", "memory:alloc_objects:count:space:bytes" },
	{ "mutex_count", "mutex:contentions:count:contentions:count" },
	{ "mutex_duration", "mutex:delay:nanoseconds:contentions:count" },
	{ "goroutines", "goroutine:goroutine:count:goroutine:count" },
	{ "alloc_in_new_tlab_objects", "memory:alloc_in_new_tlab_objects:count:space:bytes" },
	{ "alloc_in_new_tlab_bytes", "memory:alloc_in_new_tlab_bytes:bytes:space:bytes" },
	{ "alloc_outside_tlab_objects", "memory:alloc_outside_tlab_objects:count:space:bytes" },
	{ "alloc_outside_tlab_bytes", "memory:alloc_outside_tlab_bytes:bytes:space:bytes" },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

const char *ptype__name(const char *type)
{
	for (size_t i = 0; i < N(types); i++)
		if (!strcmp(types[i].type, type))
			return types[i].name;
	return type;
}

const char *ptype__suffix(const char *type, int *rank)
{
	for (size_t i = 0; i < N(types); i++) {
		if (!strcmp(types[i].type, type)) {
			if (rank)
				*rank = (int)i;
			return types[i].suffix;
		}
	}
	if (rank)
		*rank = (int)N(types);
	return NULL;
}

const char *ptype__legacy(const char *suffix)
{
	for (size_t i = 0; i < N(legacy); i++)
		if (!strcmp(legacy[i].suffix, suffix))
			return legacy[i].id;
	return NULL;
}

const char *ptype__of_service(const char *service)
{
	const char *dot = strrchr(service, '.'), *id = dot ? ptype__legacy(dot + 1) : NULL;

	return id ? id : PTYPE_CPU_SAMPLES;
}

void ptype__id(struct strbuf *out, const struct profile *p, size_t index, const char *name)
{
	struct profile_type t = profile__type(p, index), pt;
	int64_t period;

	if (!profile__period(p, &pt, &period))
		pt = t;
	strbuf_addf(out, "%s:%s:%s:%s:%s", name ? name : ptype__name(t.type), t.type, t.unit,
		    pt.type, pt.unit);
}

const char *ptype__units(const char *type, const char *unit)
{
	if (!strcmp(unit, "bytes"))
		return "bytes";
	if (strstr(type, "objects"))
		return "objects";
	return "samples";
}

int ptype__apply(struct profile *p, const char *id)
{
	char buf[5][65];
	const char *f = id;
	struct profile_type t;
	int ret;

	if (!ptype__valid(id))
		return -EINVAL;
	for (int i = 0; i < 5; i++) {
		const char *e = strchr(f, ':');
		size_t n = e ? (size_t)(e - f) : strlen(f);
		if (n >= sizeof(buf[i]))
			return -EINVAL;
		memcpy(buf[i], f, n);
		buf[i][n] = '\0';
		f = e ? e + 1 : f + n;
	}
	if (!strcmp(buf[1], "samples") && !strcmp(buf[2], "count"))
		return 0;
	t = (struct profile_type){ buf[1], buf[2] };
	ret = profile__set_types(p, &t, 1);
	if (!ret)
		profile__set_period(p, buf[3], buf[4], 0);
	return ret;
}

bool ptype__valid_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 64)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.' && *s != '-')
			return false;
	return true;
}

bool ptype__valid(const char *s)
{
	int fields = 1;
	size_t len = 0;

	for (; *s; s++) {
		if (*s == ':') {
			if (!len)
				return false;
			fields++;
			len = 0;
		} else if (isalnum((unsigned char)*s) || *s == '_' || *s == '.' || *s == '-') {
			len++;
		} else {
			return false;
		}
	}
	return fields == 5 && len;
}
