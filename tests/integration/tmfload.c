/*
 * tmfload: task management under load (issue 16, part 7). Four sessions
 * each keep 64 READ(10)s in flight on LUN 0 (a LUN slow enough that they
 * are still there), and session 0 sends LOGICAL UNIT RESET, ABORT TASK
 * SET and TARGET WARM RESET in turn, round after round. Every round:
 * the function answers 0 (RFC 7143 11.6.1), no command is answered twice
 * and no PDU comes for a command that does not exist (stray PDUs), the
 * commands the reset took get no answer and the others their status,
 * and each session then runs a TEST UNIT READY past the unit attention
 * (its task sets are empty and work). Over the run, by function and by
 * whose commands (session 0's own, the other sessions'): ABORT TASK SET
 * left every command of the other I_T nexuses to end GOOD (SAM-5 7.2:
 * it aborts the task set of its own nexus only); each function aborted
 * some of session 0's commands, and the two resets some of the others';
 * and no command got TASK ABORTED, as tcqd.conf leaves TAS at 0 (SPC-4
 * 7.5.8, SAM-5 5.6: aborted without status). The shell script checks
 * tcqd's in-flight counters and buffers afterwards.
 *
 *   tmfload [--rounds N] HOST PORT TARGET-IQN [CASE...]
 *
 * Exit status: 0 when every case passed, 1 otherwise, 2 on usage errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcq/byteorder.h"
#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"
#include "tests/integration/pdutest.h"
#include "tests/integration/ptcase.h"
#include "tests/integration/ptcmd.h"

#define NSESS 4
#define DEPTH 64
#define BLOCKS 8		/* 4 KiB reads */
#define SPAN_BLOCKS 16384	/* of an 8 MiB LUN or larger */
#define SETTLE_MS 10000	/* at most, for an answer to come */

static unsigned rounds = 1000;

static const uint8_t functions[] = {
	ISCSI_TMF_LUN_RESET, ISCSI_TMF_ABORT_TASK_SET,
	ISCSI_TMF_TARGET_WARM_RESET,
};

struct totals {
	unsigned long good, aborted_status, ua, silent, other, stray;
};

/* Starts DEPTH reads on s. */
static int fill(struct pt_sess *s, struct pc_cmd *cmds, uint8_t *bufs,
		unsigned *seed)
{
	for (unsigned k = 0; k < DEPTH; k++) {
		*seed = *seed * 1103515245u + 12345u;
		pc_rw10(&cmds[k], false, (*seed >> 8) % (SPAN_BLOCKS - BLOCKS),
			BLOCKS, bufs + (size_t)k * BLOCKS * PC_BS, PC_BS);
		if (pc_start(s, &cmds[k]) < 0)
			return -1;
	}
	return 0;
}

static bool got_pdu(const struct pc_cmd *c)
{
	return c->pdus > 0;
}

/*
 * A NOP-Out ping on s, answered: every PDU tcqd queued on s before it
 * answered has arrived (one TCP stream, sent in order), the answers of
 * cmds among them; those on other ITTs count as stray. 0, or -1 when the
 * session failed.
 */
static int ping(struct pt_sess *s, struct pc_cmd *cmds, unsigned *stray)
{
	struct pc_cmd nop = { 0 }, *v[DEPTH + 1];
	unsigned n = 0;

	for (unsigned k = 0; k < DEPTH; k++)
		if (!cmds[k].done)
			v[n++] = &cmds[k];
	nop.itt = s->itt++;
	v[n++] = &nop;
	if (pt_send_nop_ping(s, nop.itt, NULL, 0, 0) < 0)
		return -1;
	return pc_wait(s, v, n, &nop, got_pdu, SETTLE_MS, stray) == 1 ? 0 : -1;
}

static bool all_of(const struct pc_cmd *cmds)
{
	for (unsigned k = 0; k < DEPTH; k++)
		if (!cmds[k].done)
			return false;
	return true;
}

static bool last_done(const struct pc_cmd *c)
{
	return all_of(c - (DEPTH - 1));
}

/* Every command of s answered (a task set the function did not touch). */
static int all_answered(struct pt_sess *s, struct pc_cmd *cmds,
			unsigned *stray)
{
	struct pc_cmd *v[DEPTH];

	for (unsigned k = 0; k < DEPTH; k++)
		v[k] = &cmds[k];
	return pc_wait(s, v, DEPTH, &cmds[DEPTH - 1], last_done, SETTLE_MS,
		       stray) == 1 ? 0 : -1;
}

static const char *fn_name(uint8_t f)
{
	switch (f) {
	case ISCSI_TMF_LUN_RESET: return "LOGICAL UNIT RESET";
	case ISCSI_TMF_ABORT_TASK_SET: return "ABORT TASK SET";
	case ISCSI_TMF_TARGET_WARM_RESET: return "TARGET WARM RESET";
	}
	return "?";
}

/* One command's answer, for a note on what went wrong. */
static void note_cmd(unsigned r, uint8_t f, int i, unsigned k,
		     const struct pc_cmd *c, const char *why)
{
	pt_note("round %u (%s): session %d command %u (ITT 0x%x CmdSN %u "
		"LBA %u): %s: %s status 0x%02x response 0x%02x sense "
		"%d/%02x/%02x, %u PDUs", r, fn_name(f), i, k, c->itt,
		c->cmdsn, get_be32(c->cdb + 2), why,
		c->done ? "answered" : "not answered", c->status, c->response,
		c->sense_key, c->asc, c->ascq, c->pdus);
}

static void count(const struct pc_cmd *cmds, struct totals *t, unsigned r,
		  uint8_t f, int i)
{
	for (unsigned k = 0; k < DEPTH; k++) {
		const struct pc_cmd *c = &cmds[k];

		if (!c->done)
			t->silent++;
		else if (c->status == SAM_STAT_GOOD)
			t->good++;
		else if (c->status == SAM_STAT_TASK_ABORTED)
			t->aborted_status++;
		else if (c->status == SAM_STAT_CHECK_CONDITION &&
			 c->sense_key == SK_UNIT_ATTENTION)
			t->ua++;	/* reached the LUN after the reset */
		else {
			t->other++;
			note_cmd(r, f, i, k, c, "expected GOOD, TASK ABORTED, "
				 "UNIT ATTENTION or no answer");
		}
		if (c->in_bad || (c->done && c->status == SAM_STAT_GOOD &&
				  c->in_bytes != c->edtl)) {
			t->other++;
			note_cmd(r, f, i, k, c, "Data-In not the 4096 bytes asked");
		}
	}
}

/* Notes the commands of a session still without an answer. */
static void note_unanswered(const struct pc_cmd *cmds, unsigned r, uint8_t f,
			    int i)
{
	unsigned n = 0;

	for (unsigned k = 0; k < DEPTH; k++)
		if (!cmds[k].done && n++ < 4)
			note_cmd(r, f, i, k, &cmds[k], "still open");
	pt_note("round %u (%s): session %d: %u of %d commands unanswered",
		r, fn_name(f), i, n, DEPTH);
}

/* t[f][o]: function f, the other sessions' commands (o = 1) or session
 * 0's own (o = 0). Their sum over the run. */
static struct totals sum(const struct totals t[3][2])
{
	struct totals a = { 0 };

	for (int f = 0; f < 3; f++)
		for (int o = 0; o < 2; o++) {
			a.good += t[f][o].good;
			a.aborted_status += t[f][o].aborted_status;
			a.ua += t[f][o].ua;
			a.silent += t[f][o].silent;
			a.other += t[f][o].other;
		}
	return a;
}

/* What the run's totals must show (at the top of this file). */
static void check_totals(const struct totals t[3][2])
{
	struct totals a = sum(t);

	PT_CHECK(a.other == 0, "every answer is GOOD or the reset's UNIT "
		 "ATTENTION, or none (%lu other)", a.other);
	pt_note("%lu commands: %lu GOOD, %lu TASK ABORTED, %lu UNIT ATTENTION, "
		"%lu aborted silently", (unsigned long)rounds * NSESS * DEPTH,
		a.good, a.aborted_status, a.ua, a.silent);
	PT_CHECK(a.aborted_status == 0, "TAS=0: no command got TASK ABORTED "
		 "(%lu did)", a.aborted_status);
	for (unsigned f = 0; f < 3 && f < rounds; f++) {
		const struct totals *own = &t[f][0], *oth = &t[f][1];
		unsigned long n = (unsigned long)((rounds - f + 2) / 3) *
				  (NSESS - 1) * DEPTH;

		pt_note("%s: session 0: %lu GOOD, %lu aborted; the others: %lu "
			"GOOD, %lu aborted, %lu UNIT ATTENTION",
			fn_name(functions[f]), own->good, own->silent, oth->good,
			oth->silent, oth->ua);
		PT_CHECK(own->silent > 0, "%s aborted commands of its own I_T "
			 "nexus", fn_name(functions[f]));
		if (functions[f] == ISCSI_TMF_ABORT_TASK_SET)
			PT_CHECK(oth->good == n, "ABORT TASK SET left the other "
				 "nexuses' %lu commands to end GOOD (%lu did)",
				 n, oth->good);
		else
			PT_CHECK(oth->silent + oth->aborted_status > 0, "%s aborted "
				 "commands of the other I_T nexuses",
				 fn_name(functions[f]));
	}
}

static void resets_under_load(void)
{
	static struct pc_cmd cmds[NSESS][DEPTH];
	static uint8_t bufs[NSESS][DEPTH * BLOCKS * PC_BS];
	struct pt_sess s[NSESS];
	struct totals t[3][2] = { 0 };
	unsigned seed = 1, bad_rsp = 0, dead = 0;
	char iqn[64];

	for (int i = 0; i < NSESS; i++) {
		struct pt_login_opts o = { 0 };
		int ua[4];

		snprintf(iqn, sizeof(iqn), "iqn.2026-11.org.tcq:tmfload-%d", i);
		o.initiator = iqn;
		if (pt_login(&s[i], &o) < 0 || pc_tur_ua(&s[i], ua) != SAM_STAT_GOOD) {
			PT_CHECK(0, "session %d logs in and is ready", i);
			return;
		}
	}
	for (unsigned r = 0; r < rounds && !dead; r++) {
		struct pc_tmf tm = { .function = functions[r % 3], .lun = 0,
				     .rtt = ISCSI_RSVD_TAG };
		struct pc_cmd *own[DEPTH];
		unsigned stray = 0;

		for (int i = 0; i < NSESS && !dead; i++)
			if (fill(&s[i], cmds[i], bufs[i], &seed) < 0)
				dead = 1;
		/* Every command of the other sessions is in tcqd before the
		 * function: it acts on all of them, or on none. */
		for (int i = 1; i < NSESS && !dead; i++)
			if (ping(&s[i], cmds[i], &stray) < 0)
				dead = 1;
		for (unsigned k = 0; k < DEPTH; k++)
			own[k] = &cmds[0][k];
		if (dead) {
			PT_CHECK(0, "round %u: every session took its %d reads "
				 "and answered a ping", r, DEPTH);
			break;
		}
		if (pc_tmf(&s[0], &tm, own, DEPTH, &stray) < 0 ||
		    tm.response < 0) {
			PT_CHECK(0, "round %u: %s answered", r,
				 fn_name(tm.function));
			dead = 1;
			break;
		}
		if (tm.response != ISCSI_TMF_RSP_COMPLETE) {
			pt_note("round %u (%s): response %d, expected 0 "
				"(Function complete)", r, fn_name(tm.function),
				tm.response);
			bad_rsp++;
		}
		for (int i = 0; i < NSESS && !dead; i++) {
			int ua[4], rc;

			/* Session 0's answers came before the function's. A
			 * reset of the LUN or target took every task of the
			 * others too: what a ping does not find answered was
			 * aborted. ABORT TASK SET left them alone: all end. */
			if (i == 0)
				rc = 0;
			else if (tm.function == ISCSI_TMF_ABORT_TASK_SET)
				rc = all_answered(&s[i], cmds[i], &stray);
			else
				rc = ping(&s[i], cmds[i], &stray);
			if (rc < 0) {
				note_unanswered(cmds[i], r, tm.function, i);
				PT_CHECK(0, "round %u: session %d answers", r, i);
				dead = 1;
				break;
			}
			count(cmds[i], &t[r % 3][i > 0], r, tm.function, i);
			if ((rc = pc_tur_ua(&s[i], ua)) != SAM_STAT_GOOD) {
				pt_note("round %u (%s): TEST UNIT READY on "
					"session %d: status %d (unit attentions "
					"%04x %04x %04x)", r,
					fn_name(tm.function), i, rc, ua[0],
					ua[0] ? ua[1] : 0,
					ua[0] && ua[1] ? ua[2] : 0);
				PT_CHECK(0, "round %u: session %d ready after the reset",
					 r, i);
				dead = 1;
			}
		}
		if (stray)
			pt_note("round %u (%s): %u stray PDUs (above)", r,
				fn_name(tm.function), stray);
		t[0][0].stray += stray;
	}
	PT_CHECK(!dead, "%u rounds of LUN RESET / ABORT TASK SET / TARGET WARM "
		 "RESET with %d sessions x %d reads in flight ran to the end",
		 rounds, NSESS, DEPTH);
	PT_CHECK(bad_rsp == 0, "every function answered 0 (%u did not)", bad_rsp);
	PT_CHECK(t[0][0].stray == 0, "no command answered twice, no PDU for a "
		 "command not in flight (%lu stray)", t[0][0].stray);
	if (!dead)
		check_totals(t);
	for (int i = 0; i < NSESS; i++)
		pt_logout(&s[i]);
}

static const struct pt_case cases[] = {
	PT_CASE(resets_under_load),
};

int main(int argc, char **argv)
{
	static const struct pt_driver d = {
		.prog = "tmfload",
		.initiator = "iqn.2026-11.org.tcq:tmfload",
		.cases = cases,
		.ncases = PT_NCASES(cases),
	};

	if (argc > 2 && !strcmp(argv[1], "--rounds")) {
		rounds = (unsigned)strtoul(argv[2], NULL, 10);
		if (!rounds)
			return 2;
		argv[2] = argv[0];
		argv += 2;
		argc -= 2;
	}
	pt_case_alarm = 900;
	return pt_main(&d, argc, argv);
}
