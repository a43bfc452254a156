/*
 * Golden encodings of what gateways share (scsi/pr_codec.c): a known
 * state and a known message against literal bytes written by hand from
 * the format described at the top of pr_codec.c, both ways, and the
 * literal cut short or corrupted must be refused.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "backend/lun_store.h"
#include "scsi/pr.h"
#include "scsi/pr_priv.h"
#include "pr_golden.h"
#include "tests/unit/harness.h"

#define PORT_A KNOWN_PORT_A	/* 38 bytes */
#define PORT_B KNOWN_PORT_B	/* 21 bytes */
#define PORT_C "iqn.2026-11.org.tcq:c,i,0x230000000003"	/* 38 bytes */

/*
 * The known state (pr_golden.h: A with ALL_TG_PT, B holding a Write
 * Exclusive - Registrants Only reservation, APTPL) and a RESERVE(6/10)
 * of C through relative target port 0x0203 on gateway
 * 0x1122334455667788.
 */
#define GOLDEN_STATE \
	"TCQR"					/* magic */ \
	"\x01\x02\x03\x04"			/* PRgeneration */ \
	"\x07"			/* flags: reservation, APTPL, RESERVE(6/10) */ \
	"\x05"					/* type: WE_RO */ \
	"\x00\x02"				/* 2 registrations */ \
	"\x01\x23\x45\x67\x89\xab\xcd\xef"	/* A: key */ \
	"\x01"					/* A: ALL_TG_PT */ \
	"\x00\x26" PORT_A			/* A: port */ \
	"\xfe\xdc\xba\x98\x76\x54\x32\x10"	/* B: key */ \
	"\x02"					/* B: holder */ \
	"\x00\x15" PORT_B			/* B: port */ \
	"\x02\x03"				/* RESERVE(6/10): rtpi */ \
	"\x11\x22\x33\x44\x55\x66\x77\x88"	/* gateway */ \
	"\x00\x26" PORT_C			/* port */
#define GOLDEN_STATE_LEN (12 + (8 + 1 + 2 + 38) + (8 + 1 + 2 + 21) + \
			  (2 + 8 + 2 + 38))

/* That state as a "state changed" message from store handle
 * 0x0102030405060708 at version 9, owing A's port REGISTRATIONS
 * PREEMPTED with its tasks aborted and B's RESERVATIONS RELEASED. */
#define GOLDEN_MSG \
	"TCQM"					/* magic */ \
	"\x01"					/* kind: state */ \
	"\x01\x02\x03\x04\x05\x06\x07\x08"	/* sender */ \
	"\x00\x00\x00\x00\x00\x00\x00\x09"	/* version */ \
	"\x00\x00\x00\x8f"			/* state: 143 bytes */ \
	GOLDEN_STATE \
	"\x00\x02"				/* 2 unit attentions */ \
	"\x2a\x05"			/* ASC/ASCQ: REGISTRATIONS PREEMPTED */ \
	"\x01"					/* abort */ \
	"\x00\x26" PORT_A \
	"\x2a\x04"			/* ASC/ASCQ: RESERVATIONS RELEASED */ \
	"\x00"					/* no abort */ \
	"\x00\x15" PORT_B
#define GOLDEN_MSG_LEN (4 + 1 + 8 + 8 + 4 + GOLDEN_STATE_LEN + 2 + \
			(2 + 1 + 2 + 38) + (2 + 1 + 2 + 21))

static const uint8_t *golden_state = (const uint8_t *)GOLDEN_STATE;
static const uint8_t *golden_msg = (const uint8_t *)GOLDEN_MSG;

static struct pr_state ps;
static struct pr_msg msg;
static uint8_t buf[LUN_STORE_BLOB_MAX];
static uint8_t bad[LUN_STORE_BLOB_MAX];

/* The known state with its RESERVE(6/10). */
static void known_shared_state(struct pr_state *s)
{
	known_state(s);
	s->r2 = true;
	strcpy(s->r2_port, PORT_C);
	s->r2_rtpi = 0x0203;
	s->r2_gw = 0x1122334455667788ull;
}

static void expect_known_shared_state(const struct pr_state *s)
{
	expect_known_state(s);
	ck_assert(s->r2);
	ck_assert_str_eq(s->r2_port, PORT_C);
	ck_assert_uint_eq(s->r2_rtpi, 0x0203);
	ck_assert_uint_eq(s->r2_gw, 0x1122334455667788ull);
	ck_assert_ptr_null(s->r2_nexus);	/* never in the bytes */
}

/* A decode that fails must leave nothing half filled. */
static void expect_refused(const uint8_t *b, size_t len)
{
	memset(&ps, 0xa5, sizeof(ps));
	ck_assert_int_eq(pr_decode(&ps, b, len), -1);
	ck_assert_uint_eq(ps.nregs, 0);
	ck_assert(!ps.resv && !ps.r2 && !ps.aptpl);
	ck_assert_uint_eq(ps.generation, 0);
}

/* The golden state with byte at changed to v. */
static void expect_refused_with(size_t at, uint8_t v)
{
	memcpy(bad, golden_state, GOLDEN_STATE_LEN);
	bad[at] = v;
	expect_refused(bad, GOLDEN_STATE_LEN);
}

START_TEST(state_lengths_add_up)
{
	/* The literals are as long as the format says they are. */
	ck_assert_uint_eq(sizeof(GOLDEN_STATE) - 1, GOLDEN_STATE_LEN);
	ck_assert_uint_eq(GOLDEN_STATE_LEN, 0x8f);
	ck_assert_uint_eq(sizeof(GOLDEN_MSG) - 1, GOLDEN_MSG_LEN);
}
END_TEST

START_TEST(state_encodes_to_golden)
{
	struct pr_state s;
	size_t n;

	known_shared_state(&s);
	s.version = 42;			/* not part of the blob */
	s.r2_nexus = &s;		/* nor is the local holder */
	n = pr_encode(&s, buf, sizeof(buf));
	EXPECT_BYTES(buf, n, GOLDEN_STATE);
	/* One byte short: nothing at all, not a cut blob. */
	ck_assert_uint_eq(pr_encode(&s, buf, GOLDEN_STATE_LEN - 1), 0);
}
END_TEST

START_TEST(golden_decodes_to_state)
{
	memset(&ps, 0xa5, sizeof(ps));
	ck_assert_int_eq(pr_decode(&ps, golden_state, GOLDEN_STATE_LEN), 0);
	expect_known_shared_state(&ps);
	ck_assert_uint_eq(ps.version, 0);	/* the store's, set by load */
}
END_TEST

START_TEST(state_without_reservations)
{
	/* No reservation, no APTPL, no RESERVE(6/10): the fixed part and
	 * one registration, nothing after it. */
	static const char lit[] =
		"TCQR" "\x00\x00\x00\x00" "\x00" "\x00" "\x00\x01"
		"\x00\x00\x00\x00\x00\x00\x00\x0b" "\x00" "\x00\x15" PORT_B;
	struct pr_state s;

	memset(&s, 0, sizeof(s));
	s.nregs = 1;
	s.regs[0].key = 0xb;
	strcpy(s.regs[0].port, PORT_B);
	EXPECT_BYTES(buf, pr_encode(&s, buf, sizeof(buf)), lit);
	ck_assert_int_eq(pr_decode(&ps, (const uint8_t *)lit,
				   sizeof(lit) - 1), 0);
	ck_assert_uint_eq(ps.nregs, 1);
	ck_assert_uint_eq(ps.regs[0].key, 0xb);
	ck_assert(!ps.resv && !ps.aptpl && !ps.r2);
}
END_TEST

START_TEST(state_truncations_refused)
{
	for (size_t cut = 0; cut < GOLDEN_STATE_LEN; cut++)
		expect_refused(golden_state, cut);
	/* And one byte too many. */
	memcpy(bad, golden_state, GOLDEN_STATE_LEN);
	bad[GOLDEN_STATE_LEN] = 0;
	expect_refused(bad, GOLDEN_STATE_LEN + 1);
}
END_TEST

START_TEST(state_corruptions_refused)
{
	expect_refused_with(0, 'X');		/* magic */
	expect_refused_with(3, 'M');		/* a message's magic */
	expect_refused_with(9, 2);		/* no such type */
	expect_refused_with(9, 0);		/* reserved without a type */
	expect_refused_with(8, 0x06);		/* a type, no reservation */
	expect_refused_with(10, 0x01);		/* 258 registrations */
	expect_refused_with(11, 0x81);		/* 129: more than a LUN has */
	expect_refused_with(11, 0x03);		/* 3: runs out */
	expect_refused_with(11, 0x01);		/* 1: bytes left over */
	/* A's port: its length in bytes 21-22, its name from 23. */
	expect_refused_with(22, 0x00);		/* empty */
	expect_refused_with(22, 0x27);		/* longer than it is */
	expect_refused_with(21, 0x01);		/* 294 bytes */
	expect_refused_with(23 + 5, 0x00);	/* a NUL inside */
	memcpy(bad, golden_state, GOLDEN_STATE_LEN);
	put_be16(bad + 21, PR_PORT_MAX);	/* too long for a name */
	expect_refused(bad, GOLDEN_STATE_LEN);
	expect_refused_with(8, 0x03);	/* no RESERVE(6/10): bytes left */
}
END_TEST

START_TEST(message_encodes_to_golden)
{
	struct pr_fxlist fx = { .n = 2 };
	size_t n;

	known_shared_state(&ps);
	ps.version = 9;
	strcpy(fx.fx[0].port, PORT_A);
	fx.fx[0].asc = ASC_REGISTRATIONS_PREEMPTED;
	fx.fx[0].abort = true;
	strcpy(fx.fx[1].port, PORT_B);
	fx.fx[1].asc = ASC_RESERVATIONS_RELEASED;
	n = pr_msg_encode(0x0102030405060708ull, PR_MSG_STATE, &ps, &fx, buf,
			  sizeof(buf));
	EXPECT_BYTES(buf, n, GOLDEN_MSG);
	ck_assert_uint_eq(pr_msg_encode(0x0102030405060708ull, PR_MSG_STATE,
					&ps, &fx, buf, GOLDEN_MSG_LEN - 1), 0);
}
END_TEST

START_TEST(golden_decodes_to_message)
{
	memset(&msg, 0xa5, sizeof(msg));
	ck_assert_int_eq(pr_msg_decode(&msg, golden_msg, GOLDEN_MSG_LEN), 0);
	ck_assert_uint_eq(msg.kind, PR_MSG_STATE);
	ck_assert_uint_eq(msg.sender, 0x0102030405060708ull);
	ck_assert_uint_eq(msg.ps.version, 9);
	expect_known_shared_state(&msg.ps);
	ck_assert_uint_eq(msg.fx.n, 2);
	ck_assert_uint_eq(msg.fx.fx[0].asc, ASC_REGISTRATIONS_PREEMPTED);
	ck_assert(msg.fx.fx[0].abort);
	ck_assert_str_eq(msg.fx.fx[0].port, PORT_A);
	ck_assert_uint_eq(msg.fx.fx[1].asc, ASC_RESERVATIONS_RELEASED);
	ck_assert(!msg.fx.fx[1].abort);
	ck_assert_str_eq(msg.fx.fx[1].port, PORT_B);
}
END_TEST

START_TEST(reset_message_without_effects)
{
	/* A LUN reset: kind 2, an empty state, no unit attentions. */
	static const char lit[] =
		"TCQM" "\x02" "\x00\x00\x00\x00\x00\x00\x00\x01"
		"\x00\x00\x00\x00\x00\x00\x01\x00" "\x00\x00\x00\x0c"
		"TCQR" "\x00\x00\x00\x05" "\x00" "\x00" "\x00\x00"
		"\x00\x00";
	struct pr_state s;

	memset(&s, 0, sizeof(s));
	s.generation = 5;
	s.version = 0x100;
	EXPECT_BYTES(buf, pr_msg_encode(1, PR_MSG_RESET, &s, NULL, buf,
					sizeof(buf)), lit);
	ck_assert_int_eq(pr_msg_decode(&msg, (const uint8_t *)lit,
				       sizeof(lit) - 1), 0);
	ck_assert_uint_eq(msg.kind, PR_MSG_RESET);
	ck_assert_uint_eq(msg.sender, 1);
	ck_assert_uint_eq(msg.ps.version, 0x100);
	ck_assert_uint_eq(msg.ps.generation, 5);
	ck_assert_uint_eq(msg.fx.n, 0);
}
END_TEST

/* The golden message with byte at changed to v must be refused. */
static void expect_msg_refused_with(size_t at, uint8_t v)
{
	memcpy(bad, golden_msg, GOLDEN_MSG_LEN);
	bad[at] = v;
	ck_assert_int_eq(pr_msg_decode(&msg, bad, GOLDEN_MSG_LEN), -1);
}

START_TEST(message_malformed_refused)
{
	const size_t fx_count = 25 + GOLDEN_STATE_LEN;

	for (size_t cut = 0; cut < GOLDEN_MSG_LEN; cut++)
		ck_assert_int_eq(pr_msg_decode(&msg, golden_msg, cut), -1);
	memcpy(bad, golden_msg, GOLDEN_MSG_LEN);
	bad[GOLDEN_MSG_LEN] = 0;
	ck_assert_int_eq(pr_msg_decode(&msg, bad, GOLDEN_MSG_LEN + 1), -1);
	expect_msg_refused_with(0, 'X');		/* magic */
	expect_msg_refused_with(24, 0x90);		/* state longer */
	expect_msg_refused_with(24, 0x8e);		/* ... shorter */
	expect_msg_refused_with(22, 0x01);		/* ... past the end */
	expect_msg_refused_with(25 + 9, 2);		/* the state's type */
	/* More unit attentions than a change can owe (PR_FX_MAX 258). */
	memcpy(bad, golden_msg, GOLDEN_MSG_LEN);
	put_be16(bad + fx_count, PR_FX_MAX + 1);
	ck_assert_int_eq(pr_msg_decode(&msg, bad, GOLDEN_MSG_LEN), -1);
	expect_msg_refused_with(fx_count + 1, 3);	/* 3: runs out */
	expect_msg_refused_with(fx_count + 1, 1);	/* 1: bytes left */
	expect_msg_refused_with(fx_count + 2 + 3 + 1, 0);  /* empty port */
}
END_TEST

static Suite *pr_codec_suite(void)
{
	Suite *s = suite_create("pr_codec");
	TCase *c = tcase_create("state");

	harness_add(c, state_lengths_add_up);
	harness_add(c, state_encodes_to_golden);
	harness_add(c, golden_decodes_to_state);
	harness_add(c, state_without_reservations);
	harness_add(c, state_truncations_refused);
	harness_add(c, state_corruptions_refused);
	suite_add_tcase(s, c);
	c = tcase_create("message");
	harness_add(c, message_encodes_to_golden);
	harness_add(c, golden_decodes_to_message);
	harness_add(c, reset_message_without_effects);
	harness_add(c, message_malformed_refused);
	suite_add_tcase(s, c);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, pr_codec_suite);
}
