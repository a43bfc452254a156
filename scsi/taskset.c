/* SAM-5 task set: attributes, ordering, QAM=0 overlap, ACA. */
#include <stdlib.h>
#include "tcq/scsi_proto.h"
#include "scsi/cdb.h"
#include "scsi/lun.h"
#include "scsi/opcodes.h"
#include "scsi/stats.h"
#include "scsi/taskset.h"

struct taskset *taskset_new(struct lun *l, struct reactor *r, void *nexus,
			    const struct taskset_ops *ops)
{
	struct taskset *ts = calloc(1, sizeof(*ts));

	if (!ts)
		return NULL;
	ts->lun = l;
	ts->r = r;
	ts->nexus = nexus;
	ts->ops = ops;
	list_init(&ts->tasks);
	list_init(&ts->abort_waiters);
	list_init(&ts->nexus_node);
	qos_nexus_init(ts);
	return ts;
}

void taskset_free(struct taskset *ts)
{
	free(ts);
}

unsigned taskset_count(const struct taskset *ts)
{
	return ts ? ts->count + ts->qos.n : 0;
}

/* The medium range a task touches, for the QAM=0 overlap rule. */
static enum cdb_access task_range(const struct tcq_task *t, uint64_t *lo,
				  uint64_t *hi)
{
	if (t->req.cmd && (t->req.cmd->flags & OPC_F_RANGE_IN_DATA)) {
		*lo = 0;
		*hi = UINT64_MAX;
		return CDB_ACCESS_WRITE;
	}
	enum cdb_access a = cdb_access(&t->req);
	*lo = t->req.lba;
	*hi = t->req.lba + t->req.blocks;	/* range-checked: no wrap */
	if (*hi < *lo)
		*hi = UINT64_MAX;
	return t->req.blocks ? a : CDB_ACCESS_NONE;
}

/* QAM=0 (restricted reordering): may t not start yet because an older
 * task overlaps it and one of the two writes? */
static bool overlap_blocked(struct taskset *ts, struct tcq_task *t)
{
	uint64_t lo, hi;
	enum cdb_access a;
	struct list_node *pos;

	if (t->order.attr != TASK_ATTR_SIMPLE || !ts->lun || ts->lun->qam != 0)
		return false;
	a = task_range(t, &lo, &hi);
	if (a == CDB_ACCESS_NONE ||
	    (a == CDB_ACCESS_READ && ts->n_writes == 0))
		return false;
	list_for_each(pos, &ts->tasks) {
		struct tcq_task *o = list_entry(pos, struct tcq_task, order.node);
		uint64_t olo, ohi;

		if (o == t)
			break;
		enum cdb_access oa = task_range(o, &olo, &ohi);
		if (oa == CDB_ACCESS_NONE ||
		    (oa == CDB_ACCESS_READ && a == CDB_ACCESS_READ))
			continue;
		if (olo < hi && lo < ohi)
			return true;
	}
	return false;
}

static void try_run(struct taskset *ts, struct tcq_task *t)
{
	/* A held LUN (lun_hold) starts nothing: the task waits as one
	 * blocked by an overlap does, and runs at the release's scan. */
	if ((ts->lun && lun_held(ts->lun)) || overlap_blocked(ts, t)) {
		if (!t->order.blocked) {
			t->order.blocked = true;
			ts->n_blocked++;
		}
		t->state = TASK_WAIT_DATA;
		return;
	}
	if (t->order.blocked) {
		t->order.blocked = false;
		ts->n_blocked--;
	}
	t->state = TASK_RUNNING;
	__atomic_add_fetch(&ts->n_running, 1, __ATOMIC_RELAXED);
	t->order.barrier_flush = t->order.attr == TASK_ATTR_ORDERED && ts->lun &&
			   lun_get_barrier(ts->lun) == BARRIER_FLUSH &&
			   cdb_access(&t->req) == CDB_ACCESS_WRITE;
	ts->ops->exec(t);	/* may complete t (and free it) before returning */
}

static void enable(struct taskset *ts, struct tcq_task *t)
{
	if (t->state == TASK_DORMANT)
		ts->n_dormant--;
	if (t->order.attr == TASK_ATTR_ORDERED)
		stats_ordered_enabled(ts->lun, t);
	if (t->req.data_out_len && !t->data_ready) {
		t->state = TASK_WAIT_DATA;
		return;
	}
	try_run(ts, t);
}

/* Enables what the rules now allow. Re-entrant calls (a task completing
 * inside exec) only ask the running scan to start over. */
static void scan(struct taskset *ts)
{
	struct list_node *pos, *next;

	if (ts->in_scan) {
		ts->rescan = true;
		return;
	}
	ts->in_scan = true;
	do {
		bool older_any = false, older_barrier = false;

		ts->rescan = false;
		list_for_each_safe(pos, next, &ts->tasks) {
			struct tcq_task *t =
				list_entry(pos, struct tcq_task, order.node);
			uint8_t attr = t->order.attr;

			if (t->state == TASK_DORMANT && !ts->aca) {
				bool ok = attr == TASK_ATTR_HEAD_OF_QUEUE ||
					  (attr == TASK_ATTR_ORDERED ?
					   !older_any : !older_barrier);
				if (ok)
					enable(ts, t);
			} else if (t->order.blocked && t->state == TASK_WAIT_DATA) {
				try_run(ts, t);
			}
			if (ts->rescan)
				break;	/* the list changed under us */
			older_any = true;
			if (attr != TASK_ATTR_SIMPLE)
				older_barrier = true;
			/* Past an ORDERED task only blocked tasks can move. */
			if (attr == TASK_ATTR_ORDERED && t->state == TASK_DORMANT &&
			    ts->n_blocked == 0)
				break;
		}
	} while (ts->rescan);
	ts->in_scan = false;
}

/* Completes a task that never joined the set; NACA still counts. */
static void finish_early(struct taskset *ts, struct tcq_task *t)
{
	if (ts && t->status == SAM_STAT_CHECK_CONDITION &&
	    (t->req.control & CDB_CONTROL_NACA))
		ts->aca = true;
	t->state = TASK_DONE;
	t->done(t);
}

bool taskset_arrive(struct taskset *ts, struct tcq_task *t)
{
	uint8_t attr = t->attr;
	bool enabled;

	t->order.set = ts;
	t->order.blocked = false;
	t->order.barrier_flush = false;
	t->order.aborting = false;
	t->order.abort_report = false;
	t->aborted = false;
	t->exec.step = 0;
	list_init(&t->order.node);
	if (attr < TASK_ATTR_SIMPLE || attr > TASK_ATTR_ACA)
		attr = TASK_ATTR_SIMPLE;	/* untagged, reserved */
	if (ts->aca) {
		if (attr != TASK_ATTR_ACA || ts->aca_task) {
			t->status = SAM_STAT_ACA_ACTIVE;
			t->sense_len = 0;
			t->state = TASK_DONE;
			t->done(t);
			return false;
		}
	} else if (attr == TASK_ATTR_ACA && t->status == SAM_STAT_GOOD) {
		/* SAM-5 8.9: ACA attribute with no ACA condition. */
		sense_set(t, SK_ILLEGAL_REQUEST, ASC_INVALID_MESSAGE_ERROR);
	}
	if (t->status != SAM_STAT_GOOD) {
		finish_early(ts, t);
		return false;
	}
	if (attr == TASK_ATTR_ORDERED && ts->lun &&
	    lun_get_barrier(ts->lun) == BARRIER_IGNORE)
		attr = TASK_ATTR_SIMPLE;
	t->order.attr = attr;

	switch (attr) {
	case TASK_ATTR_ACA:
		ts->aca_task = t;
		/* fall through */
	case TASK_ATTR_HEAD_OF_QUEUE:
		enabled = true;
		break;
	case TASK_ATTR_ORDERED:
		enabled = ts->count == 0;
		break;
	default:
		enabled = ts->n_ordered == 0 && ts->n_hoq == 0 &&
			  ts->aca_task == NULL;
		break;
	}
	list_add_tail(&t->order.node, &ts->tasks);
	ts->count++;
	if (attr == TASK_ATTR_ORDERED)
		ts->n_ordered++;
	else if (attr != TASK_ATTR_SIMPLE)
		ts->n_hoq++;	/* HEAD OF QUEUE and ACA block SIMPLE alike */
	if (cdb_access(&t->req) == CDB_ACCESS_WRITE)
		ts->n_writes++;

	bool wants = t->req.data_out_len && !t->data_ready;
	if (enabled) {
		enable(ts, t);
	} else {
		t->state = TASK_DORMANT;
		ts->n_dormant++;
	}
	return wants;
}

void taskset_data_ready(struct tcq_task *t)
{
	t->data_ready = true;
	if (t->state == TASK_WAIT_DATA && !t->order.blocked)
		try_run(t->order.set, t);
}

/* Removes t from the set and its counters. */
static void leave(struct taskset *ts, struct tcq_task *t)
{
	list_del(&t->order.node);
	ts->count--;
	if (t->order.attr == TASK_ATTR_ORDERED)
		ts->n_ordered--;
	else if (t->order.attr != TASK_ATTR_SIMPLE)
		ts->n_hoq--;
	if (cdb_access(&t->req) == CDB_ACCESS_WRITE)
		ts->n_writes--;
	if (t->state == TASK_DORMANT)
		ts->n_dormant--;
	if (t->state == TASK_RUNNING)
		__atomic_sub_fetch(&ts->n_running, 1, __ATOMIC_RELAXED);
	if (t->order.blocked) {
		t->order.blocked = false;
		ts->n_blocked--;
	}
	if (ts->aca_task == t)
		ts->aca_task = NULL;
}

void taskset_rescan(struct taskset *ts)
{
	if (ts->n_dormant || ts->n_blocked)
		scan(ts);
}

/* The last task aborted while running is gone: who waited is told. */
static void aborted_drained(struct taskset *ts)
{
	while (!list_empty(&ts->abort_waiters)) {
		struct taskset_waiter *w = list_first_entry(
			&ts->abort_waiters, struct taskset_waiter, node);

		list_del(&w->node);
		w->fn(w);
	}
}

void taskset_complete(struct tcq_task *t)
{
	struct taskset *ts = t->order.set;
	bool drained = false;

	if (!ts || !list_linked(&t->order.node)) {
		if (ts && ts->ops->completed)
			ts->ops->completed(ts, t);
		finish_early(ts, t);
		return;
	}
	leave(ts, t);
	if (t->order.aborting) {
		t->order.aborting = false;
		drained = --ts->n_aborting == 0;
		if (t->order.abort_report) {
			/* TAS=1: whatever it did, the status says aborted */
			t->status = SAM_STAT_TASK_ABORTED;
			t->sense_len = 0;
		}
	}
	if (t->status == SAM_STAT_CHECK_CONDITION &&
	    (t->req.control & CDB_CONTROL_NACA) && !t->aborted)
		ts->aca = true;
	t->state = TASK_DONE;
	if (ts->ops->completed)
		ts->ops->completed(ts, t);
	bool more = ts->n_dormant || ts->n_blocked;
	t->done(t);
	if (drained)
		aborted_drained(ts);
	if (more)
		scan(ts);
}

void taskset_when_aborted(struct taskset *ts, struct taskset_waiter *w)
{
	if (!ts->n_aborting) {
		w->fn(w);
		return;
	}
	list_add_tail(&w->node, &ts->abort_waiters);
}

void taskset_clear_aca(struct taskset *ts)
{
	ts->aca = false;
	if (ts->n_dormant || ts->n_blocked)
		scan(ts);
}

static void abort_one(struct taskset *ts, struct tcq_task *t, bool report,
		       struct list_node *out)
{
	t->aborted = true;
	if (t->state == TASK_RUNNING) {
		/* completes normally, marked aborted; counted until then */
		if (!t->order.aborting) {
			t->order.aborting = true;
			ts->n_aborting++;
		}
		t->order.abort_report |= report;
		return;
	}
	leave(ts, t);
	if (report) {
		t->status = SAM_STAT_TASK_ABORTED;
		t->sense_len = 0;
	}
	t->state = TASK_DONE;
	list_add_tail(&t->order.node, out);
}

/* done() runs only after the set is consistent again. */
static void finish_aborted(struct taskset *ts, struct list_node *out)
{
	/* Aborted from inside a scan (a task that completed while being
	 * enabled, QErr): the scan's next task may be gone; it starts
	 * over. */
	if (ts->in_scan && !list_empty(out))
		ts->rescan = true;
	while (!list_empty(out)) {
		struct tcq_task *t = list_first_entry(out, struct tcq_task,
						      order.node);
		list_del(&t->order.node);
		t->done(t);
	}
	if (ts->n_dormant || ts->n_blocked)
		scan(ts);
}

unsigned taskset_abort_all(struct taskset *ts, bool report)
{
	struct list_node out = LIST_HEAD_INIT(out), *pos, *next;
	unsigned n = 0;

	list_for_each_safe(pos, next, &ts->tasks) {
		struct tcq_task *t = list_entry(pos, struct tcq_task,
						order.node);

		n += !t->aborted;
		abort_one(ts, t, report, &out);
	}
	finish_aborted(ts, &out);
	return n;
}

bool taskset_abort_task(struct taskset *ts, struct tcq_task *t, bool report)
{
	struct list_node out = LIST_HEAD_INIT(out);

	if (t->order.set != ts || !list_linked(&t->order.node))
		return false;
	abort_one(ts, t, report, &out);
	finish_aborted(ts, &out);
	return true;
}
