/* The standalone flamegraph page: flamegraph.css and flamegraph.js from the binary's
 * embedded assets, and the stacks as JSON in a <script type="application/json">.
 *
 * The stacks are sorted by frame names and written prefix-encoded ([shared, new ids...],
 * see flamegraph.js), which keeps a 100,000-stack page a fraction of the plain size and
 * lets the renderer build its tree without looking up shared prefixes again. */
#include "format/html.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ui/assets.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/strbuf.h"

struct entry {
	uint32_t *frames;	/* output name ids, into struct page.frames */
	uint32_t depth;
	uint64_t count[2];
};

struct page {
	struct hashmap *ids;	/* name -> output id + 1 */
	const char **names;	/* output id -> name (borrowed from the profiles) */
	size_t nr_names, alloc_names;
	struct entry *entries;
	size_t nr_entries, alloc_entries;
	uint32_t *pool;		/* all entries' frames; entries point into it once filled */
	size_t nr_pool, alloc_pool;
};

static uint32_t page_intern(struct page *pg, const char *name)
{
	bool created;
	void **slot = hashmap__insert(pg->ids, name, strlen(name), &created);

	if (!created)
		return (uint32_t)((uintptr_t)*slot - 1);
	if (pg->nr_names == pg->alloc_names) {
		pg->alloc_names = pg->alloc_names ? pg->alloc_names * 2 : 256;
		pg->names = xrealloc(pg->names, pg->alloc_names * sizeof(*pg->names));
	}
	pg->names[pg->nr_names] = name;
	*slot = (void *)(uintptr_t)(pg->nr_names + 1);
	return (uint32_t)pg->nr_names++;
}

/* Adds p's stacks, without their first skip frames, with their counts in column which. */
static void page_add(struct page *pg, const struct profile *p, unsigned skip, int which)
{
	uint32_t *map = xmalloc((profile__nr_names(p) + 1) * sizeof(*map));

	for (size_t i = 0; i < profile__nr_names(p); i++)
		map[i] = UINT32_MAX;
	for (size_t i = 0; i < profile__nr_stacks(p); i++) {
		struct profile_stack s = profile__stack(p, i);
		uint32_t from = s.depth < skip ? s.depth : skip;
		struct entry *e;

		if (!s.count)
			continue;
		if (pg->nr_entries == pg->alloc_entries) {
			pg->alloc_entries = pg->alloc_entries ? pg->alloc_entries * 2 : 1024;
			pg->entries = xrealloc(pg->entries, pg->alloc_entries * sizeof(*pg->entries));
		}
		if (pg->nr_pool + s.depth > pg->alloc_pool) {
			while (pg->nr_pool + s.depth > pg->alloc_pool)
				pg->alloc_pool = pg->alloc_pool ? pg->alloc_pool * 2 : 8192;
			pg->pool = xrealloc(pg->pool, pg->alloc_pool * sizeof(*pg->pool));
		}
		e = &pg->entries[pg->nr_entries++];
		e->frames = (uint32_t *)(uintptr_t)pg->nr_pool;	/* an offset until the pool is final */
		e->depth = s.depth - from;
		e->count[which] = s.count;
		e->count[!which] = 0;
		for (uint32_t j = from; j < s.depth; j++) {
			uint32_t id = s.frames[j];
			if (map[id] == UINT32_MAX)
				map[id] = page_intern(pg, profile__name(p, id));
			pg->pool[pg->nr_pool++] = map[id];
		}
	}
	free(map);
}

static int entry_cmp(const void *x, const void *y, void *arg)
{
	const struct entry *a = x, *b = y;
	const char *const *sort_names = arg;
	uint32_t n = a->depth < b->depth ? a->depth : b->depth;

	for (uint32_t i = 0; i < n; i++) {
		if (a->frames[i] == b->frames[i])
			continue;
		return strcmp(sort_names[a->frames[i]], sort_names[b->frames[i]]);
	}
	return a->depth < b->depth ? -1 : a->depth > b->depth;
}

/* Writes s as the inside of a JSON string that is also safe inside a <script> element:
 * '<', '>' and '&' are escaped, so no "</script>" or "<!--" can appear. */
static void put_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c < 0x20 || *c == '<' || *c == '>' || *c == '&' || *c == 0x7f)
			fprintf(f, "\\u%04x", *c);
		else
			fputc(*c, f);
	}
	fputc('"', f);
}

static void put_html(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

static const char *meta_str(const struct profile *p, const char *key)
{
	const json_t *v = json_object_get(profile__meta_const(p), key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static void subtitle(struct strbuf *sb, const struct profile *a, const struct profile *b)
{
	static const char *const keys[] = { "hostname", "start_time", "end_time" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = meta_str(a, keys[i]);
		if (v)
			strbuf_addf(sb, "%s%s", sb->len ? " \xc2\xb7 " : "", v);
	}
	if (b)
		strbuf_addf(sb, "%sA: %llu samples, B: %llu samples", sb->len ? " \xc2\xb7 " : "",
			    (unsigned long long)profile__total(a), (unsigned long long)profile__total(b));
	else
		strbuf_addf(sb, "%s%llu samples", sb->len ? " \xc2\xb7 " : "",
			    (unsigned long long)profile__total(a));
}

static int put_asset(FILE *f, const char *name)
{
	const struct asset *a = asset__find(name);

	if (!a) {
		log_error("failed to find embedded asset '%s'", name);
		return -ENOENT;
	}
	/* The asset is pasted into a raw-text element: it must not be able to close it. */
	if (strcasestr(a->data, "</script") || strcasestr(a->data, "</style")) {
		log_error("failed to embed '%s': it contains a closing tag", name);
		return -EINVAL;
	}
	fwrite(a->data, 1, a->size, f);
	return 0;
}

static int write_page(FILE *f, const struct profile *a, const struct profile *b,
		      const struct html_options *opts)
{
	const char *title = opts && opts->title ? opts->title : "kiln flamegraph";
	unsigned skip = opts ? opts->skip_frames : 0;
	struct page pg = { .ids = hashmap__new() };
	struct strbuf sub = STRBUF_INIT;
	int ret;

	page_add(&pg, a, skip, 0);
	if (b)
		page_add(&pg, b, skip, 1);
	for (size_t i = 0; i < pg.nr_entries; i++)
		pg.entries[i].frames = pg.pool + (uintptr_t)pg.entries[i].frames;
	if (pg.nr_entries) {
		size_t kept = 1;
		qsort_r(pg.entries, pg.nr_entries, sizeof(*pg.entries), entry_cmp, pg.names);
		/* the same stack from both profiles of a diff becomes one entry */
		for (size_t i = 1; i < pg.nr_entries; i++) {
			struct entry *last = &pg.entries[kept - 1];
			if (entry_cmp(last, &pg.entries[i], pg.names) == 0) {
				last->count[0] += pg.entries[i].count[0];
				last->count[1] += pg.entries[i].count[1];
			} else {
				pg.entries[kept++] = pg.entries[i];
			}
		}
		pg.nr_entries = kept;
	}
	subtitle(&sub, a, b);

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>", f);
	put_html(f, title);
	fputs("</title>\n<style>\nbody { margin: 12px; background: #fff; }\n", f);
	ret = put_asset(f, "flamegraph.css");
	if (ret)
		goto out;
	fputs("</style>\n</head>\n<body>\n<main id=\"kiln\"></main>\n"
	      "<noscript>This flamegraph needs JavaScript.</noscript>\n"
	      "<script type=\"application/json\" id=\"kiln-data\">\n{\"title\":", f);
	put_json_str(f, title);
	fputs(",\"subtitle\":", f);
	put_json_str(f, sub.buf);
	fputs(",\"prefixed\":true,\n\"names\":[", f);
	for (size_t i = 0; i < pg.nr_names; i++) {
		if (i)
			fputc(',', f);
		put_json_str(f, pg.names[i]);
	}
	fputs("],\n\"stacks\":[", f);
	for (size_t i = 0; i < pg.nr_entries; i++) {
		const struct entry *e = &pg.entries[i], *prev = i ? &pg.entries[i - 1] : NULL;
		uint32_t shared = 0;
		while (prev && shared < e->depth && shared < prev->depth &&
		       e->frames[shared] == prev->frames[shared])
			shared++;
		fprintf(f, "%s[%u", i ? ",\n" : "", shared);
		for (uint32_t j = shared; j < e->depth; j++)
			fprintf(f, ",%u", e->frames[j]);
		fputc(']', f);
	}
	for (int col = 0; col < (b ? 2 : 1); col++) {
		fputs(col ? "],\n\"counts2\":[" : "],\n\"counts\":[", f);
		for (size_t i = 0; i < pg.nr_entries; i++)
			fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)pg.entries[i].count[col]);
	}
	fputs("]}\n</script>\n<script>\n", f);
	ret = put_asset(f, "flamegraph.js");
	if (ret)
		goto out;
	fputs("</script>\n<script>\n"
	      "(function () {\n"
	      "\tvar doc = document.documentElement, t0 = Date.now();\n"
	      "\ttry {\n"
	      "\t\tvar data = JSON.parse(document.getElementById('kiln-data').textContent);\n"
	      "\t\tvar view = KilnFlame.mount(document.getElementById('kiln'), KilnFlame.fromStacks(data),\n"
	      "\t\t\t{ title: data.title, subtitle: data.subtitle });\n"
	      "\t\twindow.kilnView = view;\n"
	      "\t\tdoc.setAttribute('data-kiln-rendered', String(view.stats.drawn));\n"
	      "\t\tdoc.setAttribute('data-kiln-ms', String(Date.now() - t0));\n"
	      "\t} catch (e) {\n"
	      "\t\tdoc.setAttribute('data-kiln-error', String(e && e.message || e));\n"
	      "\t\tthrow e;\n"
	      "\t}\n"
	      "})();\n"
	      "</script>\n</body>\n</html>\n", f);
	if (fflush(f) || ferror(f))
		ret = -EIO;
out:
	strbuf_release(&sub);
	hashmap__free(pg.ids);
	free(pg.names);
	free(pg.entries);
	free(pg.pool);
	return ret;
}

int html__write(FILE *f, const struct profile *p, const struct html_options *opts)
{
	return write_page(f, p, NULL, opts);
}

int html__write_diff(FILE *f, const struct profile *base, const struct profile *new,
		     const struct html_options *opts)
{
	return write_page(f, base, new, opts);
}
