/*
 * What the files of a connection share: conn.c (accept, pings, the end),
 * conn_rx.c (receive) and conn_tx.c (the send queue). Not for other
 * modules.
 */
#ifndef TCQ_CONN_PRIV_H
#define TCQ_CONN_PRIV_H
#include <stdbool.h>
#include <stdint.h>
#include "tcq/reactor.h"

struct conn;

/* conn_rx.c: the socket's events (EPOLLOUT goes to conn_tx_flush). */
void conn_rx_ready(struct reactor *r, uint32_t events, void *arg);

/* conn_tx.c */
/* Whether a flush sends one slice (TX_SLICE) and yields to the next
 * reactor pass, or all it can (conn_tx.c says why): from the session's
 * commands alive, the reactor's backend I/Os in flight (all, and those
 * of tasks) and their mean service time. */
bool conn_tx_slices(unsigned cmds_live, uint32_t io_inflight,
		    uint32_t io_task_inflight, int64_t io_lat_ns);
/* Sends what the queue holds, as far as the socket takes it (tx.flush). */
void conn_tx_flush(struct reactor_defer *d);
/* One last non-blocking attempt to send what is queued (closing). */
void conn_tx_last_try(struct conn *c);
/* Drops what was not sent (queued PDUs may point into command buffers). */
void conn_tx_drop_queue(struct conn *c);
/* Drops the queue and frees the spare PDUs (the connection's end). */
void conn_tx_free(struct conn *c);
#endif
