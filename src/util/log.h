/* Messages to stderr, prefixed "kiln: ". Errors say what failed first and name the
 * object: log_error("failed to open '%s': %s", path, strerror(-err)). */
#ifndef KILN_UTIL_LOG_H
#define KILN_UTIL_LOG_H

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Messages above this level are dropped. Default LOG_INFO; -v raises it, -q lowers it. */
extern enum log_level log_level;

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* Writes a message into a caller's buffer, for errors returned to a caller (parsers,
 * HTTP handlers) rather than printed. buf may be NULL. */
void errmsg(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
