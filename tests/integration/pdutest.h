/*
 * pdutest: a minimal raw iSCSI initiator for the protocol-level
 * integration tests (badpdu, sessions). It speaks iSCSI through the
 * project's PDU codec and plain blocking sockets, so a test can send
 * exactly the PDUs it wants, including ones a real initiator never would.
 * Every receive takes a deadline; nothing here can hang.
 */
#ifndef TCQ_TESTS_PDUTEST_H
#define TCQ_TESTS_PDUTEST_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tcq/pdu.h"

/* Largest data segment accepted from the target. */
#define PT_MAX_RX_SEGMENT (16u << 20)

static inline uint32_t pt_min(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* Set by the test program before anything else. */
extern const char *pt_prog;		/* prefix of every output line */
extern const char *pt_host, *pt_port;
extern const char *pt_target_iqn;
extern const char *pt_initiator;	/* default InitiatorName */
extern int pt_failures;
extern int pt_checks;		/* PT_CHECKs made, passed or not */

struct pt_sess {
	int fd;
	uint32_t itt;		/* next initiator task tag */
	uint32_t cmdsn;		/* next CmdSN to use */
	uint32_t exp_cmdsn, max_cmdsn;
	uint32_t exp_statsn;
	uint32_t peer_mrdsl;	/* target's MaxRecvDataSegmentLength */
	uint16_t tsih;
	uint8_t isid[6];
	/* Login status of the last refused login (class << 8 | detail),
	 * 0 after a successful one, -1 when no status came. */
	int login_status;
	/* A C-bit login request part was acknowledged with an empty,
	 * non-transit response (pt_login_opts.split). */
	bool split_acked;
	/* pt_recv answers NOP-In pings itself when set (the default);
	 * otherwise it hands them to the caller. */
	bool answer_pings;
	unsigned pings_answered;
	/* pt_recv counts PDUs carrying this ITT (0xffffffff: off). */
	uint32_t watch_itt;
	unsigned watch_hits;
	/* CRC32C digests negotiated at login (pt_login_opts.digests): every
	 * PDU after the login carries them both ways. Received digests are
	 * checked; mismatches are counted (and the PDU still returned). */
	bool hdgst, ddgst;
	unsigned hdgst_checked, ddgst_checked, digest_errors;
	/* The text of the last Login Response (NUL-separated key=value),
	 * to read the answers with pt_kv_find. */
	char login_rsp[1024];
	uint32_t login_rsp_len;
};

struct pt_rx {
	uint8_t bhs[ISCSI_BHS_LEN];
	uint8_t *data;		/* NUL-terminated copy of the segment */
	uint32_t len;
};

/* How pt_login logs in; a zeroed struct (or NULL) is badpdu's login. */
struct pt_login_opts {
	const char *initiator;		/* NULL: pt_initiator */
	bool discovery;			/* SessionType=Discovery */
	const uint8_t *isid;		/* 6 bytes; NULL: a fresh one */
	uint16_t tsih, cid;
	const char *immediate_data;	/* NULL: "Yes" */
	const char *mrdsl;		/* our MaxRecvDataSegmentLength */
	bool split;			/* first text in two PDUs (C bit) */
	bool digests;			/* ask for CRC32C header and data digests */
	/* key=value text (pt_kv_add) whose values replace our offers of
	 * those keys (r2t.c: InitialR2T, FirstBurstLength, ...). */
	const char *keys;
	uint32_t keys_len;
};

void pt_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define PT_CHECK(cond, ...)                                                \
	do {                                                               \
		pt_checks++;                                               \
		if (cond) {                                                \
			pt_note("ok: " __VA_ARGS__);                       \
		} else {                                                   \
			pt_note("FAIL: " __VA_ARGS__);                     \
			pt_failures++;                                     \
		}                                                          \
	} while (0)

int64_t pt_now_ms(void);
/* TCP connection to pt_host:pt_port (send timeout 5 s), or -1. */
int pt_tcp_connect(void);
/* BHS, data and padding in one go: 0, or -1 (errno set). */
int pt_send_pdu(int fd, const uint8_t *bhs, const void *data, uint32_t len);
/* One PDU: 1 received, 0 deadline passed, -1 closed or bad framing. */
int pt_recv_raw(int fd, struct pt_rx *r, int64_t deadline);
/* pt_send_pdu with the session's digests; hd_xor and dd_xor are XORed
 * into the header and data digests (0: correct digests) so a test can
 * send corrupted ones. */
int pt_sess_send(struct pt_sess *s, const uint8_t *bhs, const void *data,
		 uint32_t len, uint32_t hd_xor, uint32_t dd_xor);
/* pt_recv_raw for a session: digests are read and checked when
 * negotiated (s->hdgst_checked, s->ddgst_checked, s->digest_errors). */
int pt_sess_recv_raw(struct pt_sess *s, struct pt_rx *r, int64_t deadline);
void pt_rx_free(struct pt_rx *r);
/* Follows ExpCmdSN/MaxCmdSN/StatSN in a PDU from the target. */
void pt_track_sn(struct pt_sess *s, const uint8_t *bhs);
/* Answers a NOP-In ping (TTT != 0xffffffff) with a NOP-Out. */
void pt_answer_ping(struct pt_sess *s, const struct pt_rx *r);
/* Next PDU for the test, answering pings and skipping async messages:
 * 1 received, 0 timeout, -1 closed. */
int pt_recv(struct pt_sess *s, struct pt_rx *r, int timeout_ms);

/* Checks a response header that RFC 7143 gives no data (TMF, Logout
 * Response): opcode, F bit alone in byte 1, no AHS nor data, our ITT,
 * the StatSN due. */
void pt_check_bare_rsp(const uint8_t *bhs, uint32_t data_len, uint8_t opcode,
		       uint32_t itt, uint32_t statsn);

/* Value of key in a NUL-separated key=value text, or NULL. */
const char *pt_kv_find(const uint8_t *data, uint32_t len, const char *key);
/* Appends key=value and its NUL at off; returns the new length (off
 * unchanged when it does not fit). */
size_t pt_kv_add(char *buf, size_t off, size_t cap, const char *key,
		 const char *val);

/* Logs in straight to the full feature phase. 0 when the session is up;
 * -1 otherwise (s->login_status says whether the target refused). */
int pt_login(struct pt_sess *s, const struct pt_login_opts *o);
void pt_close(struct pt_sess *s);
/* Waits up to timeout_ms for the target to close s's connection, other
 * PDUs shown and dropped: the ms it took, or -1 (still open). */
int64_t pt_wait_closed(struct pt_sess *s, int timeout_ms);
/* Logout (close session), checking the response; closes the socket. */
void pt_logout(struct pt_sess *s);

int pt_send_nop_ping(struct pt_sess *s, uint32_t itt, const void *data,
		     uint32_t len, uint32_t declared_len);
/* A CDB without data (EDTL 0) to LUN 0. */
int pt_send_cdb(struct pt_sess *s, uint32_t itt, uint32_t cmdsn,
		const uint8_t *cdb, size_t cdb_len);
/* Sense key of a SCSI Response, or -1. */
int pt_sense_key(const struct pt_rx *r);
/* TEST UNIT READY, past unit attentions: the status, or -1. */
int pt_tur(struct pt_sess *s);

#endif
