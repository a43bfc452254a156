/*
 * The full feature phase receive path (session.h): each PDU by opcode,
 * and the CmdSN window (RFC 7143 4.2.2.1). Commands and other PDUs enter
 * strictly in CmdSN order: what arrives ahead of ExpCmdSN waits, sorted,
 * until its turn; immediate PDUs run at once.
 */
#include <stdlib.h>
#include <string.h>

#include "tcq/log.h"
#include "tcq/pdu.h"
#include "target/conn.h"
#include "target/login.h"
#include "target/session.h"
#include "target/session_priv.h"

static void sess_run_pdu(struct conn *c, const uint8_t *bhs, uint8_t *data,
			 uint32_t len);

/* ---- the window -------------------------------------------------------- */

void sess_window_init(struct session *s, uint32_t cmdsn)
{
	s->win.exp_cmdsn = cmdsn;
	s->win.size = tcqd->set.cmd_window ? tcqd->set.cmd_window : 128;
	s->win.max_cmdsn = s->win.exp_cmdsn + s->win.size - 1;
	list_init(&s->win.held_cmds);
	list_init(&s->win.held_pdus);
}

unsigned sess_cmds_live(const struct conn *c)
{
	return c->sess ? c->sess->cmds.live : 0;
}

uint32_t sess_exp_cmdsn(const struct conn *c)
{
	return c->sess ? c->sess->win.exp_cmdsn : 0;
}

uint32_t sess_max_cmdsn(const struct conn *c)
{
	return c->sess ? c->sess->win.max_cmdsn : 0;
}

bool sess_cmdsn_in_window(const struct session *s, uint32_t cmdsn)
{
	return !sn_lt(cmdsn, s->win.exp_cmdsn) &&
	       !sn_gt(cmdsn, s->win.max_cmdsn);
}

/* ---- what waits for its turn ------------------------------------------- */

/* Runs whatever was waiting for the CmdSN that just became current. */
static void sess_run_held(struct session *s, struct conn *c)
{
	for (;;) {
		bool progressed = false;

		if (!list_empty(&s->win.held_pdus)) {
			struct held_pdu *p = list_first_entry(
				&s->win.held_pdus, struct held_pdu, node);
			if (p->consumed && p->cmdsn == s->win.exp_cmdsn) {
				list_del(&p->node);
				s->win.exp_cmdsn++;
				free(p);
				continue;
			}
		}
		if (!list_empty(&s->win.held_cmds)) {
			struct cmd *n = list_first_entry(&s->win.held_cmds,
					struct cmd, held_node);
			if (n->cmdsn == s->win.exp_cmdsn) {
				list_del(&n->held_node);
				s->win.exp_cmdsn++;
				cmd_dispatch(s, n);
				progressed = true;
			}
		}
		if (!list_empty(&s->win.held_pdus)) {
			struct held_pdu *p = list_first_entry(
				&s->win.held_pdus, struct held_pdu, node);
			if (!p->consumed && p->cmdsn == s->win.exp_cmdsn) {
				list_del(&p->node);
				s->win.exp_cmdsn++;
				sess_run_pdu(c, p->bhs, p->data, p->len);
				free(p);
				progressed = true;
				if (c->state != CONN_FFP)
					return;
			}
		}
		if (!progressed)
			break;
	}
}

/* Whether cmdsn was consumed ahead of ExpCmdSN (sess_cmdsn_consume). */
static bool sess_cmdsn_consumed(const struct session *s, uint32_t cmdsn)
{
	struct list_node *pos;

	list_for_each(pos, &s->win.held_pdus) {
		const struct held_pdu *p = list_entry(pos, struct held_pdu,
						      node);

		if (p->cmdsn == cmdsn)
			return p->consumed;
	}
	return false;
}

/* A duplicate within the window: ignored, no answer. */
static void sess_drop_cmd(struct cmd *cmd)
{
	cmd->data_out.unsol_done = true;
	cmd->rsp_sent = true;
	cmd_finish_check(cmd);
}

static void sess_hold_cmd(struct session *s, struct cmd *cmd)
{
	struct list_node *pos;

	if (sess_cmdsn_consumed(s, cmd->cmdsn)) {
		sess_drop_cmd(cmd);
		return;
	}
	list_for_each(pos, &s->win.held_cmds) {
		struct cmd *o = list_entry(pos, struct cmd, held_node);

		if (o->cmdsn == cmd->cmdsn) {
			sess_drop_cmd(cmd);
			return;
		}
		if (sn_gt(o->cmdsn, cmd->cmdsn))
			break;
	}
	list_insert_between(&cmd->held_node, pos->prev, pos);
}

/* A copy of a non-SCSI PDU ahead of ExpCmdSN, kept in CmdSN order; with
 * bhs NULL, a consumed CmdSN's mark. A second one for a CmdSN is a
 * duplicate and dropped. */
static void sess_hold_pdu(struct conn *c, uint32_t cmdsn, const uint8_t *bhs,
			  const uint8_t *data, uint32_t len)
{
	struct session *s = c->sess;
	struct held_pdu *p;
	struct list_node *pos;

	list_for_each(pos, &s->win.held_pdus)
		if (list_entry(pos, struct held_pdu, node)->cmdsn == cmdsn)
			return;		/* a duplicate, or a consumed CmdSN */
	p = malloc(sizeof(*p) + len);
	if (!p) {
		conn_close(c, "out of memory");
		return;
	}
	p->cmdsn = cmdsn;
	p->consumed = bhs == NULL;
	p->len = len;
	if (bhs)
		memcpy(p->bhs, bhs, ISCSI_BHS_LEN);
	if (len)
		memcpy(p->data, data, len);
	list_for_each(pos, &s->win.held_pdus) {
		if (sn_gt(list_entry(pos, struct held_pdu, node)->cmdsn, cmdsn))
			break;
	}
	list_insert_between(&p->node, pos->prev, pos);
}

void sess_cmdsn_consume(struct conn *c, uint32_t cmdsn)
{
	struct session *s = c->sess;
	struct list_node *pos;

	if (!sess_cmdsn_in_window(s, cmdsn))
		return;
	if (cmdsn == s->win.exp_cmdsn) {
		s->win.exp_cmdsn++;
		sess_update_window(s);
		sess_run_held(s, c);
		return;
	}
	/* Ahead of ExpCmdSN: a mark that waits its turn like a held PDU
	 * (none is made when a command or PDU already holds that CmdSN). */
	list_for_each(pos, &s->win.held_cmds)
		if (list_entry(pos, struct cmd, held_node)->cmdsn == cmdsn)
			return;
	sess_hold_pdu(c, cmdsn, NULL, NULL, 0);
}

/* ---- PDUs in their turn ------------------------------------------------ */

void sess_reject(struct conn *c, const uint8_t *bhs, uint8_t reason,
		 bool *discard)
{
	/* RFC 7143 6.3: the CmdSN of a rejected command is not considered
	 * received; the initiator sees a gap it must recover from. */
	conn_send_reject(c, bhs, reason);
	*discard = true;
}

/*
 * ERL 0 (the only level tcqd negotiates) keeps nothing to send again and
 * supports no SNACK (RFC 7143 11.16 asks that of ERL > 0): what a SNACK
 * asks for will never be sent (again), a protocol error. The Reject of a
 * Data/R2T SNACK carries the next DataSN or R2TSN of its task (11.17.2):
 * a read's Data-In and a write's R2Ts share one numbering (11.8), so it
 * is the sum of the two counts (one of them 0 but for bidirectional).
 */
static void sess_snack_reject(struct conn *c, const uint8_t *bhs,
			      bool *discard)
{
	struct pdu_snack sn;
	struct cmd *cmd = NULL;
	uint32_t next = 0;

	pdu_decode_snack(bhs, &sn);
	if (sn.type == ISCSI_SNACK_DATA_R2T)
		cmd = cmd_lookup(c->sess, sn.itt);
	if (cmd)
		next = cmd->datasn + cmd->data_out.r2tsn;
	conn_send_reject_sn(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR, next);
	*discard = true;
}

/* A whole SCSI Command PDU is in (its header was checked by
 * cmd_rx_header): it runs now, or waits for its CmdSN. */
static void sess_order_cmd(struct conn *c, const uint8_t *bhs, uint32_t len)
{
	struct session *s = c->sess;
	struct cmd *cmd = c->rx.cmd;

	c->rx.cmd = NULL;
	if (!cmd || cmd->itt != pdu_itt(bhs))
		return;
	cmd->data_out.got = len;
	cmd->data_out.unsol_got = len;
	cmd->data_out.unsol_done = (bhs[BHS_FLAGS] & ISCSI_FLAG_FINAL) != 0;
	if (cmd->immediate) {
		cmd_dispatch(s, cmd);
		return;
	}
	if (cmd->cmdsn == s->win.exp_cmdsn) {
		s->win.exp_cmdsn++;
		cmd_dispatch(s, cmd);
		if (!list_empty(&s->win.held_cmds) ||
		    !list_empty(&s->win.held_pdus))
			sess_run_held(s, c);
		return;
	}
	/* Ahead of ExpCmdSN (within the window): hold it in order. */
	sess_hold_cmd(s, cmd);
}

/* Runs a non-SCSI PDU whose turn (CmdSN) has come, or an immediate one. */
static void sess_run_pdu(struct conn *c, const uint8_t *bhs, uint8_t *data,
			 uint32_t len)
{
	switch (pdu_opcode(bhs)) {
	case ISCSI_OP_NOP_OUT:
		nop_out_rx(c, bhs, data, len);
		break;
	case ISCSI_OP_TEXT_REQ:
		text_rx(c, bhs, data, len);
		break;
	case ISCSI_OP_LOGOUT_REQ:
		logout_rx(c, bhs);
		break;
	case ISCSI_OP_TMF_REQ:
		tmf_rx(c, bhs);
		break;
	default:
		conn_send_reject(c, bhs, ISCSI_REJECT_CMD_NOT_SUPPORTED);
		break;
	}
}

/* ---- receive entry points ---------------------------------------------- */

uint8_t *sess_rx_header(struct conn *c, const uint8_t *bhs, bool *discard,
			int *err)
{
	const char *why = NULL;
	int rc;

	rc = pdu_check_initiator_bhs(bhs, &why);
	if (rc) {
		log_warn("%s: bad %s PDU: %s", c->peer_text,
			 pdu_opcode_name(pdu_opcode(bhs)), why ? why : "?");
		sess_reject(c, bhs, (uint8_t)rc, discard);
		return NULL;
	}
	switch (pdu_opcode(bhs)) {
	case ISCSI_OP_SCSI_CMD:
		return cmd_rx_header(c, bhs, discard, err);
	case ISCSI_OP_DATA_OUT:
		return data_out_rx_header(c, bhs, discard, err);
	case ISCSI_OP_LOGIN_REQ:	/* in the full feature phase */
		sess_reject(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR, discard);
		return NULL;
	case ISCSI_OP_SNACK_REQ:
		sess_snack_reject(c, bhs, discard);
		return NULL;
	default:
		return NULL;	/* scratch buffer */
	}
}

void sess_rx_pdu(struct conn *c, const uint8_t *bhs, uint8_t *data,
		 uint32_t len)
{
	struct session *s = c->sess;
	uint8_t op = pdu_opcode(bhs);
	uint32_t cmdsn;

	if (op == ISCSI_OP_SCSI_CMD) {
		sess_order_cmd(c, bhs, len);
		return;
	}
	if (op == ISCSI_OP_DATA_OUT) {
		data_out_rx_pdu(c, bhs, len);
		return;
	}
	cmdsn = get_be32(bhs + BHS_CMDSN);
	c->exp_statsn = get_be32(bhs + BHS_EXPSTATSN);
	c->exp_statsn_valid = true;
	/* A NOP-Out answering a ping carries no CmdSN to consume, and
	 * immediate PDUs run at once. */
	if (pdu_immediate(bhs) ||
	    (op == ISCSI_OP_NOP_OUT && pdu_itt(bhs) == ISCSI_RSVD_TAG)) {
		sess_run_pdu(c, bhs, data, len);
		return;
	}
	if (!sess_cmdsn_in_window(s, cmdsn))
		return;		/* outside the window: silently ignored */
	if (cmdsn == s->win.exp_cmdsn) {
		s->win.exp_cmdsn++;
		sess_update_window(s);
		sess_run_pdu(c, bhs, data, len);
		return;
	}
	sess_hold_pdu(c, cmdsn, bhs, data, len);
}
