/*
 * Event loop, one per thread: epoll for sockets and eventfds, timers (a
 * heap on nanosecond deadlines behind one timerfd), and deferred calls
 * that run at the end of every pass. Deferred calls are
 * where batching happens: a pass that produced several I/Os submits them in
 * one io_submit, a connection that queued several PDUs sends them in one
 * writev. Everything registered on a reactor is used only by its thread;
 * other threads talk to it with reactor_post().
 *
 * Two engines run the same API (chosen once, before reactors are made):
 * epoll (common/reactor.c) and io_uring (common/reactor_uring.c), where
 * fds are watched with poll requests on the reactor's ring, other I/O
 * (backend/uring_queue.c) is submitted on the same ring, and each pass
 * hands the kernel everything it queued in one io_uring_submit_and_wait.
 */
#ifndef TCQ_REACTOR_H
#define TCQ_REACTOR_H
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include "tcq/heap.h"
#include "tcq/list.h"

struct reactor;

typedef void (*reactor_fd_fn)(struct reactor *r, uint32_t events, void *arg);

struct reactor_fd {
	int fd;
	uint32_t events;	/* EPOLLIN, EPOLLOUT, ... */
	reactor_fd_fn fn;
	void *arg;
	void *poll;		/* io_uring: its poll request (reactor_uring.c) */
};

/* Which event loop reactor_init makes (reactor_set_engine). */
enum reactor_engine {
	REACTOR_EPOLL,		/* epoll, and libaio for files */
	REACTOR_URING,		/* io_uring for both */
};

/*
 * io_uring: a request on a reactor's ring (reactor_uring_sqe). fn runs on
 * the reactor's thread, in the pass that reaps its completion, with the
 * CQE's res and flags. Embed it in the object the request is for.
 */
struct reactor_op {
	void (*fn)(struct reactor *r, struct reactor_op *op, int res,
		   uint32_t flags);
};
struct io_uring_sqe;
struct reactor_uring;

/*
 * A timer: fn runs in the first pass whose time (now_ns) has reached the
 * deadline, never earlier; timers due in one pass run in deadline order.
 * All of a reactor's timers share one heap and one timerfd, set to the
 * earliest deadline only when the pass is about to sleep and that
 * deadline is earlier than the timerfd's setting: arming, moving or
 * cancelling a timer is a heap operation, and costs a timerfd_settime
 * only when it makes the earliest deadline earlier than it was set.
 */
struct reactor_timer {
	struct heap_node hn;	/* key: the deadline, monotonic ns */
	void (*fn)(struct reactor_timer *t);
	void *arg;
};

struct reactor_defer {
	struct list_node node;
	void (*fn)(struct reactor_defer *d);
	void *arg;
};

/* A message to a reactor's mailbox (reactor_post makes one; reactor_send
 * takes one the caller embeds in its own object). */
struct reactor_msg {
	struct reactor_msg *next;
	void (*fn)(void *arg);
	void *arg;
	bool owned;		/* the caller's: not freed after fn */
};

struct reactor {
	int epfd;		/* epoll; -1 on io_uring */
	struct reactor_uring *ring;	/* io_uring; NULL on epoll */
	int index;		/* 0..nreactors-1: picks per-reactor backend queues */
	bool stopping;
	pthread_t thread;
	struct list_node deferred;
	struct list_node next_pass;	/* reactor_defer_next: after the next
					 * epoll round */
	struct heap timers;	/* of reactor_timer.hn */
	int tfd;		/* timerfd: wakes the pass for timers */
	struct reactor_fd tfd_rfd;
	uint64_t tfd_at;	/* its setting, UINT64_MAX: none (or fired) */
	uint64_t tfd_sets;	/* timerfd_settime calls (tests count them) */
	/* cross-thread mailbox */
	int mbox_fd;
	struct reactor_fd mbox_rfd;
	pthread_mutex_t mbox_lock;
	struct reactor_msg *mbox_head, *mbox_tail;
	uint64_t now_ns;	/* cached at the start of each pass */
	/* Backend I/Os in flight on this reactor's queues, those of them a
	 * task sent (not read-ahead fills), and a moving average of their
	 * service time (backend/bdev_depth.c): senders yield between slices
	 * of a long send only while a command waits on a device that takes
	 * time and is short of work (target/conn_tx.c). */
	uint32_t io_inflight;
	uint32_t io_task_inflight;
	int64_t io_lat_ns;
};

/*
 * The engine of the reactors reactor_init makes from now on (default
 * epoll); call before making any (a process' reactors share one engine;
 * the unit tests switch between theirs).
 */
void reactor_set_engine(enum reactor_engine e);
enum reactor_engine reactor_engine(void);
/* The io engine's name as io_engine spells it: "uring" or "aio". */
const char *reactor_engine_name(enum reactor_engine e);
/* Can this build and kernel run REACTOR_URING? 0, or -errno with why in
 * why (the ring cannot be set up, an op it needs is missing, or the
 * build has no liburing). */
int reactor_uring_probe(char *why, size_t whylen);

int reactor_init(struct reactor *r, int index);
void reactor_fini(struct reactor *r);

int reactor_add_fd(struct reactor *r, struct reactor_fd *h, int fd,
		   uint32_t events, reactor_fd_fn fn, void *arg);
int reactor_mod_fd(struct reactor *r, struct reactor_fd *h, uint32_t events);
/*
 * Removes h from r. Safe from any callback of the same pass, including h's
 * own: events of the current epoll batch that still point at h are dropped,
 * so h may be freed as soon as reactor_del_fd returns (h's callback must
 * simply not touch h after freeing it). Close the fd after deleting it.
 */
void reactor_del_fd(struct reactor *r, struct reactor_fd *h);

void reactor_timer_init(struct reactor_timer *t,
			void (*fn)(struct reactor_timer *t), void *arg);
/* Arms t for deadline_ns, an absolute CLOCK_MONOTONIC time as
 * reactor_now_ns() (or r->now_ns) gives; re-arming an armed timer moves
 * it. 0, or -ENOMEM (logged) with t disarmed. On r's thread only. */
int reactor_timer_arm_at(struct reactor *r, struct reactor_timer *t,
			 uint64_t deadline_ns);
/* Arms t delay_ms from now (reactor_timer_arm_at on the clock). */
void reactor_timer_arm(struct reactor *r, struct reactor_timer *t,
		       uint64_t delay_ms);
void reactor_timer_cancel(struct reactor *r, struct reactor_timer *t);
static inline bool reactor_timer_armed(const struct reactor_timer *t)
{
	return heap_node_queued(&t->hn);
}
/* The deadline t was last armed for (monotonic ns). */
static inline uint64_t reactor_timer_deadline(const struct reactor_timer *t)
{
	return t->hn.key;
}

void reactor_defer_init(struct reactor_defer *d,
			void (*fn)(struct reactor_defer *d), void *arg);
/* Queues d to run at the end of this pass; a no-op if already queued.
 * Calls queued by deferred calls (d itself included) run in further rounds
 * of the same pass, up to a bound; the rest run in the next pass, which
 * then does not block in epoll. */
void reactor_defer(struct reactor *r, struct reactor_defer *d);
void reactor_defer_cancel(struct reactor_defer *d);
/* Queues d to run in the next pass, after that pass's fd events (the wait
 * for them does not block); a no-op if d is already queued. A long job
 * cut into slices this way lets fresh input (new commands) in between. */
void reactor_defer_next(struct reactor *r, struct reactor_defer *d);

/* Runs fn(arg) on r's thread; callable from any thread. */
int reactor_post(struct reactor *r, void (*fn)(void *arg), void *arg);

/* Runs fn(arg) on r's thread through m, which the caller owns and keeps
 * until fn has run (it is not sent again before); cannot fail. */
void reactor_send(struct reactor *r, struct reactor_msg *m,
		  void (*fn)(void *arg), void *arg);

/*
 * A join: work spread over reactors, counted, and fn(arg) run on the home
 * reactor (always through its mailbox, never inside a caller) once every
 * part is done; with no home, fn runs inside the reactor_join_done that
 * ends the last part. It starts with one part, the starter's own, which
 * the starter ends with reactor_join_done after adding the others.
 */
struct reactor_join {
	struct reactor *home;
	unsigned pending;	/* atomic */
	void (*fn)(void *arg);
	void *arg;
	struct reactor_msg msg;
};
void reactor_join_init(struct reactor_join *j, struct reactor *home,
		       void (*fn)(void *arg), void *arg);
void reactor_join_add(struct reactor_join *j, unsigned n);
void reactor_join_done(struct reactor_join *j);

/*
 * A barrier over reactors: one part of j per reactor of rs, done on that
 * reactor once it has run a whole pass after the message arrived, so all
 * it had already been told (sockets ready, messages posted before) has
 * been handled, and what that queued at the end of a pass too. parts:
 * n of them, the caller's, kept until j's fn runs.
 */
struct reactor_barrier_part {
	struct reactor_msg msg;
	struct reactor_defer defer;
	struct reactor *r;
	struct reactor_join *j;
};
void reactor_barrier(struct reactor *const *rs, int n,
		     struct reactor_barrier_part *parts,
		     struct reactor_join *j);

/*
 * io_uring only: an SQE on r's ring for op (NULL: a request whose
 * completion is ignored), which the caller preps and then marks with
 * io_uring_sqe_set_data(sqe, op). It goes to the kernel with the pass's
 * one submit (at once only when the ring's submission queue is full).
 * NULL when r has no ring or the ring fails.
 */
struct io_uring_sqe *reactor_uring_sqe(struct reactor *r);
/* io_uring_enter calls and SQEs r's ring has made (0 on epoll): a pass
 * that watched several fds and started several I/Os makes one. */
void reactor_uring_counts(const struct reactor *r, uint64_t *enters,
			  uint64_t *sqes);

/* Runs passes until reactor_stop; returns 0. A stop requested before the
 * call makes it return after one pass; the flag is cleared on return. */
int reactor_run(struct reactor *r);
/* Asks r to return from reactor_run after the current pass (any thread). */
void reactor_stop(struct reactor *r);

uint64_t reactor_now_ns(void);
/* The reactor running on the calling thread, or NULL. */
struct reactor *reactor_self(void);
#endif
