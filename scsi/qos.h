/*
 * Per-LUN QoS (tcqd.conf qos_iops, qos_mbps): a token bucket for
 * commands and one for bytes, shared by every nexus of the LUN, in front
 * of the task sets.
 *
 * What is limited: the commands whose command table row accesses the
 * medium (READ, WRITE, VERIFY, WRITE AND VERIFY, ORWRITE, COMPARE AND
 * WRITE, WRITE ATOMIC, WRITE SAME, UNMAP), each one command and blocks x
 * block size bytes (WRITE SAME: the blocks it writes; UNMAP names its
 * ranges in its data, which is not in at arrival: it counts as a
 * command, not as bytes). Everything else costs nothing (TEST UNIT
 * READY, INQUIRY, REPORT LUNS, MODE SENSE, SYNCHRONIZE CACHE, PRE-FETCH,
 * reservations, EXTENDED COPY, ...), and task management is never held.
 *
 * Exact at every size: a command passes when each bucket holds its cost,
 * or is full where the cost is more than the bucket (then the bucket goes
 * into debt, paid off before the next one passes), so the long-run rate
 * is the limit whatever the transfer size (the bucket holds 50 ms of
 * each limit: the burst).
 *
 * Ordering: a held command waits before it enters its nexus' task set,
 * in a FIFO per nexus, so the set sees each nexus' commands in the order
 * they arrived and SIMPLE, ORDERED and HEAD OF QUEUE keep their SAM-5
 * meaning. A command that costs nothing passes a nexus' held commands
 * when SAM-5 would let it pass them in the task set: HEAD OF QUEUE and
 * ACA always (both enter the task set enabled, whatever is older), SIMPLE
 * unless an ORDERED, HEAD OF QUEUE or ACA command is held (a SIMPLE task
 * waits for older ones of those); else it queues (at no cost). A HEAD OF
 * QUEUE command that costs something is charged like any other but does
 * not wait behind its nexus' held commands: it goes first when the
 * bucket allows (SAM-5 has it start before the older tasks: held ones
 * are older tasks that have not started; a limit that a HEAD OF QUEUE
 * command escaped would be no limit). A held write has its
 * Data-Out solicited as usual (the transport's limits bound it).
 *
 * Fairness: the nexuses with commands waiting are served round robin,
 * one command a turn, so initiators that share a limit get equal shares
 * of it while all are busy.
 *
 * Threads: the buckets, every nexus' FIFO and the round robin are under
 * the LUN's lock. A nexus' commands enter its task set on its reactor:
 * commands granted by another reactor (or a live change) are handed
 * over with a message (a reference on the set, as scsi/tmf.c takes), and
 * each nexus with commands waiting has a reactor timer armed for when
 * the bucket allows the next one; whichever fires first serves the LUN.
 */
#ifndef TCQ_QOS_H
#define TCQ_QOS_H
#include <stdbool.h>
#include <stdint.h>
#include "tcq/list.h"
#include "tcq/reactor.h"

struct lun;
struct taskset;
struct tcq_task;
struct qos;

/* A nexus' part (embedded in its task set, scsi/taskset.h). */
struct qos_nexus {
	struct list_node held;	/* held tasks (order.node), oldest first;
				 * the first n_granted may enter */
	unsigned n;		/* tasks in held: changed by the set's
				 * reactor only, under the LUN's lock */
	unsigned n_granted;
	unsigned n_barrier;	/* held ORDERED, HEAD OF QUEUE, ACA */
	struct list_node ring;	/* in the LUN's round robin while some
				 * are not granted */
	bool kick_queued;	/* msg on its way to the set's reactor */
	struct reactor_msg kick;
	struct reactor_timer timer;
};

/* The LUN's QoS state; NULL with out of memory. lun_create makes it. */
struct qos *qos_new(void);
void qos_free(struct qos *q);
/* A nexus' part, in a new task set (scsi/taskset.c). */
void qos_nexus_init(struct taskset *ts);
/* The nexus leaves the LUN (lun_nexus_leave, the LUN's lock held; on the
 * set's reactor): out of the round robin. qos_nexus_gone cancels its
 * timer after the lock is dropped. */
void qos_nexus_leave_locked(struct taskset *ts);
void qos_nexus_gone(struct taskset *ts);

/* Limits (0: none), live: what waits is served at the new rates at once
 * (none: all of it). Any thread. */
void qos_set_limits(struct lun *l, uint32_t iops, uint32_t mbps);
void qos_limits(const struct lun *l, uint32_t *iops, uint32_t *mbps);
/* Commands held ever, and held now (any thread). */
void qos_counts(const struct lun *l, uint64_t *delayed, unsigned *held);

/* lun_task_arrive, for a task about to enter ts with GOOD status: true
 * when QoS holds it (it enters later, or is aborted). */
bool qos_hold(struct taskset *ts, struct tcq_task *t);
/* Task management of held tasks, on the set's reactor, as
 * taskset_abort_all / taskset_abort_task do for the set's: each held
 * task completes at once (aborted; TASK ABORTED status when report). */
unsigned qos_abort_all(struct taskset *ts, bool report);
/* True when t was held (and is now aborted). */
bool qos_abort_task(struct taskset *ts, struct tcq_task *t, bool report);
#endif
