/*
 * Sessions: the registry (TSIH assignment, reinstatement of a session with
 * the same InitiatorName + ISID), the CmdSN / ExpCmdSN / MaxCmdSN window,
 * each session's commands, and the full feature phase PDUs that carry SCSI
 * (Command, Data-Out/R2T, Data-In, Response) plus NOP, Logout and TMF.
 * session.c, session_rx.c, cmd.c, data_out.c, nop_logout.c and tmf.c
 * implement it (session_priv.h says which does what).
 */
#ifndef TCQ_SESSION_H
#define TCQ_SESSION_H
#include <stdbool.h>
#include <stdint.h>
#include "tcq/kv.h"
#include "tcq/login_keys.h"
#include "target/target.h"

struct cmd;
struct conn;

/* What a successful leading login hands to the session layer. */
struct sess_login {
	bool discovery;
	struct target *target;		/* NULL for discovery */
	char initiator_name[TCQ_NAME_MAX];
	char initiator_alias[TCQ_NAME_MAX];
	uint8_t isid[6];
	uint32_t cmdsn;			/* CmdSN of the login request */
	struct login_params params;
};

/*
 * Creates the session for a leading login (TSIH 0) and binds c to it,
 * reinstating (closing) an older session with the same initiator name,
 * ISID and target. Sets *tsih. Returns 0 or a login status
 * (ISCSI_LS_OUT_OF_RESOURCES, ...).
 */
int sess_create(struct conn *c, const struct sess_login *sl, uint16_t *tsih);

/*
 * A new session of an initiator sees every loss of its earlier I_T
 * nexuses to the same target (SAM-5 6.3.4: reservations, PREVENT and task
 * sets end with them) before its login completes: done(c) runs on c's
 * reactor once every reactor has handled what it was already told (a
 * connection of that initiator closed before this login) and every
 * session of that initiator to that target that has ended (or that this
 * one reinstates) is freed, its running I/O completed. c is held
 * meanwhile; done must check that c still logs in. Discovery sessions
 * call done at once (through the mailbox as well). 0, or -ENOMEM.
 */
int sess_settle(struct conn *c, void (*done)(struct conn *c));

/* The parameters the session negotiated (conn_enter_ffp applies them). */
struct session;
const struct login_params *sess_params(const struct session *s);

/* ExpCmdSN and MaxCmdSN as the next PDU to c should carry them. */
uint32_t sess_exp_cmdsn(const struct conn *c);
uint32_t sess_max_cmdsn(const struct conn *c);
/* The commands of c's session made and not yet freed (0: none yet). */
unsigned sess_cmds_live(const struct conn *c);

/* The full feature phase receive path, called by conn for every PDU once
 * its header (and AHS) are in. Returns the buffer the data segment should
 * be read into (NULL: use the connection's scratch buffer); sets *discard
 * when the data must be read and dropped. */
uint8_t *sess_rx_header(struct conn *c, const uint8_t *bhs, bool *discard,
			int *err);
/* Called once the whole PDU (data segment included) has arrived. */
void sess_rx_pdu(struct conn *c, const uint8_t *bhs, uint8_t *data,
		 uint32_t len);
/* A Data-In / response PDU of cmd has left the socket. */
void sess_cmd_sent(struct cmd *cmd);
/* A Data-In PDU of cmd's that is not its last left (sent) or was
 * dropped with its closing connection (conn_tx.c). */
void sess_cmd_din_gone(struct cmd *cmd, bool sent);
/* Connection c is going away (ERL 0: so is its session). */
void sess_conn_lost(struct conn *c);

/*
 * I_T nexus identity for the device server (task->nexus is the session):
 * the initiator name, the initiator port name "iname,i,0xISID" (SPC-4
 * iSCSI TransportID form, stable across session reinstatement), TSIH.
 */
const char *sess_initiator_name(const void *nexus);
const char *sess_initiator_port(const void *nexus);
uint16_t sess_tsih(const void *nexus);

/* How the device server of every target reaches the sessions: the
 * initiator port names (target->dev.ops). */
extern const struct sdev_ops sess_sdev_ops;

/* On reactor r's thread: every session of r lets go of l, a LUN
 * withdrawn live (a forced removal aborted its tasks first): a session
 * whose task set on l is empty leaves l. Returns how many task sets
 * still hold tasks: call again later. */
struct lun;
unsigned sess_release_lun(struct reactor *r, struct lun *l);
/* Asks, from any thread, every session of t to log out within secs
 * seconds (an Async Message, AsyncEvent 1), each on its own reactor. */
void sess_logout_target(const struct target *t, uint16_t secs);
/* Sessions (live, or dead with commands still finishing) of t. */
unsigned sess_count_target(const struct target *t);

/* Closes, from any thread, the connection of every session to t but
 * except (TARGET COLD RESET); each on its own reactor, soon after. */
void sess_close_target(const struct target *t, const void *except,
		       const char *why);

/* Whether a live session has this TSIH (a login adding a connection). */
bool sess_tsih_exists(uint16_t tsih);

/* Sessions listing for tcqctl and tests. */
unsigned sess_count(void);
/* Normal sessions logged in to t now (any thread). */
unsigned sess_logged_in(const struct target *t);

/* One session as tcqctl lists it: copies of plain fields. */
struct sess_info {
	char initiator[TCQ_NAME_MAX];
	char target[TCQ_NAME_MAX];	/* "" for discovery */
	char peer[64];			/* "ADDR:PORT" of the initiator */
	uint8_t isid[6];
	uint16_t tsih;
	bool discovery;
	int reactor;			/* reactor index serving it */
	struct login_params params;	/* as negotiated */
};
/* Fills out[0..max-1] with live sessions (registry order); returns how
 * many there are, which may exceed max. */
unsigned sess_list(struct sess_info *out, unsigned max);
#endif
