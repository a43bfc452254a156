/*
 * SCSI commands (RFC 7143 11.2-11.4): a SCSI Command PDU becomes a struct
 * cmd, which enters the device server in its CmdSN turn and answers with
 * Data-In and a SCSI Response, residuals computed against the initiator's
 * expected length.
 *
 * Commands are kept in a small ITT hash; each embeds its SCSI task, so a
 * command costs no allocation beyond its pooled struct and its pooled data
 * buffer. Write data may arrive before or after dispatch and is read
 * straight into the command's buffer (data_out.c).
 */
#include <stdlib.h>
#include <string.h>

#include "tcq/bufpool.h"
#include "tcq/compiler.h"
#include "tcq/log.h"
#include "tcq/pdu.h"
#include "scsi/lun.h"
#include "scsi/sdev.h"
#include "scsi/stats.h"
#include "target/conn.h"
#include "target/session.h"
#include "target/session_priv.h"

static void cmd_fail_early(struct cmd *cmd, uint8_t key, uint16_t asc);

/* ---- commands ---------------------------------------------------------- */

struct cmd *cmd_lookup(struct session *s, uint32_t itt)
{
	struct cmd *c = s->cmds.itt[itt % ITT_HASH];

	while (c && c->itt != itt)
		c = c->hnext;
	return c;
}

static void cmd_hash_add(struct session *s, struct cmd *cmd)
{
	cmd->hnext = s->cmds.itt[cmd->itt % ITT_HASH];
	s->cmds.itt[cmd->itt % ITT_HASH] = cmd;
	cmd->in_hash = true;
}

static void cmd_hash_del(struct cmd *cmd)
{
	struct cmd **pp = &cmd->sess->cmds.itt[cmd->itt % ITT_HASH];

	if (!cmd->in_hash)
		return;
	while (*pp && *pp != cmd)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = cmd->hnext;
	cmd->in_hash = false;
}

static struct cmd *cmd_alloc(struct session *s, struct conn *c)
{
	struct sess_cmds *cs = &s->cmds;
	struct cmd *cmd;

	if (cs->pool_len)
		cmd = cs->pool[--cs->pool_len];
	else
		cmd = malloc(sizeof(*cmd));
	if (!cmd)
		return NULL;
	memset(cmd, 0, sizeof(*cmd));
	list_init(&cmd->held_node);
	lun_task_init(&cmd->task);
	cmd->sess = s;
	cmd->conn = c;
	c->refs++;
	cs->live++;
	return cmd;
}

/* Keeps up to 1024 freed commands for reuse. */
static void cmd_pool_put(struct sess_cmds *cs, struct cmd *cmd)
{
	if (cs->pool_len == cs->pool_cap) {
		unsigned cap = cs->pool_cap ? cs->pool_cap * 2 : 64;
		struct cmd **p = realloc(cs->pool, cap * sizeof(*p));

		if (p) {
			cs->pool = p;
			cs->pool_cap = cap;
		}
	}
	if (cs->pool_len < cs->pool_cap && cs->pool_len < 1024)
		cs->pool[cs->pool_len++] = cmd;
	else
		free(cmd);
}

void cmd_pool_free(struct session *s)
{
	for (unsigned i = 0; i < s->cmds.pool_len; i++)
		free(s->cmds.pool[i]);
	free(s->cmds.pool);
}

static void cmd_free(struct cmd *cmd)
{
	struct session *s = cmd->sess;
	struct conn *c = cmd->conn;

	cmd_hash_del(cmd);
	list_del(&cmd->held_node);
	if (cmd->dispatched)
		lun_task_release(&cmd->task);
	if (cmd->data_out.buf)
		bufpool_free(cmd->data_out.buf, cmd->data_out.buf_len);
	cmd->data_out.buf = NULL;
	cmd_pool_put(&s->cmds, cmd);
	s->cmds.live--;
	sess_update_window(s);
	sess_cmd_gone(s);
	conn_put(c);
}

/* A command is done with once its answer left, its task completed and
 * any unsolicited data it announced has been read. */
void cmd_finish_check(struct cmd *cmd)
{
	bool gone = cmd->sess->dead || cmd->conn->state == CONN_CLOSING;

	if (cmd->dispatched && !cmd->task_done)
		return;
	if (cmd->din_queued)	/* queued Data-In still reads its buffer */
		return;
	if (!gone && (!cmd->rsp_sent || !cmd->data_out.unsol_done))
		return;
	cmd_free(cmd);
}

/* ---- responses --------------------------------------------------------- */

static void cmd_residual(const struct cmd *cmd, uint32_t produced,
			 uint8_t *flags, uint32_t *residual)
{
	*flags = 0;
	*residual = 0;
	if (produced > cmd->edtl) {
		*flags = ISCSI_FLAG_OVERFLOW;
		*residual = produced - cmd->edtl;
	} else if (produced < cmd->edtl) {
		*flags = ISCSI_FLAG_UNDERFLOW;
		*residual = cmd->edtl - produced;
	}
}

static void cmd_send_response(struct cmd *cmd, uint8_t flags,
			      uint32_t residual)
{
	struct conn *c = cmd->conn;
	struct tcq_task *t = &cmd->task;
	struct txpdu *tx = conn_txpdu_alloc(c);
	struct pdu_scsi_rsp rsp = {
		.flags = flags,
		.response = ISCSI_RSP_COMPLETED,
		.status = t->status,
		.itt = cmd->itt,
		.residual = residual,
		.expdatasn = cmd->datasn,
	};

	if (!tx) {
		conn_close(c, "out of memory");
		return;
	}
	rsp.statsn = conn_next_statsn(c);
	rsp.expcmdsn = cmd->sess->win.exp_cmdsn;
	rsp.maxcmdsn = cmd->sess->win.max_cmdsn;
	pdu_encode_scsi_rsp(tx->bhs, &rsp);
	if (t->status == SAM_STAT_CHECK_CONDITION && t->sense_len) {
		/* Sense travels behind a 2-byte SenseLength, in the
		 * transport's own copy so the task can go at once. */
		uint8_t *d = malloc(2u + t->sense_len);

		if (!d) {
			conn_close(c, "out of memory");
			return;
		}
		put_be16(d, t->sense_len);
		memcpy(d + 2, t->sense, t->sense_len);
		tx->data = d;
		tx->own_data = true;
		tx->data_len = 2u + t->sense_len;
	}
	tx->cmd = cmd;
	tx->last_of_cmd = true;
	cmd->rsp_queued = true;
	conn_queue_txpdu(c, tx);
}

/* Data-In from the task's buffer, from where the last call stopped
 * (din_off, and its place in the MaxBurstLength sequence: RFC 7143
 * 11.7.5's F bit, DataSN and Buffer Offset run on across calls). With
 * final, up to len, the whole answer, the status collapsed into the last
 * PDU when with_status (GOOD); before the answer is whole (a cut-through
 * read's data_in_ready), only the PDUs that end within len, each of which
 * keeps the buffer until it left (din_queued). */
static void cmd_send_data_in(struct cmd *cmd, uint32_t len, bool final,
			     bool with_status, uint8_t flags, uint32_t residual)
{
	struct conn *c = cmd->conn;
	struct session *s = cmd->sess;
	uint32_t seg = c->params.max_send_dsl ? c->params.max_send_dsl : 8192;
	uint32_t burst = s->params.max_burst ? s->params.max_burst : 262144;
	const uint8_t *buf = cmd->task.buf;

	if (cmd->task.cut_piece)	/* a cut read: each piece its PDUs */
		seg = MIN(seg, cmd->task.cut_piece);

	while (cmd->din_off < len) {
		uint32_t off = cmd->din_off;
		uint32_t n = MIN(seg, burst - cmd->din_burst);
		struct txpdu *tx;
		bool last;
		struct pdu_data_in di = {
			.itt = cmd->itt,
			.ttt = ISCSI_RSVD_TAG,
			.lun = 0,
			.offset = off,
		};

		if (off + n > len) {
			if (!final)
				return;	/* its bytes are not all read yet */
			n = len - off;
		}
		last = final && off + n == len;
		tx = conn_txpdu_alloc(c);
		if (!tx) {
			conn_close(c, "out of memory");
			return;
		}
		cmd->din_burst += n;
		di.final = last || cmd->din_burst == burst;
		if (cmd->din_burst == burst)
			cmd->din_burst = 0;
		di.datasn = cmd->datasn++;
		di.expcmdsn = s->win.exp_cmdsn;
		di.maxcmdsn = s->win.max_cmdsn;
		di.data_len = n;
		if (last && with_status) {
			di.status_present = true;
			di.status = cmd->task.status;
			di.flags = flags;
			di.residual = residual;
			di.statsn = conn_next_statsn(c);
		}
		pdu_encode_data_in(tx->bhs, &di);
		tx->data = buf + off;
		tx->data_len = n;
		if (last && with_status) {
			tx->cmd = cmd;
			tx->last_of_cmd = true;
			cmd->rsp_queued = true;
		} else if (!final) {
			tx->cmd = cmd;
			cmd->din_queued++;
		}
		conn_queue_txpdu(c, tx);
		cmd->din_off = off + n;
	}
}

/* The device server's cut-through call: buf[0, bytes) is read, in
 * order, and the task still runs; nothing once it is aborted (no
 * Data-In after the TMF response) or its connection is going. */
static void cmd_data_ready(struct tcq_task *t, uint32_t bytes)
{
	struct cmd *cmd = container_of(t, struct cmd, task);

	if (t->aborted || !t->dir_in || !t->buf || cmd->sess->dead ||
	    cmd->conn->state == CONN_CLOSING)
		return;
	cmd_send_data_in(cmd, MIN(bytes, cmd->edtl), false, false, 0, 0);
}

void sess_cmd_din_gone(struct cmd *cmd, bool sent)
{
	cmd->din_queued--;
	if (sent)
		cmd_finish_check(cmd);
}

static void cmd_task_done(struct tcq_task *t)
{
	struct cmd *cmd = container_of(t, struct cmd, task);
	struct conn *c = cmd->conn;
	uint32_t produced, send;
	uint8_t flags;
	uint32_t residual;

	cmd->task_done = true;
	if (cmd->data_out.error && !cmd->sess->dead &&
	    c->state != CONN_CLOSING) {
		cmd_fail_early(cmd, SK_ABORTED_COMMAND, cmd->data_out.error);
		return;
	}
	if (t->aborted)
		cmd->data_out.unsol_done = true;	/* no Data-Out awaited */
	if (cmd->sess->dead || c->state == CONN_CLOSING ||
	    (t->aborted && t->status != SAM_STAT_TASK_ABORTED)) {
		/* Gone, or aborted by task management: no answer is owed. */
		cmd->rsp_sent = true;
		cmd_finish_check(cmd);
		return;
	}
	/* Residuals compare what the CDB asked to move with the
	 * initiator's expected length. */
	produced = lun_task_spdtl(t);
	cmd_residual(cmd, produced, &flags, &residual);
	send = t->dir_in ? MIN(t->data_in_len, cmd->edtl) : 0;
	if (send && t->buf && t->status == SAM_STAT_GOOD) {
		cmd_send_data_in(cmd, send, true, true, flags, residual);
	} else {
		if (send && t->buf)
			cmd_send_data_in(cmd, send, true, false, 0, 0);
		if (c->state != CONN_CLOSING)
			cmd_send_response(cmd, flags, residual);
	}
}

/* A command answered by the transport without reaching the device server
 * (its buffer could not be had, ...). */
static void cmd_fail_early(struct cmd *cmd, uint8_t key, uint16_t asc)
{
	struct tcq_task *t = &cmd->task;

	cmd->failed_early = true;
	t->status = SAM_STAT_CHECK_CONDITION;
	memset(t->sense, 0, 18);
	t->sense[0] = SENSE_FIXED_CURRENT;
	t->sense[2] = key;
	t->sense[7] = 10;
	t->sense[12] = (uint8_t)(asc >> 8);
	t->sense[13] = (uint8_t)asc;
	t->sense_len = 18;
	cmd_send_response(cmd, cmd->edtl ? ISCSI_FLAG_UNDERFLOW : 0, cmd->edtl);
}

void sess_cmd_sent(struct cmd *cmd)
{
	if (cmd->task.t_rx_ns)	/* sampled: its stages are counted */
		stats_task_sent(&cmd->task);
	cmd->rsp_sent = true;
	cmd_finish_check(cmd);
}

/* ---- the SCSI Command PDU ---------------------------------------------- */

uint8_t *cmd_rx_header(struct conn *c, const uint8_t *bhs, bool *discard,
		       int *err)
{
	struct session *s = c->sess;
	struct pdu_scsi_cmd pc;
	struct cmd *cmd;
	uint32_t dlen = pdu_data_len(bhs);
	struct pdu_cmd_ahs ahs;

	pdu_decode_scsi_cmd(bhs, &pc);
	if (s->discovery) {
		sess_reject(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR, discard);
		return NULL;
	}
	if (!pc.immediate && !sess_cmdsn_in_window(s, pc.cmdsn)) {
		/* RFC 7143 4.2.2.1: silently ignored. */
		log_debug("%s: CmdSN %u outside [%u, %u]: ignored",
			  c->peer_text, pc.cmdsn, s->win.exp_cmdsn,
			  s->win.max_cmdsn);
		*discard = true;
		return NULL;
	}
	if (cmd_lookup(s, pc.itt)) {
		sess_reject(c, bhs, ISCSI_REJECT_TASK_IN_PROGRESS, discard);
		return NULL;
	}
	if (dlen && (!pc.write || !s->params.immediate_data ||
		     dlen > s->params.first_burst || dlen > pc.edtl)) {
		sess_reject(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR, discard);
		return NULL;
	}
	if (!pc.final && (!pc.write || s->params.initial_r2t)) {
		/* Unsolicited Data-Out announced where it may not follow. */
		sess_reject(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR, discard);
		return NULL;
	}
	/* An Extended CDB AHS carries the CDB past 16 bytes; anything
	 * malformed there is a protocol error. */
	if (pdu_decode_cmd_ahs(c->rx.ahs, pdu_ahs_len(bhs) ? c->rx.ahs_len : 0,
			       TASK_CDB_MAX - 16, &ahs) < 0) {
		sess_reject(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR, discard);
		return NULL;
	}
	cmd = cmd_alloc(s, c);
	if (!cmd) {
		*err = -1;
		conn_close(c, "out of memory");
		return NULL;
	}
	memcpy(cmd->bhs, bhs, ISCSI_BHS_LEN);
	memcpy(cmd->task.cdb, bhs + BHS_CDB, 16);
	if (ahs.ext_cdb)
		memcpy(cmd->task.cdb + 16, ahs.ext_cdb, ahs.ext_cdb_len);
	cmd->task.cdb_len = (uint16_t)(16 + ahs.ext_cdb_len);
	cmd->task.t_rx_ns = stats_path_sampled(pc.cmdsn) ? c->r->now_ns : 0;
	cmd->itt = pc.itt;
	cmd->cmdsn = pc.cmdsn;
	cmd->immediate = pc.immediate;
	cmd->edtl = pc.edtl;
	cmd_hash_add(s, cmd);
	if (pc.write) {
		struct cmd_data_out *w = &cmd->data_out;

		w->unsol_max = s->params.initial_r2t ? dlen :
			       MIN(s->params.first_burst, pc.edtl);
		/* The device's limit, which its Block Limits page reports
		 * (never 0 in tcqd: max_transfer_length is at least 4K). */
		if (pc.edtl > s->target->dev.max_xfer_len) {
			/* answered at dispatch */
			cmd->failed_early = true;
		} else if (pc.edtl) {
			w->buf_len = pc.edtl;
			w->buf = bufpool_alloc(pc.edtl);
			if (!w->buf)
				cmd->failed_early = true;
		}
	}
	c->rx.cmd = cmd;
	if (dlen && !cmd->data_out.buf)
		*discard = true;
	return cmd->data_out.buf;
}

/* ---- into the device server -------------------------------------------- */

void cmd_dispatch(struct session *s, struct cmd *cmd)
{
	struct tcq_task *t = &cmd->task;
	const uint8_t *bhs = cmd->bhs;
	uint64_t lun_nr = pdu_lun_decode(get_be64(bhs + BHS_LUN));

	sess_update_window(s);
	if (cmd->abort_pending) {
		/* Aborted by task management before its turn: it never
		 * runs and owes no answer. */
		cmd->rsp_sent = true;
		cmd->data_out.unsol_done = true;
		cmd_finish_check(cmd);
		return;
	}
	if (cmd->data_out.error) {
		cmd_fail_early(cmd, SK_ABORTED_COMMAND, cmd->data_out.error);
		return;
	}
	if (cmd->failed_early) {
		/* Transfer too large for our buffers: the Block Limits page
		 * tells initiators the maximum. */
		cmd_fail_early(cmd, SK_ILLEGAL_REQUEST,
			       ASC_INVALID_FIELD_IN_CDB);
		return;
	}
	t->lun_nr = lun_nr;
	t->dev = s->target ? &s->target->dev : NULL;
	t->lun = sess_lun(s, lun_nr, &t->map_ro);
	t->nexus = s;
	/* t->cdb (with any extended CDB) was filled when the header came. */
	t->attr = bhs[BHS_FLAGS] & ISCSI_CMD_ATTR_MASK;
	if (t->attr == 0)
		t->attr = TASK_ATTR_SIMPLE;	/* untagged runs as SIMPLE */
	t->tag = cmd->itt;
	t->sn = cmd->cmdsn;
	t->exp_len = cmd->edtl;
	t->dir_in = (bhs[BHS_FLAGS] & ISCSI_CMD_READ) != 0;
	t->dir_out = (bhs[BHS_FLAGS] & ISCSI_CMD_WRITE) != 0;
	t->buf = cmd->data_out.buf;
	t->buf_len = cmd->data_out.buf_len;
	t->done = cmd_task_done;
	/* Cut-through reads: pieces sized by the initiator's segment. */
	t->data_in_ready = cmd_data_ready;
	t->cut_seg = cmd->conn->params.max_send_dsl;
	cmd->dispatched = true;
	cmd->data_out.wanted = lun_task_arrive(sess_taskset(s, t->lun), t);
	if (cmd->task_done)
		return;
	if (cmd->data_out.wanted)
		data_out_advance(cmd);
}
