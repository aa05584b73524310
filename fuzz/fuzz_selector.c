/* Query and ingest selectors (server/selector.h) with their regular expressions matched
 * against the input's own labels, and the two time syntaxes. */
#include "fuzz.h"

#include "server/selector.h"
#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size), err[256];
	struct store_query q;
	int64_t t;

	store_query_init(&q);
	for (int ingest = 0; ingest < 2; ingest++) {
		if (!selector__parse(&q, s, ingest, err, sizeof(err))) {
			struct labels l;
			labels_init(&l);
			selector__to_labels(&q, &l);
			store_query__matches(&q, &l);
			labels_release(&l);
		}
	}
	store_query_release(&q);
	attime__parse(s, 1700000000, &t);
	isotime__parse(s, &t);
	free(s);
	return 0;
}
