/*
 * Task management in the device server (SAM-5 7, SPC-4 7.5.8 TAS and
 * QErr): the one implementation of ABORT TASK, ABORT TASK SET, CLEAR TASK
 * SET, CLEAR ACA, LOGICAL UNIT RESET, I_T NEXUS RESET, the target reset
 * made of LUN resets, and QUERY TASK / QUERY TASK SET; and the aborts the
 * device server makes itself (QErr, PREEMPT AND ABORT, a reset through
 * another gateway, a LUN removed by force). A transport only maps its
 * codes to these and answers (target/tmf.c).
 *
 * Every nexus' task set lives on its reactor: the tasks of another nexus
 * are aborted there (a message), and a function is answered only once
 * every task it aborted has completed, those whose backend I/O was
 * running included (never into freed memory, never a status after the
 * answer). Task sets that left meanwhile are skipped.
 */
#ifndef TCQ_TMF_H
#define TCQ_TMF_H
#include <stdbool.h>
#include <stdint.h>
#include "tcq/reactor.h"

struct lun;
struct sdev;
struct taskset;
struct tcq_task;
struct tmf_run;

enum tmf_function {
	TMF_ABORT_TASK = 1,
	TMF_ABORT_TASK_SET,
	TMF_CLEAR_ACA,
	TMF_CLEAR_TASK_SET,
	TMF_LOGICAL_UNIT_RESET,
	TMF_I_T_NEXUS_RESET,
	TMF_TARGET_RESET,	/* a LOGICAL UNIT RESET of every LUN */
	TMF_QUERY_TASK,
	TMF_QUERY_TASK_SET,
};

/* SAM-5 7.1 service responses. */
enum tmf_response {
	TMF_FUNCTION_COMPLETE,
	TMF_FUNCTION_SUCCEEDED,	/* QUERY TASK (SET): a task is there */
	TMF_FUNCTION_REJECTED,	/* out of memory */
};

struct tmf {
	/* Set by the caller. */
	enum tmf_function fn;
	struct sdev *dev;	/* I_T NEXUS RESET, TARGET RESET */
	struct lun *lun;	/* the functions addressed to a LUN */
	void *nexus;		/* who asks */
	/* ABORT TASK, QUERY TASK: the task as the transport found it, or
	 * NULL when the device server never got it. */
	struct tcq_task *task;
	bool share;		/* resets: other gateways of a shared LUN
				 * reset it too (scsi/pr_store.c) */
	void (*done)(struct tmf *m);	/* on the caller's reactor, always
					 * after tmf_execute returned */
	void *arg;
	/* Set before done. */
	enum tmf_response response;
	/* The device server's. */
	struct tmf_run *run;
	struct reactor_msg msg;
};

/* Runs m on the calling reactor's thread (the requesting nexus' one). */
void tmf_execute(struct tmf *m);

/*
 * The device server's own aborts; none waits, unless done is given.
 *
 * tmf_abort_lun: every task of every nexus of l, as a reset does (TASK
 * ABORTED status where TAS=1); done(arg), if any, on the calling reactor
 * once they are gone. For a LUN removed by force.
 */
void tmf_abort_lun(struct lun *l, void (*done)(void *arg), void *arg);
/* A LOGICAL UNIT RESET of l that another gateway of its shared state ran
 * (scsi/pr_store.c): the same reset as one asked here, not passed on. */
void tmf_reset_lun_here(struct lun *l);
/* PREEMPT AND ABORT: the tasks of the nexuses whose initiator port
 * matches port, but not of except. */
void tmf_abort_port(struct lun *l, const char *port, const void *except);
/* QErr (SPC-4 7.5.8), for t of ts that just ended in CHECK CONDITION:
 * 01b aborts every other task of the LUN (2F/00 COMMANDS CLEARED BY
 * ANOTHER INITIATOR to the other nexuses that lost one, or TASK ABORTED
 * status with TAS=1), 11b the other tasks of t's nexus. Not during ACA:
 * a NACA=1 command's failure holds the set instead. */
void tmf_qerr(struct taskset *ts, struct tcq_task *t);
/* Every nexus of l looks at what waits in its task set, on its reactor
 * (lun_release). */
void tmf_rescan_lun(struct lun *l);
#endif
