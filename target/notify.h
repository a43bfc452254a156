/*
 * tcqd's messages to its service manager (systemd's Type=notify, through
 * sd_notify). Every call is a no-op when NOTIFY_SOCKET is unset, so tcqd
 * run by hand, by a test or by another supervisor behaves the same.
 */
#ifndef TCQ_NOTIFY_H
#define TCQ_NOTIFY_H

/* Every portal listens: the service is up (READY=1). Also sent after a
 * reload, which notify_reloading() announced. */
void notify_ready(void);

/* A reload of the configuration begins (RELOADING=1, with the
 * MONOTONIC_USEC systemd 253 and later wants); notify_ready() ends it. */
void notify_reloading(void);

/* The daemon is shutting down (STOPPING=1). */
void notify_stopping(void);

/* A free-text status line (STATUS=...), shown by systemctl status. */
void notify_status(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
#endif
