/*
 * Task management functions (RFC 7143 11.5, SAM-5 7).
 *
 * An abort marks the affected commands, asks the task set to abort them,
 * and answers only once every one of them is gone: a task whose backend
 * I/O is running completes it first (never into freed memory), then
 * leaves without a response. Commands that have not reached the device
 * server yet (waiting for an earlier CmdSN) are dropped when their turn
 * comes.
 */
#include <stdlib.h>
#include <string.h>

#include "tcq/log.h"
#include "tcq/pdu.h"
#include "scsi/lun.h"
#include "scsi/pr.h"
#include "scsi/taskset.h"
#include "scsi/ua.h"
#include "target/conn.h"
#include "target/session.h"
#include "target/session_priv.h"

struct tmf {
	struct conn *c;
	uint32_t itt;
	uint8_t function;
	uint8_t response;
	unsigned waiting;	/* affected commands still around, +1 while
				 * they are being collected */
	bool close_after;	/* TARGET COLD RESET */
};

static void tmf_answer(struct tmf *m)
{
	struct conn *c = m->c;

	if (c->state == CONN_FFP) {
		uint8_t out[ISCSI_BHS_LEN];
		struct pdu_tmf_rsp r = {
			.response = m->response,
			.itt = m->itt,
		};

		r.statsn = conn_next_statsn(c);
		r.expcmdsn = sess_exp_cmdsn(c);
		r.maxcmdsn = sess_max_cmdsn(c);
		pdu_encode_tmf_rsp(out, &r);
		conn_send_pdu(c, out, NULL, 0);
		log_info("%s: task management function %u answered %u",
			 c->peer_text, m->function, m->response);
		if (m->close_after)
			c->state = CONN_LOGGED_OUT;	/* closed once sent */
	}
	conn_put(c);
	free(m);
}

static void tmf_release(struct tmf *m)
{
	if (--m->waiting == 0)
		tmf_answer(m);
}

void tmf_cmd_gone(struct cmd *cmd)
{
	struct tmf *m = cmd->tmf;

	cmd->tmf = NULL;
	tmf_release(m);
}

static struct lun *cmd_lun(const struct cmd *cmd)
{
	struct session *s = cmd->sess;
	uint64_t n;

	if (cmd->dispatched)
		return cmd->task.lun;
	n = pdu_lun_decode(get_be64(cmd->bhs + BHS_LUN));
	return s->target ? sdev_lun(&s->target->dev, n) : NULL;
}

/* Marks cmd as aborted (by m, when a TMF waits for it); returns true when
 * the device server holds it (the caller then asks the task set to abort
 * it). */
static bool tmf_mark(struct tmf *m, struct cmd *cmd)
{
	if (cmd->tmf || cmd->task_done || cmd->rsp_queued)
		return false;	/* finished or already being aborted */
	if (!cmd->dispatched) {
		cmd->abort_pending = true;	/* dropped at its turn */
		return false;
	}
	cmd->data_out.unsol_done = true;	/* no Data-Out is awaited */
	if (m) {
		cmd->tmf = m;
		m->waiting++;
	}
	return true;
}

/* Every command of this session on lun (NULL: on every LUN). report: the
 * tasks end with TASK ABORTED status (TAS=1 for another nexus' request)
 * instead of silently. */
static void tmf_abort_lun_as(struct tmf *m, struct session *s, struct lun *l,
			     bool report)
{
	for (unsigned h = 0; h < ITT_HASH; h++) {
		for (struct cmd *cmd = s->cmds.itt[h]; cmd; cmd = cmd->hnext) {
			if (!l || cmd_lun(cmd) == l)
				tmf_mark(m, cmd);
		}
	}
	/* Marking first, aborting after: the aborts free commands, which
	 * must not happen under the walk above. */
	for (unsigned i = 0; i < TCQ_MAX_LUNS; i++) {
		struct taskset *ts = s->ts[i];

		if (ts && (!l || l->id == i))
			taskset_abort_all(ts, report);
	}
}

static void tmf_abort_lun(struct tmf *m, struct session *s, struct lun *l)
{
	tmf_abort_lun_as(m, s, l, false);
}

void tmf_abort_for_other(struct session *s, struct lun *l)
{
	tmf_abort_lun_as(NULL, s, l, l->tas != 0);
}

/* SAM-5 I_T nexus loss (what I_T NEXUS RESET performs): each LU the
 * nexus knows reports I_T NEXUS LOSS OCCURRED to it next. */
static void tmf_nexus_loss(struct session *s)
{
	for (unsigned i = 0; i < TCQ_MAX_LUNS; i++)
		if (s->ts[i])
			ua_establish(s->ts[i], ASC_I_T_NEXUS_LOSS);
}

static void tmf_shared_done(void *arg)
{
	tmf_release(arg);
}

/* A reset of l, a LUN whose state other gateways share: they reset it
 * too (unit attentions, tasks aborted) before the answer goes out. */
static void tmf_reset_shared(struct tmf *m, struct lun *l)
{
	m->waiting++;
	if (!pr_store_reset(l, tmf_shared_done, m))
		m->waiting--;
}

static bool tmf_lun_scoped(uint8_t fn)
{
	switch (fn) {
	case ISCSI_TMF_ABORT_TASK:
	case ISCSI_TMF_ABORT_TASK_SET:
	case ISCSI_TMF_CLEAR_ACA:
	case ISCSI_TMF_CLEAR_TASK_SET:
	case ISCSI_TMF_LUN_RESET:
	case ISCSI_TMF_QUERY_TASK:
	case ISCSI_TMF_QUERY_TASK_SET:
		return true;
	default:
		return false;
	}
}

static void tmf_abort_task(struct tmf *m, struct session *s,
			   const struct pdu_tmf_req *q)
{
	struct cmd *cmd = cmd_lookup(s, q->rtt);

	if (!cmd || cmd->task_done || cmd->rsp_queued) {
		/* Completed already, or never received: RFC 7143 11.6.1
		 * answers "function complete" only for a command that is yet
		 * to come (RefCmdSN in the CmdSN window), "task does not
		 * exist" for a RefCmdSN outside it, on either side. A lost
		 * command (RefCmdSN below the TMF's own CmdSN) counts as
		 * received, so the commands after it run (b). */
		if (!sess_cmdsn_in_window(s, q->refcmdsn)) {
			m->response = ISCSI_TMF_RSP_NO_TASK;
			return;
		}
		if (sn_lt(q->refcmdsn, q->cmdsn))
			sess_cmdsn_consume(m->c, q->refcmdsn);
		m->response = ISCSI_TMF_RSP_COMPLETE;
		return;
	}
	if (tmf_mark(m, cmd))
		lun_task_abort(&cmd->task);
}

void tmf_rx(struct conn *c, const uint8_t *bhs)
{
	struct session *s = c->sess;
	struct pdu_tmf_req q;
	struct tmf *m;
	struct lun *l = NULL;

	pdu_decode_tmf_req(bhs, &q);
	m = calloc(1, sizeof(*m));
	if (!m) {
		conn_close(c, "out of memory");
		return;
	}
	m->c = c;
	c->refs++;
	m->itt = q.itt;
	m->function = q.function;
	m->waiting = 1;
	m->response = ISCSI_TMF_RSP_COMPLETE;

	if (tmf_lun_scoped(q.function)) {
		uint64_t n = pdu_lun_decode(q.lun);

		if (s->target)
			l = sdev_lun(&s->target->dev, n);
		if (!l) {
			m->response = ISCSI_TMF_RSP_NO_LUN;
			tmf_release(m);
			return;
		}
	}
	if (s->discovery) {
		m->response = ISCSI_TMF_RSP_NOT_SUPPORTED;
		tmf_release(m);
		return;
	}
	switch (q.function) {
	case ISCSI_TMF_ABORT_TASK:
		tmf_abort_task(m, s, &q);
		break;
	case ISCSI_TMF_ABORT_TASK_SET:
	case ISCSI_TMF_CLEAR_TASK_SET:
		/* TST=001b: the task set is this nexus' own. */
		tmf_abort_lun(m, s, l);
		break;
	case ISCSI_TMF_CLEAR_ACA: {
		struct taskset *ts = sess_taskset_of(s, l);

		if (ts)
			taskset_clear_aca(ts);
		break;
	}
	case ISCSI_TMF_LUN_RESET:
		tmf_abort_lun(m, s, l);
		sess_abort_lun_tasks(l, NULL, s);
		lun_reset(l, s);
		tmf_reset_shared(m, l);
		break;
	case ISCSI_TMF_TARGET_COLD_RESET:
		m->close_after = true;
		/* fall through */
	case ISCSI_TMF_TARGET_WARM_RESET:
	case ISCSI_TMF_I_T_NEXUS_RESET:
		tmf_abort_lun(m, s, NULL);
		if (q.function == ISCSI_TMF_I_T_NEXUS_RESET) {
			tmf_nexus_loss(s);
			break;
		}
		for (int i = 0; i < sdev_nluns(&s->target->dev); i++) {
			struct lun *tl = sdev_lun(&s->target->dev,
						  (uint64_t)i);

			if (!tl)
				continue;
			sess_abort_lun_tasks(tl, NULL, s);
			lun_reset(tl, s);
			tmf_reset_shared(m, tl);
		}
		/* RFC 7143 11.5.1: a cold reset ends every TCP connection to
		 * every initiator of the target; this one once its answer is
		 * out (close_after). */
		if (q.function == ISCSI_TMF_TARGET_COLD_RESET)
			sess_close_target(s->target, s, "target cold reset");
		break;
	case ISCSI_TMF_QUERY_TASK: {
		struct cmd *cmd = cmd_lookup(s, q.rtt);

		m->response = (cmd && !cmd->task_done && !cmd->rsp_queued) ?
			      ISCSI_TMF_RSP_SUCCEEDED : ISCSI_TMF_RSP_COMPLETE;
		break;
	}
	case ISCSI_TMF_QUERY_TASK_SET: {
		struct taskset *ts = sess_taskset_of(s, l);

		m->response = (ts && taskset_count(ts)) ?
			      ISCSI_TMF_RSP_SUCCEEDED : ISCSI_TMF_RSP_COMPLETE;
		break;
	}
	case ISCSI_TMF_TASK_REASSIGN:
		/* ErrorRecoveryLevel 0 (RFC 7143 11.5.1). */
		m->response = ISCSI_TMF_RSP_NO_REASSIGN;
		break;
	case ISCSI_TMF_QUERY_ASYNC_EVENT:
	default:
		m->response = ISCSI_TMF_RSP_NOT_SUPPORTED;
		break;
	}
	tmf_release(m);
}
