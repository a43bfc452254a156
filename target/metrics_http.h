/*
 * tcqd's Prometheus endpoint: GET (or HEAD) /metrics over HTTP, served by
 * libmicrohttpd in a thread of its own (never on a reactor), with the
 * text of target/metrics_prom.c. Other paths get 404, other methods 405.
 */
#ifndef TCQ_METRICS_HTTP_H
#define TCQ_METRICS_HTTP_H
#include <stddef.h>

/* Listens on addr ([ADDR:]PORT, target/portal.h metrics_parse_addr; port
 * 0 picks a free one) and serves. 0, or -1 with a message in err. */
int metrics_http_start(const char *addr, char *err, size_t errlen);
/* The address it listens on ("127.0.0.1:9100", "[::1]:9100"). */
const char *metrics_http_addr(void);
/* Stops the thread and closes the socket (before the daemon is freed). */
void metrics_http_stop(void);
#endif
