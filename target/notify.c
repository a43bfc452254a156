/*
 * sd_notify messages (notify.h). sd_notify itself does nothing without
 * NOTIFY_SOCKET; the checks here only spare the formatting.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <systemd/sd-daemon.h>
#include "tcq/log.h"
#include "target/notify.h"

static int enabled(void)
{
	const char *s = getenv("NOTIFY_SOCKET");

	return s && *s;
}

static void send_state(const char *state)
{
	int rc = sd_notify(0, state);

	if (rc < 0)
		log_warn("sd_notify: cannot send %s to $NOTIFY_SOCKET (%d)",
			 state, rc);
}

void notify_ready(void)
{
	if (enabled())
		send_state("READY=1");
}

void notify_reloading(void)
{
	struct timespec ts;
	char msg[64];

	if (!enabled())
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu",
		 (unsigned long long)ts.tv_sec * 1000000ull +
		 (unsigned long long)ts.tv_nsec / 1000);
	send_state(msg);
}

void notify_stopping(void)
{
	if (enabled())
		send_state("STOPPING=1");
}

void notify_status(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	if (!enabled())
		return;
	n = snprintf(msg, sizeof(msg), "STATUS=");
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	send_state(msg);
}
