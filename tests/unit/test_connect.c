/* Connect's proto3 JSON codec (server/connect.h) on the querier's messages: known answers
 * for names, 64-bit integers, enums and nesting, refusals of what does not fit, and a
 * deterministic fuzz loop of random JSON for every message (run under ASan/UBSan), each
 * decoded message re-encoded and packed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "querier.pb-c.h"
#include "server/connect.h"

#define ROUNDS 20000

static uint64_t seed = 0x2545f4914f6cdd1dULL;

static uint64_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

static ProtobufCMessage *decode(const ProtobufCMessageDescriptor *d, const char *text,
				char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *v = json_loads(text, 0, &jerr);
	ProtobufCMessage *m;

	assert_non_null(v);
	m = connect__from_json(d, v, err, errlen);
	json_decref(v);
	return m;
}

static void test_known(void **state)
{
	char err[256];
	Querier__V1__SelectMergeStacktracesRequest *r = (void *)decode(
		&querier__v1__select_merge_stacktraces_request__descriptor,
		"{\"profileTypeID\":\"memory:alloc_space:bytes:space:bytes\","
		"\"label_selector\":\"{service_name=\\\"a\\\"}\",\"start\":\"1676282400000\","
		"\"end\":1676289600000,\"maxNodes\":\"-1\",\"format\":\"PROFILE_FORMAT_FLAMEGRAPH\","
		"\"unknownField\":[1,2]}", err, sizeof(err));

	assert_non_null(r);
	assert_string_equal(r->profile_typeid, "memory:alloc_space:bytes:space:bytes");
	assert_string_equal(r->label_selector, "{service_name=\"a\"}");
	assert_int_equal(r->start, 1676282400000LL);
	assert_int_equal(r->end, 1676289600000LL);
	assert_int_equal(r->max_nodes, -1);
	assert_int_equal(r->format, QUERIER__V1__PROFILE_FORMAT__PROFILE_FORMAT_FLAMEGRAPH);
	/* and back: 64-bit integers as strings, enums by name, defaults left out */
	json_t *j = connect__to_json(&r->base);
	char *text = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(text, "{\"end\":\"1676289600000\",\"format\":\"PROFILE_FORMAT_FLAMEGRAPH\","
			    "\"labelSelector\":\"{service_name=\\\"a\\\"}\",\"maxNodes\":\"-1\","
			    "\"profileTypeID\":\"memory:alloc_space:bytes:space:bytes\","
			    "\"start\":\"1676282400000\"}");
	free(text);
	json_decref(j);
	protobuf_c_message_free_unpacked(&r->base, NULL);

	/* repeated and nested, numbers as proto3 JSON allows them */
	Querier__V1__SelectMergeStacktracesResponse *a = (void *)decode(
		&querier__v1__select_merge_stacktraces_response__descriptor,
		"{\"flamegraph\":{\"names\":[\"total\",\"a\"],\"levels\":[{\"values\":[0,3,0,0]},"
		"{\"values\":[\"0\",\"3\",\"3\",1.0]}],\"total\":\"3\",\"max_self\":3}}", err,
		sizeof(err));
	assert_non_null(a);
	assert_int_equal(a->flamegraph->n_names, 2);
	assert_string_equal(a->flamegraph->names[1], "a");
	assert_int_equal(a->flamegraph->n_levels, 2);
	assert_int_equal(a->flamegraph->levels[1]->values[3], 1);
	assert_int_equal(a->flamegraph->max_self, 3);
	protobuf_c_message_free_unpacked(&a->base, NULL);

	Querier__V1__SelectSeriesRequest *s = (void *)decode(
		&querier__v1__select_series_request__descriptor,
		"{\"step\":15.5,\"groupBy\":[\"pod\",\"host\"],\"aggregation\":1,\"limit\":null}",
		err, sizeof(err));
	assert_non_null(s);
	assert_true(s->step == 15.5);
	assert_int_equal(s->n_group_by, 2);
	assert_string_equal(s->group_by[1], "host");
	assert_int_equal(s->aggregation, 1);
	protobuf_c_message_free_unpacked(&s->base, NULL);
}

static void test_refused(void **state)
{
	static const char *bad[] = {
		"{\"start\":\"12x\"}", "{\"start\":1.5}", "{\"start\":\"99999999999999999999\"}",
		"{\"start\":true}", "{\"format\":\"NO_SUCH\"}", "{\"profileTypeID\":3}",
		"{\"maxNodes\":1e300}", "[]",
	};
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		ProtobufCMessage *m = decode(&querier__v1__select_merge_stacktraces_request__descriptor,
					     bad[i], err, sizeof(err));
		assert_null(m);
		assert_true(err[0]);
	}
	assert_null(decode(&querier__v1__series_request__descriptor,
			   "{\"matchers\":[\"a\",null]}", err, sizeof(err)));
	assert_null(decode(&querier__v1__series_request__descriptor, "{\"matchers\":\"a\"}", err,
			   sizeof(err)));
	assert_null(decode(&querier__v1__select_merge_stacktraces_response__descriptor,
			   "{\"tree\":\"AAAA\"}", err, sizeof(err)));
	assert_non_null(strstr(err, "bytes"));
	/* an empty array of a repeated field is no value at all */
	ProtobufCMessage *m = decode(&querier__v1__select_merge_stacktraces_response__descriptor,
				     "{\"flamegraph\":{\"levels\":[{\"values\":[]}]}}", err,
				     sizeof(err));
	assert_non_null(m);
	assert_int_equal(((Querier__V1__SelectMergeStacktracesResponse *)m)->flamegraph->levels[0]
				 ->n_values, 0);
	protobuf_c_message_free_unpacked(m, NULL);
}

/* A random JSON value, objects keyed by the message's own field names half the time. */
static json_t *random_value(const ProtobufCMessageDescriptor *d, int depth)
{
	switch (rnd() % (depth > 3 ? 6 : 8)) {
	case 0: return json_integer((json_int_t)rnd());
	case 1: return json_real((double)(int64_t)rnd() / 7.0);
	case 2: {
		char s[24];
		snprintf(s, sizeof(s), "%lld", (long long)(int64_t)rnd() >> (rnd() % 64));
		return json_string(rnd() % 4 ? s : "PROFILE_FORMAT_TREE");
	}
	case 3: return json_boolean(rnd() % 2);
	case 4: return json_null();
	case 5: return json_string("{service_name=\"x\"}");
	case 6: {
		json_t *a = json_array();
		for (uint64_t n = rnd() % 4; n-- > 0;)
			json_array_append_new(a, random_value(d, depth + 1));
		return a;
	}
	default: {
		json_t *o = json_object();
		for (uint64_t n = rnd() % 5; n-- > 0;) {
			const char *key = d->n_fields && rnd() % 2 ? d->fields[rnd() % d->n_fields].name
								   : "flamegraph";
			json_object_set_new(o, key, random_value(d, depth + 1));
		}
		return o;
	}
	}
}

static void test_fuzz(void **state)
{
	const ProtobufCMessageDescriptor *ds[] = {
		&querier__v1__select_merge_stacktraces_request__descriptor,
		&querier__v1__select_merge_stacktraces_response__descriptor,
		&querier__v1__select_series_request__descriptor,
		&querier__v1__select_series_response__descriptor,
		&querier__v1__series_request__descriptor,
		&querier__v1__label_values_request__descriptor,
		&querier__v1__profile_types_response__descriptor,
	};
	size_t decoded = 0;
	char err[256];

	for (int i = 0; i < ROUNDS; i++) {
		const ProtobufCMessageDescriptor *d = ds[rnd() % (sizeof(ds) / sizeof(ds[0]))];
		json_t *v = json_object();
		for (uint64_t n = rnd() % 6; n-- > 0;)
			json_object_set_new(v, d->fields[rnd() % d->n_fields].name, random_value(d, 0));
		ProtobufCMessage *m = connect__from_json(d, v, err, sizeof(err));
		json_decref(v);
		if (!m)
			continue;
		decoded++;
		json_t *back = connect__to_json(m);
		size_t len = protobuf_c_message_get_packed_size(m);
		uint8_t *buf = malloc(len + 1);
		protobuf_c_message_pack(m, buf);
		ProtobufCMessage *again = protobuf_c_message_unpack(d, NULL, len, buf);
		assert_non_null(again);
		/* what was decoded from JSON survives binary unchanged */
		json_t *back2 = connect__to_json(again);
		assert_true(json_equal(back, back2));
		json_decref(back);
		json_decref(back2);
		protobuf_c_message_free_unpacked(again, NULL);
		protobuf_c_message_free_unpacked(m, NULL);
		free(buf);
	}
	assert_true(decoded > ROUNDS / 20);	/* the loop reached the decoders' far side */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_fuzz),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
