/*
 * Task Management Function Requests (RFC 7143 11.5, 11.6): decoded,
 * mapped to the device server's functions (scsi/tmf.h), which abort and
 * reset and say when they are done, and answered. What is the
 * transport's own stays here: the commands still waiting for their CmdSN
 * turn (dropped when it comes), ABORT TASK's RefCmdSN rules for a
 * command that is not there, TASK REASSIGN at ErrorRecoveryLevel 0, and
 * the connections a TARGET COLD RESET ends.
 */
#include <stdlib.h>
#include <string.h>

#include "tcq/log.h"
#include "tcq/pdu.h"
#include "scsi/lun.h"
#include "scsi/tmf.h"
#include "target/conn.h"
#include "target/session.h"
#include "target/session_priv.h"

struct tmf_req {
	struct tmf core;	/* first: done() gets it back */
	struct conn *c;
	uint32_t itt;
	uint8_t function;
	uint8_t response;	/* ISCSI_TMF_RSP_* */
	bool close_after;	/* TARGET COLD RESET */
};

static void tmf_answer(struct tmf_req *m)
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

/* Answered by the transport alone. */
static void tmf_answer_now(struct tmf_req *m, uint8_t response)
{
	m->response = response;
	tmf_answer(m);
}

/* The device server is done: its SAM-5 service response in iSCSI's
 * terms (RFC 7143 11.6.1). */
static void tmf_core_done(struct tmf *core)
{
	struct tmf_req *m = (struct tmf_req *)core;

	switch (core->response) {
	case TMF_FUNCTION_COMPLETE:
		m->response = ISCSI_TMF_RSP_COMPLETE;
		break;
	case TMF_FUNCTION_SUCCEEDED:
		m->response = ISCSI_TMF_RSP_SUCCEEDED;
		break;
	case TMF_FUNCTION_REJECTED:
		m->response = ISCSI_TMF_RSP_REJECTED;
		break;
	}
	tmf_answer(m);
}

static struct lun *cmd_lun(const struct cmd *cmd)
{
	struct session *s = cmd->sess;
	uint64_t n;
	bool ro;

	if (cmd->dispatched)
		return cmd->task.lun;
	n = pdu_lun_decode(get_be64(cmd->bhs + BHS_LUN));
	return sess_lun(s, n, &ro);
}

/* This session's commands on l (NULL: every LUN) still waiting for
 * their CmdSN turn never reach the device server: dropped at their turn.
 * Those it holds are the device server's to abort. */
static void tmf_drop_waiting(struct session *s, struct lun *l)
{
	for (unsigned h = 0; h < ITT_HASH; h++)
		for (struct cmd *cmd = s->cmds.itt[h]; cmd; cmd = cmd->hnext)
			if (!cmd->dispatched && !cmd->rsp_queued &&
			    (!l || cmd_lun(cmd) == l))
				cmd->abort_pending = true;
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

/* ABORT TASK of a command the session does not have (done already, or
 * never received): RFC 7143 11.6.1 answers "function complete" only for
 * a command yet to come (RefCmdSN in the CmdSN window), "task does not
 * exist" for a RefCmdSN outside it. A lost command (RefCmdSN below the
 * TMF's own CmdSN) counts as received, so the commands after it run. */
static uint8_t tmf_abort_absent(struct conn *c, const struct pdu_tmf_req *q)
{
	if (!sess_cmdsn_in_window(c->sess, q->refcmdsn))
		return ISCSI_TMF_RSP_NO_TASK;
	if (sn_lt(q->refcmdsn, q->cmdsn))
		sess_cmdsn_consume(c, q->refcmdsn);
	return ISCSI_TMF_RSP_COMPLETE;
}

/* The device server's function for an iSCSI one, with what it acts on;
 * false when the transport answers it alone (into *rsp). */
static bool tmf_map(struct tmf_req *m, struct session *s,
		    const struct pdu_tmf_req *q, uint8_t *rsp)
{
	struct tmf *t = &m->core;
	struct cmd *cmd;

	switch (q->function) {
	case ISCSI_TMF_ABORT_TASK:
		cmd = cmd_lookup(s, q->rtt);
		if (!cmd || cmd->task_done || cmd->rsp_queued) {
			*rsp = tmf_abort_absent(m->c, q);
			return false;
		}
		if (!cmd->dispatched) {
			cmd->abort_pending = true;	/* dropped at its turn */
			*rsp = ISCSI_TMF_RSP_COMPLETE;
			return false;
		}
		t->fn = TMF_ABORT_TASK;
		t->task = &cmd->task;
		return true;
	case ISCSI_TMF_ABORT_TASK_SET:
		t->fn = TMF_ABORT_TASK_SET;
		tmf_drop_waiting(s, t->lun);
		return true;
	case ISCSI_TMF_CLEAR_TASK_SET:
		t->fn = TMF_CLEAR_TASK_SET;
		tmf_drop_waiting(s, t->lun);
		return true;
	case ISCSI_TMF_CLEAR_ACA:
		t->fn = TMF_CLEAR_ACA;
		return true;
	case ISCSI_TMF_LUN_RESET:
		t->fn = TMF_LOGICAL_UNIT_RESET;
		tmf_drop_waiting(s, t->lun);
		return true;
	case ISCSI_TMF_TARGET_COLD_RESET:
		m->close_after = true;
		/* fall through */
	case ISCSI_TMF_TARGET_WARM_RESET:
		t->fn = TMF_TARGET_RESET;
		tmf_drop_waiting(s, NULL);
		/* RFC 7143 11.5.1: a cold reset ends every TCP connection to
		 * every initiator of the target; this one once its answer is
		 * out (close_after). */
		if (m->close_after)
			sess_close_target(s->target, s, "target cold reset");
		return true;
	case ISCSI_TMF_I_T_NEXUS_RESET:
		t->fn = TMF_I_T_NEXUS_RESET;
		tmf_drop_waiting(s, NULL);
		return true;
	case ISCSI_TMF_QUERY_TASK:
		cmd = cmd_lookup(s, q->rtt);
		if (cmd && !cmd->dispatched && !cmd->rsp_queued) {
			/* in the target, waiting for its CmdSN turn */
			*rsp = ISCSI_TMF_RSP_SUCCEEDED;
			return false;
		}
		t->fn = TMF_QUERY_TASK;
		t->task = cmd && !cmd->task_done && !cmd->rsp_queued ?
			  &cmd->task : NULL;
		return true;
	case ISCSI_TMF_QUERY_TASK_SET:
		t->fn = TMF_QUERY_TASK_SET;
		return true;
	case ISCSI_TMF_TASK_REASSIGN:
		/* ErrorRecoveryLevel 0 (RFC 7143 11.5.1). */
		*rsp = ISCSI_TMF_RSP_NO_REASSIGN;
		return false;
	case ISCSI_TMF_QUERY_ASYNC_EVENT:
	default:
		*rsp = ISCSI_TMF_RSP_NOT_SUPPORTED;
		return false;
	}
}

void tmf_rx(struct conn *c, const uint8_t *bhs)
{
	struct session *s = c->sess;
	struct pdu_tmf_req q;
	struct tmf_req *m;
	uint8_t rsp = ISCSI_TMF_RSP_COMPLETE;

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
	if (tmf_lun_scoped(q.function)) {
		bool ro;

		m->core.lun = sess_lun(s, pdu_lun_decode(q.lun), &ro);
		if (!m->core.lun) {
			tmf_answer_now(m, ISCSI_TMF_RSP_NO_LUN);
			return;
		}
	}
	if (s->discovery) {
		tmf_answer_now(m, ISCSI_TMF_RSP_NOT_SUPPORTED);
		return;
	}
	m->core.dev = s->target ? &s->target->dev : NULL;
	m->core.nexus = s;
	m->core.share = true;
	m->core.done = tmf_core_done;
	if (!tmf_map(m, s, &q, &rsp)) {
		tmf_answer_now(m, rsp);
		return;
	}
	tmf_execute(&m->core);
}
