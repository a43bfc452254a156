/*
 * PERSISTENT RESERVE IN parameter data (scsi/pr_in.c) for known states
 * against literal bytes written by hand from SPC-4 6.15: READ KEYS
 * (6.15.2), READ RESERVATION (6.15.3), REPORT CAPABILITIES (6.15.4) and
 * READ FULL STATUS (6.15.5) with its iSCSI TransportIDs (7.6.4.6).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "scsi/pr.h"
#include "scsi/pr_priv.h"
#include "pr_golden.h"
#include "tests/unit/harness.h"

#define PORT_A KNOWN_PORT_A	/* 38 bytes */
#define PORT_B KNOWN_PORT_B	/* 21 bytes */
#define RTPI 2			/* the relative target port asked */

#define GENERATION "\x01\x02\x03\x04"
#define KEY_A "\x01\x23\x45\x67\x89\xab\xcd\xef"
#define KEY_B "\xfe\xdc\xba\x98\x76\x54\x32\x10"

static struct pr_state ps;
static uint8_t buf[PR_IN_DATA_MAX];

static uint32_t prin(uint8_t sa)
{
	memset(buf, 0xa5, sizeof(buf));	/* no byte is left unwritten */
	return pr_in_data(&ps, sa, RTPI, buf);
}

START_TEST(read_keys)
{
	static const char lit[] =
		GENERATION			/* PRGENERATION */
		"\x00\x00\x00\x10"		/* ADDITIONAL LENGTH: 2 keys */
		KEY_A KEY_B;			/* in registration order */

	known_state(&ps);
	EXPECT_BYTES(buf, prin(PRI_READ_KEYS), lit);
}
END_TEST

START_TEST(read_keys_none)
{
	memset(&ps, 0, sizeof(ps));
	ps.generation = 0x10;
	EXPECT_BYTES(buf, prin(PRI_READ_KEYS),
		     "\x00\x00\x00\x10" "\x00\x00\x00\x00");
}
END_TEST

START_TEST(read_reservation)
{
	static const char lit[] =
		GENERATION			/* PRGENERATION */
		"\x00\x00\x00\x10"		/* ADDITIONAL LENGTH */
		KEY_B				/* RESERVATION KEY: holder's */
		"\x00\x00\x00\x00"		/* obsolete */
		"\x00"				/* reserved */
		"\x05"				/* SCOPE 0h, TYPE 5h WE_RO */
		"\x00\x00";			/* obsolete */

	known_state(&ps);
	EXPECT_BYTES(buf, prin(PRI_READ_RESERVATION), lit);
}
END_TEST

START_TEST(read_reservation_all_registrants)
{
	/* 6.15.3.3: an all-registrants reservation shows key zero. */
	static const char lit[] =
		GENERATION "\x00\x00\x00\x10"
		"\x00\x00\x00\x00\x00\x00\x00\x00"	/* RESERVATION KEY */
		"\x00\x00\x00\x00" "\x00"
		"\x08"				/* TYPE 8h EA_AR */
		"\x00\x00";

	known_state(&ps);
	ps.type = PR_TYPE_EA_AR;
	ps.regs[1].holder = false;	/* every registrant holds it */
	EXPECT_BYTES(buf, prin(PRI_READ_RESERVATION), lit);
}
END_TEST

START_TEST(read_reservation_none)
{
	known_state(&ps);
	pr_drop_reservation(&ps);
	EXPECT_BYTES(buf, prin(PRI_READ_RESERVATION),
		     GENERATION "\x00\x00\x00\x00");
}
END_TEST

START_TEST(report_capabilities)
{
	static const char lit[] =
		"\x00\x08"	/* LENGTH */
		"\x1d"		/* CRH, SIP_C, ATP_C, PTPL_C; RLR_C 0 */
		"\x81"		/* TMV, ALLOW COMMANDS 000b, PTPL_A */
		"\xea"		/* WR_EX_AR, EX_AC_RO, WR_EX_RO, EX_AC, WR_EX */
		"\x01"		/* EX_AC_AR */
		"\x00\x00";	/* reserved */

	known_state(&ps);
	EXPECT_BYTES(buf, prin(PRI_REPORT_CAPS), lit);
	ps.aptpl = false;	/* PTPL_A follows it */
	EXPECT_BYTES(buf, prin(PRI_REPORT_CAPS),
		     "\x00\x08" "\x1d" "\x80" "\xea" "\x01" "\x00\x00");
}
END_TEST

START_TEST(read_full_status)
{
	static const char lit[] =
		GENERATION			/* PRGENERATION */
		"\x00\x00\x00\x78"		/* ADDITIONAL LENGTH: 120 */
		/* A: registered, not holding */
		KEY_A				/* RESERVATION KEY */
		"\x00\x00\x00\x00"		/* reserved */
		"\x02"				/* ALL_TG_PT; R_HOLDER 0 */
		"\x00"				/* SCOPE, TYPE: not holding */
		"\x00\x00\x00\x00"		/* reserved */
		"\x00\x00"		/* RELATIVE TARGET PORT: ALL_TG_PT */
		"\x00\x00\x00\x2c"		/* ADDITIONAL DESCRIPTOR LENGTH */
		"\x45"			/* FORMAT CODE 01b, PROTOCOL ID 5h */
		"\x00"				/* reserved */
		"\x00\x28"			/* ADDITIONAL LENGTH: 40 */
		PORT_A "\x00\x00"		/* NUL, one byte of padding */
		/* B: holding */
		KEY_B
		"\x00\x00\x00\x00"
		"\x01"				/* R_HOLDER */
		"\x05"				/* SCOPE 0h, TYPE 5h */
		"\x00\x00\x00\x00"
		"\x00\x02"			/* RELATIVE TARGET PORT */
		"\x00\x00\x00\x1c"
		"\x05"				/* FORMAT CODE 00b: name only */
		"\x00"
		"\x00\x18"			/* ADDITIONAL LENGTH: 24 */
		PORT_B "\x00\x00\x00";		/* NUL, two bytes of padding */

	known_state(&ps);
	EXPECT_BYTES(buf, prin(PRI_READ_FULL_STATUS), lit);
}
END_TEST

START_TEST(read_full_status_none)
{
	memset(&ps, 0, sizeof(ps));
	EXPECT_BYTES(buf, prin(PRI_READ_FULL_STATUS),
		     "\x00\x00\x00\x00" "\x00\x00\x00\x00");
}
END_TEST

START_TEST(unknown_service_action)
{
	known_state(&ps);
	ck_assert_uint_eq(prin(4), 0);
}
END_TEST

static Suite *pr_in_suite(void)
{
	Suite *s = suite_create("pr_in");
	TCase *c = tcase_create("data");

	harness_add(c, read_keys);
	harness_add(c, read_keys_none);
	harness_add(c, read_reservation);
	harness_add(c, read_reservation_all_registrants);
	harness_add(c, read_reservation_none);
	harness_add(c, report_capabilities);
	harness_add(c, read_full_status);
	harness_add(c, read_full_status_none);
	harness_add(c, unknown_service_action);
	suite_add_tcase(s, c);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, pr_in_suite);
}
