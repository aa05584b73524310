/* The web UI's files, served from the binary (src/ui/assets.h): `/` is index.html and
 * `/ui/NAME` any embedded file. Nothing is read from disk, so the UI needs no files beside
 * the binary and no network beyond kiln itself. */
#include "server/http.h"

#include <string.h>

#include "ui/assets.h"

/* Content type by file extension; only the kinds src/ui/ holds. */
static const char *content_type(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (dot && !strcmp(dot, ".html"))
		return "text/html; charset=utf-8";
	if (dot && !strcmp(dot, ".js"))
		return "text/javascript; charset=utf-8";
	if (dot && !strcmp(dot, ".css"))
		return "text/css; charset=utf-8";
	return "application/octet-stream";
}

void ui__asset(struct request *r, struct response *resp)
{
	const char *name = !strcmp(r->url, "/") ? "index.html" : r->url + strlen("/ui/");
	const struct asset *a;

	/* base names only: no directories, no dot files */
	if (!*name || strchr(name, '/') || name[0] == '.' || !(a = asset__find(name))) {
		resp__error(resp, 404, "no such file '%.64s'", r->url);
		return;
	}
	strbuf_add(&resp->body, a->data, a->size);
	resp->status = 200;
	resp->content_type = content_type(name);
}
