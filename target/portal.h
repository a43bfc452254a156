/*
 * Portals: the listening sockets. Address texts are parsed by
 * portal_addr.c (no sockets involved, so the config parser can use it);
 * portal.c listens and accepts on reactor 0, then hands each connection
 * to the reactor with the fewest open connections.
 */
#ifndef TCQ_PORTAL_H
#define TCQ_PORTAL_H
#include <stddef.h>
#include <sys/socket.h>
#include "target/target.h"

struct reactor;

/*
 * "1.2.3.4:3260", "[::1]:3260", "*:3260" (all IPv4 addresses) into a
 * socket address. Numeric only: no name lookups. Port 0 asks the kernel
 * for a free port. Returns 0, or -1 with a message in err.
 */
int portal_parse_addr(const char *text, struct sockaddr_storage *ss,
		      socklen_t *len, char *err, size_t errlen);
/* The address of tcqd's /metrics (metrics = in [global], --metrics): as
 * portal_parse_addr, and a bare "PORT" or ":PORT" is 127.0.0.1:PORT. */
int metrics_parse_addr(const char *text, struct sockaddr_storage *ss,
		       socklen_t *len, char *err, size_t errlen);
/* "1.2.3.4:3260" or "[::1]:3260". */
void portal_format_addr(const struct sockaddr *sa, char *buf, size_t len);

/*
 * Opens p's listening socket (SO_REUSEADDR, IPV6_V6ONLY, non-blocking,
 * backlog 128). With port 0 the real port is read back into p->addr and
 * p->addr_text. Returns 0, or -1 with a message in err.
 */
int portal_listen(struct portal *p, char *err, size_t errlen);

/* A portal of that address text (not yet listening), or NULL with a
 * message in err; portal_free frees one that nothing uses any more. */
struct portal *portal_new(const char *text, uint16_t tpgt, char *err,
			  size_t errlen);
void portal_free(struct portal *p);

/*
 * Starts accepting on every listening portal of d. The accept handler runs
 * on rs[0]; each connection goes (reactor_post, conn_accept) to the rs[i]
 * with the fewest open connections, ties in turn. Call on rs[0]'s thread
 * (or before any reactor runs).
 */
int portal_start(struct tcqd *d, struct reactor **rs, int nreactors);
/* A connection that conn_accept was given on r is closed (or failed to
 * start): r has one fewer for placement. Any thread. */
void portal_conn_ended(struct reactor *r);
/* After portal_start, on rs[0]'s thread: accepts on one more listening
 * portal (0 or -1), or stops accepting on p and closes its socket. */
int portal_watch(struct portal *p);
void portal_unwatch(struct portal *p);
/* Stops accepting and closes the listening sockets (on rs[0]'s thread). */
void portal_stop(void);
#endif
