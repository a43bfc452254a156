/*
 * logout: the Logout Request reasons of RFC 7143 11.14 against a running
 * tcqd at ErrorRecoveryLevel 0 (pdutest's login), each with the Logout
 * Response code 11.15.1 prescribes (0 closed successfully, 1 CID not
 * found, 2 connection recovery is not supported), what Time2Wait means
 * for it (11.15.2), and what becomes of the connection: closed after a
 * successful logout, still serving after a refused one. Also a Logout
 * while a READ is still sending its data: the answer comes after the
 * READ's status.
 *
 *   logout HOST PORT TARGET-IQN [CASE...]    logout --list
 *
 * The LUN must have 512-byte blocks, at least 8 MiB, and allow 8 MiB
 * transfers (max_transfer_length).
 * Exit status: 0 when every case passed, 1 otherwise, 2 on usage errors.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"
#include "tests/integration/pdutest.h"
#include "tests/integration/ptcase.h"

struct logout {
	uint8_t reason;
	uint16_t cid;
	uint32_t itt, statsn;		/* ours, and the StatSN due */
	struct pdu_logout_rsp rsp;
	uint8_t bhs[ISCSI_BHS_LEN];	/* the response's header */
	uint32_t data_len;
};

/* Sends an immediate Logout Request: 0, or -1. */
static int logout_send(struct pt_sess *s, struct logout *l)
{
	struct pdu_logout_req q = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];

	q.immediate = true;
	q.reason = l->reason;
	q.cid = l->cid;
	q.itt = l->itt = s->itt++;
	q.cmdsn = s->cmdsn;
	q.expstatsn = s->exp_statsn;
	l->statsn = s->exp_statsn;
	pdu_encode_logout_req(bhs, &q);
	pdu_set_data_len(bhs, 0);
	return pt_sess_send(s, bhs, NULL, 0, 0, 0);
}

/* Logout Request, then its response: 1 answered, 0 none came. */
static int logout(struct pt_sess *s, struct logout *l)
{
	struct pt_rx r;

	if (logout_send(s, l) < 0)
		return 0;
	while (pt_recv(s, &r, 5000) > 0) {
		bool ours = pdu_opcode(r.bhs) == ISCSI_OP_LOGOUT_RSP;

		if (ours) {
			memcpy(l->bhs, r.bhs, ISCSI_BHS_LEN);
			l->data_len = r.len;
			pdu_decode_logout_rsp(r.bhs, &l->rsp);
		} else {
			pt_note("(opcode 0x%02x while waiting for the Logout Response)",
				pdu_opcode(r.bhs));
		}
		pt_rx_free(&r);
		if (ours)
			return 1;
	}
	return 0;
}

static int login(struct pt_sess *s)
{
	if (pt_login(s, NULL) < 0 || pt_tur(s) != SAM_STAT_GOOD) {
		PT_CHECK(0, "login, TEST UNIT READY");
		pt_close(s);
		return -1;
	}
	return 0;
}

/* reason (with cid) answered want; then the connection is closed (want
 * 0) or goes on serving (otherwise). */
static void logout_case(uint8_t reason, uint16_t cid, uint8_t want)
{
	struct logout l = { .reason = reason, .cid = cid };
	struct pt_sess s;
	int64_t ms;

	if (login(&s) < 0)
		return;
	if (!logout(&s, &l)) {
		PT_CHECK(0, "a Logout Response for reason %u", reason);
		pt_close(&s);
		return;
	}
	PT_CHECK(l.rsp.response == want,
		 "reason %u, CID %u: Logout Response %u (want %u)", reason, cid,
		 l.rsp.response, want);
	pt_note("Time2Wait %u, Time2Retain %u", l.rsp.time2wait,
		l.rsp.time2retain);
	if (want == ISCSI_LOGOUT_RSP_SUCCESS) {
		ms = pt_wait_closed(&s, 3000);
		PT_CHECK(ms >= 0, "then the target closed the connection (%lld ms)",
			 (long long)ms);
		pt_close(&s);
		return;
	}
	PT_CHECK(pt_tur(&s) == SAM_STAT_GOOD,
		 "the connection was not logged out: TEST UNIT READY is GOOD");
	pt_logout(&s);
}

static void logout_close_session_answers_0_then_connection_closed(void)
{
	pt_note("Logout, reason 0: close the session");
	logout_case(ISCSI_LOGOUT_CLOSE_SESSION, 0, ISCSI_LOGOUT_RSP_SUCCESS);
}

static void logout_close_connection_answers_0_then_connection_closed(void)
{
	pt_note("Logout, reason 1: close the connection, our CID 0");
	logout_case(ISCSI_LOGOUT_CLOSE_CONNECTION, 0, ISCSI_LOGOUT_RSP_SUCCESS);
}

static void logout_close_unknown_cid_answers_1(void)
{
	pt_note("Logout, reason 1: close the connection, CID 7 (none such)");
	logout_case(ISCSI_LOGOUT_CLOSE_CONNECTION, 7,
		    ISCSI_LOGOUT_RSP_CID_NOT_FOUND);
}

/* 11.15.1: 2 when the reason is "remove the connection for recovery" and
 * the operational ErrorRecoveryLevel does not support it (it is 0 here). */
static void logout_remove_for_recovery_at_erl0_answers_2(void)
{
	pt_note("Logout, reason 2: remove the connection for recovery");
	logout_case(ISCSI_LOGOUT_REMOVE_FOR_RECOVERY, 0,
		    ISCSI_LOGOUT_RSP_RECOVERY_UNSUPPORTED);
}

/* 11.15.2: after response 2, Time2Wait is the least time to wait before
 * a new logout; one after it is honoured. */
static void logout_again_after_time2wait_succeeds(void)
{
	struct logout l = { .reason = ISCSI_LOGOUT_REMOVE_FOR_RECOVERY };
	struct logout l0 = { .reason = ISCSI_LOGOUT_CLOSE_SESSION };
	struct pt_sess s;

	pt_note("Logout reason 2 refused, then reason 0 after Time2Wait");
	if (login(&s) < 0)
		return;
	if (!logout(&s, &l) ||
	    l.rsp.response != ISCSI_LOGOUT_RSP_RECOVERY_UNSUPPORTED) {
		PT_CHECK(0, "reason 2 refused with 2 (got %d)",
			 l.rsp.response);
		pt_close(&s);
		return;
	}
	pt_note("Time2Wait %u s, Time2Retain %u s", l.rsp.time2wait,
		l.rsp.time2retain);
	if (l.rsp.time2wait)
		sleep(l.rsp.time2wait);
	PT_CHECK(logout(&s, &l0) && l0.rsp.response == ISCSI_LOGOUT_RSP_SUCCESS,
		 "a Logout (reason 0) after Time2Wait: response %d (want 0)",
		 l0.rsp.response);
	PT_CHECK(pt_wait_closed(&s, 3000) >= 0,
		 "then the target closed the connection");
	pt_close(&s);
}

/* 11.15: F bit set, no AHS nor data, our ITT, the StatSN due. */
static void logout_response_header_is_well_formed(void)
{
	struct logout l = { .reason = ISCSI_LOGOUT_CLOSE_SESSION };
	struct pt_sess s;

	pt_note("the Logout Response header");
	if (login(&s) < 0)
		return;
	if (!logout(&s, &l)) {
		PT_CHECK(0, "a Logout Response");
		pt_close(&s);
		return;
	}
	pt_check_bare_rsp(l.bhs, l.data_len, ISCSI_OP_LOGOUT_RSP, l.itt,
			  l.statsn);
	pt_close(&s);
}

/* 11.14: after "close the session" the session is gone: a login that
 * names its TSIH to add a connection finds none. */
static void logout_close_session_ends_session(void)
{
	struct logout l = { .reason = ISCSI_LOGOUT_CLOSE_SESSION };
	struct pt_login_opts o = { 0 };
	struct pt_sess s, again;
	int rc;

	pt_note("after Logout reason 0, the session's TSIH is gone");
	if (login(&s) < 0)
		return;
	o.isid = s.isid;
	o.tsih = s.tsih;
	PT_CHECK(logout(&s, &l) && l.rsp.response == ISCSI_LOGOUT_RSP_SUCCESS,
		 "logged out (response %d)", l.rsp.response);
	pt_wait_closed(&s, 3000);
	pt_close(&s);
	rc = pt_login(&again, &o);
	PT_CHECK(rc < 0 && again.login_status == ISCSI_LS_SESSION_NOT_EXIST,
		 "a login to TSIH %u: status 0x%04x (want 0x020a, session does not exist)",
		 o.tsih, rc < 0 ? (unsigned)again.login_status : 0u);
	if (rc == 0)
		pt_close(&again);
}

/* ---- a Logout with a READ outstanding ------------------------------------- */

/* As large as tcqd allows (max_transfer_length 8M): more than the socket
 * buffers hold, so the READ is surely still going when the Logout
 * arrives. */
#define READ_BYTES (8u << 20)

static int send_read(struct pt_sess *s, uint32_t itt)
{
	struct pdu_scsi_cmd sc = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];

	sc.final = true;
	sc.read = true;
	sc.attr = ISCSI_ATTR_SIMPLE;
	sc.itt = itt;
	sc.edtl = READ_BYTES;
	sc.cmdsn = s->cmdsn++;
	sc.expstatsn = s->exp_statsn;
	sc.cdb[0] = SOP_READ_10;
	put_be16(sc.cdb + 7, READ_BYTES / 512);
	pdu_encode_scsi_cmd(bhs, &sc);
	pdu_set_data_len(bhs, 0);
	return pt_send_pdu(s->fd, bhs, NULL, 0);
}

static void logout_waits_for_outstanding_read(void)
{
	struct logout l = { .reason = ISCSI_LOGOUT_CLOSE_SESSION };
	uint32_t ritt, got = 0, next_off = 0, next_datasn = 0;
	bool read_done = false, logout_seen = false, logout_after = false;
	bool in_order = true;
	int status = -1, lresp = -1;
	int64_t deadline, ms;
	struct pt_sess s;

	pt_note("Logout (close session) with a READ outstanding");
	if (login(&s) < 0)
		return;
	ritt = s.itt++;
	if (send_read(&s, ritt) < 0 || logout_send(&s, &l) < 0) {
		PT_CHECK(0, "send READ(10) and Logout");
		pt_close(&s);
		return;
	}
	deadline = pt_now_ms() + 10000;
	while (!logout_seen) {
		struct pt_rx r;
		int64_t left = deadline - pt_now_ms();
		uint8_t op;

		if (left <= 0 || pt_recv(&s, &r, (int)left) <= 0)
			break;
		op = pdu_opcode(r.bhs);
		if (op == ISCSI_OP_DATA_IN && pdu_itt(r.bhs) == ritt) {
			struct pdu_data_in di;

			pdu_decode_data_in(r.bhs, &di);
			if (di.offset != next_off || di.datasn != next_datasn)
				in_order = false;
			next_off = di.offset + r.len;
			next_datasn = di.datasn + 1;
			got += r.len;
			if (di.status_present) {
				read_done = true;
				status = di.status;
			}
		} else if (op == ISCSI_OP_SCSI_RSP && pdu_itt(r.bhs) == ritt) {
			read_done = true;
			status = r.bhs[BHS_B3];
		} else if (op == ISCSI_OP_LOGOUT_RSP) {
			logout_seen = true;
			logout_after = read_done;
			lresp = r.bhs[BHS_B2];
		} else {
			pt_note("(unexpected opcode 0x%02x ITT 0x%x)", op,
				pdu_itt(r.bhs));
		}
		pt_rx_free(&r);
	}
	PT_CHECK(read_done && status == SAM_STAT_GOOD && got == READ_BYTES &&
		 in_order,
		 "the READ completed: %u of %u bytes%s, status %d",
		 got, READ_BYTES, in_order ? " in order" : " OUT OF ORDER",
		 status);
	PT_CHECK(logout_seen && logout_after,
		 "the Logout Response came %s",
		 !logout_seen ? "never" :
		 logout_after ? "after the READ's data and status" :
				"BEFORE the READ's status");
	PT_CHECK(lresp == ISCSI_LOGOUT_RSP_SUCCESS,
		 "Logout response %d (want 0)", lresp);
	if (logout_seen) {
		ms = pt_wait_closed(&s, 3000);
		PT_CHECK(ms >= 0, "then the target closed the connection (%lld ms)",
			 (long long)ms);
	}
	pt_close(&s);
}

static const struct pt_case cases[] = {
	PT_CASE(logout_close_session_answers_0_then_connection_closed),
	PT_CASE(logout_close_connection_answers_0_then_connection_closed),
	PT_CASE(logout_close_unknown_cid_answers_1),
	PT_CASE(logout_remove_for_recovery_at_erl0_answers_2),
	PT_CASE(logout_again_after_time2wait_succeeds),
	PT_CASE(logout_response_header_is_well_formed),
	PT_CASE(logout_close_session_ends_session),
	PT_CASE(logout_waits_for_outstanding_read),
};

static const struct pt_driver driver = {
	"logout", "iqn.2026-11.org.tcq:logout", cases, PT_NCASES(cases),
};

int main(int argc, char **argv)
{
	return pt_main(&driver, argc, argv);
}
