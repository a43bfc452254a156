/*
 * reinstate: session reinstatement with tasks in flight (RFC 7143 6.3.5,
 * 11.12; SAM-5 I_T nexus loss), against a running tcqd, with the raw
 * client of pdutest.c. A new login with the ISID of a live session and
 * TSIH 0 reinstates it: the target closes the old session's connection
 * and terminates its tasks "without further notice to the initiator";
 * the new session then works. Cases:
 *
 *   reinstatement_ends_tasks_in_flight
 *       session A has a write acknowledged on the slow LUN, then two
 *       writes and a read running there (its delay backend holds each
 *       for seconds) when B logs in with A's ISID: A's connection is
 *       closed with no answer for any of the three, B gets none of
 *       them either (B's tags differ from A's), the acknowledged write
 *       reads back through B, each running write is on the LUN whole or
 *       not at all (never some of its blocks), and B reads and writes
 *   reinstatement_drops_write_waiting_for_data
 *       A's write holds its R2T (its data never sent) when B reinstates
 *       A: it never executes (the blocks keep what they held) and its
 *       late Data-Out, sent on A's closed connection, changes nothing
 *   max_connections_is_one
 *       tcqd answers MaxConnections=1 to an offer of 4 (13.2: the
 *       minimum), so a session is one connection and reinstatement ends
 *       exactly that one (sessions.sh: a second connection is refused)
 *
 *   reinstate HOST PORT TARGET-IQN [CASE...]     reinstate --list
 *
 * LUN 0: 512-byte blocks, fast; LUN 1 (SLOW_LUN): 512-byte blocks, a
 * delay backend of at least a second per I/O over a file
 * (reinstate.sh); nothing else using them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"
#include "tests/integration/pdutest.h"
#include "tests/integration/ptcase.h"
#include "tests/integration/ptcmd.h"

#define SLOW_LUN 1
#define BLOCKS 8
#define LEN (BLOCKS * PC_BS)
#define B_ITT 0x80000u		/* B's tags: none of A's */

static void make_isid(uint8_t isid[6], uint8_t tag)
{
	static const uint8_t base[6] = { 0x80, 0x52, 0x45, 0x49, 0x4e, 0 };

	memcpy(isid, base, 6);
	isid[5] = tag;
}

static int login(struct pt_sess *s, const uint8_t *isid, uint32_t itt)
{
	struct pt_login_opts o = { .isid = isid };

	if (pt_login(s, &o) < 0) {
		PT_CHECK(0, "login (status 0x%04x)", (unsigned)s->login_status);
		return -1;
	}
	s->itt = itt;
	return pc_tur_ua(s, NULL) == SAM_STAT_GOOD ? 0 : -1;
}

/* A write of LEN bytes of buf at lba of lun, all of it immediate. */
static void write_cmd(struct pc_cmd *c, uint64_t lun, uint32_t lba,
		      uint8_t *buf)
{
	pc_rw10(c, true, lba, BLOCKS, buf, PC_BS);
	c->lun = lun;
	c->imm_len = LEN;
}

/* Reads LEN bytes at lba of lun into buf: the status. */
static int read_lun(struct pt_sess *s, uint64_t lun, uint32_t lba,
		    uint8_t *buf)
{
	struct pc_cmd r;

	pc_rw10(&r, false, lba, BLOCKS, buf, PC_BS);
	r.lun = lun;
	return pc_run_past_ua(s, &r, NULL);
}

/* Every block of got is the block of old or of new at the same place,
 * and all of them the same one: the write happened whole or not. */
static const char *whole_or_none(const uint8_t *got, const uint8_t *old,
				 const uint8_t *new)
{
	if (!memcmp(got, new, LEN))
		return "written";
	if (!memcmp(got, old, LEN))
		return "not written";
	return NULL;
}

/* Waits for the target to close a's connection, counting what still
 * came for the commands in cmds. */
static void old_session_closed(struct pt_sess *a, struct pc_cmd **cmds,
			       unsigned n)
{
	unsigned stray = 0, answered = 0;
	int rc = pc_wait(a, cmds, n, NULL, NULL, 10000, &stray);

	for (unsigned i = 0; i < n; i++) {
		answered += cmds[i]->done;
		if (cmds[i]->done)
			pt_note("ITT 0x%x (CmdSN %u) answered: status 0x%02x, "
				"sense %x/%02x/%02x", cmds[i]->itt,
				cmds[i]->cmdsn, cmds[i]->status,
				cmds[i]->sense_key, cmds[i]->asc,
				cmds[i]->ascq);
	}
	PT_CHECK(rc < 0, "the old session's connection was closed by the "
		 "target (%s)", rc == 0 ? "still open after 10 s" : "closed");
	PT_CHECK(answered == 0 && stray == 0, "no answer came for its %u "
		 "tasks in flight (%u answered, %u other PDUs)", n, answered,
		 stray);
	pt_close(a);
}

static void reinstatement_ends_tasks_in_flight(void)
{
	static uint8_t p1[LEN], p2[LEN], p3[LEN], zero[LEN], got[LEN];
	struct pc_cmd w1, w2, w3, rd;
	struct pc_cmd *inflight[] = { &w2, &w3, &rd };
	struct pt_sess a, b;
	uint8_t isid[6];
	const char *how;

	make_isid(isid, 0x01);
	if (login(&a, isid, 0x1000) < 0)
		return;
	pc_fill(p1, LEN, 1);
	pc_fill(p2, LEN, 2);
	pc_fill(p3, LEN, 3);
	write_cmd(&w1, SLOW_LUN, 0, p1);
	PT_CHECK(pc_run_past_ua(&a, &w1, NULL) == SAM_STAT_GOOD,
		 "a write acknowledged (GOOD) on the slow LUN");
	write_cmd(&w2, SLOW_LUN, 64, p2);
	write_cmd(&w3, SLOW_LUN, 128, p3);
	pc_rw10(&rd, false, 0, BLOCKS, got, PC_BS);
	rd.lun = SLOW_LUN;
	if (pc_start(&a, &w2) < 0 || pc_start(&a, &w3) < 0 ||
	    pc_start(&a, &rd) < 0) {
		PT_CHECK(0, "three commands sent");
		pt_close(&a);
		return;
	}
	/* They are in the delay backend for seconds: reinstate now. */
	if (login(&b, isid, B_ITT) < 0) {
		pt_close(&a);
		return;
	}
	PT_CHECK(b.tsih != a.tsih, "a new session (TSIH %u, the old %u)",
		 b.tsih, a.tsih);
	old_session_closed(&a, inflight, 3);
	PT_CHECK(read_lun(&b, SLOW_LUN, 0, got) == SAM_STAT_GOOD &&
		 !memcmp(got, p1, LEN), "the acknowledged write reads back "
		 "through the new session");
	PT_CHECK(read_lun(&b, SLOW_LUN, 64, got) == SAM_STAT_GOOD &&
		 (how = whole_or_none(got, zero, p2)) != NULL,
		 "the first write in flight is on the LUN whole or not at "
		 "all (%s)", how ? how : "some of its blocks");
	PT_CHECK(read_lun(&b, SLOW_LUN, 128, got) == SAM_STAT_GOOD &&
		 (how = whole_or_none(got, zero, p3)) != NULL,
		 "the second write in flight is on the LUN whole or not at "
		 "all (%s)", how ? how : "some of its blocks");
	PT_CHECK(pc_rw(&b, true, 256, LEN, p3, LEN) == SAM_STAT_GOOD &&
		 pc_same_as(&b, 256, LEN, p3) == 1,
		 "the new session writes and reads LUN 0");
	pt_logout(&b);
}

static void reinstatement_drops_write_waiting_for_data(void)
{
	static uint8_t old[LEN], new[LEN];
	struct pc_cmd w, rd;
	struct pc_cmd *inflight[] = { &w, &rd };
	struct pt_sess a, b;
	uint8_t isid[6], buf[LEN];

	make_isid(isid, 0x02);
	if (login(&a, isid, 0x1000) < 0)
		return;
	pc_fill(old, LEN, 4);
	pc_fill(new, LEN, 5);
	PT_CHECK(pc_rw(&a, true, 512, LEN, old, LEN) == SAM_STAT_GOOD,
		 "LUN 0 blocks 512-519 written first");
	/* The slow LUN's unit attention for A's nexus, out of the way. */
	PT_CHECK(read_lun(&a, SLOW_LUN, 0, buf) == SAM_STAT_GOOD,
		 "a read of the slow LUN");
	if (pc_pending_write(&a, &w, 512, LEN, new) < 0) {
		pt_close(&a);
		return;
	}
	pc_rw10(&rd, false, 0, BLOCKS, buf, PC_BS);
	rd.lun = SLOW_LUN;
	if (pc_start(&a, &rd) < 0) {
		PT_CHECK(0, "a read of the slow LUN sent");
		pt_close(&a);
		return;
	}
	if (login(&b, isid, B_ITT) < 0) {
		pt_close(&a);
		return;
	}
	/* Too late: the data for the held R2T, on the old connection. */
	pc_release(&a, &w);
	old_session_closed(&a, inflight, 2);
	PT_CHECK(pc_same_as(&b, 512, LEN, old) == 1, "the write that waited "
		 "for its data never executed: the blocks hold what they "
		 "held");
	pt_logout(&b);
}

static void max_connections_is_one(void)
{
	static const char keys[] = "MaxConnections=4";
	struct pt_login_opts o = { .keys = keys, .keys_len = sizeof(keys) };
	struct pt_sess s;
	const char *v;

	if (pt_login(&s, &o) < 0) {
		PT_CHECK(0, "login");
		return;
	}
	v = pt_kv_find((const uint8_t *)s.login_rsp, s.login_rsp_len,
		       "MaxConnections");
	PT_CHECK(v && !strcmp(v, "1"), "MaxConnections=4 answered with %s "
		 "(want 1: no connection joins a session)", v ? v : "nothing");
	pt_logout(&s);
}

static const struct pt_case cases[] = {
	PT_CASE(reinstatement_ends_tasks_in_flight),
	PT_CASE(reinstatement_drops_write_waiting_for_data),
	PT_CASE(max_connections_is_one),
};

static const struct pt_driver driver = {
	.prog = "reinstate",
	.initiator = "iqn.2026-11.org.tcq:reinstate",
	.cases = cases,
	.ncases = PT_NCASES(cases),
};

int main(int argc, char **argv)
{
	return pt_main(&driver, argc, argv);
}
