/*
 * sessions: protocol-level checks of session behaviour against a running
 * tcqd, with the raw iSCSI client of pdutest.c. Cases:
 *
 *   reinstatement_same_isid_closes_old_session (RFC 7143 6.3.5)
 *   nop_in_answered_keeps_session, nop_in_unanswered_ends_session:
 *       NOP-In liveness (RFC 7143 11.19)
 *   text_response_continuation_sendtargets_all: SendTargets=All over a
 *       small MaxRecvDataSegmentLength, in Text Responses with C=1
 *   login_request_continuation_c_bit_acknowledged (RFC 7143 11.12.2)
 *   second_connection_refused_0206 (MaxConnections=1),
 *   unknown_tsih_refused_020a (RFC 7143 11.13.5)
 *   nexus_loss_ends_before_next_session_runs,
 *   reinstatement_ends_old_nexus_before_new_session_runs: a lost or
 *       reinstated nexus is gone (its RESERVE(6) released) before the
 *       initiator's next session runs a command, I/O still running
 *
 *   sessions [-x NEXTRA] HOST PORT TARGET-IQN [CASE...]   sessions --list
 *
 * The target must run with nop_interval = 1 and nop_timeout = 2. With
 * -x NEXTRA, the target also serves NEXTRA targets named TARGET-IQN-tNNN
 * (N = 1..NEXTRA), and SendTargets must list every one.
 * Exit status: 0 when every case passed, 1 otherwise, 2 on usage errors.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"
#include "tests/integration/pdutest.h"
#include "tests/integration/ptcmd.h"
#include "tests/integration/ptcase.h"
#include "tests/integration/pttext.h"

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

/* ---- reinstatement -------------------------------------------------------- */

static void reinstatement_same_isid_closes_old_session(void)
{
	struct pt_login_opts o = { 0 };
	struct pt_sess a, b;
	uint8_t isid[6];
	int64_t ms;

	pt_note("session reinstatement: same InitiatorName and ISID, TSIH 0");
	make_isid(isid, 0xf0);
	o.isid = isid;
	if (pt_login(&a, &o) < 0) {
		PT_CHECK(0, "first login");
		return;
	}
	if (pt_login(&b, &o) < 0) {
		PT_CHECK(0, "second login with the same ISID (status 0x%04x)",
			 (unsigned)b.login_status);
		pt_close(&a);
		return;
	}
	pt_note("first session TSIH %u, second TSIH %u", a.tsih, b.tsih);
	ms = pt_wait_closed(&a, 3000);
	PT_CHECK(ms >= 0, "the first session's connection was closed by the target (%lld ms)",
		 (long long)ms);
	pt_close(&a);
	PT_CHECK(pt_tur(&b) == SAM_STAT_GOOD,
		 "the new session serves TEST UNIT READY (GOOD)");
	pt_logout(&b);
}

/* ---- NOP-In liveness ------------------------------------------------------ */

/* Answers every ping for 5 s: longer than nop_interval + nop_timeout. */
static void nop_in_answered_keeps_session(void)
{
	struct pt_sess s;
	int64_t end;
	struct pt_rx r;
	int rc = 0;

	pt_note("NOP-In pings answered for 5 s (nop_interval %d s, nop_timeout %d s)",
		NOP_INTERVAL_MS / 1000, NOP_TIMEOUT_MS / 1000);
	if (pt_login(&s, NULL) < 0) {
		PT_CHECK(0, "login");
		return;
	}
	end = pt_now_ms() + 5000;
	while (pt_now_ms() < end) {
		/* pt_recv answers the pings itself and returns the rest */
		rc = pt_recv(&s, &r, (int)(end - pt_now_ms()));
		if (rc < 0)
			break;
		if (rc > 0) {
			pt_note("(got opcode 0x%02x)", pdu_opcode(r.bhs));
			pt_rx_free(&r);
		}
	}
	PT_CHECK(rc >= 0, "the answering session stayed up for 5 s%s",
		 rc >= 0 ? "" : " (CLOSED EARLY)");
	PT_CHECK(s.pings_answered >= 1,
		 "it was pinged and answered %u NOP-In", s.pings_answered);
	if (rc < 0) {
		pt_close(&s);
		return;
	}
	PT_CHECK(pt_tur(&s) == SAM_STAT_GOOD,
		 "the answering session still serves TEST UNIT READY");
	pt_logout(&s);
}

static void nop_in_unanswered_ends_session(void)
{
	const int limit = NOP_INTERVAL_MS + NOP_TIMEOUT_MS + 2000;
	unsigned pings = 0, bad_pings = 0;
	int64_t t0, closed_ms = -1;
	struct pt_sess s;
	struct pt_rx r;

	pt_note("NOP-In pings left unanswered");
	if (pt_login(&s, NULL) < 0) {
		PT_CHECK(0, "login");
		return;
	}
	t0 = pt_now_ms();
	while (closed_ms < 0 && pt_now_ms() < t0 + limit + 500) {
		int rc = pt_recv_raw(s.fd, &r, t0 + limit + 500);

		if (rc < 0) {
			closed_ms = pt_now_ms() - t0;
		} else if (rc > 0) {
			if (pdu_opcode(r.bhs) == ISCSI_OP_NOP_IN) {
				pings++;
				/* RFC 7143 11.19: a ping has ITT 0xffffffff
				 * and a TTT to answer with */
				if (pdu_itt(r.bhs) != ISCSI_RSVD_TAG ||
				    get_be32(r.bhs + BHS_TTT) == ISCSI_RSVD_TAG)
					bad_pings++;
			} else {
				pt_note("(silent session got opcode 0x%02x)",
					pdu_opcode(r.bhs));
			}
			pt_rx_free(&r);
		}
	}
	PT_CHECK(pings >= 1 && bad_pings == 0,
		 "the silent session saw %u NOP-In ping(s) with ITT 0xffffffff and a TTT (%u malformed)",
		 pings, bad_pings);
	PT_CHECK(closed_ms >= 0,
		 "the silent session was closed by the target (after %lld ms; waited %d ms)",
		 (long long)closed_ms, limit + 500);
	pt_close(&s);
}

/* ---- Text and Login continuation ----------------------------------------- */

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
					PT_CHECK(0, "out of memory");
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
				pt_note("target %s not listed", want);
		}
	}
	PT_CHECK(n == nextra + 1 && dups == 0 && missing == 0,
		 "SendTargets lists %u targets (want %u), %u duplicate(s), %u missing",
		 n, nextra + 1, dups, missing);
	PT_CHECK(n > 0 && noaddr == 0,
		 "every target comes with a TargetAddress (%u without)",
		 noaddr);
out:
	free(names);
	free(naddr);
}

static void text_response_continuation_sendtargets_all(void)
{
	struct pt_login_opts o = { 0 };
	struct pt_text t;
	struct pt_sess s;

	pt_note("text continuation: SendTargets=All with MaxRecvDataSegmentLength=512");
	o.discovery = true;
	o.mrdsl = "512";
	if (pt_login(&s, &o) < 0) {
		PT_CHECK(0, "discovery login");
		return;
	}
	if (pt_text(&s, "SendTargets=All", 512, &t) == 0) {
		PT_CHECK(t.nrsp >= 2 && t.ncont == t.nrsp - 1 && t.bad_mid == 0,
			 "%u bytes over %u Text Responses: %u with C=1 and a TTT, the last with F=1 (%u malformed)",
			 (unsigned)t.len, t.nrsp, t.ncont, t.bad_mid);
		PT_CHECK(t.too_long == 0 && t.bad_itt == 0,
			 "every response within 512 bytes (%u over) and with our ITT (%u not)",
			 t.too_long, t.bad_itt);
		check_sendtargets(t.data, t.len);
	}
	free(t.data);
	pt_logout(&s);
}

static void login_request_continuation_c_bit_acknowledged(void)
{
	struct pt_login_opts o = { 0 };
	struct pt_sess s;

	pt_note("a Login Request text split over two PDUs (C bit)");
	o.split = true;
	if (pt_login(&s, &o) < 0) {
		PT_CHECK(0, "login with its text split over two PDUs");
		return;
	}
	PT_CHECK(s.split_acked,
		 "a Login Request text split with the C bit is acknowledged with an empty response and accepted");
	PT_CHECK(pt_tur(&s) == SAM_STAT_GOOD,
		 "the session serves TEST UNIT READY");
	pt_logout(&s);
}

/* ---- joining a session ---------------------------------------------------- */

static void second_connection_refused_0206(void)
{
	struct pt_login_opts o = { 0 };
	struct pt_sess a, b;
	uint8_t isid[6];
	int rc;

	pt_note("a second connection for a live session (MaxConnections=1)");
	make_isid(isid, 0xf1);
	o.isid = isid;
	if (pt_login(&a, &o) < 0) {
		PT_CHECK(0, "login");
		return;
	}
	o.tsih = a.tsih;
	o.cid = 1;
	rc = pt_login(&b, &o);
	PT_CHECK(rc < 0 && b.login_status == ISCSI_LS_TOO_MANY_CONNS,
		 "CID 1 joining TSIH %u: login status 0x%04x (want 0x0206, too many connections)",
		 a.tsih, rc < 0 ? (unsigned)b.login_status : 0u);
	if (rc == 0)
		pt_close(&b);
	PT_CHECK(pt_tur(&a) == SAM_STAT_GOOD,
		 "the live session still serves TEST UNIT READY");
	pt_logout(&a);
}

static void unknown_tsih_refused_020a(void)
{
	struct pt_login_opts o = { 0 };
	struct pt_sess a, b;
	int rc;

	pt_note("a login naming a TSIH the target never gave out");
	if (pt_login(&a, NULL) < 0) {
		PT_CHECK(0, "login");
		return;
	}
	o.tsih = (uint16_t)(a.tsih ^ 0x5a5a);
	if (!o.tsih)
		o.tsih = 0x5a5a;
	rc = pt_login(&b, &o);
	PT_CHECK(rc < 0 && b.login_status == ISCSI_LS_SESSION_NOT_EXIST,
		 "unknown TSIH %u: login status 0x%04x (want 0x020a, session does not exist)",
		 o.tsih, rc < 0 ? (unsigned)b.login_status : 0u);
	if (rc == 0)
		pt_close(&b);
	PT_CHECK(pt_tur(&a) == SAM_STAT_GOOD,
		 "the live session still serves TEST UNIT READY");
	pt_logout(&a);
}

/* ---- the loss of an I_T nexus comes before the next session ------------- */

/* LUN 1 of the fixture: reads take 1.5 s (a delay backend). */
#define SLOW_LUN 1
#define SLOW_MS 1500

/* A CDB without data to the slow LUN, past unit attentions. */
static int slow_nodata(struct pt_sess *s, const uint8_t *cdb, unsigned len)
{
	struct pc_cmd c;
	int ua[4];

	pc_nodata(&c, cdb, len);
	c.lun = SLOW_LUN;
	return pc_run_past_ua(s, &c, ua);
}

/* READ(10) of one block of the slow LUN: started, or run to its status
 * past unit attentions (each run takes 1.5 s, within pc_run's 5 s). */
static int slow_read(struct pt_sess *s, struct pc_cmd *c, uint8_t *buf,
		     bool wait)
{
	int ua[4];

	pc_rw10(c, false, 0, 1, buf, PC_BS);
	c->lun = SLOW_LUN;
	if (!wait)
		return pc_start(s, c);
	return pc_run_past_ua(s, c, ua);
}

/*
 * Session a (ISID tag_a) holds a RESERVE(6) reservation of the slow LUN
 * and has a READ running there when it ends: closed by us (reinstate
 * false) or reinstated by b, a new login with its ISID. A RESERVE(6)
 * reservation ends with the I_T nexus that holds it (SPC-2's reservations
 * end on an I_T nexus loss), and b's first command must find it gone, though
 * the READ is still running when b logs in (its nexus leaves the LUN
 * once it completes): so b's READ is GOOD, not RESERVATION CONFLICT.
 */
static void nexus_loss_before_next_session(bool reinstate)
{
	static const uint8_t reserve6[6] = { SOP_RESERVE_6 };
	struct pt_login_opts oa = { 0 }, ob = { 0 };
	uint8_t isid_a[6], isid_b[6], buf[PC_BS];
	struct pc_cmd rd;
	struct pt_sess a, b;
	int64_t t0, ms;
	int st;

	make_isid(isid_a, reinstate ? 0xe1 : 0xe2);
	make_isid(isid_b, reinstate ? 0xe1 : 0xe3);
	oa.isid = isid_a;
	ob.isid = isid_b;
	if (pt_login(&a, &oa) < 0) {
		PT_CHECK(0, "first login");
		return;
	}
	st = slow_nodata(&a, reserve6, sizeof(reserve6));
	PT_CHECK(st == SAM_STAT_GOOD, "RESERVE(6) of LUN %d by the first "
		 "session: status 0x%02x (want GOOD)", SLOW_LUN, st);
	if (slow_read(&a, &rd, buf, false) < 0) {
		PT_CHECK(0, "READ(10) sent on the first session");
		pt_close(&a);
		return;
	}
	if (!reinstate)
		pt_close(&a);	/* I_T nexus loss, the READ still running */
	t0 = pt_now_ms();
	if (pt_login(&b, &ob) < 0) {
		PT_CHECK(0, "second login (status 0x%04x)",
			 (unsigned)b.login_status);
		if (reinstate)
			pt_close(&a);
		return;
	}
	ms = pt_now_ms() - t0;
	pt_note("the second login took %lld ms", (long long)ms);
	st = slow_read(&b, &rd, buf, true);
	PT_CHECK(st == SAM_STAT_GOOD, "the new session's first READ(10) of "
		 "LUN %d: status 0x%02x (want GOOD: the reservation ended "
		 "with the %s session's nexus)", SLOW_LUN, st,
		 reinstate ? "reinstated" : "lost");
	if (reinstate) {
		ms = pt_wait_closed(&a, 3000);
		PT_CHECK(ms >= 0, "the reinstated session's connection was "
			 "closed by the target");
		pt_close(&a);
	}
	pt_logout(&b);
}

static void nexus_loss_ends_before_next_session_runs(void)
{
	pt_note("a session with a reservation and a READ running drops its "
		"connection; the initiator logs in again at once");
	nexus_loss_before_next_session(false);
}

static void reinstatement_ends_old_nexus_before_new_session_runs(void)
{
	pt_note("a session with a reservation and a READ running is "
		"reinstated (same ISID)");
	nexus_loss_before_next_session(true);
}

static const struct pt_case cases[] = {
	PT_CASE(nexus_loss_ends_before_next_session_runs),
	PT_CASE(reinstatement_ends_old_nexus_before_new_session_runs),
	PT_CASE(reinstatement_same_isid_closes_old_session),
	PT_CASE(nop_in_answered_keeps_session),
	PT_CASE(nop_in_unanswered_ends_session),
	PT_CASE(text_response_continuation_sendtargets_all),
	PT_CASE(login_request_continuation_c_bit_acknowledged),
	PT_CASE(second_connection_refused_0206),
	PT_CASE(unknown_tsih_refused_020a),
};

int main(int argc, char **argv)
{
	int opt;

	pt_prog = "sessions";
	pt_initiator = "iqn.2026-11.org.tcq:sessions";
	while ((opt = getopt(argc, argv, "x:")) != -1) {
		if (opt != 'x')
			return 2;
		nextra = (unsigned)strtoul(optarg, NULL, 10);
	}
	return pt_run_cases(argc - optind, argv + optind, cases,
			    PT_NCASES(cases),
			    "sessions [-x NEXTRA] HOST PORT TARGET-IQN [CASE...] | --list");
}
