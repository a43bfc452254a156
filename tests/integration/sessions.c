/*
 * sessions: protocol-level checks of session behaviour against a running
 * tcqd, with the raw iSCSI client of pdutest.c:
 *
 *   (f) session reinstatement (RFC 7143 6.3.5)
 *   (g) NOP-In liveness: answered pings keep a session, ignored ones end it
 *   (h) Text Response continuation (SendTargets=All over a small
 *       MaxRecvDataSegmentLength) and Login Request continuation
 *   (i) ABORT TASK of a WRITE waiting for Data-Out, of an unknown task,
 *       and LUN RESET
 *   (j) Logout while a READ is outstanding
 *   (k) a second connection for a session (MaxConnections=1), unknown TSIH
 *
 *   sessions HOST PORT TARGET-IQN [NEXTRA]
 *
 * The target must run with nop_interval = 1 and nop_timeout = 2. With
 * NEXTRA, the target also serves NEXTRA targets named TARGET-IQN-tNNN
 * (N = 1..NEXTRA), and (h) checks that SendTargets lists every one.
 * Exit status: 0 when every check passed, 1 otherwise, 2 on usage errors.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"
#include "tests/integration/pdutest.h"

/* The target's NOP settings this program expects (sessions.sh). */
#define NOP_INTERVAL_MS 1000
#define NOP_TIMEOUT_MS 2000

static unsigned nextra;

/* A fixed ISID (random-qualifier format) unique to this run and test. */
static void make_isid(uint8_t isid[6], uint8_t tag)
{
	pid_t pid = getpid();

	isid[0] = 0x80;
	isid[1] = 0x5e;
	isid[2] = 0x55;
	isid[3] = (uint8_t)(pid >> 8);
	isid[4] = (uint8_t)pid;
	isid[5] = tag;
}

/* Waits for the target to close s's connection: the ms it took, or -1 if
 * it was still open at the deadline. Pings on the way are answered. */
static int64_t wait_closed(struct pt_sess *s, int64_t t0, int64_t deadline)
{
	struct pt_rx r;

	for (;;) {
		int64_t left = deadline - pt_now_ms();
		int rc;

		if (left <= 0)
			return -1;
		rc = pt_recv(s, &r, (int)left);
		if (rc < 0)
			return pt_now_ms() - t0;
		if (rc == 0)
			return -1;
		pt_note("(got opcode 0x%02x ITT 0x%x while waiting for the close)",
			pdu_opcode(r.bhs), pdu_itt(r.bhs));
		pt_rx_free(&r);
	}
}

static int send_scsi(struct pt_sess *s, uint32_t itt, uint32_t cmdsn,
		     const uint8_t cdb[16], bool read, bool write,
		     uint32_t edtl)
{
	struct pdu_scsi_cmd sc = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];

	sc.final = true;
	sc.read = read;
	sc.write = write;
	sc.attr = ISCSI_ATTR_SIMPLE;
	sc.itt = itt;
	sc.edtl = edtl;
	sc.cmdsn = cmdsn;
	sc.expstatsn = s->exp_statsn;
	memcpy(sc.cdb, cdb, 16);
	pdu_encode_scsi_cmd(bhs, &sc);
	pdu_set_data_len(bhs, 0);
	return pt_send_pdu(s->fd, bhs, NULL, 0);
}

/* Answers an R2T of at most 64 KiB with zeros, in segments the target
 * accepts. */
static void send_data_out(struct pt_sess *s, uint32_t itt,
			  const struct pdu_r2t *r2t)
{
	static uint8_t zeros[65536];
	uint32_t done = 0, seg = s->peer_mrdsl ? s->peer_mrdsl : 8192;
	uint32_t datasn = 0;

	while (done < r2t->length) {
		struct pdu_data_out d = { 0 };
		uint8_t bhs[ISCSI_BHS_LEN];
		uint32_t n = r2t->length - done;

		if (n > seg)
			n = seg;
		d.final = done + n == r2t->length;
		d.lun = r2t->lun;
		d.itt = itt;
		d.ttt = r2t->ttt;
		d.expstatsn = s->exp_statsn;
		d.datasn = datasn++;
		d.offset = r2t->offset + done;
		d.data_len = n;
		pdu_encode_data_out(bhs, &d);
		pdu_set_data_len(bhs, n);
		if (pt_send_pdu(s->fd, bhs, zeros, n) < 0)
			return;
		done += n;
	}
}

/* An immediate TMF request to LUN 0; returns its response code, or -1. */
static int tmf(struct pt_sess *s, uint8_t function, uint32_t rtt,
	       uint32_t refcmdsn)
{
	struct pdu_tmf_req q = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];
	struct pt_rx r;

	q.immediate = true;
	q.function = function;
	q.itt = s->itt++;
	q.rtt = rtt;
	q.cmdsn = s->cmdsn;
	q.expstatsn = s->exp_statsn;
	q.refcmdsn = refcmdsn;
	pdu_encode_tmf_req(bhs, &q);
	pdu_set_data_len(bhs, 0);
	if (pt_send_pdu(s->fd, bhs, NULL, 0) < 0)
		return -1;
	for (;;) {
		int resp;

		if (pt_recv(s, &r, 5000) <= 0)
			return -1;
		if (pdu_opcode(r.bhs) == ISCSI_OP_TMF_RSP &&
		    pdu_itt(r.bhs) == q.itt) {
			resp = r.bhs[BHS_B2];
			pt_rx_free(&r);
			return resp;
		}
		pt_note("(opcode 0x%02x ITT 0x%x while waiting for the TMF response)",
			pdu_opcode(r.bhs), pdu_itt(r.bhs));
		pt_rx_free(&r);
	}
}

/* ---- (f) ---------------------------------------------------------------- */

static void test_reinstatement(void)
{
	struct pt_login_opts o = { 0 };
	struct pt_sess a, b;
	uint8_t isid[6];
	int64_t t0, ms;

	pt_note("(f) session reinstatement: same InitiatorName and ISID, TSIH 0");
	make_isid(isid, 0xf0);
	o.isid = isid;
	if (pt_login(&a, &o) < 0) {
		PT_CHECK(0, "(f) first login");
		return;
	}
	t0 = pt_now_ms();
	if (pt_login(&b, &o) < 0) {
		PT_CHECK(0, "(f) second login with the same ISID (status 0x%04x)",
			 (unsigned)b.login_status);
		pt_close(&a);
		return;
	}
	pt_note("(f) first session TSIH %u, second TSIH %u", a.tsih, b.tsih);
	ms = wait_closed(&a, t0, t0 + 3000);
	PT_CHECK(ms >= 0, "(f) the first session's connection was closed by the target (%lld ms)",
		 (long long)ms);
	pt_close(&a);
	PT_CHECK(pt_tur(&b) == SAM_STAT_GOOD,
		 "(f) the new session serves TEST UNIT READY (GOOD)");
	pt_logout(&b);
}

/* ---- (g) ---------------------------------------------------------------- */

static void test_nop(void)
{
	struct pt_sess live, dead;
	int64_t t_live, t_dead, dead_ms = -1, live_closed_ms = -1, end;
	unsigned dead_pings = 0, dead_bad_pings = 0;
	struct pt_rx r;

	pt_note("(g) NOP-In liveness (nop_interval %d s, nop_timeout %d s)",
		NOP_INTERVAL_MS / 1000, NOP_TIMEOUT_MS / 1000);
	if (pt_login(&live, NULL) < 0) {
		PT_CHECK(0, "(g) login of the answering session");
		return;
	}
	t_live = pt_now_ms();
	if (pt_login(&dead, NULL) < 0) {
		PT_CHECK(0, "(g) login of the silent session");
		pt_close(&live);
		return;
	}
	t_dead = pt_now_ms();
	/* Both sessions at once: the live one answers every ping for 5 s
	 * while the silent one should be dropped. */
	live.answer_pings = false;	/* answered here, without blocking */
	end = t_live + 5000;
	if (end < t_dead + NOP_INTERVAL_MS + NOP_TIMEOUT_MS + 2500)
		end = t_dead + NOP_INTERVAL_MS + NOP_TIMEOUT_MS + 2500;
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = live.fd, .events = POLLIN },
			{ .fd = dead.fd, .events = POLLIN },
		};
		int64_t now = pt_now_ms();
		bool live_due = now < t_live + 5000 && live.fd >= 0;
		int rc;

		if (now >= end || (!live_due && dead.fd < 0))
			break;
		if (!live_due)
			pfd[0].fd = -1;
		if (poll(pfd, 2, 100) <= 0)
			continue;
		if (pfd[0].revents) {
			rc = pt_recv_raw(live.fd, &r, pt_now_ms() + 2000);
			if (rc < 0) {
				live_closed_ms = pt_now_ms() - t_live;
				pt_close(&live);
			} else if (rc > 0) {
				pt_track_sn(&live, r.bhs);
				if (pdu_opcode(r.bhs) == ISCSI_OP_NOP_IN &&
				    get_be32(r.bhs + BHS_TTT) != ISCSI_RSVD_TAG)
					pt_answer_ping(&live, &r);
				else
					pt_note("(g) answering session got opcode 0x%02x",
						pdu_opcode(r.bhs));
				pt_rx_free(&r);
			}
		}
		if (pfd[1].revents) {
			rc = pt_recv_raw(dead.fd, &r, pt_now_ms() + 2000);
			if (rc < 0) {
				dead_ms = pt_now_ms() - t_dead;
				pt_close(&dead);
			} else if (rc > 0) {
				if (pdu_opcode(r.bhs) == ISCSI_OP_NOP_IN) {
					dead_pings++;
					if (pdu_itt(r.bhs) != ISCSI_RSVD_TAG ||
					    get_be32(r.bhs + BHS_TTT) ==
						    ISCSI_RSVD_TAG)
						dead_bad_pings++;
				} else {
					pt_note("(g) silent session got opcode 0x%02x",
						pdu_opcode(r.bhs));
				}
				pt_rx_free(&r);
			}
		}
	}
	PT_CHECK(live.fd >= 0, "(g) the answering session stayed up for 5 s%s",
		 live.fd >= 0 ? "" : " (closed early)");
	if (live_closed_ms >= 0)
		pt_note("(g) answering session closed after %lld ms",
			(long long)live_closed_ms);
	PT_CHECK(live.pings_answered >= 1,
		 "(g) it was pinged and answered %u NOP-In", live.pings_answered);
	if (live.fd >= 0) {
		live.answer_pings = true;
		PT_CHECK(pt_tur(&live) == SAM_STAT_GOOD,
			 "(g) the answering session still serves TEST UNIT READY");
		pt_logout(&live);
	}
	PT_CHECK(dead_pings >= 1 && dead_bad_pings == 0,
		 "(g) the silent session saw %u NOP-In ping(s) with ITT 0xffffffff and a TTT (%u malformed)",
		 dead_pings, dead_bad_pings);
	PT_CHECK(dead_ms >= 0 &&
		 dead_ms <= NOP_INTERVAL_MS + NOP_TIMEOUT_MS + 2000 + 500,
		 "(g) the silent session was closed by the target after %lld ms (limit %d)",
		 (long long)dead_ms, NOP_INTERVAL_MS + NOP_TIMEOUT_MS + 2000);
	pt_close(&dead);
}

/* ---- (h) ---------------------------------------------------------------- */

static int send_text(struct pt_sess *s, uint32_t itt, uint32_t ttt,
		     const char *text, uint32_t len)
{
	struct pdu_text_req q = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];

	q.final = true;
	q.itt = itt;
	q.ttt = ttt;
	q.cmdsn = s->cmdsn++;
	q.expstatsn = s->exp_statsn;
	q.data_len = len;
	pdu_encode_text_req(bhs, &q);
	pdu_set_data_len(bhs, len);
	return pt_send_pdu(s->fd, bhs, text, len);
}

/* Appends a segment to a growing buffer; -1 when out of memory. */
static int buf_append(uint8_t **buf, size_t *len, size_t *cap,
		      const uint8_t *data, uint32_t n)
{
	if (*len + n + 1 > *cap) {
		size_t ncap = (*len + n + 1) * 2;
		uint8_t *p = realloc(*buf, ncap);

		if (!p)
			return -1;
		*buf = p;
		*cap = ncap;
	}
	if (n)
		memcpy(*buf + *len, data, n);
	*len += n;
	(*buf)[*len] = 0;
	return 0;
}

/*
 * Checks the assembled SendTargets text: each TargetName once, each with
 * at least one TargetAddress, and every expected target present.
 */
static void check_sendtargets(const uint8_t *text, size_t len)
{
	const char **names = NULL;
	unsigned *naddr = NULL;
	unsigned n = 0, cap = 0, dups = 0, noaddr = 0, missing = 0, i, j;
	size_t off = 0;
	char want[300];

	while (off < len) {
		const char *pair = (const char *)text + off;
		size_t plen = strnlen(pair, len - off);

		off += plen + 1;
		if (!strncmp(pair, "TargetName=", 11)) {
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				names = realloc(names, cap * sizeof(*names));
				naddr = realloc(naddr, cap * sizeof(*naddr));
				if (!names || !naddr) {
					PT_CHECK(0, "(h) out of memory");
					goto out;
				}
			}
			names[n] = pair + 11;
			naddr[n++] = 0;
		} else if (!strncmp(pair, "TargetAddress=", 14) && n > 0) {
			naddr[n - 1]++;
		}
	}
	for (i = 0; i < n; i++) {
		if (!naddr[i])
			noaddr++;
		for (j = i + 1; j < n; j++)
			if (!strcmp(names[i], names[j]))
				dups++;
	}
	for (i = 0; i <= nextra; i++) {
		bool found = false;

		if (i == 0)
			snprintf(want, sizeof(want), "%s", pt_target_iqn);
		else
			snprintf(want, sizeof(want), "%s-t%03u", pt_target_iqn, i);
		for (j = 0; j < n && !found; j++)
			found = !strcmp(names[j], want);
		if (!found) {
			if (missing++ < 5)
				pt_note("(h) target %s not listed", want);
		}
	}
	PT_CHECK(n == nextra + 1 && dups == 0 && missing == 0,
		 "(h) SendTargets lists %u targets (want %u), %u duplicate(s), %u missing",
		 n, nextra + 1, dups, missing);
	PT_CHECK(n > 0 && noaddr == 0,
		 "(h) every target comes with a TargetAddress (%u without)",
		 noaddr);
out:
	free(names);
	free(naddr);
}

static void test_text(void)
{
	static const char req[] = "SendTargets=All";
	struct pt_login_opts o = { 0 };
	struct pt_sess s;
	uint8_t *text = NULL;
	size_t tlen = 0, tcap = 0;
	unsigned nrsp = 0, ncont = 0, bad_mid = 0, too_long = 0, bad_itt = 0;
	bool done = false;
	uint32_t itt;

	pt_note("(h) text continuation: SendTargets=All with MaxRecvDataSegmentLength=512");
	o.discovery = true;
	o.mrdsl = "512";
	o.split = true;
	if (pt_login(&s, &o) < 0) {
		PT_CHECK(0, "(h) discovery login with its text split over two PDUs");
		return;
	}
	PT_CHECK(s.split_acked,
		 "(h) a Login Request text split with the C bit is acknowledged and accepted");
	itt = s.itt++;
	if (send_text(&s, itt, ISCSI_RSVD_TAG, req, sizeof(req)) < 0) {
		PT_CHECK(0, "(h) send SendTargets");
		pt_close(&s);
		return;
	}
	while (nrsp < 4096) {
		struct pdu_text_rsp tr;
		struct pt_rx r;
		int rc = pt_recv(&s, &r, 5000);

		if (rc <= 0) {
			PT_CHECK(0, "(h) %s after %u Text Response(s)",
				 rc ? "connection closed" : "no Text Response in 5 s",
				 nrsp);
			break;
		}
		if (pdu_opcode(r.bhs) != ISCSI_OP_TEXT_RSP) {
			PT_CHECK(0, "(h) opcode 0x%02x (reason 0x%02x) instead of a Text Response",
				 pdu_opcode(r.bhs), r.bhs[BHS_B2]);
			pt_rx_free(&r);
			break;
		}
		pdu_decode_text_rsp(r.bhs, &tr);
		nrsp++;
		if (r.len > 512)
			too_long++;
		if (tr.itt != itt)
			bad_itt++;
		if (buf_append(&text, &tlen, &tcap, r.data, r.len) < 0) {
			pt_rx_free(&r);
			PT_CHECK(0, "(h) out of memory");
			break;
		}
		pt_rx_free(&r);
		if (tr.final) {
			if (tr.cont || tr.ttt != ISCSI_RSVD_TAG)
				bad_mid++;
			done = true;
			break;
		}
		/* Not final: the target continues on an empty request that
		 * echoes its TTT. */
		if (tr.cont)
			ncont++;
		else
			bad_mid++;
		if (tr.ttt == ISCSI_RSVD_TAG) {
			PT_CHECK(0, "(h) a non-final Text Response without a TTT");
			break;
		}
		if (send_text(&s, itt, tr.ttt, NULL, 0) < 0) {
			PT_CHECK(0, "(h) send a continuation request");
			break;
		}
	}
	if (done) {
		PT_CHECK(nrsp >= 2 && ncont == nrsp - 1 && bad_mid == 0,
			 "(h) %u bytes over %u Text Responses: %u with C=1 and a TTT, the last with F=1 (%u malformed)",
			 (unsigned)tlen, nrsp, ncont, bad_mid);
		PT_CHECK(too_long == 0 && bad_itt == 0,
			 "(h) every response within 512 bytes (%u over) and with our ITT (%u not)",
			 too_long, bad_itt);
		check_sendtargets(text, tlen);
	}
	free(text);
	pt_logout(&s);
}

/* ---- (i) ---------------------------------------------------------------- */

static void test_abort(void)
{
	struct pt_login_opts o = { 0 };
	struct pt_sess s;
	uint8_t cdb[16] = { SOP_WRITE_10 };
	uint32_t witt, wsn;
	struct pdu_r2t r2t;
	struct pt_rx r;
	int rc;

	pt_note("(i) ABORT TASK of a WRITE waiting for Data-Out (ImmediateData=No)");
	o.immediate_data = "No";
	if (pt_login(&s, &o) < 0) {
		PT_CHECK(0, "(i) login");
		return;
	}
	/* A new I_T nexus may start with a unit attention: clear it. */
	PT_CHECK(pt_tur(&s) == SAM_STAT_GOOD, "(i) TEST UNIT READY is GOOD");
	witt = s.itt++;
	wsn = s.cmdsn++;
	put_be32(cdb + 2, 0);
	put_be16(cdb + 7, 128);		/* 64 KiB of 512-byte blocks */
	if (send_scsi(&s, witt, wsn, cdb, false, true, 65536) < 0) {
		PT_CHECK(0, "(i) send WRITE(10)");
		pt_close(&s);
		return;
	}
	rc = pt_recv(&s, &r, 5000);
	if (rc <= 0) {
		PT_CHECK(0, "(i) no R2T for the WRITE (%s)",
			 rc ? "connection closed" : "timeout");
		pt_close(&s);
		return;
	}
	if (pdu_opcode(r.bhs) != ISCSI_OP_R2T || pdu_itt(r.bhs) != witt) {
		PT_CHECK(0, "(i) WRITE answered with opcode 0x%02x (status 0x%02x, sense key %d), not an R2T",
			 pdu_opcode(r.bhs), r.bhs[BHS_B3],
			 pdu_opcode(r.bhs) == ISCSI_OP_SCSI_RSP ?
				 pt_sense_key(&r) : -1);
		pt_rx_free(&r);
		pt_close(&s);
		return;
	}
	pdu_decode_r2t(r.bhs, &r2t);
	PT_CHECK(r2t.offset == 0 && r2t.length > 0 && r2t.length <= 65536 &&
		 r2t.ttt != ISCSI_RSVD_TAG,
		 "(i) R2T for the WRITE: offset %u, length %u, TTT 0x%x",
		 r2t.offset, r2t.length, r2t.ttt);
	pt_rx_free(&r);

	/* No Data-Out: abort the write while it waits. */
	s.watch_itt = witt;
	s.watch_hits = 0;
	rc = tmf(&s, ISCSI_TMF_ABORT_TASK, witt, wsn);
	PT_CHECK(rc == ISCSI_TMF_RSP_COMPLETE,
		 "(i) ABORT TASK of the WRITE answered %d (want 0, function complete)",
		 rc);
	if (rc < 0) {
		pt_close(&s);
		return;
	}
	/* Data-Out answering the R2T may still be on its way after an
	 * abort; the target must drop it: an aborted task never completes,
	 * so a write that was not really aborted would answer now. */
	if (rc == ISCSI_TMF_RSP_COMPLETE && r2t.length <= 65536)
		send_data_out(&s, witt, &r2t);
	PT_CHECK(pt_tur(&s) == SAM_STAT_GOOD,
		 "(i) TEST UNIT READY after the abort is GOOD");
	/* Anything late for the aborted write would show up here. */
	rc = pt_recv(&s, &r, 300);
	if (rc > 0) {
		pt_note("(i) unexpected opcode 0x%02x ITT 0x%x", pdu_opcode(r.bhs),
			pdu_itt(r.bhs));
		pt_rx_free(&r);
	}
	PT_CHECK(s.watch_hits == 0,
		 "(i) no SCSI Response (or any PDU) for the aborted WRITE (%u seen)",
		 s.watch_hits);
	s.watch_itt = ISCSI_RSVD_TAG;

	rc = tmf(&s, ISCSI_TMF_ABORT_TASK, 0x7eadbeef, s.exp_cmdsn - 1);
	PT_CHECK(rc == ISCSI_TMF_RSP_NO_TASK,
		 "(i) ABORT TASK of an unused ITT, RefCmdSN below ExpCmdSN: %d (want 1, task does not exist)",
		 rc);
	rc = tmf(&s, ISCSI_TMF_LUN_RESET, ISCSI_RSVD_TAG, 0);
	PT_CHECK(rc == ISCSI_TMF_RSP_COMPLETE,
		 "(i) LUN RESET answered %d (want 0)", rc);
	PT_CHECK(pt_tur(&s) == SAM_STAT_GOOD,
		 "(i) the session goes on: TEST UNIT READY is GOOD");
	pt_logout(&s);
}

/* ---- (j) ---------------------------------------------------------------- */

/* As large as tcqd allows by default (max_transfer_length 8M): more than
 * the socket buffers hold, so the READ is surely still going when the
 * Logout arrives. */
#define READ_BYTES (8u << 20)

static void test_logout_read(void)
{
	struct pt_sess s;
	uint8_t cdb[16] = { SOP_READ_10 };
	struct pdu_logout_req lo = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];
	uint32_t ritt, got = 0, next_off = 0, next_datasn = 0;
	bool read_done = false, logout_seen = false, logout_after = false;
	bool in_order = true;
	int status = -1, lresp = -1;
	int64_t deadline, t0, ms;

	pt_note("(j) Logout (close session) with a READ outstanding");
	if (pt_login(&s, NULL) < 0) {
		PT_CHECK(0, "(j) login");
		return;
	}
	PT_CHECK(pt_tur(&s) == SAM_STAT_GOOD, "(j) TEST UNIT READY is GOOD");
	ritt = s.itt++;
	put_be32(cdb + 2, 0);
	put_be16(cdb + 7, READ_BYTES / 512);
	lo.immediate = true;
	lo.reason = ISCSI_LOGOUT_CLOSE_SESSION;
	if (send_scsi(&s, ritt, s.cmdsn++, cdb, true, false, READ_BYTES) < 0) {
		PT_CHECK(0, "(j) send READ(10)");
		pt_close(&s);
		return;
	}
	lo.itt = s.itt++;
	lo.cmdsn = s.cmdsn;
	lo.expstatsn = s.exp_statsn;
	pdu_encode_logout_req(bhs, &lo);
	pdu_set_data_len(bhs, 0);
	if (pt_send_pdu(s.fd, bhs, NULL, 0) < 0) {
		PT_CHECK(0, "(j) send Logout");
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
			pt_note("(j) unexpected opcode 0x%02x ITT 0x%x", op,
				pdu_itt(r.bhs));
		}
		pt_rx_free(&r);
	}
	PT_CHECK(read_done && status == SAM_STAT_GOOD && got == READ_BYTES &&
		 in_order,
		 "(j) the READ completed: %u of %u bytes%s, status %d",
		 got, READ_BYTES, in_order ? " in order" : " OUT OF ORDER",
		 status);
	PT_CHECK(logout_seen && logout_after,
		 "(j) the Logout Response came %s",
		 !logout_seen ? "never" :
		 logout_after ? "after the READ's data and status" :
				"BEFORE the READ's status");
	PT_CHECK(lresp == ISCSI_LOGOUT_RSP_SUCCESS,
		 "(j) Logout response %d (want 0)", lresp);
	if (logout_seen) {
		t0 = pt_now_ms();
		ms = wait_closed(&s, t0, t0 + 3000);
		PT_CHECK(ms >= 0, "(j) then the target closed the connection (%lld ms)",
			 (long long)ms);
	}
	pt_close(&s);
}

/* ---- (k) ---------------------------------------------------------------- */

static void test_join(void)
{
	struct pt_login_opts o = { 0 };
	struct pt_sess a, b;
	uint8_t isid[6];
	int rc;

	pt_note("(k) a second connection for a live session; an unknown TSIH");
	make_isid(isid, 0xf1);
	o.isid = isid;
	if (pt_login(&a, &o) < 0) {
		PT_CHECK(0, "(k) login");
		return;
	}
	o.tsih = a.tsih;
	o.cid = 1;
	rc = pt_login(&b, &o);
	PT_CHECK(rc < 0 && b.login_status == ISCSI_LS_TOO_MANY_CONNS,
		 "(k) CID 1 joining TSIH %u: login status 0x%04x (want 0x0206)",
		 a.tsih, rc < 0 ? (unsigned)b.login_status : 0u);
	if (rc == 0)
		pt_close(&b);

	memset(&o, 0, sizeof(o));
	o.tsih = (uint16_t)(a.tsih ^ 0x5a5a);
	if (!o.tsih)
		o.tsih = 0x5a5a;
	rc = pt_login(&b, &o);
	PT_CHECK(rc < 0 && b.login_status == ISCSI_LS_SESSION_NOT_EXIST,
		 "(k) unknown TSIH %u: login status 0x%04x (want 0x020a)",
		 o.tsih, rc < 0 ? (unsigned)b.login_status : 0u);
	if (rc == 0)
		pt_close(&b);
	PT_CHECK(pt_tur(&a) == SAM_STAT_GOOD,
		 "(k) the live session still serves TEST UNIT READY");
	pt_logout(&a);
}

int main(int argc, char **argv)
{
	int64_t t0 = pt_now_ms();

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: %s HOST PORT TARGET-IQN [NEXTRA]\n",
			argv[0]);
		return 2;
	}
	pt_prog = "sessions";
	pt_initiator = "iqn.2026-11.org.tcq:sessions";
	pt_host = argv[1];
	pt_port = argv[2];
	pt_target_iqn = argv[3];
	if (argc == 5)
		nextra = (unsigned)strtoul(argv[4], NULL, 10);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Every receive has a deadline; this is the last resort. */
	alarm(60);

	test_reinstatement();
	test_nop();
	test_text();
	test_abort();
	test_logout_read();
	test_join();

	pt_note("%s (%d failure%s) in %lld ms",
		pt_failures ? "FAILED" : "passed", pt_failures,
		pt_failures == 1 ? "" : "s", (long long)(pt_now_ms() - t0));
	return pt_failures ? 1 : 0;
}
