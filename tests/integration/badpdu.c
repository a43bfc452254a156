/*
 * badpdu: feeds a running tcqd malformed and out-of-order PDUs and checks
 * that each is answered as RFC 7143 requires, and that the daemon keeps
 * serving clean sessions afterwards. It speaks iSCSI itself (the project's
 * PDU codec plus plain sockets) because libiscsi refuses to send such
 * PDUs.
 *
 *   badpdu HOST PORT TARGET-IQN
 *
 * Exit status: 0 when every check passed, 1 otherwise, 2 on usage errors.
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

/* (a) 20 bytes of a Login Request, then close: nothing to answer. */
static void test_truncated_header(void)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	struct pdu_login_req lq = { 0 };
	int fd = pt_tcp_connect();

	pt_note("(a) truncated header: 20 of 48 BHS bytes, then close");
	if (fd < 0) {
		PT_CHECK(0, "(a) connect");
		return;
	}
	lq.transit = true;
	lq.csg = ISCSI_STAGE_OPERATIONAL;
	lq.nsg = ISCSI_STAGE_FULL_FEATURE;
	lq.itt = 1;
	lq.cmdsn = 1;
	pdu_encode_login_req(bhs, &lq);
	pdu_set_data_len(bhs, 0);
	PT_CHECK(send(fd, bhs, 20, MSG_NOSIGNAL) == 20, "(a) sent 20 bytes");
	close(fd);
	/* Same again, this time mid-session. */
	{
		struct pt_sess s;
		struct pdu_nop_out no = { 0 };

		if (pt_login(&s, NULL) < 0) {
			PT_CHECK(0, "(a) login after a truncated login header");
			return;
		}
		no.immediate = true;
		no.itt = s.itt++;
		no.ttt = ISCSI_RSVD_TAG;
		no.cmdsn = s.cmdsn;
		pdu_encode_nop_out(bhs, &no);
		pdu_set_data_len(bhs, 0);
		PT_CHECK(send(s.fd, bhs, 20, MSG_NOSIGNAL) == 20,
		         "(a) sent 20 bytes of a NOP-Out in a session");
		pt_close(&s);
	}
}

/* (b) A data segment longer than the target's MaxRecvDataSegmentLength. */
static void test_oversize_segment(void)
{
	struct pt_sess s;
	uint32_t len, itt;
	uint8_t *buf;
	struct pt_rx r;
	int64_t t0;
	int rc;

	pt_note("(b) data segment longer than MaxRecvDataSegmentLength");
	if (pt_login(&s, NULL) < 0) {
		PT_CHECK(0, "(b) login");
		return;
	}
	if (s.peer_mrdsl >= 0xffffff - 4096) {
		pt_note("(b) target declares MaxRecvDataSegmentLength=%u: cannot exceed it",
		        s.peer_mrdsl);
		pt_close(&s);
		return;
	}
	len = s.peer_mrdsl + 4096;
	buf = calloc(1, len);
	if (!buf) {
		pt_close(&s);
		pt_failures++;
		return;
	}
	itt = s.itt++;
	t0 = pt_now_ms();
	pt_note("(b) target MaxRecvDataSegmentLength=%u, sending a %u-byte NOP-Out",
	        s.peer_mrdsl, len);
	pt_send_nop_ping(&s, itt, buf, len, len);	/* may fail: target hung up */
	free(buf);
	rc = pt_recv(&s, &r, 5000);
	if (rc < 0) {
		PT_CHECK(1, "(b) connection closed after %lld ms",
		         (long long)(pt_now_ms() - t0));
	} else if (rc == 0) {
		PT_CHECK(0, "(b) silence for 5 s (expected Reject or close)");
	} else {
		uint8_t op = pdu_opcode(r.bhs);

		if (op == ISCSI_OP_REJECT)
			PT_CHECK(1, "(b) Reject, reason 0x%02x", r.bhs[BHS_B2]);
		else
			PT_CHECK(0, "(b) answered with opcode 0x%02x instead of Reject or close",
			         op);
		pt_rx_free(&r);
	}
	pt_close(&s);
}

/* (c) unknown opcode -> Reject 0x05, and the connection still works. */
static void test_unknown_opcode(struct pt_sess *s)
{
	uint8_t bhs[ISCSI_BHS_LEN] = { 0 };
	static const char ping[] = "tcq-badpdu-ping!";
	uint32_t itt = s->itt++;
	struct pt_rx r;
	int rc;

	pt_note("(c) unknown opcode 0x1f");
	bhs[BHS_OPCODE] = 0x1f;
	bhs[BHS_FLAGS] = ISCSI_FLAG_FINAL;
	put_be32(bhs + BHS_ITT, itt);
	put_be32(bhs + BHS_F20, ISCSI_RSVD_TAG);
	put_be32(bhs + BHS_CMDSN, s->cmdsn);
	put_be32(bhs + BHS_EXPSTATSN, s->exp_statsn);
	if (pt_send_pdu(s->fd, bhs, NULL, 0) < 0) {
		PT_CHECK(0, "(c) send: %s", strerror(errno));
		return;
	}
	rc = pt_recv(s, &r, 5000);
	if (rc <= 0) {
		PT_CHECK(0, "(c) no Reject (%s)", rc ? "connection closed" : "timeout");
		return;
	}
	if (pdu_opcode(r.bhs) != ISCSI_OP_REJECT) {
		PT_CHECK(0, "(c) answered with opcode 0x%02x, not Reject",
		         pdu_opcode(r.bhs));
		pt_rx_free(&r);
		return;
	}
	PT_CHECK(r.bhs[BHS_B2] == ISCSI_REJECT_CMD_NOT_SUPPORTED,
	         "(c) Reject reason 0x%02x (want 0x05)", r.bhs[BHS_B2]);
	PT_CHECK(r.len == ISCSI_BHS_LEN && pdu_opcode(r.data) == 0x1f &&
	         get_be32(r.data + BHS_ITT) == itt,
	         "(c) Reject carries the rejected header (%u bytes)", r.len);
	PT_CHECK(get_be32(r.bhs + BHS_ITT) == ISCSI_RSVD_TAG,
	         "(c) Reject ITT is 0xffffffff");
	pt_note("(c) sent CmdSN %u; Reject says ExpCmdSN %u MaxCmdSN %u",
	        s->cmdsn, get_be32(r.bhs + BHS_EXPCMDSN),
	        get_be32(r.bhs + BHS_MAXCMDSN));
	pt_rx_free(&r);

	itt = s->itt++;
	if (pt_send_nop_ping(s, itt, ping, sizeof(ping) - 1, sizeof(ping) - 1) < 0) {
		PT_CHECK(0, "(c) ping send: %s", strerror(errno));
		return;
	}
	rc = pt_recv(s, &r, 5000);
	if (rc <= 0) {
		PT_CHECK(0, "(c) ping after Reject: %s",
		         rc ? "connection closed" : "no answer in 5 s");
		return;
	}
	PT_CHECK(pdu_opcode(r.bhs) == ISCSI_OP_NOP_IN && pdu_itt(r.bhs) == itt &&
	         r.len == sizeof(ping) - 1 && !memcmp(r.data, ping, r.len),
	         "(c) ping after Reject answered with its data echoed");
	pt_rx_free(&r);
}

/* (d) CmdSN outside the window is dropped; the right one is served. */
static void test_cmdsn_window(struct pt_sess *s)
{
	static const uint8_t cdb[6] = { SOP_TEST_UNIT_READY };
	uint32_t high = s->max_cmdsn + 100, low = s->exp_cmdsn - 50;
	uint32_t itt_high = s->itt++, itt_low = s->itt++, itt_ok;
	struct pt_rx r;
	int rc;

	pt_note("(d) CmdSN window [%u, %u]: sending CmdSN %u and %u",
	        s->exp_cmdsn, s->max_cmdsn, high, low);
	pt_send_cdb(s, itt_high, high, cdb, sizeof(cdb));
	pt_send_cdb(s, itt_low, low, cdb, sizeof(cdb));
	rc = pt_recv(s, &r, 2000);
	if (rc > 0) {
		PT_CHECK(0, "(d) out-of-window command answered (opcode 0x%02x, ITT 0x%x)",
		         pdu_opcode(r.bhs), pdu_itt(r.bhs));
		pt_rx_free(&r);
	} else {
		PT_CHECK(rc == 0, "(d) out-of-window commands ignored for 2 s%s",
		         rc ? " (but the connection closed)" : "");
		if (rc < 0)
			return;
	}
	itt_ok = s->itt;
	rc = pt_tur(s);
	PT_CHECK(rc >= 0, "(d) in-window command (ITT 0x%x) answered, status 0x%02x",
	         itt_ok, rc);
}

int main(int argc, char **argv)
{
	struct pt_sess s;

	if (argc != 4) {
		fprintf(stderr, "usage: %s HOST PORT TARGET-IQN\n", argv[0]);
		return 2;
	}
	pt_prog = "badpdu";
	pt_initiator = "iqn.2026-11.org.tcq:badpdu";
	pt_host = argv[1];
	pt_port = argv[2];
	pt_target_iqn = argv[3];
	setvbuf(stdout, NULL, _IOLBF, 0);

	test_truncated_header();
	test_oversize_segment();

	if (pt_login(&s, NULL) == 0) {
		test_unknown_opcode(&s);
		test_cmdsn_window(&s);
		pt_logout(&s);
	} else {
		PT_CHECK(0, "(c,d) login");
	}

	pt_note("(e) clean session after all that");
	if (pt_login(&s, NULL) == 0) {
		PT_CHECK(1, "(e) login");
		PT_CHECK(pt_tur(&s) == SAM_STAT_GOOD, "(e) TEST UNIT READY is GOOD");
		pt_logout(&s);
	} else {
		PT_CHECK(0, "(e) login");
	}

	pt_note("%s (%d failure%s)", pt_failures ? "FAILED" : "passed",
		   pt_failures, pt_failures == 1 ? "" : "s");
	return pt_failures ? 1 : 0;
}
