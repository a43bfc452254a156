/*
 * Task management in the device server (see tmf.h).
 *
 * A run collects, under each LUN's lock, the task sets it acts on (a
 * reference on each, so a set whose nexus leaves meanwhile stays until
 * the run has looked at it), then acts on each set on its own reactor:
 * inline for the requester's sets (the calling reactor), by message for
 * the others; never with a LUN's lock held. A part is done once the tasks it aborted that were running
 * have completed (taskset_when_aborted); the run's join then answers.
 */
#include <stdlib.h>
#include <string.h>
#include "tcq/log.h"
#include "tcq/scsi_proto.h"
#include "scsi/lun.h"
#include "scsi/pr.h"
#include "scsi/qos.h"
#include "scsi/sdev.h"
#include "scsi/taskset.h"
#include "scsi/tmf.h"
#include "scsi/ua.h"

enum part_op {
	PART_ABORT_ALL,		/* every task of the set */
	PART_ABORT_TASK,	/* run->m->task (the requester's own set) */
	PART_CLEAR_ACA,
	PART_RESCAN,		/* a held LUN released: start what waits */
};

struct tmf_part {
	struct reactor_msg msg;
	struct taskset_waiter w;
	struct tmf_run *run;
	struct taskset *ts;
	uint8_t op;		/* enum part_op */
	bool report;		/* TASK ABORTED status (TAS=1, another
				 * nexus) */
	bool clear_aca;		/* a reset ends ACA too */
	uint16_t ua_if_aborted;	/* established when a task was aborted */
};

static void run_finish(void *arg);

struct tmf_run {
	struct tmf *m;		/* NULL: the device server's own */
	void (*done)(void *arg);
	void *arg;
	struct reactor_join join;
	bool oom;		/* a part could not be kept */
	unsigned n, cap;
	struct tmf_part *parts;
};

/* A run answered on home (NULL: where its last part ends). */
static struct tmf_run *run_new(struct tmf *m, struct reactor *home,
			       void (*done)(void *), void *arg)
{
	struct tmf_run *run = calloc(1, sizeof(*run));

	if (!run)
		return NULL;
	run->m = m;
	run->done = done;
	run->arg = arg;
	reactor_join_init(&run->join, home, run_finish, run);
	return run;
}

static void run_free(struct tmf_run *run)
{
	free(run->parts);
	free(run);
}

/* Takes ts into the run (its LUN's lock held); false: out of memory. */
static bool run_add(struct tmf_run *run, struct taskset *ts, uint8_t op,
		    bool report)
{
	struct tmf_part *p;

	if (run->n == run->cap) {
		unsigned cap = run->cap ? run->cap * 2 : 4;
		struct tmf_part *v = realloc(run->parts, cap * sizeof(*v));

		if (!v) {
			run->oom = true;
			return false;
		}
		run->parts = v;
		run->cap = cap;
	}
	p = &run->parts[run->n++];
	memset(p, 0, sizeof(*p));
	p->run = run;
	p->ts = ts;
	p->op = op;
	p->report = report;
	ts->refs++;
	return true;
}

static void part_drained(struct taskset_waiter *w)
{
	struct tmf_part *p = container_of(w, struct tmf_part, w);

	reactor_join_done(&p->run->join);
}

/* One set, on its reactor. */
static void part_run(void *arg)
{
	struct tmf_part *p = arg;
	struct taskset *ts = p->ts;
	struct lun *l = ts->lun;
	unsigned n = 0;
	bool left, last;

	pthread_mutex_lock(&l->lock);
	left = ts->left;
	last = --ts->refs == 0;
	pthread_mutex_unlock(&l->lock);
	if (left) {		/* the nexus left: nothing of it to abort */
		if (last)
			taskset_free(ts);
		reactor_join_done(&p->run->join);
		return;
	}
	switch (p->op) {
	case PART_ABORT_ALL:
		/* those QoS holds first: none of them enters meanwhile */
		n = qos_abort_all(ts, p->report);
		n += taskset_abort_all(ts, p->report);
		break;
	case PART_ABORT_TASK:
		n = qos_abort_task(ts, p->run->m->task, false) ||
		    taskset_abort_task(ts, p->run->m->task, false);
		break;
	case PART_CLEAR_ACA:
		taskset_clear_aca(ts);
		break;
	case PART_RESCAN:
		taskset_rescan(ts);
		break;
	}
	if (p->clear_aca)
		taskset_clear_aca(ts);
	if (n && p->ua_if_aborted)
		ua_establish(ts, p->ua_if_aborted);
	p->w.fn = part_drained;
	taskset_when_aborted(ts, &p->w);
}

static void run_finish(void *arg)
{
	struct tmf_run *run = arg;
	struct tmf *m = run->m;

	if (m) {
		if (run->oom)
			m->response = TMF_FUNCTION_REJECTED;
		m->run = NULL;
		run_free(run);
		m->done(m);
		return;
	}
	if (run->oom)
		log_err("task management: out of memory: some tasks were "
			"not aborted");
	if (run->done)
		run->done(run->arg);
	run_free(run);
}

/*
 * Starts every part: inline where its set lives on this thread and
 * inline is allowed (no LUN lock held, no task completing), by message
 * elsewhere; then ends the starter's part of the join.
 */
static void run_start(struct tmf_run *run, bool inline_ok)
{
	struct reactor *self = reactor_self();

	reactor_join_add(&run->join, run->n);
	for (unsigned i = 0; i < run->n; i++) {
		struct tmf_part *p = &run->parts[i];

		/* A set on no reactor (unit tests): right here. */
		if (!p->ts->r || (inline_ok && p->ts->r == self))
			part_run(p);
		else
			reactor_send(p->ts->r, &p->msg, part_run, p);
	}
	reactor_join_done(&run->join);
}

/* ---- resets ------------------------------------------------------------ */

static void store_reset_done(void *arg)
{
	reactor_join_done(arg);
}

/* The sets of l, each to be aborted (LUN reset, forced removal): TASK
 * ABORTED where TAS=1, for the nexuses other than the requester. */
static void collect_lun(struct tmf_run *run, struct lun *l, const void *nexus,
			bool clear_aca)
{
	struct list_node *pos;

	pthread_mutex_lock(&l->lock);
	list_for_each(pos, &l->nexuses) {
		struct taskset *ts = list_entry(pos, struct taskset,
						nexus_node);

		if (run_add(run, ts, PART_ABORT_ALL,
			    ts->nexus != nexus && l->tas))
			run->parts[run->n - 1].clear_aca = clear_aca;
	}
	pthread_mutex_unlock(&l->lock);
}

/* LOGICAL UNIT RESET of l (SAM-5 6.3.3): unit attentions first, so a
 * command that reaches the LUN from now on reports the reset; then the
 * tasks of every nexus, and ACA. */
static void reset_lun(struct tmf_run *run, struct lun *l, const void *nexus)
{
	lun_reset(l);
	collect_lun(run, l, nexus, true);
}

/* LUN reset of l, shared: the other gateways of l reset it too before
 * the answer (their part of the join). */
static void reset_lun_shared(struct tmf_run *run, struct lun *l,
			     const void *nexus, bool share)
{
	reset_lun(run, l, nexus);
	if (!share || !l->store)
		return;
	reactor_join_add(&run->join, 1);
	if (!pr_store_reset(l, store_reset_done, &run->join))
		reactor_join_done(&run->join);
}

/* ---- the functions ---------------------------------------------------- */

/* The requester's set on l (l's lock taken here). */
static struct taskset *own_set(struct lun *l, const void *nexus)
{
	struct taskset *ts;

	pthread_mutex_lock(&l->lock);
	ts = lun_nexus_find_locked(l, nexus);
	pthread_mutex_unlock(&l->lock);
	return ts;
}

/* A part on the requester's own set, run inline: no reference needed,
 * the set cannot go while this reactor is busy here. */
static void add_own(struct tmf_run *run, struct lun *l, struct taskset *ts,
		    uint8_t op)
{
	pthread_mutex_lock(&l->lock);
	run_add(run, ts, op, false);
	pthread_mutex_unlock(&l->lock);
}

static bool task_present(const struct tcq_task *t)
{
	return t && t->order.set && list_linked(&t->order.node) &&
	       t->state != TASK_DONE;
}

static void tmf_rejected(void *arg)
{
	struct tmf *m = arg;

	m->done(m);
}

void tmf_execute(struct tmf *m)
{
	struct tmf_run *run = run_new(m, reactor_self(), NULL, NULL);
	struct taskset *ts;

	m->response = TMF_FUNCTION_COMPLETE;
	if (!run) {
		/* Answered all the same, and after we return. */
		m->response = TMF_FUNCTION_REJECTED;
		reactor_send(reactor_self(), &m->msg, tmf_rejected, m);
		return;
	}
	m->run = run;
	switch (m->fn) {
	case TMF_ABORT_TASK:
		if (task_present(m->task))
			add_own(run, m->lun, m->task->order.set,
				PART_ABORT_TASK);
		break;
	case TMF_ABORT_TASK_SET:
	case TMF_CLEAR_TASK_SET:
		/* TST=001b: the task set is the requester's own. */
		if ((ts = own_set(m->lun, m->nexus)))
			add_own(run, m->lun, ts, PART_ABORT_ALL);
		break;
	case TMF_CLEAR_ACA:
		if ((ts = own_set(m->lun, m->nexus)))
			add_own(run, m->lun, ts, PART_CLEAR_ACA);
		break;
	case TMF_LOGICAL_UNIT_RESET:
		reset_lun_shared(run, m->lun, m->nexus, m->share);
		break;
	case TMF_TARGET_RESET:
		for (int i = 0; i < sdev_nluns(m->dev); i++) {
			struct lun *l = sdev_lun(m->dev, (uint64_t)i);

			if (l)
				reset_lun_shared(run, l, m->nexus, m->share);
		}
		break;
	case TMF_I_T_NEXUS_RESET:
		/* I_T nexus loss (SAM-5 6.3.4): its tasks on every LUN, and
		 * I_T NEXUS LOSS OCCURRED to it there. */
		for (int i = 0; i < sdev_nluns(m->dev); i++) {
			struct lun *l = sdev_lun(m->dev, (uint64_t)i);

			if (!l)
				continue;
			pthread_mutex_lock(&l->lock);
			ts = lun_nexus_find_locked(l, m->nexus);
			if (ts) {
				ua_establish_locked(ts, ASC_I_T_NEXUS_LOSS);
				run_add(run, ts, PART_ABORT_ALL, false);
			}
			pthread_mutex_unlock(&l->lock);
		}
		break;
	case TMF_QUERY_TASK:
		if (task_present(m->task))
			m->response = TMF_FUNCTION_SUCCEEDED;
		break;
	case TMF_QUERY_TASK_SET:
		if ((ts = own_set(m->lun, m->nexus)) && taskset_count(ts))
			m->response = TMF_FUNCTION_SUCCEEDED;
		break;
	}
	run_start(run, true);
}

/* ---- the device server's own ------------------------------------------ */

void tmf_abort_lun(struct lun *l, void (*done)(void *arg), void *arg)
{
	struct tmf_run *run = run_new(NULL, done ? reactor_self() : NULL,
				      done, arg);

	if (!run) {
		log_err("LUN %llu: out of memory: its tasks are not aborted",
			(unsigned long long)l->id);
		if (done)
			done(arg);
		return;
	}
	collect_lun(run, l, NULL, false);
	run_start(run, false);
}

void tmf_reset_lun_here(struct lun *l)
{
	struct tmf_run *run = run_new(NULL, NULL, NULL, NULL);

	if (!run) {
		lun_reset(l);	/* the unit attentions at least */
		log_err("LUN %llu: out of memory: the reset from another "
			"gateway aborts no task", (unsigned long long)l->id);
		return;
	}
	reset_lun(run, l, NULL);
	run_start(run, false);
}

void tmf_abort_port(struct lun *l, const char *port, const void *except)
{
	struct tmf_run *run = run_new(NULL, NULL, NULL, NULL);
	struct list_node *pos;

	if (!run) {
		log_err("LUN %llu: out of memory: PREEMPT AND ABORT aborts "
			"no task", (unsigned long long)l->id);
		return;
	}
	pthread_mutex_lock(&l->lock);
	list_for_each(pos, &l->nexuses) {
		struct taskset *ts = list_entry(pos, struct taskset,
						nexus_node);

		if (ts->nexus != except &&
		    pr_port_match(port, sdev_initiator_port(l, ts->nexus)))
			run_add(run, ts, PART_ABORT_ALL, l->tas != 0);
	}
	pthread_mutex_unlock(&l->lock);
	run_start(run, false);
}

void tmf_qerr(struct taskset *ts, struct tcq_task *t)
{
	struct lun *l = ts->lun;
	struct tmf_run *run;
	struct list_node *pos;
	uint8_t qerr = l->qerr;

	if ((qerr != 1 && qerr != 3) || (t->req.control & CDB_CONTROL_NACA))
		return;
	run = run_new(NULL, NULL, NULL, NULL);
	if (!run) {
		log_err("LUN %llu: out of memory: QErr aborts no task",
			(unsigned long long)l->id);
		return;
	}
	pthread_mutex_lock(&l->lock);
	list_for_each(pos, &l->nexuses) {
		struct taskset *o = list_entry(pos, struct taskset,
					       nexus_node);

		if (o == ts) {
			run_add(run, o, PART_ABORT_ALL, false);
		} else if (qerr == 1 &&
			   run_add(run, o, PART_ABORT_ALL, l->tas != 0) &&
			   !l->tas) {
			run->parts[run->n - 1].ua_if_aborted =
				ASC_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR;
		}
	}
	pthread_mutex_unlock(&l->lock);
	/* Not inline: t is still completing in its set. */
	run_start(run, false);
}

void tmf_rescan_lun(struct lun *l)
{
	struct tmf_run *run = run_new(NULL, NULL, NULL, NULL);
	struct list_node *pos;

	if (!run) {
		log_err("LUN %llu: out of memory: waiting tasks start with "
			"the next completion", (unsigned long long)l->id);
		return;
	}
	pthread_mutex_lock(&l->lock);
	list_for_each(pos, &l->nexuses)
		run_add(run, list_entry(pos, struct taskset, nexus_node),
			PART_RESCAN, false);
	pthread_mutex_unlock(&l->lock);
	run_start(run, false);
}
