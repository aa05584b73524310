/* The earlier v1development numbering of an OTLP profile's Sample, as the OTel eBPF
 * profiler v0.0.202547 (pdata/pprofile v0.140) still sends it over gRPC: values = 2,
 * attribute_indices = 3, link_index = 4, where opentelemetry-proto 1.10 and later (what
 * format/otlp_profiles.proto reads) number them attribute_indices = 2, link_index = 3,
 * values = 4. Every other message of the request is numbered alike in both. */
#ifndef KILN_FORMAT_OTLP_COMPAT_H
#define KILN_FORMAT_OTLP_COMPAT_H

#include <stdbool.h>
#include <stddef.h>

/* True when the ExportProfilesServiceRequest data[0..len) has samples in the earlier
 * numbering (a packed field 3 in some Sample) and none in the later (a varint 3 or a
 * packed 4; a varint 4 is either's). A request whose samples carry only field 2 reads as the
 * later numbering. Malformed data answers false (the parser then says what is wrong). */
bool otlp__earlier_samples(const void *data, size_t len);
/* Renumbers, in place, every Sample's fields 2, 3, 4 of data (the earlier numbering) to
 * 4, 2, 3 (the later). The request keeps its length: these tags are one byte in both. */
void otlp__upgrade_samples(void *data, size_t len);

#endif
