/* Pyroscope's names for the store's series, for the Connect querier and the render routes.
 *
 * Pyroscope names a series by labels alone: `service_name`, `__profile_type__` (the
 * profile type id) and `__name__` (its first part) beside the client's labels. The store
 * keeps services by their legacy names ("app.cpu", "app.alloc_space", or a gProfiler
 * service "checkout"), each with the profile type it was first stored with. Here each
 * stored service is one target: its service_name is its name without a legacy type
 * suffix, its type the stored one. A selector's service_name, __profile_type__ and
 * __name__ matchers pick targets; its other matchers go to the store as they are.
 * Internal to the server. */
#ifndef KILN_SERVER_TARGETS_H
#define KILN_SERVER_TARGETS_H

#include <stdbool.h>
#include <stdint.h>

#include "server/http.h"
#include "store/store.h"

/* One stored service that a selector picked. */
struct target {
	char *service;		/* the store's name */
	char *service_name;	/* Pyroscope's */
	char *type;		/* its profile type id */
};

struct targets {
	struct target *v;
	size_t n;
};

void targets__release(struct targets *t);

/* True for the labels that name targets: service_name, __profile_type__, __name__. */
bool targets__is_label(const char *name);

/* Parses a Pyroscope selector ("{service_name=\"a\", k=~\"v.*\"}", or empty for all) into
 * q (initialized: the store's matchers, no service) and pick (initialized: the matchers of
 * the target labels). Returns 0, or -EINVAL with a message in err. */
int targets__parse_selector(const char *text, struct store_query *q, struct store_query *pick,
			    char *err, size_t errlen);

/* Pyroscope's service_name of a stored service name (malloc'd). */
char *targets__service_name(const char *stored);

/* Fills out with the stored services of r's tenant (server/auth.c) that pick matches, of
 * type type_id when not NULL, seen at or after since; service_name is the tenant's name
 * for it. Takes server__read_lock. Returns 0, or a negative errno with a message in
 * err. */
int targets__find(struct request *r, const struct store_query *pick, const char *type_id,
		  int64_t since, struct targets *out, char *err, size_t errlen);

/* The target labels of t as a sorted label set (initialized here; release it). */
void target__labels(const struct target *t, struct labels *l);

/* The store query of one target: q's matchers (borrowed, not copied) with t's service and
 * type. Not to be released: q and t keep what it points to. */
struct store_query target__query(const struct store_query *q, const struct target *t);

/* Parses selector, checks type_id (may be NULL) and finds the targets seen since since:
 * targets__parse_selector and targets__find, with their errors set in resp as Connect's.
 * Returns 0, or a negative errno. */
int targets__select(struct request *r, struct response *resp, const char *selector,
		    const char *type_id, int64_t since, struct store_query *q, struct targets *t);

#endif
