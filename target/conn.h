/*
 * One iSCSI connection: PDU framing on a non-blocking socket (BHS, AHS,
 * digests, data segment), the send queue, NOP-In pings and timeouts. Large
 * data segments are read straight into the command's buffer and Data-In is
 * written from it with writev: no copy of payload on either path.
 */
#ifndef TCQ_CONN_H
#define TCQ_CONN_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "tcq/iscsi_proto.h"
#include "tcq/list.h"
#include "tcq/kv.h"
#include "tcq/login_keys.h"
#include "tcq/reactor.h"

struct session;
struct portal;
struct login_state;
struct cmd;

enum conn_state {
	CONN_LOGIN,		/* login phase */
	CONN_FFP,		/* full feature phase */
	CONN_LOGGED_OUT,	/* logout response queued; close when sent */
	CONN_CLOSING,		/* torn down once no task references it */
};

/* One queued outgoing PDU. */
struct txpdu {
	struct list_node node;
	uint8_t bhs[ISCSI_BHS_LEN];
	uint8_t hdigest[4];
	uint8_t hdigest_len;	/* 4 when header digests were on at queueing */
	const void *data;	/* payload (task buffer or own copy) */
	uint32_t data_len;
	uint8_t trailer[8];	/* pad + data digest */
	uint8_t trailer_len;
	bool own_data;		/* data was malloc'ed for this PDU */
	struct cmd *cmd;	/* payload belongs to this command's buffer */
	bool last_of_cmd;	/* sending this PDU finishes cmd */
};

#define CONN_RXBUF 65536

/* The PDU being received (conn.c). */
struct conn_rx {
	uint8_t *buf;			/* CONN_RXBUF bytes */
	uint32_t head, tail;		/* unparsed bytes are buf[head..tail) */
	int state;			/* header, data segment or trailer */
	uint8_t bhs[ISCSI_BHS_LEN];
	uint8_t *ahs;			/* when the PDU has AHS */
	uint32_t ahs_len;
	uint8_t *dst;			/* where the data segment goes */
	uint32_t data_len, data_got;
	uint32_t trailer_len, trailer_got;
	uint8_t trailer[8];		/* pad + data digest */
	uint8_t *scratch;		/* for non-SCSI data segments */
	uint32_t scratch_cap;
	bool discard;			/* segment is read and dropped */
	struct cmd *cmd;		/* command the segment belongs to (set
					 * and read by the session layer) */
};

/* The send queue (conn.c). */
struct conn_tx {
	struct list_node queue;		/* struct txpdu, in sending order */
	struct list_node spare;		/* struct txpdu, for reuse */
	uint32_t head_sent;		/* bytes of the head PDU already sent */
	struct reactor_defer flush;	/* sends at the end of the pass; at
					 * the end, frees the connection */
	bool blocked;			/* waiting for EPOLLOUT */
};

/* NOP-In pings to an idle initiator (conn.c). */
struct conn_ping {
	struct reactor_timer timer;
	uint32_t ttt;			/* of the unanswered ping, or 0xffffffff */
	uint32_t next_ttt;
};

struct conn {
	struct reactor *r;
	struct reactor_fd rfd;
	int fd;
	struct portal *portal;
	struct sockaddr_storage peer;
	socklen_t peer_len;
	char peer_text[64];
	enum conn_state state;
	uint16_t cid;
	struct session *sess;		/* once logged in */
	struct login_params params;	/* in effect on this connection */
	/* the login phase (login.c) */
	struct login_state *login;
	struct reactor_timer login_timer;
	/* status numbering (RFC 7143 4.2.2.2) */
	uint32_t statsn;		/* next StatSN to assign */
	uint32_t exp_statsn;
	bool exp_statsn_valid;
	struct conn_rx rx;
	struct conn_tx tx;
	struct conn_ping ping;
	uint64_t last_rx_ns;		/* last PDU in: login idle time, pings */
	unsigned refs;			/* commands still referencing conn */
	struct list_node live_node;	/* this reactor's live connections */
};

/* Takes an accepted socket; the connection lives on reactor r. */
int conn_accept(struct reactor *r, int fd, struct portal *p,
		const struct sockaddr *peer, socklen_t peer_len);

/*
 * Queues a PDU whose BHS is complete except StatSN-independent fields the
 * caller owns; data (len bytes) is copied. Used for login, text, logout,
 * NOP, reject, TMF and response PDUs without big payloads.
 */
int conn_send_pdu(struct conn *c, const uint8_t *bhs, const void *data,
		  uint32_t len);
/* Takes a StatSN for a status-carrying PDU (advances conn->statsn). */
uint32_t conn_next_statsn(struct conn *c);
/* Queues a Reject of the PDU whose BHS is given. */
void conn_send_reject(struct conn *c, const uint8_t *bad_bhs, uint8_t reason);
/* The same with the Reject's DataSN/R2TSN field set: the next one of the
 * task a rejected Data/R2T SNACK names (RFC 7143 11.17.2). */
void conn_send_reject_sn(struct conn *c, const uint8_t *bad_bhs,
			 uint8_t reason, uint32_t datasn);
/* Ends the connection: socket closed now, memory freed once tasks drain. */
void conn_close(struct conn *c, const char *why);
/* A PDU the caller fills (bhs, data pointing into a command buffer, cmd,
 * last_of_cmd) and queues with conn_queue_txpdu, which adds digests and
 * padding. NULL when out of memory. */
struct txpdu *conn_txpdu_alloc(struct conn *c);
void conn_queue_txpdu(struct conn *c, struct txpdu *t);
/* A NOP-Out answering our ping with this TTT arrived. */
void conn_nop_answered(struct conn *c, uint32_t ttt);
/* Drops a command's reference; frees a closed connection at zero. */
void conn_put(struct conn *c);
/* Closes every connection of reactor r, then stops r once they are freed
 * (their in-flight I/O finished). Runs on r's thread. */
void conn_reactor_shutdown(struct reactor *r);
/* Login phase finished successfully: switch framing to the negotiated
 * parameters (digests, MaxRecvDataSegmentLength) after the final
 * response, and start NOP pings. */
void conn_enter_ffp(struct conn *c);
#endif
