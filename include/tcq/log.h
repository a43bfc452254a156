/* Levelled logging to stderr. */
#ifndef TCQ_LOG_H
#define TCQ_LOG_H

enum log_level { LOG_ERR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

extern enum log_level log_threshold;

void log_set_level(enum log_level l);
/* Parses "error|warn|info|debug"; returns -1 when unknown. */
int log_parse_level(const char *s);
void log_msg(enum log_level l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) \
	do { if (log_threshold >= LOG_INFO) log_msg(LOG_INFO, __VA_ARGS__); } while (0)
#define log_debug(...) \
	do { if (log_threshold >= LOG_DEBUG) log_msg(LOG_DEBUG, __VA_ARGS__); } while (0)
#endif
