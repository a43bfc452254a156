/*
 * LUN state shared between gateways (issue 8): several tcqd processes
 * export one image, and what SPC-4 says belongs to the logical unit rather
 * than to a port (reservations, the unit attentions and aborts one
 * gateway's action owes to nexuses on the others) goes through a store
 * they all see.
 *
 * The store keeps one versioned blob per LUN and broadcasts small
 * messages. It lives in backend/ because its implementations live next
 * to the medium (rados_store.c beside rbd.c); scsi/ code sees only this
 * interface. A LUN without a store (lun->store NULL) keeps everything in
 * its process.
 *
 * Every operation may block (network round trips): they run on the
 * store's worker thread (lun_store_queue), never on a reactor. The
 * message callback runs on a thread of the store's implementation; the
 * store acknowledges the message once the callback returns, so a sender
 * whose notify returned knows every live gateway applied it.
 */
#ifndef TCQ_LUN_STORE_H
#define TCQ_LUN_STORE_H
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tcq/list.h"

struct bdev;
struct lun_store;

/* cas() when the stored version is no longer the one given. */
#define LUN_STORE_CONFLICT (-ECANCELED)
/* How often an idle worker re-reads the stored state (on_idle). */
#define LUN_STORE_REFRESH_MS 3000
/* The largest blob / message a store must carry. */
#define LUN_STORE_BLOB_MAX (256u * 1024)

struct lun_store_ops {
	/* The blob into buf (at most cap bytes): *len and *version; an
	 * empty store gives *len 0, *version 0. 0 or -errno. */
	int (*load)(struct lun_store *s, void *buf, size_t cap, size_t *len,
		    uint64_t *version);
	/* Replaces the blob if the stored version is still version; the
	 * new version is version + 1. 0, LUN_STORE_CONFLICT, or -errno. */
	int (*cas)(struct lun_store *s, uint64_t version, const void *buf,
		   size_t len);
	/* Sends msg to every gateway (this one included) and waits, at most
	 * timeout_ms, for their acknowledgements. 0, -ETIMEDOUT when some
	 * gateway did not answer, or -errno. */
	int (*notify)(struct lun_store *s, const void *msg, size_t len,
		      unsigned timeout_ms);
	/* Stops callbacks and frees the implementation's part. */
	void (*close)(struct lun_store *s);
};

struct lun_store_job {
	struct list_node node;
	void (*fn)(struct lun_store_job *j);
	void *arg;
};

struct lun_store {
	const struct lun_store_ops *ops;
	void *priv;			/* the implementation's */
	char name[160];			/* for logs */
	uint64_t id;			/* random: its own messages come back */
	/* Set by the owner before lun_store_start: a message from a
	 * gateway (this one's own included), and "messages may have been
	 * missed, reload" (a lost watch). Called on the store's threads. */
	void (*on_msg)(void *arg, const void *msg, size_t len);
	void (*on_reload)(void *arg);
	void *arg;
	/* Also set before lun_store_start: called on the worker after
	 * refresh_ms without a job, so a gateway that missed a message
	 * (ack timeout, a watch lost unnoticed) catches up on its own. */
	void (*on_idle)(void *arg);
	unsigned refresh_ms;		/* LUN_STORE_REFRESH_MS by default;
					 * 0: never */
	/* worker */
	pthread_t thread;
	bool started, stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct list_node jobs;
};

/* Initialises the generic part (implementations call it first). */
void lun_store_init(struct lun_store *s, const struct lun_store_ops *ops,
		    void *priv, const char *name);
/* Starts the worker thread; 0 or -1. */
int lun_store_start(struct lun_store *s);
/* Runs j->fn(j) on the worker, after the jobs queued before it. */
void lun_store_queue(struct lun_store *s, struct lun_store_job *j);
/* Runs what is queued, stops the worker, closes and frees s. */
void lun_store_close(struct lun_store *s);

/*
 * The RADOS store of an rbd LUN (backend/rados_store.c): object
 * "tcq.lun.IMAGE" in the image's pool, on the rbd backend's cluster
 * connection. NULL with a message in err when b is not an rbd backend or
 * tcq was built without librbd.
 */
struct lun_store *rados_store_open(struct bdev *b, char *err, size_t errlen);
#endif
