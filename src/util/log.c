#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>

enum log_level log_level = LOG_INFO;

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *const prefix[] = { "error: ", "warning: ", "", "debug: " };
	char line[1024];
	va_list ap;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One write per message, so that lines from several threads do not interleave. */
	fprintf(stderr, "kiln: %s%s\n", prefix[level], line);
}

void errmsg(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}
