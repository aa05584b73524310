/* Pyroscope's series names over the store's services: see targets.h. */
#include "server/targets.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/ptype.h"
#include "server/connect.h"
#include "server/selector.h"
#include "util/log.h"

void targets__release(struct targets *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].service);
		free(t->v[i].service_name);
		free(t->v[i].type);
	}
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

bool targets__is_label(const char *name)
{
	return !strcmp(name, "service_name") || !strcmp(name, "__profile_type__") ||
	       !strcmp(name, "__name__");
}

/* Parses a Pyroscope selector ("{service_name=\"a\", k=~\"v.*\"}", or empty for all) into
 * q (the store's matchers) and pick (the target's labels). Returns 0, or -EINVAL with err. */
int targets__parse_selector(const char *text, struct store_query *q, struct store_query *pick,
			    char *err, size_t errlen)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = text ? text : "";
	int ret;

	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	if (*p && *p != '{') {
		errmsg(err, errlen, "a label selector starts with '{': '%.64s'", p);
		return -EINVAL;
	}
	strbuf_addf(&sb, "_%s", *p ? p : "{}");	/* selector__parse wants an application */
	ret = selector__parse(q, sb.buf, false, err, errlen);
	strbuf_release(&sb);
	if (ret)
		return ret;
	free(q->service);
	q->service = NULL;
	size_t w = 0;
	for (size_t i = 0; i < q->n; i++) {
		if (targets__is_label(q->m[i].name)) {
			pick->m = xrealloc(pick->m, (pick->n + 1) * sizeof(*pick->m));
			pick->m[pick->n++] = q->m[i];	/* moved: its regex goes with it */
		} else {
			q->m[w++] = q->m[i];
		}
	}
	q->n = w;
	return 0;
}

/* Pyroscope's service_name of a stored service: its name without a legacy type suffix. */
char *targets__service_name(const char *stored)
{
	const char *dot = strrchr(stored, '.');

	return dot && dot != stored && ptype__legacy(dot + 1) ? xstrndup(stored, (size_t)(dot - stored))
							       : xstrdup(stored);
}

/* The target labels of one stored service, for matching and for answers. */
void target__labels(const struct target *t, struct labels *l)
{
	const char *colon = strchr(t->type, ':');
	char *name = xstrndup(t->type, colon ? (size_t)(colon - t->type) : strlen(t->type));

	labels_init(l);
	labels__set(l, "service_name", t->service_name);
	labels__set(l, "__profile_type__", t->type);
	labels__set(l, "__name__", name);
	labels__sort(l);
	free(name);
}

/* The stored services of r's tenant that pick matches (and of type type_id when not NULL),
 * seen at or after since. Takes server__read_lock. Returns 0, or a negative errno with err. */
int targets__find(struct request *r, const struct store_query *pick, const char *type_id,
		  int64_t since, struct targets *out, char *err, size_t errlen)
{
	struct server *srv = r->srv;
	struct store_service *sv = NULL;
	size_t n = 0;
	int ret;

	server__read_lock(srv);
	ret = store__services(srv->store, &sv, &n, err, errlen);
	server__read_unlock(srv);
	if (ret)
		return ret;
	size_t room = 0;
	for (size_t i = 0; i < n; i++)
		room += sv[i].nr_types ? sv[i].nr_types : 1;
	out->v = xcalloc(room + 1, sizeof(*out->v));
	for (size_t i = 0; i < n; i++) {
		/* the name r's tenant knows it by; another tenant's is not a target */
		const char *own = tenant__strip(r, sv[i].name);
		if (!own || ingest__is_span_service(own))	/* spans: query_connect_span.c */
			continue;
		const char *def = sv[i].profile_type ? sv[i].profile_type
						     : ptype__of_service(own);
		/* one target per type the service's series have (its default when unknown) */
		for (size_t k = 0; k < (sv[i].nr_types ? sv[i].nr_types : 1); k++) {
			struct target t = {
				.service = sv[i].name, .service_name = targets__service_name(own),
				.type = xstrdup(sv[i].nr_types ? sv[i].types[k] : def),
			};
			struct labels l;
			target__labels(&t, &l);
			bool hit = (!type_id || !strcmp(type_id, t.type)) && sv[i].last_seen >= since &&
				   store_query__matches(pick, &l);
			labels_release(&l);
			if (hit) {
				t.service = xstrdup(sv[i].name);
				out->v[out->n++] = t;
			} else {
				free(t.service_name);
				free(t.type);
			}
		}
	}
	store__free_services(sv, n);
	return 0;
}

/* The store query of one target: q's matchers, its service and type. The caller frees
 * only the returned service and type (the matchers stay q's). */
struct store_query target__query(const struct store_query *q, const struct target *t)
{
	struct store_query tq = *q;

	tq.service = t->service;
	tq.profile_type = t->type;
	return tq;
}


/* Parses the selector and finds its targets, setting a Connect error on failure. */
int targets__select(struct request *r, struct response *resp, const char *selector,
		    const char *type_id, int64_t since, struct store_query *q, struct targets *t)
{
	struct store_query pick;
	char err[256];
	int ret;

	store_query_init(&pick);
	if (type_id && !ptype__valid(type_id)) {
		connect__error(resp, "invalid_argument", "invalid profile_typeID '%.64s': use "
			       "name:type:unit:period_type:period_unit", type_id);
		return -EINVAL;
	}
	ret = targets__parse_selector(selector, q, &pick, err, sizeof(err));
	if (ret) {
		connect__error(resp, "invalid_argument", "invalid label_selector: %s", err);
	} else if ((ret = targets__find(r, &pick, type_id, since, t, err, sizeof(err)))) {
		connect__error(resp, "internal", "%s", err);
	}
	store_query_release(&pick);
	return ret;
}
