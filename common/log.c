/*
 * Levelled logging to stderr. Each line is formatted into one buffer and
 * written with a single write() so lines from different threads never
 * interleave. Lines name the reactor ("r<index>") when the caller runs on
 * one, else the kernel thread id ("t<tid>").
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* gettid */
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include "tcq/log.h"
#include "tcq/reactor.h"

enum log_level log_threshold = LOG_INFO;

static const char *const log_names[] = { "ERROR", "WARN", "INFO", "DEBUG" };

void log_set_level(enum log_level l)
{
	log_threshold = l;
}

int log_parse_level(const char *s)
{
	static const struct { const char *name; enum log_level l; } tab[] = {
		{ "error", LOG_ERR }, { "err", LOG_ERR },
		{ "warn", LOG_WARN }, { "warning", LOG_WARN },
		{ "info", LOG_INFO }, { "debug", LOG_DEBUG },
	};

	if (!s)
		return -1;
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcasecmp(s, tab[i].name))
			return tab[i].l;
	return -1;
}

void log_msg(enum log_level l, const char *fmt, ...)
{
	char buf[1024];
	struct timespec ts;
	struct tm tm;
	struct reactor *r = reactor_self();
	size_t len;
	int n, saved = errno;
	va_list ap;

	if (l > log_threshold)
		return;
	if (l < LOG_ERR)
		l = LOG_ERR;
	if (l > LOG_DEBUG)
		l = LOG_DEBUG;
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	n = snprintf(buf, sizeof(buf),
		     "%04d-%02d-%02d %02d:%02d:%02d.%06ld %-5s [%c%d] ",
		     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		     tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000, log_names[l],
		     r ? 'r' : 't', r ? r->index : (int)gettid());
	len = n > 0 ? (size_t)n : 0;
	va_start(ap, fmt);
	n = vsnprintf(buf + len, sizeof(buf) - len, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(buf) - len) {
		/* Truncated: mark it and keep room for the newline. */
		len = sizeof(buf) - 1;
		memcpy(buf + len - 3, "...", 3);
	} else {
		len += (size_t)n;
	}
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	buf[len++] = '\n';
	while (write(STDERR_FILENO, buf, len) < 0 && errno == EINTR)
		;
	errno = saved;
}
