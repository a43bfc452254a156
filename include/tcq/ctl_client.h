/*
 * A client of tcqd's control socket (target/ctl.c): one request line out,
 * the whole answer (one JSON document) back, then the connection is
 * closed. tcqctl and tcq-bench --ctl talk to tcqd through it.
 */
#ifndef TCQ_CTL_CLIENT_H
#define TCQ_CTL_CLIENT_H
#include <stddef.h>

/*
 * Connects to the unix socket at path, sends line (a request, ending in
 * '\n'), and reads tcqd's answer to its end. Connecting, each send and
 * each wait for more of the answer give up after timeout_s seconds; an
 * answer over 64 MiB is refused. Returns the answer, NUL-terminated, to
 * free(); or NULL with a message in err that names path, and errno set
 * to the cause (ENOENT: nothing listens at path).
 */
char *ctl_client_request(const char *path, const char *line, int timeout_s,
			 char *err, size_t errlen);
#endif
