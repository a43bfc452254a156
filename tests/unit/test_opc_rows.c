/*
 * Every row of the command table run through the device server on the
 * harness's LUN: what the table decides for all of them at once. Each
 * command, whatever its answer, completes once (the executors' contract,
 * scsi/exec.h); a pending unit attention is reported by every row but
 * those with OPC_F_UA_OK (SAM-5 5.14).
 */
#include <check.h>
#include <stdint.h>
#include <string.h>
#include "tcq/scsi_proto.h"
#include "scsi/cdb.h"
#include "scsi/opcodes.h"
#include "scsi/sense.h"
#include "scsi/ua.h"
#include "tests/unit/harness.h"
#include "tests/unit/opc_util.h"

#define BS 512u
#define ABSENT 5		/* the fixture's device has LUN 0 only */

static struct harness_lun H;
static uint8_t zeros[64 * 1024];	/* Data-Out of every row */

static void setup(void)
{
	harness_lun_setup(&H, "ram", 1u << 20, 1);
}

static void teardown(void)
{
	harness_lun_teardown(&H);
}

/* Runs variant v of row e's CDB at LUN lun_nr with the Data-Out (zeros)
 * or Data-In length its decoded CDB asks for. */
static struct cmd *run_row(const struct opc_entry *e, int v, uint64_t lun_nr)
{
	uint8_t cdb[OPC_CDB_MAX];
	struct cdb_req req;
	struct sense_info si;
	uint32_t out = 0, in = 0;

	row_cdb(e, v == 1, cdb);
	if (!cdb_decode(cdb, sizeof(cdb), BS, &req, &si)) {
		out = req.data_out_len;
		in = req.data_in_len;
	}
	ck_assert_uint_le(out, sizeof(zeros));
	return run_cdb_at(&H, 0, lun_nr, cdb, e->cdb_len, out ? zeros : NULL,
			  out, in);
}

/* A failure, of a check or of the executor, is completed by lun_execute
 * alone and a success by the executor alone: done() comes once for every
 * row (also at a LUN that is not there), CHECK CONDITION with sense data
 * and GOOD without. */
START_TEST(every_row_completes_once)
{
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };
	struct cmd *cs[4 * OPC_MAX_ENTRIES];
	unsigned n, nc = 0;
	const struct opc_entry *tab = opc_table(&n);
	struct harness_sense s;

	for (unsigned i = 0; i < n; i++)
		for (int v = 0; v < 4; v++)
			cs[nc++] = run_row(&tab[i], v & 1, v < 2 ? 0 : ABSENT);
	/* A second completion from a later step has had its passes. */
	EXPECT_GOOD(run_cdb(&H, 0, tur, sizeof(tur), NULL, 0, 0));
	for (unsigned k = 0; k < nc; k++) {
		const struct cmd *c = cs[k];
		const struct opc_entry *e = &tab[k / 4];
		uint8_t st = c->t.status;

		ck_assert_msg(c->ndone == 1, "%02x/%02x (%u): done %u times",
			      e->op, e->sa, k % 4, c->ndone);
		ck_assert_msg(st == SAM_STAT_GOOD ||
			      st == SAM_STAT_CHECK_CONDITION ||
			      st == SAM_STAT_RESERVATION_CONFLICT,
			      "%02x/%02x: status %#x", e->op, e->sa, st);
		if (st == SAM_STAT_CHECK_CONDITION)
			ck_assert_msg(harness_sense_parse(c->t.sense,
							  c->t.sense_len, &s),
				      "%02x/%02x: CHECK CONDITION without "
				      "sense data", e->op, e->sa);
		else
			ck_assert_msg(c->t.sense_len == 0, "%02x/%02x: sense "
				      "data with status %#x", e->op, e->sa,
				      st);
	}
}
END_TEST

/* SAM-5 5.14 with a unit attention pending: a row without OPC_F_UA_OK
 * ends in CHECK CONDITION, UNIT ATTENTION with it, whatever its CDB holds,
 * and clears it; INQUIRY and REPORT LUNS run and leave it; REQUEST SENSE
 * takes it as its data. */
START_TEST(every_row_reports_a_pending_ua_unless_flagged)
{
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };
	unsigned n;
	const struct opc_entry *tab = opc_table(&n);
	char why[256];

	for (unsigned i = 0; i < n; i++) {
		const struct opc_entry *e = &tab[i];

		for (int v = 0; v < 2; v++) {
			/* 2Ah/01h MODE PARAMETERS CHANGED */
			ua_establish(H.ts[0], ASC_MODE_PARAMETERS_CHANGED);
			struct cmd *c = run_row(e, v, 0);
			bool reported = harness_sense_is(c, SK_UNIT_ATTENTION,
							 0x2a, 0x01, why,
							 sizeof(why));

			if (!(e->flags & OPC_F_UA_OK)) {
				ck_assert_msg(reported, "%02x/%02x: %s", e->op,
					      e->sa, why);
				ck_assert(!ua_pending(H.ts[0]));
				continue;
			}
			struct harness_sense hs;
			ck_assert_msg(c->t.status != SAM_STAT_CHECK_CONDITION ||
				      !harness_sense_parse(c->t.sense,
							   c->t.sense_len,
							   &hs) ||
				      hs.key != SK_UNIT_ATTENTION,
				      "%02x/%02x reported the unit attention",
				      e->op, e->sa);
			if (e->op == SOP_REQUEST_SENSE) {
				EXPECT_GOOD(c);
				ck_assert(!ua_pending(H.ts[0]));
				continue;
			}
			ck_assert_msg(ua_pending(H.ts[0]), "%02x/%02x cleared "
				      "the unit attention", e->op, e->sa);
			EXPECT_SENSE(run_cdb(&H, 0, tur, sizeof(tur), NULL, 0,
					     0), SK_UNIT_ATTENTION, 0x2a, 0x01);
		}
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("opc_rows");
	TCase *tc = tcase_create("rows");

	tcase_add_checked_fixture(tc, setup, teardown);
	harness_add(tc, every_row_completes_once);
	harness_add(tc, every_row_reports_a_pending_ua_unless_flagged);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, suite);
}
