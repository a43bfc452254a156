/*
 * Sessions and the full feature phase (see session.h).
 *
 * A session lives on the reactor of its (single, MaxConnections=1)
 * connection. Commands are kept in a small ITT hash; each embeds its SCSI
 * task, so a command costs no allocation beyond its pooled struct and its
 * pooled data buffer. Commands enter the device server strictly in CmdSN
 * order; write data may arrive before or after that point and is read
 * straight into the command's buffer.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tcq/bufpool.h"
#include "tcq/compiler.h"
#include "tcq/log.h"
#include "tcq/pdu.h"
#include "scsi/lun.h"
#include "scsi/sdev.h"
#include "scsi/taskset.h"
#include "target/conn.h"
#include "target/login.h"
#include "target/session.h"
#include "target/session_priv.h"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct list_node registry = LIST_HEAD_INIT(registry);
static struct list_node all_sessions = LIST_HEAD_INIT(all_sessions);
static uint16_t next_tsih = 1;
static uint64_t next_gen = 1;
static unsigned nsessions;

static void sess_dispatch(struct session *s, struct cmd *cmd);
static void sess_run_pdu(struct conn *c, const uint8_t *bhs, uint8_t *data,
			 uint32_t len);
static void sess_run_pending(struct session *s, struct conn *c);
static void sess_hold(struct session *s, struct cmd *cmd);
static void sess_free_if_idle(struct session *s);
static void sess_free_deferred(struct reactor_defer *d);
static void cmd_fail_early(struct cmd *cmd, uint8_t key, uint16_t asc);
static void logout_try(struct session *s);

/* ---- registry ---------------------------------------------------------- */

static bool tsih_in_use(uint16_t tsih)
{
	struct list_node *pos;

	list_for_each(pos, &registry) {
		if (list_entry(pos, struct session, reg_node)->tsih == tsih)
			return true;
	}
	return false;
}

struct kill_msg {
	struct session *s;
	uint64_t gen;
};

static void sess_kill_on_reactor(void *arg)
{
	struct kill_msg *m = arg;
	struct list_node *pos;
	bool found = false;

	/* The old session may have ended on its own since the post: only
	 * touch it if it is still among the living with the same identity.
	 * Sessions are freed on this (their) thread, so it stays valid. */
	pthread_mutex_lock(&reg_lock);
	list_for_each(pos, &all_sessions) {
		struct session *o = list_entry(pos, struct session, all_node);

		if (o == m->s && o->gen == m->gen) {
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&reg_lock);
	if (found && !m->s->dead && m->s->conn)
		conn_close(m->s->conn, "session reinstated");
	free(m);
}

/* Session limits of [global] and the target (O1); reg_lock held. */
static const char *sess_over_limit(const struct session *s)
{
	const struct target *t = s->target;
	unsigned total = 0, per_t = 0, per_i = 0;
	struct list_node *pos;

	list_for_each(pos, &registry) {
		const struct session *o =
			list_entry(pos, struct session, reg_node);

		total++;
		if (t && o->target == t && !o->discovery) {
			per_t++;
			if (!strcmp(o->iname, s->iname))
				per_i++;
		}
	}
	if (tcqd->set.max_sessions && total >= tcqd->set.max_sessions)
		return "max_sessions of the daemon reached";
	if (t && t->max_sessions && per_t >= t->max_sessions)
		return "max_sessions of the target reached";
	if (t && t->max_sessions_per_initiator &&
	    per_i >= t->max_sessions_per_initiator)
		return "max_sessions_per_initiator reached";
	return NULL;
}

int sess_create(struct conn *c, const struct sess_login *sl, uint16_t *tsih)
{
	const char *limit;
	struct session *s = calloc(1, sizeof(*s));
	struct list_node *pos, *tmp;

	if (!s)
		return ISCSI_LS_OUT_OF_RESOURCES;
	s->r = c->r;
	s->conn = c;
	s->target = sl->target;
	s->discovery = sl->discovery;
	snprintf(s->iname, sizeof(s->iname), "%s", sl->initiator_name);
	memcpy(s->isid, sl->isid, 6);
	snprintf(s->iport, sizeof(s->iport),
		 "%s,i,0x%02x%02x%02x%02x%02x%02x", s->iname, s->isid[0],
		 s->isid[1], s->isid[2], s->isid[3], s->isid[4], s->isid[5]);
	s->params = sl->params;
	s->exp_cmdsn = sl->cmdsn;
	s->window = tcqd->set.cmd_window ? tcqd->set.cmd_window : 128;
	s->max_cmdsn = s->exp_cmdsn + s->window - 1;
	s->next_ttt = 1;
	list_init(&s->pending);
	list_init(&s->pending_pdus);
	list_init(&s->reg_node);
	list_init(&s->all_node);
	reactor_defer_init(&s->free_defer, sess_free_deferred, s);

	pthread_mutex_lock(&reg_lock);
	/* Reinstatement: same initiator, ISID and target replaces the old
	 * session (RFC 7143 6.3.5). */
	list_for_each_safe(pos, tmp, &registry) {
		struct session *o = list_entry(pos, struct session, reg_node);

		if (o->target == s->target && o->discovery == s->discovery &&
		    !memcmp(o->isid, s->isid, 6) &&
		    !strcmp(o->iname, s->iname)) {
			struct kill_msg *m = malloc(sizeof(*m));

			list_del(&o->reg_node);
			nsessions--;
			log_info("%s: reinstating session TSIH %u of %s",
				 c->peer_text, o->tsih, o->iname);
			if (m) {
				m->s = o;
				m->gen = o->gen;
				if (reactor_post(o->r, sess_kill_on_reactor, m))
					free(m);
			}
		}
	}
	limit = sess_over_limit(s);
	if (limit) {
		pthread_mutex_unlock(&reg_lock);
		log_warn("%s: session of %s refused: %s", c->peer_text,
			 s->iname, limit);
		free(s);
		return ISCSI_LS_OUT_OF_RESOURCES;
	}
	do {
		s->tsih = next_tsih++;
		if (next_tsih == 0)
			next_tsih = 1;
	} while (tsih_in_use(s->tsih));
	s->gen = next_gen++;
	list_add_tail(&s->reg_node, &registry);
	list_add_tail(&s->all_node, &all_sessions);
	nsessions++;
	pthread_mutex_unlock(&reg_lock);

	c->sess = s;
	*tsih = s->tsih;
	log_info("%s: %s session TSIH %u for %s%s%s", c->peer_text,
		 s->discovery ? "discovery" : "normal", s->tsih, s->iname,
		 s->target ? " to " : "", s->target ? s->target->dev.name : "");
	return 0;
}

struct abort_msg {
	struct session *s;
	uint64_t gen;
	struct lun *l;
};

static bool sess_alive_locked(const struct session *s, uint64_t gen)
{
	struct list_node *pos;

	list_for_each(pos, &all_sessions) {
		if (list_entry(pos, struct session, all_node) == s)
			return s->gen == gen;
	}
	return false;
}

static void sess_abort_on_reactor(void *arg)
{
	struct abort_msg *m = arg;
	bool alive;

	pthread_mutex_lock(&reg_lock);
	alive = sess_alive_locked(m->s, m->gen);
	pthread_mutex_unlock(&reg_lock);
	if (alive && !m->s->dead)
		tmf_abort_for_other(m->s, m->l);
	free(m);
}

static bool port_matches(const struct session *s, const char *iport)
{
	if (!iport)
		return true;
	if (strstr(iport, ",i,0x"))
		return strcasecmp(iport, s->iport) == 0;
	return strcasecmp(iport, s->iname) == 0;
}

void sess_abort_lun_tasks(struct lun *l, const char *iport,
			  const void *except)
{
	struct list_node *pos;

	pthread_mutex_lock(&reg_lock);
	list_for_each(pos, &registry) {
		struct session *o = list_entry(pos, struct session, reg_node);
		struct abort_msg *m;

		if (o == except || o->discovery || !o->target ||
		    &o->target->dev != l->dev ||
		    !port_matches(o, iport))
			continue;
		m = malloc(sizeof(*m));
		if (!m)
			continue;	/* best effort: the UA still tells */
		m->s = o;
		m->gen = o->gen;
		m->l = l;
		if (reactor_post(o->r, sess_abort_on_reactor, m))
			free(m);
	}
	pthread_mutex_unlock(&reg_lock);
}

bool sess_tsih_exists(uint16_t tsih)
{
	bool found;

	pthread_mutex_lock(&reg_lock);
	found = tsih_in_use(tsih);
	pthread_mutex_unlock(&reg_lock);
	return found;
}

unsigned sess_count(void)
{
	unsigned n;

	pthread_mutex_lock(&reg_lock);
	n = nsessions;
	pthread_mutex_unlock(&reg_lock);
	return n;
}

const char *sess_initiator_name(const void *nexus)
{
	return ((const struct session *)nexus)->iname;
}

const char *sess_initiator_port(const void *nexus)
{
	return ((const struct session *)nexus)->iport;
}

static void sess_sdev_abort(struct sdev *d, struct lun *l, const char *iport,
			    const void *except)
{
	(void)d;	/* l->dev: the target whose sessions are searched */
	sess_abort_lun_tasks(l, iport, except);
}

const struct sdev_ops sess_sdev_ops = {
	.initiator_port = sess_initiator_port,
	.abort_tasks = sess_sdev_abort,
};

uint16_t sess_tsih(const void *nexus)
{
	return ((const struct session *)nexus)->tsih;
}

const struct iscsi_params *sess_params(const struct session *s)
{
	return &s->params;
}

uint32_t sess_exp_cmdsn(const struct conn *c)
{
	return c->sess ? c->sess->exp_cmdsn : 0;
}

uint32_t sess_max_cmdsn(const struct conn *c)
{
	return c->sess ? c->sess->max_cmdsn : 0;
}

/* MaxCmdSN grows as commands finish; it never shrinks (RFC 7143 4.2.2.1). */
static void sess_update_window(struct session *s)
{
	uint32_t room = s->window > s->active ? s->window - s->active : 0;
	uint32_t cand = s->exp_cmdsn + room - 1;

	if (sn_gt(cand, s->max_cmdsn))
		s->max_cmdsn = cand;
}

/* ---- commands ---------------------------------------------------------- */

struct cmd *cmd_lookup(struct session *s, uint32_t itt)
{
	struct cmd *c = s->itt[itt % ITT_HASH];

	while (c && c->itt != itt)
		c = c->hnext;
	return c;
}

static void cmd_hash_del(struct cmd *cmd)
{
	struct cmd **pp = &cmd->sess->itt[cmd->itt % ITT_HASH];

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
	struct cmd *cmd;

	if (s->pool_len)
		cmd = s->pool[--s->pool_len];
	else
		cmd = malloc(sizeof(*cmd));
	if (!cmd)
		return NULL;
	memset(cmd, 0, sizeof(*cmd));
	list_init(&cmd->pend_node);
	lun_task_init(&cmd->task);
	cmd->sess = s;
	cmd->conn = c;
	c->refs++;
	s->live_cmds++;
	return cmd;
}

static void cmd_free(struct cmd *cmd)
{
	struct session *s = cmd->sess;
	struct conn *c = cmd->conn;

	cmd_hash_del(cmd);
	list_del(&cmd->pend_node);
	if (cmd->tmf)
		tmf_cmd_gone(cmd);
	if (cmd->dispatched)
		lun_task_release(&cmd->task);
	if (cmd->wbuf)
		bufpool_free(cmd->wbuf, cmd->wbuf_len);
	cmd->wbuf = NULL;
	if (s->pool_len == s->pool_cap) {
		unsigned cap = s->pool_cap ? s->pool_cap * 2 : 64;
		struct cmd **p = realloc(s->pool, cap * sizeof(*p));

		if (p) {
			s->pool = p;
			s->pool_cap = cap;
		}
	}
	if (s->pool_len < s->pool_cap && s->pool_len < 1024)
		s->pool[s->pool_len++] = cmd;
	else
		free(cmd);
	s->live_cmds--;
	if (s->active)
		s->active--;
	sess_update_window(s);
	if (s->logout_waiting)
		logout_try(s);
	sess_free_if_idle(s);
	conn_put(c);
}

/* A command is done with once its answer left, its task completed and
 * any unsolicited data it announced has been read. */
void cmd_finish_check(struct cmd *cmd)
{
	bool gone = cmd->sess->dead || cmd->conn->state == CONN_CLOSING;

	if (cmd->dispatched && !cmd->task_done)
		return;
	if (!gone && (!cmd->rsp_sent || !cmd->unsol_done))
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
	rsp.expcmdsn = cmd->sess->exp_cmdsn;
	rsp.maxcmdsn = cmd->sess->max_cmdsn;
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

/* Data-In from the task's buffer, status collapsed into the last PDU when
 * it is GOOD. */
static void cmd_send_data_in(struct cmd *cmd, uint32_t len, bool with_status,
			     uint8_t flags, uint32_t residual)
{
	struct conn *c = cmd->conn;
	struct session *s = cmd->sess;
	uint32_t seg = c->params.max_send_dsl ? c->params.max_send_dsl : 8192;
	uint32_t burst = s->params.max_burst ? s->params.max_burst : 262144;
	uint32_t off = 0, in_burst = 0;
	const uint8_t *buf = cmd->task.buf;

	while (off < len) {
		uint32_t n = MIN(seg, len - off);
		struct txpdu *tx;
		bool last;
		struct pdu_data_in di = {
			.itt = cmd->itt,
			.ttt = ISCSI_RSVD_TAG,
			.lun = 0,
			.offset = off,
		};

		n = MIN(n, burst - in_burst);
		last = off + n == len;
		tx = conn_txpdu_alloc(c);
		if (!tx) {
			conn_close(c, "out of memory");
			return;
		}
		in_burst += n;
		di.final = last || in_burst == burst;
		if (in_burst == burst)
			in_burst = 0;
		di.datasn = cmd->datasn++;
		di.expcmdsn = s->exp_cmdsn;
		di.maxcmdsn = s->max_cmdsn;
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
		}
		conn_queue_txpdu(c, tx);
		off += n;
	}
}

static void cmd_task_done(struct tcq_task *t)
{
	struct cmd *cmd = container_of(t, struct cmd, task);
	struct conn *c = cmd->conn;
	uint32_t produced, send;
	uint8_t flags;
	uint32_t residual;

	cmd->task_done = true;
	if (cmd->data_error && !cmd->sess->dead && c->state != CONN_CLOSING) {
		cmd_fail_early(cmd, SK_ABORTED_COMMAND, cmd->data_error);
		return;
	}
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
		cmd_send_data_in(cmd, send, true, flags, residual);
	} else {
		if (send && t->buf)
			cmd_send_data_in(cmd, send, false, 0, 0);
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
	cmd->rsp_sent = true;
	cmd_finish_check(cmd);
}

/* ---- write data: R2T ---------------------------------------------------- */

static void cmd_data_complete_check(struct cmd *cmd)
{
	if (cmd->got == cmd->edtl && cmd->dispatched && cmd->wants_data &&
	    !cmd->task.data_ready && !cmd->task_done) {
		cmd->task.data_ready = true;
		lun_task_data_ready(&cmd->task);
	}
}

static void cmd_send_r2ts(struct cmd *cmd)
{
	struct conn *c = cmd->conn;
	struct session *s = cmd->sess;
	uint32_t max_out = s->params.max_outstanding_r2t ?
			   s->params.max_outstanding_r2t : 1;
	uint32_t burst = s->params.max_burst ? s->params.max_burst : 262144;

	if (max_out > MAX_R2T)
		max_out = MAX_R2T;
	if (!cmd->unsol_done || !cmd->wants_data || cmd->task_done ||
	    cmd->data_error)
		return;
	if (cmd->r2t_next < cmd->unsol_got)
		cmd->r2t_next = cmd->unsol_got;
	while (cmd->r2t_active < max_out && cmd->r2t_next < cmd->edtl) {
		struct r2t *r = NULL;
		uint8_t bhs[ISCSI_BHS_LEN];
		struct pdu_r2t p;

		for (unsigned i = 0; i < MAX_R2T; i++) {
			if (!cmd->r2t[i].active) {
				r = &cmd->r2t[i];
				break;
			}
		}
		if (!r)
			return;
		r->active = true;
		r->offset = cmd->r2t_next;
		r->len = MIN(burst, cmd->edtl - cmd->r2t_next);
		r->got = 0;
		r->datasn = 0;
		r->ttt = s->next_ttt++;
		if (s->next_ttt == ISCSI_RSVD_TAG)
			s->next_ttt = 1;
		cmd->r2t_next += r->len;
		cmd->r2t_active++;
		memset(&p, 0, sizeof(p));
		p.lun = get_be64(cmd->bhs + BHS_LUN);
		p.itt = cmd->itt;
		p.ttt = r->ttt;
		p.statsn = c->statsn;
		p.expcmdsn = s->exp_cmdsn;
		p.maxcmdsn = s->max_cmdsn;
		p.r2tsn = cmd->r2tsn++;
		p.offset = r->offset;
		p.length = r->len;
		pdu_encode_r2t(bhs, &p);
		conn_send_pdu(c, bhs, NULL, 0);
	}
}

/* ---- SCSI Command ------------------------------------------------------- */

static void sess_reject_cmd(struct conn *c, const uint8_t *bhs,
			    uint8_t reason, bool *discard)
{
	/* RFC 7143 6.3: the CmdSN of a rejected command is not considered
	 * received; the initiator sees a gap it must recover from. */
	conn_send_reject(c, bhs, reason);
	*discard = true;
}

static void sess_cmd_unsol_end(struct cmd *cmd)
{
	cmd->unsol_done = true;
	if (cmd->dispatched) {
		cmd_send_r2ts(cmd);
		cmd_data_complete_check(cmd);
	}
	cmd_finish_check(cmd);
}

/*
 * Walks the AHS of a SCSI Command (RFC 7143 11.2.1.2): an Extended CDB AHS
 * carries the CDB bytes past the first 16; a Bidirectional Read Expected
 * Data Transfer Length AHS is accepted (no bidirectional command exists
 * here). Anything malformed is a protocol error. Returns the extra CDB
 * length in *ext_len.
 */
static int sess_ext_cdb(const struct conn *c, const uint8_t *bhs,
			uint8_t *ext, uint32_t *ext_len)
{
	const uint8_t *p = c->rx_ahs;
	uint32_t left = c->rx_ahs_len;

	*ext_len = 0;
	if (!pdu_ahs_len(bhs))
		return 0;
	while (left) {
		uint32_t len, total;

		if (left < 4)
			return -1;
		len = get_be16(p);
		total = (3 + len + 3) & ~3u;
		if (!len || total > left)
			return -1;
		if (p[2] == ISCSI_AHS_EXTENDED_CDB) {
			/* AHSLength counts a reserved byte before the CDB. */
			if (*ext_len || len - 1 > TASK_CDB_MAX - 16)
				return -1;
			memcpy(ext, p + 4, len - 1);
			*ext_len = len - 1;
		} else if (p[2] != ISCSI_AHS_BIDI_READ_LEN || len != 5) {
			return -1;
		}
		p += total;
		left -= total;
	}
	return 0;
}

static uint8_t *sess_scsi_cmd_header(struct conn *c, const uint8_t *bhs,
				     bool *discard, int *err)
{
	struct session *s = c->sess;
	struct pdu_scsi_cmd pc;
	struct cmd *cmd;
	uint32_t dlen = pdu_data_len(bhs);
	uint8_t ext_cdb[TASK_CDB_MAX - 16];
	uint32_t ext_len = 0;

	pdu_decode_scsi_cmd(bhs, &pc);
	if (s->discovery) {
		sess_reject_cmd(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR, discard);
		return NULL;
	}
	if (!pc.immediate &&
	    (sn_lt(pc.cmdsn, s->exp_cmdsn) || sn_gt(pc.cmdsn, s->max_cmdsn))) {
		/* RFC 7143 4.2.2.1: silently ignored. */
		log_debug("%s: CmdSN %u outside [%u, %u]: ignored", c->peer_text,
			  pc.cmdsn, s->exp_cmdsn, s->max_cmdsn);
		*discard = true;
		return NULL;
	}
	if (cmd_lookup(s, pc.itt)) {
		sess_reject_cmd(c, bhs, ISCSI_REJECT_TASK_IN_PROGRESS, discard);
		return NULL;
	}
	if (dlen && (!pc.write || !s->params.immediate_data ||
		     dlen > s->params.first_burst || dlen > pc.edtl)) {
		sess_reject_cmd(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR, discard);
		return NULL;
	}
	if (!pc.final && (!pc.write || s->params.initial_r2t)) {
		/* Unsolicited Data-Out announced where it may not follow. */
		sess_reject_cmd(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR, discard);
		return NULL;
	}
	if (sess_ext_cdb(c, bhs, ext_cdb, &ext_len) < 0) {
		sess_reject_cmd(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR, discard);
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
	memcpy(cmd->task.cdb + 16, ext_cdb, ext_len);
	cmd->task.cdb_len = (uint16_t)(16 + ext_len);
	cmd->itt = pc.itt;
	cmd->cmdsn = pc.cmdsn;
	cmd->immediate = pc.immediate;
	cmd->edtl = pc.edtl;
	cmd->hnext = s->itt[pc.itt % ITT_HASH];
	s->itt[pc.itt % ITT_HASH] = cmd;
	cmd->in_hash = true;
	s->active++;
	if (pc.write) {
		cmd->unsol_max = s->params.initial_r2t ? dlen :
				 MIN(s->params.first_burst, pc.edtl);
		if (pc.edtl > tcqd->set.max_xfer_len) {
			cmd->failed_early = true;	/* answered at dispatch */
		} else if (pc.edtl) {
			cmd->wbuf_len = pc.edtl;
			cmd->wbuf = bufpool_alloc(pc.edtl);
			if (!cmd->wbuf)
				cmd->failed_early = true;
		}
	}
	c->rx_cmd = cmd;
	if (dlen && !cmd->wbuf)
		*discard = true;
	return cmd->wbuf;
}

static void sess_scsi_cmd_pdu(struct conn *c, const uint8_t *bhs,
			      uint32_t len)
{
	struct session *s = c->sess;
	struct cmd *cmd = c->rx_cmd;

	c->rx_cmd = NULL;
	if (!cmd || cmd->itt != pdu_itt(bhs))
		return;
	cmd->got = len;
	cmd->unsol_got = len;
	cmd->unsol_done = (bhs[BHS_FLAGS] & ISCSI_FLAG_FINAL) != 0;
	if (cmd->immediate) {
		sess_dispatch(s, cmd);
		return;
	}
	if (cmd->cmdsn == s->exp_cmdsn) {
		s->exp_cmdsn++;
		sess_dispatch(s, cmd);
		sess_run_pending(s, c);
		return;
	}
	/* Ahead of ExpCmdSN (within the window): hold it in order. */
	sess_hold(s, cmd);
}

/* Runs whatever was waiting for the CmdSN that just became current. */
static void sess_run_pending(struct session *s, struct conn *c)
{
	for (;;) {
		bool progressed = false;

		if (!list_empty(&s->pending)) {
			struct cmd *n = list_first_entry(&s->pending,
					struct cmd, pend_node);
			if (n->cmdsn == s->exp_cmdsn) {
				list_del(&n->pend_node);
				s->exp_cmdsn++;
				sess_dispatch(s, n);
				progressed = true;
			}
		}
		if (!list_empty(&s->pending_pdus)) {
			struct pend_pdu *p = list_first_entry(
				&s->pending_pdus, struct pend_pdu, node);
			if (p->cmdsn == s->exp_cmdsn) {
				list_del(&p->node);
				s->exp_cmdsn++;
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

static void sess_hold(struct session *s, struct cmd *cmd)
{
	struct list_node *pos;
	list_for_each(pos, &s->pending) {
		struct cmd *o = list_entry(pos, struct cmd, pend_node);

		if (o->cmdsn == cmd->cmdsn) {
			/* Duplicate within the window: ignored. */
			cmd->unsol_done = true;
			cmd->rsp_sent = true;
			cmd_finish_check(cmd);
			return;
		}
		if (sn_gt(o->cmdsn, cmd->cmdsn))
			break;
	}
	list_insert_between(&cmd->pend_node, pos->prev, pos);
}

static struct taskset *sess_taskset(struct session *s, struct lun *l)
{
	if (!l || l->id >= TCQ_MAX_LUNS)
		return NULL;
	if (!s->ts[l->id])
		s->ts[l->id] = lun_nexus_join(l, s->r, s);
	return s->ts[l->id];
}

struct taskset *sess_taskset_of(struct session *s, struct lun *l)
{
	return (l && l->id < TCQ_MAX_LUNS) ? s->ts[l->id] : NULL;
}

static void sess_dispatch(struct session *s, struct cmd *cmd)
{
	struct tcq_task *t = &cmd->task;
	const uint8_t *bhs = cmd->bhs;
	uint64_t lun_nr = pdu_lun_decode(get_be64(bhs + BHS_LUN));

	sess_update_window(s);
	if (cmd->abort_pending) {
		/* Aborted by task management before its turn: it never
		 * runs and owes no answer. */
		cmd->rsp_sent = true;
		cmd->unsol_done = true;
		cmd_finish_check(cmd);
		return;
	}
	if (cmd->data_error) {
		cmd_fail_early(cmd, SK_ABORTED_COMMAND, cmd->data_error);
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
	t->lun = sdev_lun(t->dev, lun_nr);
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
	t->buf = cmd->wbuf;
	t->buf_len = cmd->wbuf_len;
	t->done = cmd_task_done;
	cmd->dispatched = true;
	cmd->wants_data = lun_task_arrive(sess_taskset(s, t->lun), t);
	if (cmd->task_done)
		return;
	if (cmd->wants_data) {
		cmd_send_r2ts(cmd);
		cmd_data_complete_check(cmd);
	}
}

/* ---- Data-Out ---------------------------------------------------------- */

/* Fails a command whose Data-Out broke the sequence rules. */
static void cmd_data_fail(struct cmd *cmd, uint16_t asc)
{
	struct tcq_task *t = &cmd->task;

	if (cmd->data_error)
		return;
	cmd->data_error = asc;
	cmd->unsol_done = true;
	if (!cmd->dispatched)
		return;		/* answered when its CmdSN comes up */
	if (cmd->task_done || !lun_task_abort(t))
		cmd_finish_check(cmd);
}

static uint8_t *sess_data_out_header(struct conn *c, const uint8_t *bhs,
				     bool *discard, int *err)
{
	struct session *s = c->sess;
	struct pdu_data_out d;
	struct cmd *cmd;
	bool bad_offset;

	pdu_decode_data_out(bhs, &d);
	cmd = cmd_lookup(s, d.itt);
	if (!cmd || !cmd->wbuf_len) {
		if (cmd && cmd->failed_early) {
			/* Read into scratch and dropped, but counted (see
			 * task_done below). */
			c->rx_cmd = cmd;
			return NULL;
		}
		/* Unknown task: typically Data-Out still in flight for a
		 * command that was aborted or already answered. */
		log_debug("%s: Data-Out for unknown ITT 0x%08x dropped",
			  c->peer_text, d.itt);
		*discard = true;
		return NULL;
	}
	if (cmd->data_error) {
		*discard = true;	/* already failed: drain */
		return NULL;
	}
	if (d.ttt == ISCSI_RSVD_TAG) {
		bad_offset = d.offset != cmd->unsol_got ||
			     (uint64_t)d.offset + d.data_len > cmd->unsol_max;
		if (cmd->unsol_done || bad_offset ||
		    d.datasn != cmd->unsol_datasn)
			goto protocol_error;
	} else {
		struct r2t *r = NULL;

		for (unsigned i = 0; i < MAX_R2T; i++) {
			if (cmd->r2t[i].active && cmd->r2t[i].ttt == d.ttt) {
				r = &cmd->r2t[i];
				break;
			}
		}
		bad_offset = !r || d.offset != r->offset + r->got ||
			     (uint64_t)d.data_len > r->len - r->got;
		if (bad_offset || d.datasn != r->datasn)
			goto protocol_error;
	}
	c->rx_cmd = cmd;
	if (cmd->task_done) {
		/* Answered early (a unit attention, ...): the data goes to
		 * the scratch buffer and is dropped, but sess_data_out_pdu
		 * still counts it, or the command would wait forever for
		 * the end of its unsolicited data (found by fuzz_conn). */
		return NULL;
	}
	return cmd->wbuf + d.offset;

protocol_error:
	/* The command must not run on damaged data: it ends with CHECK
	 * CONDITION, the rest of its Data-Out is dropped, and the
	 * connection goes on serving other commands. */
	log_warn("%s: Data-Out for ITT 0x%08x out of sequence (offset %u, "
		 "DataSN %u, TTT 0x%08x)", c->peer_text, d.itt, d.offset,
		 d.datasn, d.ttt);
	cmd_data_fail(cmd, bad_offset ? ASC_DATA_OFFSET_ERROR :
					 ASC_DATA_PHASE_ERROR);
	*discard = true;
	return NULL;
}

static void sess_data_out_pdu(struct conn *c, const uint8_t *bhs,
			      uint32_t len)
{
	struct cmd *cmd = c->rx_cmd;
	struct pdu_data_out d;

	c->rx_cmd = NULL;
	if (!cmd || cmd->data_error)
		return;
	pdu_decode_data_out(bhs, &d);
	cmd->got += len;
	if (d.ttt == ISCSI_RSVD_TAG) {
		cmd->unsol_got += len;
		cmd->unsol_datasn++;
		if (d.final || cmd->unsol_got >= cmd->unsol_max)
			sess_cmd_unsol_end(cmd);
		return;
	}
	for (unsigned i = 0; i < MAX_R2T; i++) {
		struct r2t *r = &cmd->r2t[i];

		if (!r->active || r->ttt != d.ttt)
			continue;
		r->got += len;
		r->datasn++;
		if (r->got == r->len) {
			r->active = false;
			cmd->r2t_active--;
			cmd_send_r2ts(cmd);
		}
		break;
	}
	cmd_data_complete_check(cmd);
}

/* ---- NOP, Logout, TMF -------------------------------------------------- */

static void sess_nop_out(struct conn *c, const uint8_t *bhs, uint8_t *data,
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
	r.expcmdsn = c->sess->exp_cmdsn;
	r.maxcmdsn = c->sess->max_cmdsn;
	r.data_len = len;
	pdu_encode_nop_in(out, &r);
	conn_send_pdu(c, out, data, len);	/* ping data echoed */
}

static void logout_try(struct session *s)
{
	struct conn *c = s->conn;
	struct pdu_logout_req q;
	struct pdu_logout_rsp r;
	uint8_t out[ISCSI_BHS_LEN];

	if (!c || c->state != CONN_FFP)
		return;
	/* Commands still in flight finish first; the Logout answer is the
	 * last thing the initiator hears on this connection. */
	if (s->live_cmds)
		return;
	s->logout_waiting = false;
	pdu_decode_logout_req(s->logout_bhs, &q);
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
		for (unsigned i = 0; i < TCQ_MAX_LUNS; i++) {
			if (s->ts[i]) {
				lun_nexus_leave(s->ts[i]);
				s->ts[i] = NULL;
			}
		}
	}
	r.statsn = conn_next_statsn(c);
	r.expcmdsn = s->exp_cmdsn;
	r.maxcmdsn = s->max_cmdsn;
	pdu_encode_logout_rsp(out, &r);
	conn_send_pdu(c, out, NULL, 0);
	if (r.response == ISCSI_LOGOUT_RSP_SUCCESS) {
		log_info("%s: logout (reason %u)", c->peer_text, q.reason);
		c->state = CONN_LOGGED_OUT;	/* closed once sent */
	}
}

static void sess_logout(struct conn *c, const uint8_t *bhs)
{
	struct session *s = c->sess;

	memcpy(s->logout_bhs, bhs, ISCSI_BHS_LEN);
	s->logout_waiting = true;
	logout_try(s);
}

/* Runs a non-SCSI PDU whose turn (CmdSN) has come, or an immediate one. */
static void sess_run_pdu(struct conn *c, const uint8_t *bhs, uint8_t *data,
			 uint32_t len)
{
	switch (pdu_opcode(bhs)) {
	case ISCSI_OP_NOP_OUT:
		sess_nop_out(c, bhs, data, len);
		break;
	case ISCSI_OP_TEXT_REQ:
		text_rx(c, bhs, data, len);
		break;
	case ISCSI_OP_LOGOUT_REQ:
		sess_logout(c, bhs);
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
		sess_reject_cmd(c, bhs, (uint8_t)rc, discard);
		return NULL;
	}
	switch (pdu_opcode(bhs)) {
	case ISCSI_OP_SCSI_CMD:
		return sess_scsi_cmd_header(c, bhs, discard, err);
	case ISCSI_OP_DATA_OUT:
		return sess_data_out_header(c, bhs, discard, err);
	case ISCSI_OP_LOGIN_REQ:
		/* A Login Request in the full feature phase. */
		conn_send_reject(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR);
		*discard = true;
		return NULL;
	case ISCSI_OP_SNACK_REQ:
		/* ERL 0: no SNACK support. */
		conn_send_reject(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR);
		*discard = true;
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
	uint32_t cmdsn, expstatsn;

	if (op == ISCSI_OP_SCSI_CMD) {
		sess_scsi_cmd_pdu(c, bhs, len);
		return;
	}
	if (op == ISCSI_OP_DATA_OUT) {
		sess_data_out_pdu(c, bhs, len);
		return;
	}
	cmdsn = get_be32(bhs + BHS_CMDSN);
	expstatsn = get_be32(bhs + BHS_EXPSTATSN);
	c->exp_statsn = expstatsn;
	c->exp_statsn_valid = true;
	/* A NOP-Out answering a ping carries no CmdSN to consume, and
	 * immediate PDUs run at once. */
	if (pdu_immediate(bhs) ||
	    (op == ISCSI_OP_NOP_OUT && pdu_itt(bhs) == ISCSI_RSVD_TAG)) {
		sess_run_pdu(c, bhs, data, len);
		return;
	}
	if (sn_lt(cmdsn, s->exp_cmdsn) || sn_gt(cmdsn, s->max_cmdsn))
		return;		/* outside the window: silently ignored */
	if (cmdsn == s->exp_cmdsn) {
		s->exp_cmdsn++;
		sess_update_window(s);
		sess_run_pdu(c, bhs, data, len);
		return;
	}
	struct pend_pdu *p = malloc(sizeof(*p) + len);
	struct list_node *pos;

	if (!p) {
		conn_close(c, "out of memory");
		return;
	}
	p->cmdsn = cmdsn;
	p->len = len;
	memcpy(p->bhs, bhs, ISCSI_BHS_LEN);
	if (len)
		memcpy(p->data, data, len);
	list_for_each(pos, &s->pending_pdus) {
		if (sn_gt(list_entry(pos, struct pend_pdu, node)->cmdsn, cmdsn))
			break;
	}
	list_insert_between(&p->node, pos->prev, pos);
}

/* ---- teardown ---------------------------------------------------------- */

/* Freed at the end of the pass: the last command may finish inside a
 * task set callback that still uses the task set afterwards. */
static void sess_free_deferred(struct reactor_defer *d)
{
	struct session *s = d->arg;

	if (s->live_cmds)
		return;
	pthread_mutex_lock(&reg_lock);
	list_del(&s->all_node);
	pthread_mutex_unlock(&reg_lock);
	for (unsigned i = 0; i < TCQ_MAX_LUNS; i++) {
		if (s->ts[i])
			lun_nexus_leave(s->ts[i]);
	}
	for (unsigned i = 0; i < s->pool_len; i++)
		free(s->pool[i]);
	free(s->pool);
	free(s);
}

static void sess_free_if_idle(struct session *s)
{
	if (!s->dead || s->live_cmds)
		return;
	reactor_defer(s->r, &s->free_defer);
}

void sess_conn_lost(struct conn *c)
{
	struct session *s = c->sess;
	struct list_node *pos, *tmp;

	if (!s || s->dead)
		return;
	s->dead = true;
	pthread_mutex_lock(&reg_lock);
	if (list_linked(&s->reg_node)) {
		list_del(&s->reg_node);
		nsessions--;
	}
	pthread_mutex_unlock(&reg_lock);
	log_info("%s: session TSIH %u ended", c->peer_text, s->tsih);
	s->live_cmds++;		/* keeps s through the aborts below */

	list_for_each_safe(pos, tmp, &s->pending_pdus) {
		list_del(pos);
		free(list_entry(pos, struct pend_pdu, node));
	}
	/* Commands still waiting for their CmdSN never reached the device
	 * server: drop them now. The device server aborts the tasks it
	 * holds; running I/O completes first (never into freed memory). */
	list_for_each_safe(pos, tmp, &s->pending) {
		struct cmd *cmd = list_entry(pos, struct cmd, pend_node);
		list_del(&cmd->pend_node);
		cmd_finish_check(cmd);
	}
	for (unsigned i = 0; i < TCQ_MAX_LUNS; i++) {
		if (s->ts[i])
			taskset_abort_all(s->ts[i], false);
	}
	/* Commands that never reached the device server (not dispatched)
	 * or that are finished but waited for their answer go now. The
	 * extra count keeps the session alive through the walk. */
	for (unsigned h = 0; h < ITT_HASH; h++) {
		struct cmd *cmd = s->itt[h];

		while (cmd) {
			struct cmd *next = cmd->hnext;
			cmd_finish_check(cmd);
			cmd = next;
		}
	}
	s->live_cmds--;
	c->sess = NULL;
	s->conn = NULL;
	sess_free_if_idle(s);
}

/* ---- listing for tcqctl ---- */

/* Copies plain fields under the registry lock: a listed session cannot
 * leave the registry (nor its connection be freed: sess_conn_lost
 * unregisters first) while we hold it, and these fields are written only
 * before the session is registered. */
unsigned sess_list(struct sess_info *out, unsigned max)
{
	struct list_node *pos;
	unsigned n = 0;

	pthread_mutex_lock(&reg_lock);
	list_for_each(pos, &registry) {
		const struct session *s =
			list_entry(pos, struct session, reg_node);
		struct sess_info *si;

		if (n++ >= max)
			continue;	/* keep counting */
		si = &out[n - 1];
		memset(si, 0, sizeof(*si));
		snprintf(si->initiator, sizeof(si->initiator), "%s", s->iname);
		snprintf(si->target, sizeof(si->target), "%s",
			 s->target ? s->target->dev.name : "");
		if (s->conn)
			snprintf(si->peer, sizeof(si->peer), "%s",
				 s->conn->peer_text);
		memcpy(si->isid, s->isid, sizeof(si->isid));
		si->tsih = s->tsih;
		si->discovery = s->discovery;
		si->reactor = s->r ? s->r->index : -1;
		si->params = s->params;
	}
	pthread_mutex_unlock(&reg_lock);
	return n;
}
