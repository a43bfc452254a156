/*
 * SAM-5 task set (8.5-8.9), one per I_T nexus per LUN (TST=001b), driven on
 * one reactor thread without locks. Rules:
 *  - HEAD OF QUEUE (and ACA during ACA): enabled at arrival;
 *  - ORDERED: enabled once every older task has completed, holds newer ones;
 *  - SIMPLE (and untagged): enabled once every older ORDERED and HEAD OF
 *    QUEUE task has completed;
 *  - QAM=0: an enabled SIMPLE task also waits for older tasks whose LBA
 *    range overlaps its own when either of the two writes;
 *  - ACA: a task whose CDB has NACA=1 ending in CHECK CONDITION establishes
 *    ACA; newer non-ACA tasks then end with ACA ACTIVE until CLEAR ACA.
 * A task joins the set at arrival even when its Data-Out is still coming.
 * An enabled task executes once its data is in.
 */
#ifndef TCQ_TASKSET_H
#define TCQ_TASKSET_H
#include <stdbool.h>
#include "scsi/task.h"
#include "scsi/qos.h"
#include "scsi/sense.h"

struct lun;
struct reactor;

/* What the set calls: exec runs an enabled task with its data; completed
 * (optional) sees a task's final status once it has left the set, before
 * the transport's done() (the device server's statistics, thin
 * provisioning, QErr). */
struct taskset_ops {
	void (*exec)(struct tcq_task *t);
	void (*completed)(struct taskset *ts, struct tcq_task *t);
};

/* Someone waiting until the tasks aborted while running have completed
 * (task management answers only then). */
struct taskset_waiter {
	struct list_node node;
	void (*fn)(struct taskset_waiter *w);
};

struct taskset {
	struct lun *lun;
	struct reactor *r;
	void *nexus;
	const struct taskset_ops *ops;
	struct list_node tasks;		/* not completed, in arrival order */
	unsigned count;
	unsigned n_dormant, n_blocked;	/* work waiting for a scan */
	unsigned n_ordered, n_hoq;	/* not completed, effective attribute */
	unsigned n_writes;		/* not completed, writing the medium */
	bool aca;
	struct tcq_task *aca_task;
	bool in_scan, rescan;
	unsigned n_aborting;		/* aborted, still running */
	unsigned n_running;		/* atomic: running (lun_running) */
	struct list_node abort_waiters;	/* of taskset_waiter */
	/* REQUEST SENSE reports (and clears) this when set. */
	bool pending_valid;
	struct sense_info pending;
	/* Unit attentions of this I_T nexus (scsi/ua.c): the queue is
	 * guarded by lun->lock; ua_pending mirrors "queue not empty" so
	 * the arrival check needs no lock. */
	int ua_pending;
	uint8_t ua_n;
	uint16_t ua_q[8];
	/* The LUN's list of its nexuses (scsi/lun.c), under lun->lock, from
	 * lun_nexus_join to lun_nexus_leave; refs: task management parts
	 * on their way to this set's reactor, which free a set that left
	 * meanwhile (left). */
	struct list_node nexus_node;
	unsigned refs;
	bool left;
	/* Its commands QoS holds before they enter (scsi/qos.c). */
	struct qos_nexus qos;
};

/* A bare task set with explicit ops: lun_nexus_join makes the one of a
 * nexus on a LUN with the device server's; tests pass their own. lun may
 * be a bare struct for tests: qam and barrier are read from it.
 * taskset_free frees an idle set (and nothing else). */
struct taskset *taskset_new(struct lun *l, struct reactor *r, void *nexus,
			    const struct taskset_ops *ops);
void taskset_free(struct taskset *ts);
/* Number of tasks not yet completed (those QoS holds included). */
unsigned taskset_count(const struct taskset *ts);

/*
 * Takes t (req decoded; a CDB error already put in t->status/sense) into
 * the set. Returns true when t waits for Data-Out. May call t->done()
 * before returning (errors, ACA ACTIVE, emulated commands).
 */
bool taskset_arrive(struct taskset *ts, struct tcq_task *t);
/* All Data-Out of t is in its buffer. */
void taskset_data_ready(struct tcq_task *t);
/* Executors call this once t->status (and sense) are final: leaves the
 * set, may establish ACA, calls t->done(), enables waiting tasks.
 * t->done() must not destroy the task set. */
void taskset_complete(struct tcq_task *t);

/* Enables what the rules allow now (a LUN's hold was released). */
void taskset_rescan(struct taskset *ts);
/* CLEAR ACA (SAM-5 7.3): dormant tasks may be enabled again. */
void taskset_clear_aca(struct taskset *ts);
/*
 * Aborts every task of the set: tasks not yet running
 * complete now (done() is called) with t->aborted set and, when report is
 * true, status TASK ABORTED (TAS=1 for another nexus); running tasks get
 * t->aborted and complete normally later (taskset_when_aborted tells when).
 * Returns how many tasks it aborted.
 */
unsigned taskset_abort_all(struct taskset *ts, bool report);
/* ABORT TASK: the same for one task of the set; false when t is not in
 * it (done already). */
bool taskset_abort_task(struct taskset *ts, struct tcq_task *t, bool report);
/* w->fn(w) once no task aborted while running is left in the set: at
 * once when none is. Only on the set's reactor. */
void taskset_when_aborted(struct taskset *ts, struct taskset_waiter *w);
#endif
