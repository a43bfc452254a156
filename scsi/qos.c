/* Per-LUN QoS: token buckets in front of the task sets (see qos.h). */
#include <stdlib.h>
#include "tcq/scsi_proto.h"
#include "scsi/cdb.h"
#include "scsi/lun.h"
#include "scsi/qos.h"
#include "scsi/taskset.h"

/* The bucket holds this much of each limit (the burst). */
#define QOS_BURST_DIV 20		/* 1/20 s: 50 ms */
/* Tokens: commands in units of 1e-9 (one command is QOS_IO), bytes in
 * units of 1e-3, so that a nanosecond at the limit adds iops and mbps
 * tokens (1 MB/s = 1e6 bytes/s = 1 milli-byte/ns). */
#define QOS_IO 1000000000ll
#define QOS_B 1000ll
/* Refills count at most this much time at once: with the largest
 * limits (tcqd.conf's ranges) no product overflows. */
#define QOS_MAX_ELAPSED_NS 1000000000000ull

struct qos {
	uint32_t iops, mbps;	/* limits, 0: none */
	int limited;		/* atomic: iops or mbps set */
	int64_t tok_io, tok_b;	/* may be negative: debt */
	int64_t cap_io, cap_b;
	uint64_t last_ns;	/* the buckets' last refill */
	uint64_t next_ns;	/* when the round robin's next may pass */
	struct list_node ring;	/* of qos_nexus.ring */
	uint64_t delayed;	/* commands held, ever */
	unsigned held;		/* held now */
};

struct qos *qos_new(void)
{
	struct qos *q = calloc(1, sizeof(*q));

	if (q)
		list_init(&q->ring);
	return q;
}

void qos_free(struct qos *q)
{
	free(q);
}

static bool limited(const struct qos *q)
{
	return __atomic_load_n(&q->limited, __ATOMIC_RELAXED) != 0;
}

/* ---- the buckets (the LUN's lock held) ------------------------------- */

/* The bytes a task costs, or -1: it costs nothing at all. */
static int64_t task_bytes(const struct tcq_task *t)
{
	if (!t->req.cmd || cdb_access(&t->req) == CDB_ACCESS_NONE)
		return -1;
	return (int64_t)t->req.blocks * t->lun->block_size;
}

static void refill(struct qos *q, uint64_t now)
{
	uint64_t dt = now > q->last_ns ? now - q->last_ns : 0;

	if (dt > QOS_MAX_ELAPSED_NS)
		dt = QOS_MAX_ELAPSED_NS;
	q->last_ns = now > q->last_ns ? now : q->last_ns;
	q->tok_io += (int64_t)dt * q->iops;
	if (q->tok_io > q->cap_io)
		q->tok_io = q->cap_io;
	q->tok_b += (int64_t)dt * q->mbps;
	if (q->tok_b > q->cap_b)
		q->tok_b = q->cap_b;
}

/* What the byte bucket must hold for cost: all of it, or a full bucket
 * for a command bigger than the bucket (which then goes into debt). */
static int64_t need_b(const struct qos *q, int64_t bytes)
{
	int64_t c = bytes * QOS_B;

	return c < q->cap_b ? c : q->cap_b;
}

static bool fits(const struct qos *q, const struct tcq_task *t)
{
	int64_t bytes = task_bytes(t);

	if (bytes < 0)
		return true;
	if (q->iops && q->tok_io < QOS_IO)
		return false;
	return !q->mbps || !bytes || q->tok_b >= need_b(q, bytes);
}

static void charge(struct qos *q, const struct tcq_task *t)
{
	int64_t bytes = task_bytes(t);

	if (bytes < 0)
		return;
	if (q->iops)
		q->tok_io -= QOS_IO;
	if (q->mbps)
		q->tok_b -= bytes * QOS_B;
}

/* Nanoseconds until t fits (it does not now). */
static uint64_t wait_ns(const struct qos *q, const struct tcq_task *t)
{
	int64_t bytes = task_bytes(t);
	uint64_t w = 1, x;

	if (q->iops && q->tok_io < QOS_IO) {
		x = (uint64_t)(QOS_IO - q->tok_io + q->iops - 1) / q->iops;
		w = x > w ? x : w;
	}
	if (q->mbps && bytes > 0 && q->tok_b < need_b(q, bytes)) {
		x = (uint64_t)(need_b(q, bytes) - q->tok_b + q->mbps - 1) /
		    q->mbps;
		w = x > w ? x : w;
	}
	return w;
}

/* ---- the nexuses' queues (the LUN's lock held) ------------------------ */

static struct qos_nexus *nexus_of(struct taskset *ts)
{
	return &ts->qos;
}

/* The first held task of qn not granted yet, or NULL. */
static struct tcq_task *first_waiting(struct qos_nexus *qn)
{
	struct list_node *pos;
	unsigned i = 0;

	list_for_each(pos, &qn->held)
		if (i++ == qn->n_granted)
			return list_entry(pos, struct tcq_task, order.node);
	return NULL;
}

static void kick_run(void *arg);

/* The set's reactor lets the granted tasks in (and re-arms its timer). */
static void kick(struct taskset *ts)
{
	struct qos_nexus *qn = nexus_of(ts);

	if (qn->kick_queued)
		return;
	qn->kick_queued = true;
	ts->refs++;	/* a set that leaves meanwhile is freed by kick_run */
	reactor_send(ts->r, &qn->kick, kick_run, ts);
}

/* Grants what the buckets allow, round robin, one command a turn; the
 * LUN's lock held, any thread. */
static void pump(struct qos *q, uint64_t now)
{
	refill(q, now);
	while (!list_empty(&q->ring)) {
		struct qos_nexus *qn = list_first_entry(&q->ring,
							struct qos_nexus, ring);
		struct taskset *ts = container_of(qn, struct taskset, qos);
		struct tcq_task *t = first_waiting(qn);

		list_del(&qn->ring);
		if (!t)
			continue;
		if (!fits(q, t)) {
			list_add_head(&qn->ring, &q->ring);	/* still its turn */
			q->next_ns = now + wait_ns(q, t);
			return;
		}
		charge(q, t);
		qn->n_granted++;
		kick(ts);
		if (qn->n_granted < qn->n)
			list_add_tail(&qn->ring, &q->ring);
	}
}

/* On the set's reactor: its timer at the time the next may pass, while
 * it has tasks that wait. */
static void rearm(struct taskset *ts)
{
	struct lun *l = ts->lun;
	struct qos_nexus *qn = nexus_of(ts);
	bool waits;
	uint64_t at;

	pthread_mutex_lock(&l->lock);
	waits = qn->n_granted < qn->n;
	at = l->qos->next_ns;
	pthread_mutex_unlock(&l->lock);
	if (waits)
		reactor_timer_arm_at(ts->r, &qn->timer, at);
}

/* The attribute as the task set takes it (untagged, reserved: SIMPLE). */
static uint8_t attr_of(const struct tcq_task *t)
{
	return t->attr < TASK_ATTR_SIMPLE || t->attr > TASK_ATTR_ACA ?
	       TASK_ATTR_SIMPLE : t->attr;
}

/* Takes a held task out of its nexus' queue (the LUN's lock held). */
static void unhold(struct qos *q, struct qos_nexus *qn, struct tcq_task *t,
		   bool granted)
{
	list_del(&t->order.node);
	t->qos_held = false;
	qn->n--;
	if (granted)
		qn->n_granted--;
	if (attr_of(t) != TASK_ATTR_SIMPLE)
		qn->n_barrier--;
	q->held--;
	if (qn->n_granted == qn->n && list_linked(&qn->ring))
		list_del(&qn->ring);
}

/* The granted tasks enter the task set, in their order. */
static void enter_granted(struct taskset *ts)
{
	struct lun *l = ts->lun;
	struct qos_nexus *qn = nexus_of(ts);

	for (;;) {
		struct tcq_task *t;

		pthread_mutex_lock(&l->lock);
		if (!qn->n_granted) {
			pthread_mutex_unlock(&l->lock);
			return;
		}
		t = list_first_entry(&qn->held, struct tcq_task, order.node);
		unhold(l->qos, qn, t, true);
		pthread_mutex_unlock(&l->lock);
		t->state = TASK_NEW;
		/* its Data-Out was asked for at arrival */
		taskset_arrive(ts, t);
	}
}

static void kick_run(void *arg)
{
	struct taskset *ts = arg;
	struct lun *l = ts->lun;
	bool left, last;

	pthread_mutex_lock(&l->lock);
	ts->qos.kick_queued = false;
	left = ts->left;
	last = --ts->refs == 0;
	pthread_mutex_unlock(&l->lock);
	if (left) {
		if (last)
			taskset_free(ts);
		return;
	}
	enter_granted(ts);
	rearm(ts);
}

static void timer_fired(struct reactor_timer *tm)
{
	struct taskset *ts = tm->arg;
	struct lun *l = ts->lun;

	pthread_mutex_lock(&l->lock);
	pump(l->qos, reactor_now_ns());
	pthread_mutex_unlock(&l->lock);
	rearm(ts);
}

void qos_nexus_init(struct taskset *ts)
{
	struct qos_nexus *qn = nexus_of(ts);

	list_init(&qn->held);
	list_init(&qn->ring);
	reactor_timer_init(&qn->timer, timer_fired, ts);
}

void qos_nexus_leave_locked(struct taskset *ts)
{
	if (list_linked(&ts->qos.ring))
		list_del(&ts->qos.ring);
}

void qos_nexus_gone(struct taskset *ts)
{
	if (ts->r && reactor_timer_armed(&ts->qos.timer))
		reactor_timer_cancel(ts->r, &ts->qos.timer);
}

/* ---- arrival ---------------------------------------------------------- */

/* Puts t in its nexus' queue: at the end, or a HEAD OF QUEUE (ACA)
 * before those not granted yet. */
static void hold(struct qos *q, struct taskset *ts, struct tcq_task *t,
		 bool front)
{
	struct qos_nexus *qn = nexus_of(ts);
	struct tcq_task *w = front ? first_waiting(qn) : NULL;

	t->qos_held = true;
	t->order.set = ts;	/* task management finds it (scsi/tmf.c) */
	t->state = TASK_NEW;
	if (w)
		list_add_tail(&t->order.node, &w->order.node);
	else
		list_add_tail(&t->order.node, &qn->held);
	qn->n++;
	if (attr_of(t) != TASK_ATTR_SIMPLE)
		qn->n_barrier++;
	q->held++;
	q->delayed++;
	if (!list_linked(&qn->ring)) {
		if (front)
			list_add_head(&qn->ring, &q->ring);
		else
			list_add_tail(&qn->ring, &q->ring);
	}
}

bool qos_hold(struct taskset *ts, struct tcq_task *t)
{
	struct lun *l = ts->lun;
	struct qos *q = l->qos;
	struct qos_nexus *qn = nexus_of(ts);
	uint8_t attr = attr_of(t);
	bool front = attr == TASK_ATTR_HEAD_OF_QUEUE || attr == TASK_ATTR_ACA;
	bool free_cmd;

	/* No limit and nothing of this nexus waiting: straight in. */
	if (!q || (!limited(q) && qn->n == 0))
		return false;
	free_cmd = task_bytes(t) < 0;
	/* What costs nothing passes where SAM-5 would let it pass the held
	 * tasks in the task set (qos.h). */
	if (free_cmd && (qn->n == 0 || front ||
			 (attr == TASK_ATTR_SIMPLE && qn->n_barrier == 0)))
		return false;
	pthread_mutex_lock(&l->lock);
	refill(q, reactor_now_ns());
	/* Goes at once when the buckets allow and no one waits before it:
	 * HEAD OF QUEUE waits behind no one. */
	if (!free_cmd && (front || (qn->n == 0 && list_empty(&q->ring))) &&
	    fits(q, t)) {
		charge(q, t);
		pthread_mutex_unlock(&l->lock);
		return false;
	}
	hold(q, ts, t, front);
	pump(q, q->last_ns);
	pthread_mutex_unlock(&l->lock);
	rearm(ts);
	return true;
}

/* ---- task management -------------------------------------------------- */

/* Ends an aborted held task as the task set ends one that never ran. */
static void end_aborted(struct taskset *ts, struct tcq_task *t, bool report)
{
	t->aborted = true;
	if (report) {
		t->status = SAM_STAT_TASK_ABORTED;
		t->sense_len = 0;
	}
	taskset_complete(t);	/* not in the set: completed, then done */
}

unsigned qos_abort_all(struct taskset *ts, bool report)
{
	struct lun *l = ts->lun;
	struct qos_nexus *qn = nexus_of(ts);
	struct list_node out = LIST_HEAD_INIT(out);
	unsigned n = 0;

	if (!l->qos)
		return 0;
	pthread_mutex_lock(&l->lock);
	while (!list_empty(&qn->held)) {
		struct tcq_task *t = list_first_entry(&qn->held,
						      struct tcq_task,
						      order.node);

		unhold(l->qos, qn, t, qn->n_granted > 0);
		list_add_tail(&t->order.node, &out);
		n++;
	}
	pthread_mutex_unlock(&l->lock);
	while (!list_empty(&out)) {
		struct tcq_task *t = list_first_entry(&out, struct tcq_task,
						      order.node);

		list_del(&t->order.node);
		end_aborted(ts, t, report);
	}
	return n;
}

bool qos_abort_task(struct taskset *ts, struct tcq_task *t, bool report)
{
	struct lun *l = ts->lun;
	struct qos_nexus *qn = nexus_of(ts);
	struct list_node *pos;
	unsigned i = 0;
	bool granted = false;

	if (!l->qos)
		return false;
	pthread_mutex_lock(&l->lock);
	if (!t->qos_held || t->order.set != ts) {
		pthread_mutex_unlock(&l->lock);
		return false;
	}
	list_for_each(pos, &qn->held) {
		if (pos == &t->order.node) {
			granted = i < qn->n_granted;
			break;
		}
		i++;
	}
	unhold(l->qos, qn, t, granted);
	pthread_mutex_unlock(&l->lock);
	end_aborted(ts, t, report);
	return true;
}

/* ---- limits and counts ------------------------------------------------ */

void qos_set_limits(struct lun *l, uint32_t iops, uint32_t mbps)
{
	struct qos *q = l->qos;
	struct list_node *pos;
	uint64_t now = reactor_now_ns();

	if (!q)
		return;
	pthread_mutex_lock(&l->lock);
	refill(q, now);
	q->cap_io = iops ? (int64_t)(iops / QOS_BURST_DIV ?
				     iops / QOS_BURST_DIV : 1) * QOS_IO : 0;
	q->cap_b = (int64_t)mbps * (1000000 / QOS_BURST_DIV) * QOS_B;
	/* A limit new to the LUN starts with a full bucket; a changed one
	 * keeps its tokens (and debt) up to the new size. */
	if (iops && !q->iops)
		q->tok_io = q->cap_io;
	if (mbps && !q->mbps)
		q->tok_b = q->cap_b;
	q->tok_io = q->tok_io > q->cap_io ? q->cap_io : q->tok_io;
	q->tok_b = q->tok_b > q->cap_b ? q->cap_b : q->tok_b;
	q->iops = iops;
	q->mbps = mbps;
	__atomic_store_n(&q->limited, iops || mbps, __ATOMIC_RELAXED);
	pump(q, now);
	/* Whoever still waits re-arms its timer for the new rate. */
	list_for_each(pos, &q->ring)
		kick(container_of(list_entry(pos, struct qos_nexus, ring),
				  struct taskset, qos));
	pthread_mutex_unlock(&l->lock);
}

void qos_limits(const struct lun *l, uint32_t *iops, uint32_t *mbps)
{
	struct lun *m = (struct lun *)l;	/* its lock, not its content */

	*iops = *mbps = 0;
	if (!l->qos)
		return;
	pthread_mutex_lock(&m->lock);
	*iops = l->qos->iops;
	*mbps = l->qos->mbps;
	pthread_mutex_unlock(&m->lock);
}

void qos_counts(const struct lun *l, uint64_t *delayed, unsigned *held)
{
	struct lun *m = (struct lun *)l;	/* its lock, not its content */

	*delayed = 0;
	*held = 0;
	if (!l->qos)
		return;
	pthread_mutex_lock(&m->lock);
	*delayed = l->qos->delayed;
	*held = l->qos->held;
	pthread_mutex_unlock(&m->lock);
}
