/* bench/jfr.c FILE N: parses the JFR recording FILE N times with kiln's reader
 * (format/jfr.h) and prints the CPU time per parse; run by bench/jfr.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "format/jfr.h"
#include "util/strbuf.h"

int main(int argc, char **argv)
{
	struct strbuf sb = STRBUF_INIT;
	struct timespec a, b;
	size_t events = 0;
	char err[256];
	int n;

	if (argc < 3 || (n = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: bench-jfr FILE N\n");
		return 2;
	}
	if (strbuf_read_file(&sb, argv[1]) < 0) {
		fprintf(stderr, "bench-jfr: cannot read '%s'\n", argv[1]);
		return 1;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	for (int i = 0; i < n; i++) {
		struct profile *p = profile__new();
		struct jfr_stats st;
		if (jfr__parse(p, sb.buf, sb.len, NULL, 10000000, &st, err, sizeof(err))) {
			fprintf(stderr, "bench-jfr: '%s': %s\n", argv[1], err);
			return 1;
		}
		events = st.events;
		profile__free(p);
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("kiln: %s: %zu bytes, %zu events, %.3f ms CPU per parse, %.0f MB/s\n", argv[1],
	       sb.len, events, s / n * 1e3, (double)sb.len * n / s / 1e6);
	strbuf_release(&sb);
	return 0;
}
