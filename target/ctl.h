/*
 * The control socket tcqctl talks to: a unix stream socket served on
 * reactor 0. A client sends one request line (a command of tcqctl's table,
 * tcq/ctl_cmds.h, and its words: "stats", "set LUN KEY=VALUE...", ...),
 * gets one JSON document back ({"ok":true,...} or
 * {"ok":false,"error":"..."}) and the connection closes. The socket is
 * made with mode 0600: whoever can open it is the daemon's administrator.
 */
#ifndef TCQ_CTL_H
#define TCQ_CTL_H
#include <stddef.h>

struct reactor;
struct lun;

/*
 * Binds path (a stale socket left by a dead tcqd is replaced; a live one
 * or a non-socket file is an error) and serves it on reactors[0]. Call
 * before the other reactors run requests, from reactors[0]'s thread.
 * Returns 0, or -1 with a message in err.
 */
int ctl_start(const char *path, struct reactor **reactors, int nreactors,
	      char *err, size_t errlen);
/* Closes the socket and any open control connection, unlinks the path.
 * On reactors[0]'s thread, after the other reactors stopped. */
void ctl_stop(void);

/* "TARGET/N", or "N" when there is exactly one target; NULL with a
 * message in err. Exposed for tests. */
struct lun *ctl_find_lun(const char *spec, char *err, size_t errlen);
#endif
