#include "profile/profile.h"

#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"
#include "util/strbuf.h"

struct stack_entry {
	size_t off;		/* into frames */
	uint32_t depth;
	uint64_t count;
};

struct profile {
	char **names;
	size_t nr_names, alloc_names;
	struct hashmap *name_ids;	/* name -> id + 1 */

	uint32_t *frames;
	size_t nr_frames, alloc_frames;
	struct stack_entry *stacks;
	size_t nr_stacks, alloc_stacks;
	struct hashmap *stack_ids;	/* frame id bytes -> index + 1 */

	uint64_t total;
	json_t *meta;
};

struct profile *profile__new(void)
{
	struct profile *p = xcalloc(1, sizeof(*p));

	p->name_ids = hashmap__new();
	p->stack_ids = hashmap__new();
	p->meta = json_object();
	if (!p->meta)
		abort();
	return p;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nr_names; i++)
		free(p->names[i]);
	free(p->names);
	hashmap__free(p->name_ids);
	free(p->frames);
	free(p->stacks);
	hashmap__free(p->stack_ids);
	json_decref(p->meta);
	free(p);
}

uint32_t profile__intern(struct profile *p, const char *name, size_t len)
{
	bool created;
	void **slot = hashmap__insert(p->name_ids, name, len, &created);

	if (!created)
		return (uint32_t)((uintptr_t)*slot - 1);
	if (p->nr_names == p->alloc_names) {
		p->alloc_names = p->alloc_names ? p->alloc_names * 2 : 64;
		p->names = xrealloc(p->names, p->alloc_names * sizeof(*p->names));
	}
	p->names[p->nr_names] = xstrndup(name, len);
	*slot = (void *)(uintptr_t)(p->nr_names + 1);
	return (uint32_t)p->nr_names++;
}

uint32_t profile__intern_str(struct profile *p, const char *name)
{
	return profile__intern(p, name, strlen(name));
}

const char *profile__name(const struct profile *p, uint32_t id)
{
	return id < p->nr_names ? p->names[id] : "";
}

size_t profile__nr_names(const struct profile *p)
{
	return p->nr_names;
}

size_t profile__add(struct profile *p, const uint32_t *frames, uint32_t depth, uint64_t count)
{
	bool created;
	void **slot = hashmap__insert(p->stack_ids, frames, depth * sizeof(*frames), &created);
	struct stack_entry *s;

	p->total += count;
	if (!created) {
		s = &p->stacks[(uintptr_t)*slot - 1];
		s->count += count;
		return (uintptr_t)*slot - 1;
	}
	if (p->nr_frames + depth > p->alloc_frames) {
		while (p->nr_frames + depth > p->alloc_frames)
			p->alloc_frames = p->alloc_frames ? p->alloc_frames * 2 : 1024;
		p->frames = xrealloc(p->frames, p->alloc_frames * sizeof(*p->frames));
	}
	if (p->nr_stacks == p->alloc_stacks) {
		p->alloc_stacks = p->alloc_stacks ? p->alloc_stacks * 2 : 256;
		p->stacks = xrealloc(p->stacks, p->alloc_stacks * sizeof(*p->stacks));
	}
	if (depth)
		memcpy(p->frames + p->nr_frames, frames, depth * sizeof(*frames));
	s = &p->stacks[p->nr_stacks];
	s->off = p->nr_frames;
	s->depth = depth;
	s->count = count;
	p->nr_frames += depth;
	*slot = (void *)(uintptr_t)(p->nr_stacks + 1);
	return p->nr_stacks++;
}

size_t profile__add_names(struct profile *p, const char *const *names, uint32_t depth,
			  uint64_t count)
{
	uint32_t stackbuf[256] = { 0 }, *ids = depth <= 256 ? stackbuf : xmalloc(depth * sizeof(*ids));
	size_t index;

	for (uint32_t i = 0; i < depth; i++)
		ids[i] = profile__intern_str(p, names[i]);
	index = profile__add(p, ids, depth, count);
	if (ids != stackbuf)
		free(ids);
	return index;
}

size_t profile__nr_stacks(const struct profile *p)
{
	return p->nr_stacks;
}

struct profile_stack profile__stack(const struct profile *p, size_t index)
{
	const struct stack_entry *s = &p->stacks[index];

	return (struct profile_stack){ p->frames + s->off, s->depth, s->count };
}

uint64_t profile__total(const struct profile *p)
{
	return p->total;
}

void profile__merge(struct profile *dst, const struct profile *src)
{
	uint32_t *map = xmalloc((src->nr_names ? src->nr_names : 1) * sizeof(*map));
	uint32_t *ids = NULL;
	size_t alloc = 0;

	for (size_t i = 0; i < src->nr_names; i++)
		map[i] = profile__intern_str(dst, src->names[i]);
	for (size_t i = 0; i < src->nr_stacks; i++) {
		struct profile_stack s = profile__stack(src, i);
		if (s.depth > alloc) {
			alloc = s.depth;
			ids = xrealloc(ids, alloc * sizeof(*ids));
		}
		for (uint32_t j = 0; j < s.depth; j++)
			ids[j] = map[s.frames[j]];
		profile__add(dst, ids, s.depth, s.count);
	}
	free(ids);
	free(map);
}

json_t *profile__meta(struct profile *p)
{
	return p->meta;
}

const json_t *profile__meta_const(const struct profile *p)
{
	return p->meta;
}
