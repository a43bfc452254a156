/*
 * Session internals shared by the files of the full feature phase:
 * session.c (registry), session_rx.c (CmdSN window, PDU dispatch), cmd.c
 * (SCSI commands), data_out.c (write data), nop_logout.c and tmf.c (task
 * management). Not for other modules.
 */
#ifndef TCQ_SESSION_PRIV_H
#define TCQ_SESSION_PRIV_H
#include <stdbool.h>
#include <stdint.h>
#include "tcq/byteorder.h"
#include "tcq/iscsi_proto.h"
#include "tcq/list.h"
#include "scsi/lun.h"
#include "scsi/task.h"
#include "tcq/kv.h"
#include "tcq/login_keys.h"
#include "tcq/reactor.h"
#include "target/target.h"

struct conn;

#define ITT_HASH 256
#define MAX_R2T 16

/* One R2T of a command: a burst of write data asked for. */
struct r2t {
	uint32_t ttt, offset, len, got, datasn;
	bool active;
};

/* A command's write data (data_out.c; the buffer is made by cmd.c). */
struct cmd_data_out {
	uint8_t *buf;		/* transport-owned Data-Out buffer */
	uint32_t buf_len;
	uint32_t got;		/* bytes received */
	bool wanted;		/* the device server waits for the data */
	uint16_t error;		/* ASC/ASCQ of a Data-Out sequence error */
	/* immediate and unsolicited data */
	uint32_t unsol_got;
	uint32_t unsol_max;	/* what may come without R2T */
	uint32_t unsol_datasn;
	bool unsol_done;	/* all of it is in (or none is awaited) */
	/* solicited data */
	uint32_t r2t_next;	/* next offset to solicit */
	uint32_t r2tsn;
	uint32_t r2t_active;
	struct r2t r2t[MAX_R2T];
};

/* A SCSI command from its PDU to its last answer (cmd.c). */
struct cmd {
	struct tcq_task task;	/* first: the device server's view */
	struct session *sess;
	struct conn *conn;
	/* from the SCSI Command PDU */
	uint8_t bhs[ISCSI_BHS_LEN];
	uint32_t itt, cmdsn;
	uint32_t edtl;		/* Expected Data Transfer Length */
	bool immediate;
	/* where the session finds it */
	struct cmd *hnext;	/* ITT hash chain */
	bool in_hash;
	struct list_node held_node;	/* waiting for its CmdSN turn */
	/* how far it got */
	bool dispatched;	/* handed to the device server */
	bool task_done;		/* done() called */
	bool failed_early;	/* answered without executing */
	bool rsp_queued;	/* final PDU queued */
	bool rsp_sent;		/* final PDU left (or connection gone) */
	uint32_t datasn;	/* of the next Data-In */
	/* Data-In queued so far (cut-through reads send it in parts): the
	 * next PDU's offset, the bytes of the current MaxBurstLength
	 * sequence, and the PDUs in the send queue that are not its last,
	 * whose payload is the task's buffer (it stays until they left). */
	uint32_t din_off, din_burst;
	uint32_t din_queued;
	/* task management (tmf.c) */
	bool abort_pending;	/* aborted before its CmdSN turn */
	struct cmd_data_out data_out;
};

/* A non-SCSI PDU that arrived ahead of its CmdSN, or (consumed) a CmdSN
 * the target considers received without a PDU (RFC 7143 11.6.1 b). */
struct held_pdu {
	struct list_node node;
	uint32_t cmdsn;
	bool consumed;
	uint32_t len;
	uint8_t bhs[ISCSI_BHS_LEN];
	uint8_t data[];
};

/* The CmdSN window and what waits for its turn (session_rx.c). */
struct sess_window {
	uint32_t exp_cmdsn, max_cmdsn;
	uint32_t size;			/* MaxCmdSN - ExpCmdSN + 1, when idle */
	struct list_node held_cmds;	/* struct cmd, CmdSN order */
	struct list_node held_pdus;	/* struct held_pdu, CmdSN order */
};

/* The session's commands (cmd.c). */
struct sess_cmds {
	struct cmd *itt[ITT_HASH];	/* by Initiator Task Tag */
	unsigned live;			/* made and not yet freed */
	struct cmd **pool;		/* freed ones, for reuse */
	unsigned pool_len, pool_cap;
};

struct session {
	/* the registry (session.c): the lists are under its lock */
	struct list_node reg_node;	/* live sessions */
	struct list_node all_node;	/* every session until freed */
	uint64_t gen;			/* registry identity for posts */
	uint16_t tsih;
	bool dead;			/* its connection is gone */
	/* The one step after a command went (sess_cmd_gone): a waiting
	 * Logout is answered, a dead idle session freed. */
	struct reactor_defer idle_defer;
	/* the I_T nexus, fixed once registered */
	struct reactor *r;
	struct conn *conn;
	struct target *target;		/* NULL for discovery */
	bool discovery;
	char iname[TCQ_NAME_MAX];
	char iport[TCQ_NAME_MAX + 24];	/* "iname,i,0xISID" */
	uint8_t isid[6];
	struct login_params params;	/* as negotiated */
	struct taskset *ts[TCQ_MAX_LUNS];	/* per LUN, made on first use */
	/* its initiator's LUN map on the target (session_map.c): NULL, the
	 * target's own LUNs; copied at login and again when the target's
	 * inits_gen moves past map_gen */
	struct sdev_map *map;
	uint64_t map_gen;
	struct sess_window win;
	struct sess_cmds cmds;
	uint32_t next_r2t_ttt;		/* Target Transfer Tag (data_out.c) */
	/* a Logout waiting for the commands to finish (nop_logout.c) */
	struct {
		bool waiting;
		uint8_t bhs[ISCSI_BHS_LEN];
	} logout;
};

/* session.c */
/* The task set of s on l, made when first used (sess_taskset_join: s
 * joins l). Inline: once per command. */
struct taskset *sess_taskset_join(struct session *s, struct lun *l);
static inline struct taskset *sess_taskset(struct session *s, struct lun *l)
{
	if (!l || l->id >= TCQ_MAX_LUNS)
		return NULL;
	return s->ts[l->id] ? s->ts[l->id] : sess_taskset_join(s, l);
}
/* The task set of s on l if it has one. */
struct taskset *sess_taskset_of(struct session *s, struct lun *l);
/* The nexus leaves every LUN (what it held there goes with it). */
void sess_leave_tasksets(struct session *s);
/* A command of s went (or s died): at the end of this pass, a waiting
 * Logout is answered once no command is left, and a dead session with
 * none is freed. Destructors call this and nothing else of the
 * protocol. */
void sess_cmd_gone(struct session *s);

/* session_map.c. Copies the initiator's map from the target again (at
 * login, and after a live change: REPORTED LUNS DATA HAS CHANGED on the
 * LUNs it reaches when the map changed); false when out of memory (the
 * map is unchanged, the next command tries again). */
bool sess_map_load(struct session *s, bool announce);
/* The LUN the initiator's number nr reaches in this session, and
 * whether its map makes it read-only; NULL: none (LOGICAL UNIT NOT
 * SUPPORTED). Inline: once per command. */
static inline struct lun *sess_lun(struct session *s, uint64_t nr,
				   bool *ro)
{
	*ro = false;
	if (!s->target)
		return NULL;
	if (__atomic_load_n(&s->target->inits_gen, __ATOMIC_ACQUIRE) !=
	    s->map_gen && !sess_map_load(s, true))
		return NULL;
	return sdev_map_lun(&s->target->dev, s->map, nr, ro);
}
/* The sdev op: the session's map. */
const struct sdev_map *sess_lun_map(const void *nexus);

/* session_rx.c: the CmdSN window */
void sess_window_init(struct session *s, uint32_t cmdsn);
bool sess_cmdsn_in_window(const struct session *s, uint32_t cmdsn);
/* A command finished or entered: MaxCmdSN may move on; it never shrinks
 * (RFC 7143 4.2.2.1). Inline: once per command. */
static inline void sess_update_window(struct session *s)
{
	const struct sess_window *w = &s->win;
	uint32_t room = w->size > s->cmds.live ? w->size - s->cmds.live : 0;
	uint32_t cand = w->exp_cmdsn + room - 1;

	if (sn_gt(cand, s->win.max_cmdsn))
		s->win.max_cmdsn = cand;
}
/* Considers cmdsn (in the window) received though no PDU came with it:
 * ExpCmdSN steps over it and what waited behind it runs; a PDU that
 * brings it later is a duplicate. */
void sess_cmdsn_consume(struct conn *c, uint32_t cmdsn);
/* Rejects a PDU; its data segment is read and dropped. */
void sess_reject(struct conn *c, const uint8_t *bhs, uint8_t reason,
		 bool *discard);

/* cmd.c: SCSI commands */
struct cmd *cmd_lookup(struct session *s, uint32_t itt);
/* Frees cmd once nothing more is owed on it or by it. */
void cmd_finish_check(struct cmd *cmd);
void cmd_pool_free(struct session *s);
/* A SCSI Command's header is in: checks it, makes the command, and says
 * where its immediate data goes (sess_rx_header's contract). */
uint8_t *cmd_rx_header(struct conn *c, const uint8_t *bhs, bool *discard,
		       int *err);
/* cmd's CmdSN turn has come: into the device server. */
void cmd_dispatch(struct session *s, struct cmd *cmd);

/* data_out.c: write data */
/* Solicits missing data (R2T); tells the device server once all is in. */
void data_out_advance(struct cmd *cmd);
uint8_t *data_out_rx_header(struct conn *c, const uint8_t *bhs, bool *discard,
			    int *err);
void data_out_rx_pdu(struct conn *c, const uint8_t *bhs, uint32_t len);

/* nop_logout.c */
void nop_out_rx(struct conn *c, const uint8_t *bhs, uint8_t *data,
		uint32_t len);
void logout_rx(struct conn *c, const uint8_t *bhs);
/* Answers a waiting Logout once no command is left. */
void logout_answer_if_idle(struct session *s);
/* Sends an Async Message asking for a logout within secs seconds. */
void logout_request_async(struct session *s, uint16_t secs);

/* tmf.c: a Task Management Function Request in its CmdSN turn. */
void tmf_rx(struct conn *c, const uint8_t *bhs);
#endif
