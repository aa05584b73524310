/* Inside the JFR reader: the labels snapshot once read (format/jfr_labels.c), looked up
 * by format/jfr.c. */
#ifndef KILN_FORMAT_JFR_LABELS_PRIV_H
#define KILN_FORMAT_JFR_LABELS_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "util/hashmap.h"

struct jfr_context {
	struct profile_label *labels;	/* owned strings */
	size_t n;
};

struct jfr_labels {
	struct jfr_context *contexts;
	size_t ncontexts;
	struct hashmap *by_context;	/* int64 context id -> index + 1 */
	struct hashmap *strings;	/* int64 string id -> owned string */
};

/* The labels of context id, or NULL when l is NULL or has none such. */
const struct jfr_context *jfr__context(const struct jfr_labels *l, int64_t id);
/* The snapshot's string id (a span name), or NULL when l is NULL or has none such. */
const char *jfr__label_string(const struct jfr_labels *l, int64_t id);

#endif
