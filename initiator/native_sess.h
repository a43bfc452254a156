/*
 * Full feature phase of the native initiator: one session, one
 * connection, driven by engine_native. Commands live in a fixed array of
 * slots (no malloc per I/O); the send side is a ring of PDUs whose
 * payloads point into the I/O buffers (sent with sendmsg, no copies); the
 * receive side parses one big buffer in place and reads Data-In payloads
 * straight into the I/O buffers.
 */
#ifndef TCQ_NATIVE_SESS_H
#define TCQ_NATIVE_SESS_H
#include <stdbool.h>
#include <stdint.h>
#include "initiator/engine.h"
#include "initiator/native.h"
#include "tcq/iscsi_proto.h"

/* One unsolicited burst plus this many R2Ts in flight per command. */
#define NATIVE_MAX_R2T 4
#define NATIVE_MAX_DEPTH 4096
#define NATIVE_LOGOUT_ITT 0x7fffffffu	/* never a slot's ITT (slot < 4096) */

struct native_cmd;

/* A run of Data-Out PDUs still to send: unsolicited or for one R2T. */
struct native_stream {
	struct native_stream *next;
	struct native_cmd *cmd;
	uint32_t ttt, offset, end, datasn;
	bool active;
};

struct native_cmd {
	struct bench_io *io;
	uint32_t itt;		/* slot index | generation << 16 */
	uint32_t edtl;
	uint8_t cdb[16];
	bool read, write, busy;
	bool done_pending;	/* status in, waiting for tx_refs == 0 */
	uint8_t attr;
	uint32_t next_datasn;	/* next Data-In DataSN expected */
	uint32_t received;	/* Data-In bytes so far */
	uint32_t tx_refs;	/* queued PDUs that point into io->buf */
	int32_t next;		/* pending FIFO / free list */
	struct native_stream streams[1 + NATIVE_MAX_R2T];
};

/* One PDU in the send ring: header (+digest), payload, pad (+digest). */
struct native_txpdu {
	uint8_t hdr[ISCSI_BHS_LEN + ISCSI_DIGEST_LEN];
	uint8_t trailer[3 + ISCSI_DIGEST_LEN];
	uint8_t hlen, tlen;
	uint32_t dlen;
	const uint8_t *data;
	void *owned;		/* freed once sent (NOP-Out echo data) */
	struct native_cmd *cmd;	/* holds a tx_ref, or NULL */
};

enum native_rx_phase { RX_HDR, RX_SEG, RX_DIRECT };

struct engine {
	int fd;
	int failed;		/* -errno once the connection is unusable */
	bool in_service;
	bool logged_out;
	struct native_url url;
	struct login_params p;
	uint64_t lun_raw;
	uint32_t block_size;
	uint64_t nblocks;

	/* sequence numbers */
	uint32_t cmdsn, exp_cmdsn, max_cmdsn, exp_statsn;

	/* command slots */
	struct native_cmd *cmds;
	uint32_t ncmds, inflight;
	int32_t free_head, pend_head, pend_tail;
	struct native_stream *st_head, *st_tail;

	/* send ring */
	struct native_txpdu *tx;
	uint32_t tx_cap, tx_head, tx_count;
	size_t tx_off;		/* bytes of the head PDU already sent */

	/* receive buffer and the PDU being received */
	uint8_t *rx;
	size_t rx_cap, rx_head, rx_tail;
	enum native_rx_phase rx_phase;
	uint8_t cur[ISCSI_BHS_LEN];
	uint32_t seg_len;	/* RX_SEG: data + pad + digest */
	struct native_cmd *rx_cmd;	/* RX_DIRECT */
	uint8_t *d_dst;
	uint32_t d_len, d_got;
	uint8_t trailer[3 + ISCSI_DIGEST_LEN];
	uint32_t t_len, t_got;
	bool warned_residual;

	/* open(): the capacity probe, kept here so a late completion (on
	 * close after a timeout) never touches a dead stack frame */
	struct bench_io sync_io;
	uint8_t sync_buf[256];	/* READ CAPACITY, VPD page 83h */
	bool sync_done;
	/* the LUN's NAA designator (VPD 83h), for EXTENDED COPY's
	 * identification target descriptor (engine_opts.want_designator) */
	uint8_t naa[16];
	bool have_naa;

	/* reconnect(): a new login of the same session (same ISID) */
	struct native_login_cfg cfg;
	uint8_t isid[6];
	uint32_t depth;
};

/* Allocates slots, rings and buffers after login. */
int native_sess_init(struct engine *e, uint32_t depth);
void native_sess_free(struct engine *e);
/* Queues a command; edtl bytes of io->buf move in the given direction. */
int native_sess_submit_cdb(struct engine *e, struct bench_io *io,
			   const uint8_t *cdb, uint32_t edtl, bool read,
			   bool write);
/* Receives and handles what the socket holds. Returns 0 or e->failed. */
int native_sess_rx(struct engine *e);
/* Generates queued PDUs and sends as much as the socket takes. */
int native_sess_tx(struct engine *e);
/* Whether there is something to send now. */
bool native_sess_want_tx(struct engine *e);
/* Marks the connection dead and completes every command with err. */
void native_sess_fail(struct engine *e, int err);
/* Queues a Logout Request (close the session). */
int native_sess_logout(struct engine *e);
/* Completes commands still queued or in flight with err (close). */
void native_sess_abort_all(struct engine *e, int err);

/* ---- native_cdb.c: the CDBs and parameter lists of enum bench_cmd */
/* Fills cdb (16 bytes) for io->cmd (not BENCH_CMD_RW) and writes its
 * parameter list, if any, at the start of io->buf; *edtl: the bytes of
 * io->buf sent as Data-Out. Returns 0, or -EINVAL (a range out of the LUN
 * or of the command's fields; EXTENDED COPY without a designator). */
int native_cdb_build(const struct engine *e, struct bench_io *io,
		     uint8_t *cdb, uint32_t *edtl);
/* The 16-byte NAA designator of the logical unit in a Device
 * Identification VPD page (SPC-4 7.8.6) of len bytes: true if found. */
bool native_vpd83_naa(const uint8_t *page, uint32_t len, uint8_t *naa);

/* Shared by rx and tx. */
void native_cmd_complete(struct engine *e, struct native_cmd *c, int status,
			 uint32_t statsn);
void native_cmd_release(struct engine *e, struct native_cmd *c);
int native_tx_push_ctrl(struct engine *e, const uint8_t *bhs,
			const void *data, uint32_t dlen, void *owned);
void native_stream_push(struct engine *e, struct native_stream *s);
struct native_cmd *native_pend_pop(struct engine *e);

static inline void native_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}
static inline uint32_t native_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}
#endif
