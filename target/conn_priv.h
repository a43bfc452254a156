/*
 * What the files of a connection share: conn.c (accept, pings, the end),
 * conn_rx.c (receive) and conn_tx.c (the send queue). Not for other
 * modules.
 */
#ifndef TCQ_CONN_PRIV_H
#define TCQ_CONN_PRIV_H
#include <stdint.h>
#include "tcq/reactor.h"

struct conn;

/* conn_rx.c: the socket's events (EPOLLOUT goes to conn_tx_flush). */
void conn_rx_ready(struct reactor *r, uint32_t events, void *arg);

/* conn_tx.c */
/* Sends what the queue holds, as far as the socket takes it (tx.flush). */
void conn_tx_flush(struct reactor_defer *d);
/* One last non-blocking attempt to send what is queued (closing). */
void conn_tx_last_try(struct conn *c);
/* Drops what was not sent (queued PDUs may point into command buffers). */
void conn_tx_drop_queue(struct conn *c);
/* Drops the queue and frees the spare PDUs (the connection's end). */
void conn_tx_free(struct conn *c);
#endif
