/* The one profile model shared by the agent, the server and `kiln report`: every input
 * format is parsed into a struct profile and every output format is written from one.
 *
 * A profile is a set of stacks with sample counts. A stack is a sequence of frame ids,
 * root first; a frame id names an interned string. Adding the same stack twice adds the
 * counts. For the agent's .col files the first three frames of a stack are gProfiler's
 * prefix fields (app-metadata index, container, process name); the profile does not treat
 * them specially: format/col.h does.
 *
 * Metadata (the .col header: host, times, frequency, ...) is a jansson JSON object owned
 * by the profile.
 *
 * Allocation failure aborts (see util/strbuf.h). Not thread-safe. */
#ifndef KILN_PROFILE_PROFILE_H
#define KILN_PROFILE_PROFILE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct profile;

struct profile_stack {
	const uint32_t *frames;	/* frame ids, root first; valid until the next add */
	uint32_t depth;
	uint64_t count;
};

struct profile *profile__new(void);
/* Frees the profile with its names, stacks and metadata. Accepts NULL. */
void profile__free(struct profile *p);

/* Interns len bytes of name (need not be NUL-terminated) and returns its frame id.
 * Ids are dense, starting at 0, in order of first appearance. */
uint32_t profile__intern(struct profile *p, const char *name, size_t len);
uint32_t profile__intern_str(struct profile *p, const char *name);
/* Returns the NUL-terminated name of frame id (which must be < profile__nr_names). */
const char *profile__name(const struct profile *p, uint32_t id);
size_t profile__nr_names(const struct profile *p);

/* Adds count samples to the stack frames[0..depth), root first, creating it when new.
 * A count of 0 still creates the stack. Returns the stack's index. */
size_t profile__add(struct profile *p, const uint32_t *frames, uint32_t depth, uint64_t count);
/* Same, with frame names instead of ids. */
size_t profile__add_names(struct profile *p, const char *const *names, uint32_t depth,
			  uint64_t count);

/* Stacks are numbered 0..nr_stacks-1 in order of first appearance. */
size_t profile__nr_stacks(const struct profile *p);
struct profile_stack profile__stack(const struct profile *p, size_t index);
/* Sum of all counts. */
uint64_t profile__total(const struct profile *p);

/* Adds every stack of src to dst. The frames are re-interned, so the two profiles need
 * not share ids. Metadata is not merged. */
void profile__merge(struct profile *dst, const struct profile *src);

/* The metadata object, never NULL, owned by the profile (borrowed reference). */
json_t *profile__meta(struct profile *p);
const json_t *profile__meta_const(const struct profile *p);

#endif
