/*
 * badpdu: feeds a running tcqd malformed and out-of-order PDUs and checks
 * that each is answered as RFC 7143 requires, and that the daemon keeps
 * serving clean sessions afterwards. It speaks iSCSI itself (the project's
 * PDU codec plus plain sockets) because libiscsi refuses to send such
 * PDUs. One case per PDU:
 *
 *   badpdu HOST PORT TARGET-IQN [CASE...]     badpdu --list
 *
 * Exit status: 0 when every case passed, 1 otherwise, 2 on usage errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"
#include "tests/integration/pdutest.h"
#include "tests/integration/ptcase.h"

/* The target still serves a clean session. */
static void still_serving(const char *after)
{
	struct pt_sess s;

	if (pt_login(&s, NULL) < 0) {
		PT_CHECK(0, "a login after %s", after);
		return;
	}
	PT_CHECK(pt_tur(&s) == SAM_STAT_GOOD,
		 "after %s, a new session serves TEST UNIT READY", after);
	pt_logout(&s);
}

/* 20 bytes of a Login Request, then close: nothing to answer. */
static void truncated_login_header_then_close(void)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	struct pdu_login_req lq = { 0 };
	int fd = pt_tcp_connect();

	pt_note("truncated header: 20 of 48 BHS bytes, then close");
	if (fd < 0) {
		PT_CHECK(0, "connect");
		return;
	}
	lq.transit = true;
	lq.csg = ISCSI_STAGE_OPERATIONAL;
	lq.nsg = ISCSI_STAGE_FULL_FEATURE;
	lq.itt = 1;
	lq.cmdsn = 1;
	pdu_encode_login_req(bhs, &lq);
	pdu_set_data_len(bhs, 0);
	PT_CHECK(send(fd, bhs, 20, MSG_NOSIGNAL) == 20, "sent 20 bytes");
	close(fd);
	still_serving("a truncated login header");
}

/* The same in the full feature phase. */
static void truncated_pdu_mid_session_then_close(void)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	struct pdu_nop_out no = { 0 };
	struct pt_sess s;

	pt_note("truncated header in a session: 20 bytes of a NOP-Out, then close");
	if (pt_login(&s, NULL) < 0) {
		PT_CHECK(0, "login");
		return;
	}
	no.immediate = true;
	no.itt = s.itt++;
	no.ttt = ISCSI_RSVD_TAG;
	no.cmdsn = s.cmdsn;
	pdu_encode_nop_out(bhs, &no);
	pdu_set_data_len(bhs, 0);
	PT_CHECK(send(s.fd, bhs, 20, MSG_NOSIGNAL) == 20,
		 "sent 20 bytes of a NOP-Out in a session");
	pt_close(&s);
	still_serving("a truncated NOP-Out");
}

/* A data segment longer than the target's MaxRecvDataSegmentLength: a
 * protocol error, answered with Reject (reason 0x04) or a dropped
 * connection. */
static void oversize_data_segment_rejected_04_or_dropped(void)
{
	struct pt_sess s;
	uint32_t len, itt;
	uint8_t *buf;
	struct pt_rx r;
	int64_t t0;
	int rc;

	pt_note("data segment longer than MaxRecvDataSegmentLength");
	if (pt_login(&s, NULL) < 0) {
		PT_CHECK(0, "login");
		return;
	}
	/* DataSegmentLength has 24 bits: no room above such a limit. */
	if (s.peer_mrdsl >= 0xffffff - 4096) {
		pt_skip("the target declares MaxRecvDataSegmentLength=%u: no segment can exceed it",
			s.peer_mrdsl);
		pt_close(&s);
		return;
	}
	len = s.peer_mrdsl + 4096;
	buf = calloc(1, len);
	if (!buf) {
		PT_CHECK(0, "out of memory");
		pt_close(&s);
		return;
	}
	itt = s.itt++;
	t0 = pt_now_ms();
	pt_note("target MaxRecvDataSegmentLength=%u, sending a %u-byte NOP-Out",
	        s.peer_mrdsl, len);
	pt_send_nop_ping(&s, itt, buf, len, len);	/* may fail: target hung up */
	free(buf);
	rc = pt_recv(&s, &r, 5000);
	if (rc < 0) {
		PT_CHECK(1, "connection closed after %lld ms",
		         (long long)(pt_now_ms() - t0));
	} else if (rc == 0) {
		PT_CHECK(0, "silence for 5 s (expected Reject or close)");
	} else {
		uint8_t op = pdu_opcode(r.bhs);

		if (op == ISCSI_OP_REJECT)
			PT_CHECK(r.bhs[BHS_B2] == ISCSI_REJECT_PROTOCOL_ERROR,
				 "Reject, reason 0x%02x (want 0x04, protocol error)",
				 r.bhs[BHS_B2]);
		else
			PT_CHECK(0, "answered with opcode 0x%02x instead of Reject or close",
			         op);
		pt_rx_free(&r);
	}
	pt_close(&s);
}

/* Unknown opcode -> Reject 0x05 (command not supported), and the
 * connection still works. */
static void unknown_opcode(struct pt_sess *s)
{
	uint8_t bhs[ISCSI_BHS_LEN] = { 0 };
	static const char ping[] = "tcq-badpdu-ping!";
	uint32_t itt = s->itt++;
	struct pt_rx r;
	int rc;

	pt_note("unknown opcode 0x1f");
	bhs[BHS_OPCODE] = 0x1f;
	bhs[BHS_FLAGS] = ISCSI_FLAG_FINAL;
	put_be32(bhs + BHS_ITT, itt);
	put_be32(bhs + BHS_F20, ISCSI_RSVD_TAG);
	put_be32(bhs + BHS_CMDSN, s->cmdsn);
	put_be32(bhs + BHS_EXPSTATSN, s->exp_statsn);
	if (pt_send_pdu(s->fd, bhs, NULL, 0) < 0) {
		PT_CHECK(0, "send: %s", strerror(errno));
		return;
	}
	rc = pt_recv(s, &r, 5000);
	if (rc <= 0) {
		PT_CHECK(0, "no Reject (%s)", rc ? "connection closed" : "timeout");
		return;
	}
	if (pdu_opcode(r.bhs) != ISCSI_OP_REJECT) {
		PT_CHECK(0, "answered with opcode 0x%02x, not Reject",
		         pdu_opcode(r.bhs));
		pt_rx_free(&r);
		return;
	}
	PT_CHECK(r.bhs[BHS_B2] == ISCSI_REJECT_CMD_NOT_SUPPORTED,
	         "Reject reason 0x%02x (want 0x05)", r.bhs[BHS_B2]);
	PT_CHECK(r.len == ISCSI_BHS_LEN && pdu_opcode(r.data) == 0x1f &&
	         get_be32(r.data + BHS_ITT) == itt,
	         "Reject carries the rejected header (%u bytes)", r.len);
	PT_CHECK(get_be32(r.bhs + BHS_ITT) == ISCSI_RSVD_TAG,
	         "Reject ITT is 0xffffffff");
	pt_note("sent CmdSN %u; Reject says ExpCmdSN %u MaxCmdSN %u",
	        s->cmdsn, get_be32(r.bhs + BHS_EXPCMDSN),
	        get_be32(r.bhs + BHS_MAXCMDSN));
	pt_rx_free(&r);

	itt = s->itt++;
	if (pt_send_nop_ping(s, itt, ping, sizeof(ping) - 1, sizeof(ping) - 1) < 0) {
		PT_CHECK(0, "ping send: %s", strerror(errno));
		return;
	}
	rc = pt_recv(s, &r, 5000);
	if (rc <= 0) {
		PT_CHECK(0, "ping after Reject: %s",
		         rc ? "connection closed" : "no answer in 5 s");
		return;
	}
	PT_CHECK(pdu_opcode(r.bhs) == ISCSI_OP_NOP_IN && pdu_itt(r.bhs) == itt &&
	         r.len == sizeof(ping) - 1 && !memcmp(r.data, ping, r.len),
	         "ping after Reject answered with its data echoed");
	pt_rx_free(&r);
}

/* CmdSN outside the window is silently ignored (RFC 7143 4.2.2.1); the
 * right one is served. */
static void cmdsn_window(struct pt_sess *s)
{
	static const uint8_t cdb[6] = { SOP_TEST_UNIT_READY };
	uint32_t high = s->max_cmdsn + 100, low = s->exp_cmdsn - 50;
	uint32_t itt_high = s->itt++, itt_low = s->itt++, itt_ok;
	struct pt_rx r;
	int rc;

	pt_note("CmdSN window [%u, %u]: sending CmdSN %u and %u",
	        s->exp_cmdsn, s->max_cmdsn, high, low);
	pt_send_cdb(s, itt_high, high, cdb, sizeof(cdb));
	pt_send_cdb(s, itt_low, low, cdb, sizeof(cdb));
	rc = pt_recv(s, &r, 2000);
	if (rc > 0) {
		PT_CHECK(0, "out-of-window command answered (opcode 0x%02x, ITT 0x%x)",
		         pdu_opcode(r.bhs), pdu_itt(r.bhs));
		pt_rx_free(&r);
	} else {
		PT_CHECK(rc == 0, "out-of-window commands ignored for 2 s%s",
		         rc ? " (but the connection closed)" : "");
		if (rc < 0)
			return;
	}
	itt_ok = s->itt;
	rc = pt_tur(s);
	PT_CHECK(rc == SAM_STAT_GOOD,
		 "in-window command (ITT 0x%x) answered GOOD, status 0x%02x",
	         itt_ok, rc);
}

/* The window the target opens is MaxCmdSN - ExpCmdSN + 1 (RFC 7143
 * 4.2.2.1), the cmd_window tcqd was given: TCQ_CMD_WINDOW, else its
 * default 128. A SCSI Response may carry it one narrower (the task it
 * answers still holds its slot); once the commands are done, the answer
 * to a ping has it whole again, and no PDU ever has it wider. */
static void window_width(struct pt_sess *s)
{
	const char *e = getenv("TCQ_CMD_WINDOW");
	uint32_t want = e ? (uint32_t)strtoul(e, NULL, 10) : 128, w;
	uint32_t itt;
	struct pt_rx r;
	int rc;

	PT_CHECK(s->max_cmdsn - s->exp_cmdsn + 1 == want,
		 "Login Response: ExpCmdSN %u MaxCmdSN %u, a window of %u "
		 "(want %u)", s->exp_cmdsn, s->max_cmdsn,
		 s->max_cmdsn - s->exp_cmdsn + 1, want);
	rc = pt_tur(s);
	w = s->max_cmdsn - s->exp_cmdsn + 1;
	PT_CHECK(rc == SAM_STAT_GOOD && w <= want && w + 1 >= want,
		 "TEST UNIT READY: status 0x%02x, a window of %u (want %u or "
		 "one less)", rc, w, want);
	itt = s->itt++;
	if (pt_send_nop_ping(s, itt, NULL, 0, 0) < 0) {
		PT_CHECK(0, "NOP-Out ping sent");
		return;
	}
	for (;;) {
		if (pt_recv(s, &r, 5000) <= 0) {
			PT_CHECK(0, "NOP-In answer to the ping");
			return;
		}
		rc = pdu_opcode(r.bhs) == ISCSI_OP_NOP_IN && pdu_itt(r.bhs) == itt;
		pt_rx_free(&r);
		if (rc)
			break;
	}
	PT_CHECK(s->max_cmdsn - s->exp_cmdsn + 1 == want,
		 "NOP-In after the command: ExpCmdSN %u MaxCmdSN %u, a window "
		 "of %u (want %u)", s->exp_cmdsn, s->max_cmdsn,
		 s->max_cmdsn - s->exp_cmdsn + 1, want);
}

/* Runs fn on a session of its own. */
static void in_session(void (*fn)(struct pt_sess *))
{
	struct pt_sess s;

	if (pt_login(&s, NULL) < 0) {
		PT_CHECK(0, "login");
		return;
	}
	fn(&s);
	pt_logout(&s);
}

static void unknown_opcode_rejected_05_then_ping_answered(void)
{
	in_session(unknown_opcode);
}

static void cmdsn_outside_window_ignored(void)
{
	in_session(cmdsn_window);
}

static void cmd_window_as_configured(void)
{
	in_session(window_width);
}

/* Last: the daemon came through the cases before. */
static void clean_session_after_malformed_pdus(void)
{
	pt_note("clean session after all that");
	still_serving("the malformed PDUs");
}

static const struct pt_case cases[] = {
	PT_CASE(truncated_login_header_then_close),
	PT_CASE(truncated_pdu_mid_session_then_close),
	PT_CASE(oversize_data_segment_rejected_04_or_dropped),
	PT_CASE(unknown_opcode_rejected_05_then_ping_answered),
	PT_CASE(cmdsn_outside_window_ignored),
	PT_CASE(cmd_window_as_configured),
	PT_CASE(clean_session_after_malformed_pdus),
};

static const struct pt_driver driver = {
	"badpdu", "iqn.2026-11.org.tcq:badpdu", cases, PT_NCASES(cases),
};

int main(int argc, char **argv)
{
	return pt_main(&driver, argc, argv);
}
