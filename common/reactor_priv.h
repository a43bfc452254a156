/*
 * What the two engines of the reactor share (include/tcq/reactor.h):
 * reactor.c has the API, the parts both run the same (mailbox, timers,
 * deferred calls, joins) and epoll; reactor_uring.c watches fds and runs
 * the pass's I/O on an io_uring. Private to common/.
 */
#ifndef TCQ_COMMON_REACTOR_PRIV_H
#define TCQ_COMMON_REACTOR_PRIV_H
#include "tcq/reactor.h"

/* The ring of a new reactor (r->ring); 0 or -errno. */
int ruring_init(struct reactor *r);
/* Frees the ring and every poll request still known to it. */
void ruring_fini(struct reactor *r);
/* reactor_add_fd, reactor_mod_fd, reactor_del_fd on the ring: the same
 * promises (level-triggered unless EPOLLET; del safe from any callback). */
int ruring_add_fd(struct reactor *r, struct reactor_fd *h);
int ruring_mod_fd(struct reactor *r, struct reactor_fd *h, uint32_t events);
void ruring_del_fd(struct reactor *r, struct reactor_fd *h);
/* The pass's one io_uring_enter: submits what the last pass queued and
 * waits as epoll_wait would for timeout_ms (0: not at all, -1: until a
 * completion, the timerfd's among them). */
void ruring_wait(struct reactor *r, int timeout_ms);
/* Runs the callbacks of every completion there is. */
void ruring_dispatch(struct reactor *r);
#endif
