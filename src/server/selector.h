/* Parsers for what HTTP clients put in a URL: Pyroscope's `name`/`query` selectors and
 * its time values. Everything here takes untrusted input. */
#ifndef KILN_SERVER_SELECTOR_H
#define KILN_SERVER_SELECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "store/store.h"

/* Parses `app.cpu{k=v,k2="v 2"}` (ingest: only '=', values quoted or not, trimmed) or
 * `app.cpu{k="v",x!="y",r=~"re.*",n!~"a|b"}` (query) into q, which must be initialized
 * and is released first. Service names are [A-Za-z0-9_.-/]+, label names
 * [A-Za-z_][A-Za-z0-9_.]*, and a label may appear once. Regular expressions are RE2's
 * syntax (util/re.h: linear time, bounded memory), anchored at both ends. Returns 0, or -EINVAL with a message in err. */
int selector__parse(struct store_query *q, const char *text, bool ingest, char *err,
		    size_t errlen);

/* Turns the matchers of an ingest selector (all '=') into a sorted label set, adding to l. */
void selector__to_labels(const struct store_query *q, struct labels *l);

/* True when name is a label name a selector can name: [A-Za-z_][A-Za-z0-9_.]*. */
bool selector__valid_label_name(const char *name);

/* True when name is a valid service name. */
bool selector__valid_service(const char *name);

/* Parses a Pyroscope time: digits (8 = YYYYMMDD, 13 = ms, 16 = us, 19 = ns, otherwise
 * seconds), "now", or "now-<n><unit>" with n digits (at most 1000000) and unit s, m/min,
 * h, d, w, M/mon, y (none: seconds). now is the current time in seconds. Returns 0 with
 * *out in seconds, or -EINVAL. */
int attime__parse(const char *text, int64_t now, int64_t *out);

/* Parses an ISO 8601 time (YYYY-MM-DD[T ]HH:MM:SS[.frac][Z|+HH:MM|-HH:MM], no zone = UTC;
 * frac is one or more digits, a zone at most 23:59) or up to 12 digits of seconds.
 * Returns 0 with *out in seconds, or -EINVAL. */
int isotime__parse(const char *text, int64_t *out);

#endif
