/*
 * Write data (RFC 7143 11.7, 11.8): immediate and unsolicited Data-Out up
 * to FirstBurstLength, then R2Ts of at most MaxBurstLength each, at most
 * MaxOutstandingR2T at a time. Data-Out that breaks the sequence rules
 * fails its command with CHECK CONDITION, ABORTED COMMAND and the sense
 * code of RFC 7143 11.4.7.2 (unsolicited data where none may come, an
 * amount that is not the one due), or DATA OFFSET / DATA PHASE ERROR
 * (data out of order); the connection goes on.
 */
#include <string.h>

#include "tcq/compiler.h"
#include "tcq/log.h"
#include "tcq/pdu.h"
#include "scsi/lun.h"
#include "target/conn.h"
#include "target/session.h"
#include "target/session_priv.h"

/* ---- R2T ---------------------------------------------------------------- */

/* All the data is in: the device server, waiting for it, may go on. */
static void data_out_complete_check(struct cmd *cmd)
{
	if (cmd->data_out.got == cmd->edtl && cmd->dispatched &&
	    cmd->data_out.wanted && !cmd->task.data_ready && !cmd->task_done) {
		cmd->task.data_ready = true;
		lun_task_data_ready(&cmd->task);
	}
}

/* Solicits what is still missing once the unsolicited data is in, at
 * most MaxOutstandingR2T bursts at a time. */
static void data_out_send_r2ts(struct cmd *cmd)
{
	struct conn *c = cmd->conn;
	struct session *s = cmd->sess;
	struct cmd_data_out *w = &cmd->data_out;
	uint32_t max_out = s->params.max_outstanding_r2t ?
			   s->params.max_outstanding_r2t : 1;
	uint32_t burst = s->params.max_burst ? s->params.max_burst : 262144;

	if (max_out > MAX_R2T)
		max_out = MAX_R2T;
	if (!w->unsol_done || !w->wanted || cmd->task_done || w->error)
		return;
	if (w->r2t_next < w->unsol_got)
		w->r2t_next = w->unsol_got;
	while (w->r2t_active < max_out && w->r2t_next < cmd->edtl) {
		struct r2t *r = NULL;
		uint8_t bhs[ISCSI_BHS_LEN];
		struct pdu_r2t p;

		for (unsigned i = 0; i < MAX_R2T; i++) {
			if (!w->r2t[i].active) {
				r = &w->r2t[i];
				break;
			}
		}
		if (!r)
			return;
		r->active = true;
		r->offset = w->r2t_next;
		r->len = MIN(burst, cmd->edtl - w->r2t_next);
		r->got = 0;
		r->datasn = 0;
		r->ttt = s->next_r2t_ttt++;
		if (s->next_r2t_ttt == ISCSI_RSVD_TAG)
			s->next_r2t_ttt = 1;
		w->r2t_next += r->len;
		w->r2t_active++;
		memset(&p, 0, sizeof(p));
		p.lun = get_be64(cmd->bhs + BHS_LUN);
		p.itt = cmd->itt;
		p.ttt = r->ttt;
		p.statsn = c->statsn;
		p.expcmdsn = s->win.exp_cmdsn;
		p.maxcmdsn = s->win.max_cmdsn;
		p.r2tsn = w->r2tsn++;
		p.offset = r->offset;
		p.length = r->len;
		pdu_encode_r2t(bhs, &p);
		conn_send_pdu(c, bhs, NULL, 0);
	}
}

void data_out_advance(struct cmd *cmd)
{
	data_out_send_r2ts(cmd);
	data_out_complete_check(cmd);
}

static struct r2t *r2t_find(struct cmd_data_out *w, uint32_t ttt)
{
	for (unsigned i = 0; i < MAX_R2T; i++) {
		if (w->r2t[i].active && w->r2t[i].ttt == ttt)
			return &w->r2t[i];
	}
	return NULL;
}

/* ---- Data-Out ---------------------------------------------------------- */

/* The immediate and unsolicited data of cmd are all in. */
static void data_out_unsol_end(struct cmd *cmd)
{
	cmd->data_out.unsol_done = true;
	if (cmd->dispatched)
		data_out_advance(cmd);
	cmd_finish_check(cmd);
}

/* Fails a command whose Data-Out broke the sequence rules. */
static void data_out_fail(struct cmd *cmd, uint16_t asc)
{
	struct tcq_task *t = &cmd->task;

	if (cmd->data_out.error)
		return;
	cmd->data_out.error = asc;
	cmd->data_out.unsol_done = true;
	if (!cmd->dispatched)
		return;		/* answered when its CmdSN comes up */
	if (cmd->task_done || !lun_task_abort(t))
		cmd_finish_check(cmd);
}

/*
 * What is wrong with Data-Out d for cmd, as the ASC/ASCQ its command ends
 * with, or 0. Unsolicited data (no TTT) after the command said none
 * follows (its F bit, or InitialR2T=Yes) is unexpected; past
 * FirstBurstLength, or ending (F) short of it while the transfer is
 * longer, it is an incorrect amount; a reply to an R2T is too, when it
 * goes past what the R2T asked for or ends short of it (RFC 7143
 * 11.4.7.2). Data not where the sequence is, or a DataSN out of turn,
 * breaks DataPDUInOrder (RFC 7143 13.18, 11.7.5).
 */
static uint16_t data_out_check(struct cmd *cmd, const struct pdu_data_out *d)
{
	struct cmd_data_out *w = &cmd->data_out;
	uint64_t end = (uint64_t)d->offset + d->data_len;
	struct r2t *r;

	if (d->ttt == ISCSI_RSVD_TAG) {
		/* A command with F=0 where InitialR2T=Yes was refused. */
		if (cmd->bhs[BHS_FLAGS] & ISCSI_FLAG_FINAL)
			return ASC_UNEXPECTED_UNSOLICITED_DATA;
		if (d->offset != w->unsol_got)
			return ASC_DATA_OFFSET_ERROR;
		if (w->unsol_done || end > w->unsol_max ||
		    (d->final && end < w->unsol_max &&
		     cmd->edtl > cmd->sess->params.first_burst))
			return ASC_INCORRECT_AMOUNT_OF_DATA;
		return d->datasn != w->unsol_datasn ? ASC_DATA_PHASE_ERROR : 0;
	}
	r = r2t_find(w, d->ttt);
	if (!r || d->offset != r->offset + r->got)
		return ASC_DATA_OFFSET_ERROR;
	if (end > (uint64_t)r->offset + r->len ||
	    (d->final && end < (uint64_t)r->offset + r->len))
		return ASC_INCORRECT_AMOUNT_OF_DATA;
	return d->datasn != r->datasn ? ASC_DATA_PHASE_ERROR : 0;
}

uint8_t *data_out_rx_header(struct conn *c, const uint8_t *bhs, bool *discard,
			    int *err)
{
	struct session *s = c->sess;
	struct pdu_data_out d;
	struct cmd_data_out *w;
	struct cmd *cmd;
	uint16_t asc;

	pdu_decode_data_out(bhs, &d);
	cmd = cmd_lookup(s, d.itt);
	if (!cmd || !cmd->data_out.buf_len) {
		if (cmd && cmd->failed_early) {
			/* Read into scratch and dropped, but counted (see
			 * task_done below). */
			c->rx.cmd = cmd;
			return NULL;
		}
		/* Unknown task: typically Data-Out still in flight for a
		 * command that was aborted or already answered. */
		log_debug("%s: Data-Out for unknown ITT 0x%08x dropped",
			  c->peer_text, d.itt);
		*discard = true;
		return NULL;
	}
	w = &cmd->data_out;
	if (w->error) {
		*discard = true;	/* already failed: drain */
		return NULL;
	}
	asc = data_out_check(cmd, &d);
	if (asc)
		goto protocol_error;
	c->rx.cmd = cmd;
	if (cmd->task_done) {
		/* Answered early (a unit attention, ...): the data goes to
		 * the scratch buffer and is dropped, but data_out_rx_pdu
		 * still counts it, or the command would wait forever for
		 * the end of its unsolicited data (found by fuzz_conn). */
		return NULL;
	}
	return w->buf + d.offset;

protocol_error:
	/* The command must not run on damaged data: it ends with CHECK
	 * CONDITION, the rest of its Data-Out is dropped, and the
	 * connection goes on serving other commands. */
	log_warn("%s: Data-Out for ITT 0x%08x out of sequence (offset %u, "
		 "length %u, DataSN %u, TTT 0x%08x, F=%d): sense 0x%04x",
		 c->peer_text, d.itt, d.offset, d.data_len, d.datasn, d.ttt,
		 d.final, asc);
	data_out_fail(cmd, asc);
	*discard = true;
	return NULL;
}

void data_out_rx_pdu(struct conn *c, const uint8_t *bhs, uint32_t len)
{
	struct cmd *cmd = c->rx.cmd;
	struct pdu_data_out d;
	struct cmd_data_out *w;
	struct r2t *r;

	c->rx.cmd = NULL;
	if (!cmd || cmd->data_out.error)
		return;
	w = &cmd->data_out;
	pdu_decode_data_out(bhs, &d);
	w->got += len;
	if (d.ttt == ISCSI_RSVD_TAG) {
		w->unsol_got += len;
		w->unsol_datasn++;
		if (d.final || w->unsol_got >= w->unsol_max)
			data_out_unsol_end(cmd);
		return;
	}
	r = r2t_find(w, d.ttt);
	if (r) {
		r->got += len;
		r->datasn++;
		if (r->got == r->len) {
			r->active = false;
			w->r2t_active--;
			data_out_send_r2ts(cmd);
		}
	}
	data_out_complete_check(cmd);
}
