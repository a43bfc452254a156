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
#include "tcq/iscsi_proto.h"
#include "tcq/list.h"
#include "scsi/task.h"
#include "target/param.h"
#include "tcq/reactor.h"
#include "target/target.h"

struct conn;
struct tmf;

#define ITT_HASH 256
#define MAX_R2T 16

struct r2t {
	uint32_t ttt, offset, len, got, datasn;
	bool active;
};

struct cmd {
	struct tcq_task task;	/* first: the device server's view */
	struct session *sess;
	struct conn *conn;
	struct cmd *hnext;	/* ITT hash chain */
	struct list_node pend_node;	/* waiting for its CmdSN */
	uint32_t itt, cmdsn;
	uint32_t edtl;
	uint8_t bhs[ISCSI_BHS_LEN];
	bool immediate;
	bool in_hash;
	bool dispatched;	/* handed to the device server */
	bool wants_data;	/* the device server waits for Data-Out */
	bool task_done;		/* done() called */
	bool rsp_queued;	/* final PDU queued */
	bool rsp_sent;		/* final PDU left (or connection gone) */
	bool failed_early;	/* answered without executing */
	uint16_t data_error;	/* ASC/ASCQ of a Data-Out sequence error */
	struct tmf *tmf;	/* a TMF waits for this command to go */
	bool abort_pending;	/* aborted before its CmdSN turn */
	/* write data */
	uint8_t *wbuf;		/* transport-owned Data-Out buffer */
	uint32_t wbuf_len;
	uint32_t got;		/* bytes of data received */
	uint32_t unsol_got;	/* immediate + unsolicited Data-Out bytes */
	uint32_t unsol_max;	/* what may come without R2T */
	uint32_t unsol_datasn;
	bool unsol_done;
	uint32_t r2t_next;	/* next offset to solicit */
	uint32_t r2tsn;
	uint32_t r2t_active;
	struct r2t r2t[MAX_R2T];
	/* data in */
	uint32_t datasn;
};

/* A non-SCSI PDU that arrived ahead of its CmdSN. */
struct pend_pdu {
	struct list_node node;
	uint32_t cmdsn;
	uint32_t len;
	uint8_t bhs[ISCSI_BHS_LEN];
	uint8_t data[];
};

struct session {
	struct list_node reg_node;	/* registry */
	struct list_node all_node;	/* every session until freed */
	struct reactor *r;
	struct conn *conn;
	struct target *target;
	bool discovery;
	bool dead;
	char iname[TCQ_NAME_MAX];
	char iport[TCQ_NAME_MAX + 24];	/* "iname,i,0xISID" */
	uint8_t isid[6];
	uint16_t tsih;
	uint64_t gen;			/* registry identity for posts */
	struct iscsi_params params;
	uint32_t exp_cmdsn, max_cmdsn;
	uint32_t window;
	struct list_node pending;	/* struct cmd, CmdSN order */
	struct list_node pending_pdus;	/* struct pend_pdu, CmdSN order */
	struct cmd *itt[ITT_HASH];
	struct taskset *ts[TCQ_MAX_LUNS];
	struct cmd **pool;
	unsigned pool_len, pool_cap;
	unsigned live_cmds;
	uint32_t next_ttt;
	struct reactor_defer free_defer;	/* frees a dead, idle session */
	/* a Logout waiting for active commands to finish */
	bool logout_waiting;
	uint8_t logout_bhs[ISCSI_BHS_LEN];
};

/* session.c */
/* The task set of s on l, made when first used. */
struct taskset *sess_taskset(struct session *s, struct lun *l);
/* The task set of s on l if it has one. */
struct taskset *sess_taskset_of(struct session *s, struct lun *l);
/* The nexus leaves every LUN (what it held there goes with it). */
void sess_leave_tasksets(struct session *s);
/* A dead session goes once its last command has. */
void sess_free_if_idle(struct session *s);

/* session_rx.c: the CmdSN window */
void sess_window_init(struct session *s, uint32_t cmdsn);
bool sess_cmdsn_in_window(const struct session *s, uint32_t cmdsn);
/* A command finished or entered: MaxCmdSN may move on. */
void sess_update_window(struct session *s);
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

/* tmf.c: a Task Management Function Request in its CmdSN turn. */
void tmf_rx(struct conn *c, const uint8_t *bhs);
/* Aborts s's tasks on l because another nexus asked (LUN reset, PREEMPT
 * AND ABORT): TASK ABORTED status when the control page has TAS=1. */
void tmf_abort_for_other(struct session *s, struct lun *l);
/* An affected command is gone: the TMF may answer now. */
void tmf_cmd_gone(struct cmd *cmd);
#endif
