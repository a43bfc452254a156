/*
 * Every row of the command table run through the device server on the
 * harness's LUN: what the table decides for all of them at once. Each
 * command, whatever its answer, completes once (the executors' contract,
 * scsi/exec.h); a pending unit attention is reported by every row but
 * those with OPC_F_UA_OK (SAM-5 5.14); the MAXIMUM TRANSFER LENGTH is
 * reported at each block command's own length field.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>
#include "tcq/byteorder.h"
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

/* Runs cdb of row e at LUN lun_nr with the Data-Out (zeros) or Data-In
 * length it asks for. */
static struct cmd *run_row_cdb(const struct opc_entry *e, const uint8_t *cdb,
			       uint64_t lun_nr)
{
	struct cdb_req req;
	struct sense_info si;
	uint32_t out = 0, in = 0;

	if (!cdb_decode(cdb, OPC_CDB_MAX, BS, &req, &si)) {
		out = req.data_out_len;
		in = req.data_in_len;
	}
	ck_assert_uint_le(out, sizeof(zeros));
	return run_cdb_at(&H, 0, lun_nr, cdb, e->cdb_len, out ? zeros : NULL,
			  out, in);
}

/* Variant v of row e's CDB (row_cdb), run as run_row_cdb does. */
static struct cmd *run_row(const struct opc_entry *e, int v, uint64_t lun_nr)
{
	uint8_t cdb[OPC_CDB_MAX];

	row_cdb(e, v == 1, cdb);
	return run_row_cdb(e, cdb, lun_nr);
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

/* Row e's CDB (row_cdb) asking for n blocks in the field w names. */
static void len_cdb(const struct opc_entry *e, const struct opc_len_spec *w,
		    uint32_t n, uint8_t *cdb)
{
	row_cdb(e, false, cdb);
	if (w->width == 1)
		cdb[w->byte] = (uint8_t)n;
	else if (w->width == 2)
		put_be16(cdb + w->byte, (uint16_t)n);
	else
		put_be32(cdb + w->byte, n);
}

/* SBC-4 6.6.4: a command above the MAXIMUM TRANSFER LENGTH (the device's
 * max_xfer_len) ends with INVALID FIELD IN CDB pointing at its length
 * field, where SBC puts it; one block less runs. */
START_TEST(transfer_length_limit_points_at_the_length_field)
{
	unsigned n, checked = 0;
	const struct opc_len_spec *w = opc_len_specs(&n);
	uint8_t cdb[OPC_CDB_MAX];
	char why[256];

	H.dev.max_xfer_len = 8 * BS;
	for (unsigned i = 0; i < n; i++, w++) {
		const struct opc_entry *e = opc_find(w->op, 0, OPC_FEAT_ALL);

		if (!w->max_xfer)
			continue;
		ck_assert_ptr_nonnull(e);
		len_cdb(e, w, 9, cdb);
		struct cmd *c = run_row_cdb(e, cdb, 0);
		ck_assert_msg(harness_sense_is(c, SK_ILLEGAL_REQUEST, 0x24, 0,
					       why, sizeof(why)) &&
			      harness_field_is(c, true, w->byte, -1, why,
					       sizeof(why)),
			      "%02x, 9 blocks: %s", e->op, why);
		len_cdb(e, w, 8, cdb);
		c = run_row_cdb(e, cdb, 0);
		ck_assert_msg(!harness_sense_is(c, SK_ILLEGAL_REQUEST, 0x24, 0,
						why, sizeof(why)),
			      "%02x, 8 blocks: INVALID FIELD IN CDB", e->op);
		checked++;
	}
	ck_assert_uint_ge(checked, 17);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("opc_rows");
	TCase *tc = tcase_create("rows");

	tcase_add_checked_fixture(tc, setup, teardown);
	harness_add(tc, every_row_completes_once);
	harness_add(tc, every_row_reports_a_pending_ua_unless_flagged);
	harness_add(tc, transfer_length_limit_points_at_the_length_field);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, suite);
}
