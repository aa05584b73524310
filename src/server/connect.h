/* Connect's unary protocol (connectrpc.com), the way Pyroscope's APIs are called: a POST
 * whose body is one message, binary protobuf (Content-Type application/proto) or proto3
 * JSON (application/json), gzipped or not (Content-Encoding); the answer is one message in
 * the same encoding, or an error {"code": ..., "message": ...} as JSON with the HTTP status
 * of its code. Messages are protobuf-c's: the JSON side is read and written from their
 * descriptors (field names in lowerCamelCase or as declared, 64-bit integers as strings,
 * enums by name). Internal to the server. */
#ifndef KILN_SERVER_CONNECT_H
#define KILN_SERVER_CONNECT_H

#include <jansson.h>
#include <protobuf-c/protobuf-c.h>

#include "server/http.h"

/* Decodes the request's body as a message of desc. Returns it (free with
 * protobuf_c_message_free_unpacked(msg, NULL)), or NULL with a Connect error set in resp
 * (415 for another content type, 400 invalid_argument for a body that is not one). */
ProtobufCMessage *connect__decode(struct request *r, struct response *resp,
				  const ProtobufCMessageDescriptor *desc);

/* Sets msg as the 200 answer, in the encoding the request came in. */
void connect__reply(const struct request *r, struct response *resp, const ProtobufCMessage *msg);

/* Sets the 200 answer from an already packed message of desc (sent as it is, or as JSON
 * for a JSON request; a packing that desc cannot read gives a 500). */
void connect__reply_packed(const struct request *r, struct response *resp,
			   const ProtobufCMessageDescriptor *desc, const void *data, size_t len);

/* Sets a Connect error: code is Connect's ("invalid_argument", "not_found", "internal",
 * "unavailable", ...), the HTTP status the one Connect maps it to. */
void connect__error(struct response *resp, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same with the HTTP status given, where a route answers one Connect's table does not
 * name (415 for a content type, 422 for a time out of range). */
void connect__error_at(struct response *resp, unsigned status, const char *code,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A request's [start, end) in milliseconds as seconds [from, until), rounded outwards;
 * end 0 is now, start 0 an hour before end (all time when all_time). Sets a Connect error
 * and returns -EINVAL for negative, far-future or empty ranges. */
int connect__range_ms(struct response *resp, int64_t start, int64_t end, bool all_time,
		      int64_t *from, int64_t *until);

/* The JSON codec alone (exposed for tests): msg as proto3 JSON (a new reference), and a
 * new message of desc from v (NULL with a message in err when v does not fit desc). */
json_t *connect__to_json(const ProtobufCMessage *msg);
ProtobufCMessage *connect__from_json(const ProtobufCMessageDescriptor *desc, json_t *v,
				     char *err, size_t errlen);

/* Shared by the selects of query_connect_select.c and query_connect_span.c. */
struct targets;
struct Querier__V1__FlameGraph;
/* What every select starts with: a profile type (required), the range (ms) as seconds in
 * *from / *until, and the targets of the selector in t with its store matchers in q
 * (initialized). Returns 0, or a negative errno with a Connect error set. */
int query__select_typed(struct request *r, struct response *resp, const char *type_id,
			const char *selector, int64_t start, int64_t end, struct store_query *q,
			struct targets *t, int64_t *from, int64_t *until);
/* Fills tree (initialized) with the merged call tree of every target of q: the store's own
 * tree when one target matches, else built from their merged stacks in scratch (which the
 * tree's names then point into). Returns 0, or a negative errno with a Connect error. */
int query__merged_tree(struct request *r, struct response *resp, const struct store_query *q,
		       const struct targets *t, int64_t from, int64_t until,
		       struct store_tree *tree, struct profile *scratch);
/* Flamebearer {names, levels, numTicks, maxSelf} as a FlameGraph message (which borrows
 * fb's strings: keep fb until it is sent). Free with query__free_flamegraph. */
struct Querier__V1__FlameGraph *query__flamegraph(json_t *fb);
void query__free_flamegraph(struct Querier__V1__FlameGraph *g);
/* A request's max_nodes: the default for 0 or less, capped. */
size_t query__max_nodes(int64_t v);

#endif
