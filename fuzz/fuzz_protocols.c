/* The decoders behind the newest routes, without a server: OTLP profiles
 * (format/otlp.h: every index checked against the dictionary), the Connect JSON codec on
 * the querier's requests (server/connect.h), and the query's Pyroscope selector split
 * (server/targets.h). The first byte picks one. */
#include "fuzz.h"

#include <jansson.h>

#include "format/otlp.h"
#include "querier.pb-c.h"
#include "server/connect.h"
#include "server/targets.h"
#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const ProtobufCMessageDescriptor *const ds[] = {
		&querier__v1__select_merge_stacktraces_request__descriptor,
		&querier__v1__select_series_request__descriptor,
		&querier__v1__series_request__descriptor,
		&querier__v1__label_values_request__descriptor,
		&querier__v1__profile_types_request__descriptor,
		&querier__v1__select_merge_span_profile_request__descriptor,
		&querier__v1__diff_request__descriptor,
	};
	char err[256];

	if (size < 1)
		return 0;
	if (data[0] % 3 == 0) {
		struct otlp_profile *v;
		size_t n;
		if (!otlp__parse(data + 1, size - 1, &v, &n, err, sizeof(err)))
			otlp__free(v, n);
	} else if (data[0] % 3 == 1) {
		json_t *j = json_loadb((const char *)data + 1, size - 1, 0, NULL);
		size_t d = (data[0] / 3) % (sizeof(ds) / sizeof(ds[0]));
		ProtobufCMessage *m = j ? connect__from_json(ds[d], j, err, sizeof(err)) : NULL;
		if (m) {
			json_t *back = connect__to_json(m);
			json_decref(back);
			protobuf_c_message_free_unpacked(m, NULL);
		}
		json_decref(j);
	} else {
		struct store_query q, pick;
		char *s = fuzz_cstr(data + 1, size - 1);
		store_query_init(&q);
		store_query_init(&pick);
		targets__parse_selector(s, &q, &pick, err, sizeof(err));
		store_query_release(&q);
		store_query_release(&pick);
		free(s);
	}
	return 0;
}
