/*
 * NOP-Out (a ping from the initiator, or its answer to ours) and Logout
 * (RFC 7143 11.14-11.19) in the full feature phase.
 */
#include <string.h>

#include "tcq/log.h"
#include "tcq/pdu.h"
#include "target/conn.h"
#include "target/session.h"
#include "target/session_priv.h"

void nop_out_rx(struct conn *c, const uint8_t *bhs, uint8_t *data,
		uint32_t len)
{
	struct pdu_nop_out n;
	struct pdu_nop_in r;
	uint8_t out[ISCSI_BHS_LEN];

	pdu_decode_nop_out(bhs, &n);
	if (n.itt == ISCSI_RSVD_TAG) {
		conn_nop_answered(c, n.ttt);	/* answer to our ping */
		return;
	}
	memset(&r, 0, sizeof(r));
	r.itt = n.itt;
	r.ttt = ISCSI_RSVD_TAG;
	r.lun = n.lun;
	r.statsn = conn_next_statsn(c);
	r.expcmdsn = c->sess->win.exp_cmdsn;
	r.maxcmdsn = c->sess->win.max_cmdsn;
	r.data_len = len;
	pdu_encode_nop_in(out, &r);
	conn_send_pdu(c, out, data, len);	/* ping data echoed */
}

void logout_answer_if_idle(struct session *s)
{
	struct conn *c = s->conn;
	struct pdu_logout_req q;
	struct pdu_logout_rsp r;
	uint8_t out[ISCSI_BHS_LEN];

	if (!c || c->state != CONN_FFP)
		return;
	/* Commands still in flight finish first; the Logout answer is the
	 * last thing the initiator hears on this connection. */
	if (s->cmds.live)
		return;
	s->logout.waiting = false;
	pdu_decode_logout_req(s->logout.bhs, &q);
	memset(&r, 0, sizeof(r));
	r.itt = q.itt;
	if (q.reason == ISCSI_LOGOUT_REMOVE_FOR_RECOVERY)
		r.response = ISCSI_LOGOUT_RSP_RECOVERY_UNSUPPORTED;
	else if (q.reason == ISCSI_LOGOUT_CLOSE_CONNECTION && q.cid != c->cid)
		r.response = ISCSI_LOGOUT_RSP_CID_NOT_FOUND;
	else
		r.response = ISCSI_LOGOUT_RSP_SUCCESS;
	if (r.response == ISCSI_LOGOUT_RSP_SUCCESS) {
		/* The I_T nexus ends with this answer (one connection per
		 * session): what it held on each LUN (an SPC-2 reservation,
		 * PREVENT MEDIUM REMOVAL, its unit attentions) goes before the
		 * initiator hears the answer, so its next command, on any
		 * other session, already sees the LUN free. No command is
		 * left, so the task sets are idle. */
		sess_leave_tasksets(s);
	}
	r.statsn = conn_next_statsn(c);
	r.expcmdsn = s->win.exp_cmdsn;
	r.maxcmdsn = s->win.max_cmdsn;
	pdu_encode_logout_rsp(out, &r);
	conn_send_pdu(c, out, NULL, 0);
	if (r.response == ISCSI_LOGOUT_RSP_SUCCESS) {
		log_info("%s: logout (reason %u)", c->peer_text, q.reason);
		c->state = CONN_LOGGED_OUT;	/* closed once sent */
	}
}

void logout_rx(struct conn *c, const uint8_t *bhs)
{
	struct session *s = c->sess;

	memcpy(s->logout.bhs, bhs, ISCSI_BHS_LEN);
	s->logout.waiting = true;
	logout_answer_if_idle(s);
}

/* RFC 7143 11.9.1, AsyncEvent 1: the target asks for a logout within
 * secs seconds (Parameter3); the initiator logs out (or is dropped later
 * by whoever asked, e.g. a target removed live). */
void logout_request_async(struct session *s, uint16_t secs)
{
	struct conn *c = s->conn;
	struct pdu_async a;
	uint8_t out[ISCSI_BHS_LEN];

	if (!c || c->state != CONN_FFP || s->dead)
		return;
	memset(&a, 0, sizeof(a));
	a.statsn = conn_next_statsn(c);
	a.expcmdsn = s->win.exp_cmdsn;
	a.maxcmdsn = s->win.max_cmdsn;
	a.event = ISCSI_ASYNC_LOGOUT_REQUEST;
	a.param3 = secs;
	pdu_encode_async(out, &a);
	conn_send_pdu(c, out, NULL, 0);
	log_info("session %s: asked to log out within %u s", s->iname, secs);
}
