#include "ui/assets.h"

#include <string.h>

extern const struct asset kiln_assets[];

const struct asset *asset__find(const char *name)
{
	for (const struct asset *a = kiln_assets; a->name; a++)
		if (strcmp(a->name, name) == 0)
			return a;
	return NULL;
}
