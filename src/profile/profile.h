/* The one profile model shared by the agent, the server and `kiln report`: every input
 * format is parsed into a struct profile and every output format is written from one.
 *
 * A profile has sample types (type and unit, e.g. "samples"/"count", "cpu"/"nanoseconds",
 * "alloc_space"/"bytes"), an optional period (type, unit, value: e.g. "cpu"/"nanoseconds"
 * 10101010 for 99 Hz sampling) and a set of stacks. A stack is a sequence of frame ids,
 * root first (a frame id names an interned string), with a label set and one value per
 * sample type. Adding the same frames with the same label set twice adds the values.
 *
 * A new profile has one sample type, "samples"/"count", which the first
 * profile__set_types() or a merge into it while it is empty replaces; the single-value
 * calls (profile__add, profile_stack.count, profile__total) read and write type 0.
 *
 * Labels are string pairs (container, process, thread, any label a client pushed). Label
 * sets are interned: id 0 is the empty set. Frames are frames only: gProfiler's .col
 * prefix is labels, written and read by format/col.h.
 *
 * Metadata (the .col header: host, times, frequency, ...) is a jansson JSON object owned
 * by the profile.
 *
 * Allocation failure aborts (see util/strbuf.h). Not thread-safe. */
#ifndef KILN_PROFILE_PROFILE_H
#define KILN_PROFILE_PROFILE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profile;

struct profile_stack {
	const uint32_t *frames;	/* frame ids, root first; valid until the next add */
	uint32_t depth;
	uint64_t count;		/* values[0] */
	const uint64_t *values;	/* one per sample type; valid until the next add */
	uint32_t labels;	/* label-set id (0: no labels) */
};

/* A sample type or a period type. Strings returned by the profile are owned by it. */
struct profile_type {
	const char *type;
	const char *unit;
};

struct profile_label {
	const char *key;
	const char *value;
};

struct profile *profile__new(void);
/* Frees the profile with its names, stacks, labels and metadata. Accepts NULL. */
void profile__free(struct profile *p);

/* Interns len bytes of name (need not be NUL-terminated) and returns its frame id.
 * Ids are dense, starting at 0, in order of first appearance. Label strings are kept
 * apart: frame ids name frames only. */
uint32_t profile__intern(struct profile *p, const char *name, size_t len);
uint32_t profile__intern_str(struct profile *p, const char *name);
/* Returns the NUL-terminated name of frame id (which must be < profile__nr_names). */
const char *profile__name(const struct profile *p, uint32_t id);
size_t profile__nr_names(const struct profile *p);

/* Sample types, numbered 0..nr_types-1. */
size_t profile__nr_types(const struct profile *p);
struct profile_type profile__type(const struct profile *p, size_t index);
/* Replaces the sample types with types[0..n) (n >= 1, (type, unit) pairs distinct).
 * Returns 0, or -EBUSY when p already has stacks, -EINVAL when n is 0 or a pair repeats
 * (p unchanged). */
int profile__set_types(struct profile *p, const struct profile_type *types, size_t n);
/* The index of sample type (type, unit), or -1 when p has none such. */
int profile__find_type(const struct profile *p, const char *type, const char *unit);
/* The index of sample type (type, unit), adding it when missing (every existing stack
 * then has 0 of it). */
size_t profile__add_type(struct profile *p, const char *type, const char *unit);

/* The period: what one sample of a sampled profile stands for. Setting replaces it. */
void profile__set_period(struct profile *p, const char *type, const char *unit, int64_t value);
/* True with *t and *value filled when p has a period; false (outputs untouched) when not. */
bool profile__period(const struct profile *p, struct profile_type *t, int64_t *value);

/* Interns the label set labels[0..n) (in any order; for a repeated key the last value
 * wins; values may be empty) and returns its id. n == 0 gives 0. */
uint32_t profile__labelset(struct profile *p, const struct profile_label *labels, size_t n);
/* The labels of set id, sorted by key: *n is set to their number (0 and NULL for the
 * empty set or an unknown id). The array is valid until the next profile__labels on p. */
const struct profile_label *profile__labels(const struct profile *p, uint32_t id, size_t *n);
/* The value of key in label set id, or NULL when it has none. */
const char *profile__label(const struct profile *p, uint32_t id, const char *key);
/* Label sets are numbered 0..nr_labelsets-1 (0, the empty set, always exists). */
size_t profile__nr_labelsets(const struct profile *p);

/* Adds count to sample type 0 of the stack frames[0..depth), root first, without labels,
 * creating it when new. A count of 0 still creates the stack. Returns the stack's index. */
size_t profile__add(struct profile *p, const uint32_t *frames, uint32_t depth, uint64_t count);
/* The same with label set id labels (from profile__labelset on p). */
size_t profile__add_labeled(struct profile *p, const uint32_t *frames, uint32_t depth,
			    uint32_t labels, uint64_t count);
/* Adds values[0..profile__nr_types) to the stack (frames, labels). */
size_t profile__add_values(struct profile *p, const uint32_t *frames, uint32_t depth,
			   uint32_t labels, const uint64_t *values);
/* Same as profile__add, with frame names instead of ids. */
size_t profile__add_names(struct profile *p, const char *const *names, uint32_t depth,
			  uint64_t count);

/* Stacks are numbered 0..nr_stacks-1 in order of first appearance. */
size_t profile__nr_stacks(const struct profile *p);
struct profile_stack profile__stack(const struct profile *p, size_t index);
/* Sum of the values of sample type 0. */
uint64_t profile__total(const struct profile *p);
/* Sum of the values of sample type index (0 when index >= nr_types). */
uint64_t profile__type_total(const struct profile *p, size_t index);

/* Adds every stack of src to dst, matching sample types by (type, unit): a type dst lacks
 * is added to it (an empty dst that still has its default type takes src's types
 * instead). Frames and labels are re-interned, so the two profiles need not share ids.
 * dst takes src's period when it has none. Metadata is not merged. */
void profile__merge(struct profile *dst, const struct profile *src);

/* The metadata object, never NULL, owned by the profile (borrowed reference). */
json_t *profile__meta(struct profile *p);
const json_t *profile__meta_const(const struct profile *p);

#endif
