/* The command table, its agreement with the CDB decoder and with the
 * standards' permission rules, and the REPORT SUPPORTED OPERATION CODES
 * encodings (SPC-4 6.35). */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/cdb.h"
#include "scsi/exec.h"
#include "scsi/lun.h"
#include "scsi/opcodes.h"
#include "scsi/rsoc.h"
#include "scsi/sense.h"
#include "scsi/spc.h"
#include "tests/unit/harness.h"
#include "tests/unit/opc_util.h"

static uint8_t buf[OPC_REPORT_MAX + 64];
static struct sense_info err;

static void expect_invalid_option(void)
{
	ck_assert_int_eq(err.key, SK_ILLEGAL_REQUEST);
	ck_assert_int_eq(err.asc, 0x2400);	/* INVALID FIELD IN CDB */
	ck_assert(err.sksv);
	ck_assert(err.cd);
	ck_assert_int_eq(err.field, 2);
	ck_assert_int_eq(err.bit, 2);
}

START_TEST(lookups)
{
	const struct opc_entry *e = opc_find(SOP_READ_10, 0, 0);

	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->cdb_len, 10);
	ck_assert_uint_eq(e->usage[1], 0x18);	/* DPO FUA, no RDPROTECT */
	/* Service action ignored for opcodes without them. */
	ck_assert_ptr_eq(opc_find(SOP_READ_10, 7, 0), e);

	e = opc_find(SOP_SERVICE_ACTION_IN_16, SAI_READ_CAPACITY_16, 0);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->sa, SAI_READ_CAPACITY_16);
	ck_assert_uint_eq(e->usage[1], SAI_READ_CAPACITY_16);
	ck_assert_uint_eq(e->usage[14], 0x01);	/* PMI */
	ck_assert_ptr_null(opc_find(SOP_SERVICE_ACTION_IN_16, 0x11, 0));
	ck_assert_ptr_null(opc_find(SOP_SERVICE_ACTION_IN_16, 0x110, 0));
	ck_assert_ptr_nonnull(opc_find(SOP_MAINTENANCE_IN,
				       MI_REPORT_SUPPORTED_OPCODES, 0));
	ck_assert_ptr_nonnull(opc_find(SOP_MAINTENANCE_IN,
				       MI_REPORT_TARGET_PORT_GROUPS, 0));
	ck_assert_ptr_null(opc_find(SOP_MAINTENANCE_OUT,
				    MO_SET_TARGET_PORT_GROUPS, 0));

	ck_assert(opc_has_sa(SOP_SERVICE_ACTION_IN_16, 0));
	ck_assert(opc_has_sa(SOP_MAINTENANCE_IN, 0));
	ck_assert(!opc_has_sa(SOP_READ_16, 0));
	ck_assert(!opc_has_sa(SOP_LOG_SELECT, 0));
	/* Reservations: PR IN/OUT per service action, RESERVE(6) plain. */
	ck_assert(opc_has_sa(SOP_PERSISTENT_RESERVE_IN, 0));
	ck_assert_ptr_nonnull(opc_find(SOP_PERSISTENT_RESERVE_IN, 3, 0));
	ck_assert_ptr_null(opc_find(SOP_PERSISTENT_RESERVE_IN, 4, 0));
	ck_assert_ptr_nonnull(opc_find(SOP_PERSISTENT_RESERVE_OUT, 7, 0));
	ck_assert_ptr_null(opc_find(SOP_PERSISTENT_RESERVE_OUT, 8, 0));
	ck_assert(!opc_has_sa(SOP_RESERVE_6, 0));
	ck_assert_ptr_nonnull(opc_find(SOP_RELEASE_10, 0, 0));

	/* Not implemented at all. */
	ck_assert_ptr_null(opc_find(SOP_LOG_SELECT, 0, 0));
	ck_assert_ptr_nonnull(opc_find(SOP_WRITE_SAME_16, 0, 0));
	ck_assert_ptr_nonnull(opc_find(SOP_COMPARE_AND_WRITE, 0, 0));
	/* SANITIZE only where the LUN allows it; its erases need thin. */
	ck_assert_ptr_null(opc_find(SOP_SANITIZE, SAN_OVERWRITE, OPC_FEAT_THIN));
	ck_assert_ptr_nonnull(opc_find(SOP_SANITIZE, SAN_OVERWRITE,
				       OPC_FEAT_SANITIZE));
	ck_assert_ptr_null(opc_find(SOP_SANITIZE, SAN_BLOCK_ERASE,
				    OPC_FEAT_SANITIZE));
	/* UNMAP exists only over a thin backend. */
	ck_assert_ptr_null(opc_find(SOP_UNMAP, 0, 0));
	ck_assert_ptr_nonnull(opc_find(SOP_UNMAP, 0, OPC_FEAT_THIN));
}
END_TEST

/* Every entry is well formed: opcode and SA in place, CONTROL last,
 * nothing past the CDB, one entry per (opcode, service action). */
START_TEST(table_shape)
{
	unsigned n;
	const struct opc_entry *tab = opc_table(&n);

	ck_assert_uint_gt(n, 20);
	for (unsigned i = 0; i < n; i++) {
		const struct opc_entry *e = &tab[i];

		ck_assert_uint_eq(e->usage[0], e->op);
		ck_assert_uint_eq(e->cdb_len, cdb_group_len(e->op));
		ck_assert_uint_eq(e->usage[e->cdb_len - 1], CDB_CONTROL_NACA);
		for (unsigned b = e->cdb_len; b < OPC_CDB_MAX; b++)
			ck_assert_uint_eq(e->usage[b], 0);
		if (e->flags & OPC_F_SA)
			ck_assert_uint_eq(e->usage[1] & 0x1f, e->sa);
		ck_assert_uint_gt(e->recommended_to, 0);
		ck_assert_uint_ge(e->recommended_to, e->nominal_to);
		for (unsigned j = 0; j < i; j++)
			ck_assert(!(tab[j].op == e->op && tab[j].sa == e->sa));
	}
}
END_TEST

/* The table lists exactly what cdb_decode accepts: each opcode (and each
 * service action 0..31) in a CDB of zeros. */
START_TEST(table_matches_decoder)
{
	uint8_t cdb[16];
	struct cdb_req req;
	struct sense_info si;

	for (unsigned op = 0; op < 256; op++) {
		unsigned all = OPC_FEAT_THIN | OPC_FEAT_SANITIZE;
		bool sa = opc_has_sa((uint8_t)op, all);

		for (unsigned s = 0; s < (sa ? 32u : 1u); s++) {
			memset(cdb, 0, sizeof(cdb));
			cdb[0] = (uint8_t)op;
			cdb[1] = (uint8_t)s;
			int rc = cdb_decode(cdb, sizeof(cdb), 512, &req, &si);
			bool listed = opc_find((uint8_t)op, (uint16_t)s,
					       all) != NULL;

			ck_assert_msg((rc == 0) == listed,
				      "opcode %02x sa %02x: decoder %d, table %d",
				      op, s, rc, listed);
			if (!sa && !listed)
				ck_assert_uint_eq(si.asc, 0x2000);
				/* INVALID COMMAND OPERATION CODE */
		}
	}
}
END_TEST

/* Finds the descriptor for op/sa in all_commands data; NULL if absent. */
static const uint8_t *find_desc(const uint8_t *p, uint32_t len, uint8_t op,
				uint16_t sa)
{
	uint32_t off = 4;

	while (off + OPC_DESC_LEN <= len) {
		const uint8_t *d = p + off;

		if (d[0] == op && get_be16(d + 2) == sa)
			return d;
		off += OPC_DESC_LEN + ((d[5] & 0x02) ? OPC_TIMEOUTS_LEN : 0);
	}
	return NULL;
}

START_TEST(encode_all)
{
	unsigned n, present = 0;
	const struct opc_entry *tab = opc_table(&n);

	for (unsigned i = 0; i < n; i++)
		present += !(tab[i].flags & (OPC_F_THIN | OPC_F_SANITIZE));

	uint32_t len = opc_encode_all(buf, sizeof(buf), false, 0);
	ck_assert_uint_eq(len, 4 + present * OPC_DESC_LEN);
	ck_assert_uint_eq(get_be32(buf), len - 4);
	const uint8_t *d = find_desc(buf, len, SOP_SERVICE_ACTION_IN_16,
				     SAI_READ_CAPACITY_16);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(d[5], 0x01);		/* SERVACTV, no CTDP */
	ck_assert_uint_eq(get_be16(d + 6), 16);
	d = find_desc(buf, len, SOP_LOG_SENSE, 0);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(get_be16(d + 6), 10);
	d = find_desc(buf, len, SOP_READ_10, 0);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(d[5], 0x00);
	ck_assert_uint_eq(get_be16(d + 6), 10);
	ck_assert_ptr_null(find_desc(buf, len, SOP_UNMAP, 0));

	/* RCTD: every descriptor carries a 0Ah-long timeouts descriptor. */
	len = opc_encode_all(buf, sizeof(buf), true,
			     OPC_FEAT_THIN | OPC_FEAT_SANITIZE);
	ck_assert_uint_eq(len, 4 + n * (OPC_DESC_LEN + OPC_TIMEOUTS_LEN));
	ck_assert_uint_eq(get_be32(buf), len - 4);
	for (uint32_t off = 4; off < len;
	     off += OPC_DESC_LEN + OPC_TIMEOUTS_LEN) {
		ck_assert_uint_eq(buf[off + 5] & 0x02, 0x02);
		ck_assert_uint_eq(get_be16(buf + off + 8), 0x0a);
		ck_assert_uint_gt(get_be32(buf + off + 16), 0);
	}
	ck_assert_ptr_nonnull(find_desc(buf, len, SOP_UNMAP, 0));
	d = find_desc(buf, len, SOP_SYNC_CACHE_16, 0);
	ck_assert_ptr_nonnull(d);
	const struct opc_entry *e = opc_find(SOP_SYNC_CACHE_16, 0, 0);
	ck_assert_uint_eq(get_be32(d + 12), e->nominal_to);
	ck_assert_uint_eq(get_be32(d + 16), e->recommended_to);

	/* A short buffer gets a prefix; the returned length stays full. */
	memset(buf, 0xee, sizeof(buf));
	ck_assert_uint_eq(opc_encode_all(buf, 10, false, 0),
			  4 + present * OPC_DESC_LEN);
	ck_assert_uint_eq(get_be32(buf), present * OPC_DESC_LEN);
	ck_assert_uint_eq(buf[9], 0);
	ck_assert_uint_eq(buf[10], 0xee);
}
END_TEST

START_TEST(encode_one)
{
	int n;

	/* 001b on an opcode without service actions. */
	n = opc_encode_one(buf, sizeof(buf), RSOC_OP, SOP_READ_10, 0, false, 0,
			   &err);
	ck_assert_int_eq(n, 4 + 10);
	ck_assert_uint_eq(buf[1], RSOC_SUPPORT_STD);
	ck_assert_uint_eq(get_be16(buf + 2), 10);
	static const uint8_t r10[10] = { 0x28, 0x18, 0xff, 0xff, 0xff, 0xff,
					 0x00, 0xff, 0xff, 0x04 };
	ck_assert_mem_eq(buf + 4, r10, sizeof(r10));
	/* ... and the requested service action is ignored. */
	ck_assert_int_eq(opc_encode_one(buf, sizeof(buf), RSOC_OP, SOP_WRITE_16,
					0x55, false, 0, &err), 4 + 16);
	ck_assert_uint_eq(buf[5], 0x18);
	/* 001b on an opcode with service actions is an error. */
	ck_assert_int_eq(opc_encode_one(buf, sizeof(buf), RSOC_OP,
					SOP_SERVICE_ACTION_IN_16, 0x10, false,
					0, &err), -1);
	expect_invalid_option();

	/* 010b needs an opcode with service actions. */
	n = opc_encode_one(buf, sizeof(buf), RSOC_OP_SA, SOP_MAINTENANCE_IN,
			   MI_REPORT_SUPPORTED_OPCODES, false, 0, &err);
	ck_assert_int_eq(n, 4 + 12);
	ck_assert_uint_eq(buf[1], RSOC_SUPPORT_STD);
	ck_assert_uint_eq(buf[4], SOP_MAINTENANCE_IN);
	ck_assert_uint_eq(buf[5], MI_REPORT_SUPPORTED_OPCODES);
	ck_assert_uint_eq(buf[6], 0x87);
	ck_assert_int_eq(opc_encode_one(buf, sizeof(buf), RSOC_OP_SA,
					SOP_READ_10, 0, false, 0, &err), -1);
	expect_invalid_option();
	/* Unknown service action of a known opcode: not supported. */
	memset(buf, 0xee, sizeof(buf));
	n = opc_encode_one(buf, sizeof(buf), RSOC_OP_SA,
			   SOP_SERVICE_ACTION_IN_16, 0x11, true, 0, &err);
	ck_assert_int_eq(n, 4);
	ck_assert_uint_eq(buf[1], RSOC_SUPPORT_NONE);
	ck_assert_uint_eq(get_be16(buf + 2), 0);
	ck_assert_uint_eq(buf[4], 0xee);

	/* 011b: SA used only where the opcode has them. */
	ck_assert_int_eq(opc_encode_one(buf, sizeof(buf), RSOC_OP_ANY,
					SOP_READ_12, 9, false, 0, &err),
			 4 + 12);
	ck_assert_uint_eq(buf[1], RSOC_SUPPORT_STD);
	ck_assert_int_eq(opc_encode_one(buf, sizeof(buf), RSOC_OP_ANY,
					SOP_SERVICE_ACTION_IN_16,
					SAI_GET_LBA_STATUS, false, 0, &err),
			 4 + 16);
	ck_assert_uint_eq(buf[5], SAI_GET_LBA_STATUS);
	ck_assert_int_eq(opc_encode_one(buf, sizeof(buf), RSOC_OP_ANY,
					SOP_SERVICE_ACTION_IN_16, 0, false, 0,
					&err), 4);
	ck_assert_uint_eq(buf[1], RSOC_SUPPORT_NONE);

	/* LOG SENSE (SPC-4 6.6): PC and PAGE CODE, SUBPAGE CODE, PARAMETER
	 * POINTER, ALLOCATION LENGTH; SP and the obsolete PPC rejected. */
	n = opc_encode_one(buf, sizeof(buf), RSOC_OP, SOP_LOG_SENSE, 0, false,
			   0, &err);
	ck_assert_int_eq(n, 4 + 10);
	ck_assert_uint_eq(buf[1], RSOC_SUPPORT_STD);
	static const uint8_t ls[10] = { 0x4d, 0x00, 0xff, 0xff, 0x00, 0xff,
					0xff, 0xff, 0xff, 0x04 };
	ck_assert_mem_eq(buf + 4, ls, sizeof(ls));

	/* Opcodes not implemented: not supported, with every option. */
	for (unsigned opt = RSOC_OP; opt <= RSOC_OP_ANY; opt++) {
		ck_assert_int_eq(opc_encode_one(buf, sizeof(buf), opt,
						SOP_LOG_SELECT, 0,
						false, 0, &err), 4);
		ck_assert_uint_eq(buf[1], RSOC_SUPPORT_NONE);
		ck_assert_int_eq(opc_encode_one(buf, sizeof(buf), opt,
						SOP_UNMAP, 0, false, 0, &err),
				 4);
		ck_assert_uint_eq(buf[1], RSOC_SUPPORT_NONE);
	}
	ck_assert_int_eq(opc_encode_one(buf, sizeof(buf), RSOC_OP, SOP_UNMAP,
					0, false, OPC_FEAT_THIN, &err), 14);

	/* 000b and the reserved options are not one_command requests. */
	for (unsigned opt = 0; opt < 8; opt++) {
		if (opt >= RSOC_OP && opt <= RSOC_OP_ANY)
			continue;
		ck_assert_int_eq(opc_encode_one(buf, sizeof(buf), opt,
						SOP_READ_10, 0, false, 0,
						&err), -1);
		expect_invalid_option();
	}
}
END_TEST

START_TEST(encode_one_rctd)
{
	const struct opc_entry *e = opc_find(SOP_SYNC_CACHE_10, 0, 0);
	int n = opc_encode_one(buf, sizeof(buf), RSOC_OP, SOP_SYNC_CACHE_10, 0,
			       true, 0, &err);

	ck_assert_int_eq(n, 4 + 10 + OPC_TIMEOUTS_LEN);
	ck_assert_uint_eq(buf[1], 0x80 | RSOC_SUPPORT_STD);	/* CTDP */
	ck_assert_uint_eq(buf[5], 0x02);	/* IMMED */
	ck_assert_uint_eq(get_be16(buf + 14), 0x0a);
	ck_assert_uint_eq(get_be32(buf + 18), e->nominal_to);
	ck_assert_uint_eq(get_be32(buf + 22), e->recommended_to);

	memset(buf, 0xee, sizeof(buf));
	n = opc_encode_one(buf, 6, RSOC_OP, SOP_SYNC_CACHE_10, 0, true, 0,
			   &err);
	ck_assert_int_eq(n, 4 + 10 + OPC_TIMEOUTS_LEN);
	ck_assert_uint_eq(buf[4], SOP_SYNC_CACHE_10);
	ck_assert_uint_eq(buf[5], 0x02);
	ck_assert_uint_eq(buf[6], 0xee);
}
END_TEST

/* Through the device server: CDB decode, sense, allocation length. */
static int done_calls;
static void task_done(struct tcq_task *t)
{
	done_calls++;
}

static struct tcq_task *run_rsoc(uint8_t byte2, uint8_t op, uint16_t sa,
				 uint32_t alloc, uint32_t exp_len)
{
	static struct lun l;
	static struct tcq_task t;
	static uint8_t data[2048];
	struct sense_info si;

	memset(&l, 0, sizeof(l));
	l.block_size = 512;
	memset(&t, 0, sizeof(t));
	memset(data, 0xee, sizeof(data));
	t.lun = &l;
	t.cdb[0] = SOP_MAINTENANCE_IN;
	t.cdb[1] = MI_REPORT_SUPPORTED_OPCODES;
	t.cdb[2] = byte2;
	t.cdb[3] = op;
	put_be16(t.cdb + 4, sa);
	put_be32(t.cdb + 6, alloc);
	t.cdb_len = 16;
	t.exp_len = exp_len;
	t.dir_in = true;
	t.buf = data;
	t.buf_len = sizeof(data);
	t.done = task_done;
	done_calls = 0;
	if (cdb_decode(t.cdb, t.cdb_len, 512, &t.req, &si)) {
		sense_set_si(&t, &si);
		return &t;
	}
	/* As lun_execute does: a failure the executor returns completes
	 * the task (scsi/exec.h). */
	struct exec_rc rc = rsoc_report_supported_opcodes(&t);
	if (exec_failed(rc))
		exec_fail(&t, rc);
	ck_assert_int_eq(done_calls, 1);
	return &t;
}

START_TEST(rsoc_executor_answers_and_cuts_to_allocation_length)
{
	struct tcq_task *t = run_rsoc(0, 0, 0, 4096, 4096);
	uint8_t *p = t->buf;

	ck_assert_uint_eq(t->status, SAM_STAT_GOOD);
	ck_assert_uint_eq(t->data_in_len, get_be32(p) + 4);
	ck_assert_uint_eq(t->req.data_in_len, t->data_in_len);

	/* Allocation length cuts the data, not the length field. */
	t = run_rsoc(0x80, 0, 0, 30, 4096);
	p = t->buf;
	ck_assert_uint_eq(t->status, SAM_STAT_GOOD);
	ck_assert_uint_eq(t->data_in_len, 30);
	ck_assert_uint_gt(get_be32(p), 26);
	ck_assert_uint_eq(p[9] & 0x02, 0x02);	/* CTDP */
	ck_assert_uint_eq(p[30], 0xee);

	t = run_rsoc(0, 0, 0, 0, 0);
	ck_assert_uint_eq(t->status, SAM_STAT_GOOD);
	ck_assert_uint_eq(t->data_in_len, 0);

	t = run_rsoc(RSOC_OP, SOP_READ_16, 0, 512, 512);
	p = t->buf;
	ck_assert_uint_eq(t->status, SAM_STAT_GOOD);
	ck_assert_uint_eq(t->data_in_len, 20);
	ck_assert_uint_eq(p[1], RSOC_SUPPORT_STD);
	ck_assert_uint_eq(p[5], 0x18);

	/* No thin backend here: UNMAP is not supported. */
	t = run_rsoc(RSOC_OP_ANY, SOP_UNMAP, 0, 512, 512);
	ck_assert_uint_eq(t->status, SAM_STAT_GOOD);
	ck_assert_uint_eq(t->data_in_len, 4);
	ck_assert_uint_eq(((uint8_t *)t->buf)[1], RSOC_SUPPORT_NONE);

	t = run_rsoc(RSOC_OP, SOP_MAINTENANCE_IN, 0, 512, 512);
	ck_assert_uint_eq(t->status, SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(t->sense[2] & 0x0f, SK_ILLEGAL_REQUEST);
	ck_assert_uint_eq(t->sense[12], 0x24);
	ck_assert_uint_eq(t->data_in_len, 0);

	t = run_rsoc(5, SOP_READ_10, 0, 512, 512);
	ck_assert_uint_eq(t->status, SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(t->sense[12], 0x24);

	/* Reserved bits of byte 2 are checked by the decoder. */
	t = run_rsoc(0x08, 0, 0, 512, 512);
	ck_assert_uint_eq(t->status, SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(t->sense[12], 0x24);
}
END_TEST

/* Every row decodes to itself (so dispatch runs its executor), and moves
 * data only in its direction: some CDB of an IN or OUT row moves data
 * that way, no CDB moves data the other way, a NONE row moves none. */
START_TEST(rows_decode_to_themselves_in_their_direction)
{
	unsigned n;
	const struct opc_entry *tab = opc_table(&n);
	uint8_t cdb[OPC_CDB_MAX];
	struct cdb_req req;
	struct sense_info si;

	for (unsigned i = 0; i < n; i++) {
		const struct opc_entry *e = &tab[i];
		bool decoded = false, moved = false;

		for (int v = 0; v < 2; v++) {
			row_cdb(e, v == 1, cdb);
			if (cdb_decode(cdb, sizeof(cdb), 512, &req, &si))
				continue;
			decoded = true;
			ck_assert_msg(req.cmd == e, "%02x/%02x decodes to "
				      "another row", e->op, e->sa);
			ck_assert_msg(e->dir == OPC_DIR_OUT || !req.data_out_len,
				      "%02x/%02x: Data-Out from a row that is "
				      "not OUT", e->op, e->sa);
			ck_assert_msg(e->dir == OPC_DIR_IN || !req.data_in_len,
				      "%02x/%02x: Data-In from a row that is "
				      "not IN", e->op, e->sa);
			moved |= req.data_in_len || req.data_out_len;
		}
		ck_assert_msg(decoded, "%02x/%02x: no CDB of its usage data "
			      "decodes", e->op, e->sa);
		ck_assert_msg(moved == (e->dir != OPC_DIR_NONE),
			      "%02x/%02x: direction %u, moved data %d", e->op,
			      e->sa, e->dir, moved);
		/* What the command does to the medium fits its data. */
		if (e->access == CDB_ACCESS_WRITE)
			ck_assert_uint_eq(e->dir, OPC_DIR_OUT);
		ck_assert_ptr_nonnull(e->exec);
	}
}
END_TEST

/* Permission classes, written from the standards rather than from the
 * table: SPC-4 5.13.1 table 66 and SBC-3 table 13 (reservations), SPC-4
 * 5.15.2.4.4 and 5.15.2.4.5 (ALUA standby, unavailable), SBC-3 4.11
 * (commands allowed during a sanitize), SAM-5 5.14 (commands that run
 * while a unit attention is pending). */
struct spec_row {
	uint8_t op, sa, resv;
	bool standby, unavailable, sanitizing, ua;
};

static const struct spec_row spec_rows[] = {
	{ SOP_INQUIRY, 0, OPC_RESV_ALLOWED, true, true, true, true },
	{ SOP_REPORT_LUNS, 0, OPC_RESV_ALLOWED, true, true, true, true },
	{ SOP_REQUEST_SENSE, 0, OPC_RESV_ALLOWED, true, true, true, true },
	{ SOP_MAINTENANCE_IN, MI_REPORT_TARGET_PORT_GROUPS,
	  OPC_RESV_ALLOWED, true, true, true, false },
	{ SOP_MAINTENANCE_IN, MI_REPORT_SUPPORTED_OPCODES,
	  OPC_RESV_ALLOWED, true, true, true, false },
	{ SOP_TEST_UNIT_READY, 0, OPC_RESV_ALLOWED,
	  false, false, false, false },
	{ SOP_READ_CAPACITY_10, 0, OPC_RESV_ALLOWED,
	  false, false, false, false },
	{ SOP_SERVICE_ACTION_IN_16, SAI_READ_CAPACITY_16, OPC_RESV_ALLOWED,
	  false, false, false, false },
	{ SOP_PERSISTENT_RESERVE_IN, 0, OPC_RESV_ALLOWED,
	  true, false, false, false },
	{ SOP_PERSISTENT_RESERVE_OUT, 1, OPC_RESV_ALLOWED, true, false,
	  false, false },
	/* SPC-4 table 66: LOG SENSE is allowed under every reservation;
	 * 5.15.2.4.4: it runs in the standby state. */
	{ SOP_LOG_SENSE, 0, OPC_RESV_ALLOWED, true, false, false, false },
	{ SOP_MODE_SENSE_6, 0, OPC_RESV_READ, true, false, false, false },
	{ SOP_MODE_SENSE_10, 0, OPC_RESV_READ, true, false, false, false },
	{ SOP_MODE_SELECT_10, 0, OPC_RESV_CONFLICT, true, false, false, false },
	{ SOP_READ_10, 0, OPC_RESV_READ, false, false, false, false },
	{ SOP_READ_16, 0, OPC_RESV_READ, false, false, false, false },
	{ SOP_VERIFY_16, 0, OPC_RESV_READ, false, false, false, false },
	{ SOP_PRE_FETCH_10, 0, OPC_RESV_READ, false, false, false, false },
	{ SOP_SERVICE_ACTION_IN_16, SAI_GET_LBA_STATUS, OPC_RESV_READ, false,
	  false, false, false },
	{ SOP_RECEIVE_COPY_RESULTS, RCR_COPY_STATUS, OPC_RESV_READ, false,
	  false, false, false },
	{ SOP_WRITE_10, 0, OPC_RESV_CONFLICT, false, false, false, false },
	{ SOP_WRITE_16, 0, OPC_RESV_CONFLICT, false, false, false, false },
	{ SOP_SYNC_CACHE_10, 0, OPC_RESV_CONFLICT, false, false, false, false },
	{ SOP_WRITE_SAME_16, 0, OPC_RESV_CONFLICT, false, false, false, false },
	{ SOP_UNMAP, 0, OPC_RESV_CONFLICT, false, false, false, false },
	{ SOP_COMPARE_AND_WRITE, 0, OPC_RESV_CONFLICT,
	  false, false, false, false },
	{ SOP_EXTENDED_COPY, XCOPY_LID1, OPC_RESV_CONFLICT, false, false,
	  false, false },
	/* SBC-4 (reservations of the block commands): POPULATE TOKEN reads
	 * (allowed under Write Exclusive), WRITE USING TOKEN writes; RECEIVE
	 * ROD TOKEN INFORMATION as RECEIVE COPY RESULTS. */
	{ SOP_EXTENDED_COPY, XCOPY_POPULATE_TOKEN, OPC_RESV_READ, false,
	  false, false, false },
	{ SOP_EXTENDED_COPY, XCOPY_WRITE_USING_TOKEN, OPC_RESV_CONFLICT,
	  false, false, false, false },
	{ SOP_RECEIVE_COPY_RESULTS, RCR_ROD_TOKEN_INFO, OPC_RESV_READ, false,
	  false, false, false },
};

START_TEST(rows_follow_the_standards_permissions)
{
	for (size_t i = 0; i < sizeof(spec_rows) / sizeof(spec_rows[0]); i++) {
		const struct spec_row *w = &spec_rows[i];
		const struct opc_entry *e = opc_find(w->op, w->sa, OPC_FEAT_ALL);

		ck_assert_msg(e != NULL, "%02x/%02x missing", w->op, w->sa);
		ck_assert_msg(e->resv == w->resv, "%02x/%02x reservation class "
			      "%u, the standard says %u", w->op, w->sa,
			      e->resv, w->resv);
		ck_assert_msg(!!(e->flags & (OPC_F_ALUA_ANY |
					     OPC_F_ALUA_STANDBY)) ==
			      w->standby, "%02x/%02x in standby", w->op, w->sa);
		ck_assert_msg(!!(e->flags & OPC_F_ALUA_ANY) == w->unavailable,
			      "%02x/%02x when unavailable", w->op, w->sa);
		ck_assert_msg(!!(e->flags & OPC_F_SANITIZING) == w->sanitizing,
			      "%02x/%02x during a sanitize", w->op, w->sa);
		ck_assert_msg(!!(e->flags & OPC_F_UA_OK) == w->ua,
			      "%02x/%02x with a unit attention pending",
			      w->op, w->sa);
	}
}
END_TEST

/* The row of a block command knows where its block count is, as SBC-3
 * lays it out (the usage data marks the whole field); no other row has
 * one. */
START_TEST(length_fields_follow_sbc)
{
	unsigned n;
	const struct opc_entry *tab = opc_table(&n);

	for (unsigned i = 0; i < n; i++) {
		const struct opc_entry *e = &tab[i];
		const struct opc_len_spec *w = opc_len_spec(e->op);

		ck_assert_msg(e->len_byte == (w ? w->byte : 0),
			      "%02x/%02x: length field at %u, SBC says %u",
			      e->op, e->sa, e->len_byte, w ? w->byte : 0);
		for (unsigned b = 0; w && b < w->width; b++)
			ck_assert_msg(e->usage[w->byte + b] == 0xff,
				      "%02x: usage of byte %u", e->op,
				      w->byte + b);
	}
}
END_TEST

/* SAM-5 5.14: INQUIRY, REPORT LUNS and REQUEST SENSE run while a unit
 * attention is pending; every other command reports it. */
START_TEST(only_three_commands_run_with_a_unit_attention)
{
	unsigned n;
	const struct opc_entry *tab = opc_table(&n);

	for (unsigned i = 0; i < n; i++) {
		const struct opc_entry *e = &tab[i];
		bool three = e->op == SOP_INQUIRY || e->op == SOP_REPORT_LUNS ||
			     e->op == SOP_REQUEST_SENSE;

		ck_assert_msg(!!(e->flags & OPC_F_UA_OK) == three,
			      "%02x/%02x: OPC_F_UA_OK %d", e->op, e->sa,
			      !!(e->flags & OPC_F_UA_OK));
	}
}
END_TEST

/* ---- a LUN that is not there (SAM-5 5.9, incorrect LUN selection) ----- */

static struct harness_lun H;

#define ABSENT 5	/* the fixture's device has LUN 0 only */

static void absent_setup(void)
{
	harness_lun_setup(&H, "null:size=1M", 0, 1);
}

static void absent_teardown(void)
{
	harness_lun_teardown(&H);
}

static struct cmd *absent(const uint8_t *cdb, uint16_t len, uint32_t in_len)
{
	return run_cdb_at(&H, 0, ABSENT, cdb, len, NULL, 0, in_len);
}

/* SPC-4 6.6.2: PERIPHERAL QUALIFIER 011b (no logical unit can be here),
 * PERIPHERAL DEVICE TYPE 1Fh; GOOD status. */
START_TEST(absent_lun_inquiry_reports_peripheral_qualifier_011b)
{
	uint8_t cdb[6] = { SOP_INQUIRY, 0, 0, 0, 96, 0 };
	struct cmd *c = absent(cdb, 6, 96);

	EXPECT_GOOD(c);
	ck_assert_uint_ge(c->t.data_in_len, 8);
	ck_assert_uint_eq(cmd_data(c)[0], 0x7f);
	/* A bad CDB is still reported as such: page code without EVPD. */
	cdb[2] = 0x80;
	c = absent(cdb, 6, 96);
	EXPECT_INVALID_FIELD_IN_CDB(c, 2, -1);
}
END_TEST

/* REPORT LUNS works through any LUN and lists the device's: LUN 0. */
START_TEST(absent_lun_report_luns_lists_the_device)
{
	static const uint8_t want[16] = {
		0x00, 0x00, 0x00, 0x08,		/* LUN LIST LENGTH */
		0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,	/* LUN 0 */
	};
	uint8_t cdb[12] = { SOP_REPORT_LUNS, 0, 0, 0, 0, 0, 0, 0, 0, 64 };
	struct cmd *c = absent(cdb, 12, 64);

	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, sizeof(want));
	ck_assert_mem_eq(cmd_data(c), want, sizeof(want));
}
END_TEST

/* SAM-5 5.9: REQUEST SENSE to a missing LUN is GOOD, with sense data
 * ILLEGAL REQUEST, 25h/00h LOGICAL UNIT NOT SUPPORTED. */
START_TEST(absent_lun_request_sense_reports_lun_not_supported)
{
	uint8_t cdb[6] = { SOP_REQUEST_SENSE, 0, 0, 0, 252, 0 };
	struct cmd *c = absent(cdb, 6, 252);
	struct harness_sense s;

	EXPECT_GOOD(c);
	ck_assert(harness_sense_parse(cmd_data(c), c->t.data_in_len, &s));
	ck_assert_uint_eq(cmd_data(c)[0], 0x70);	/* DESC=0: fixed */
	ck_assert_uint_eq(s.key, SK_ILLEGAL_REQUEST);
	ck_assert_uint_eq(s.asc, 0x25);
	ck_assert_uint_eq(s.ascq, 0x00);
}
END_TEST

/* Every other row of the table: CHECK CONDITION, ILLEGAL REQUEST, 25h/00h
 * LOGICAL UNIT NOT SUPPORTED, whatever its CDB holds. */
START_TEST(absent_lun_other_rows_answer_lun_not_supported)
{
	unsigned n, checked = 0;
	const struct opc_entry *tab = opc_table(&n);
	uint8_t cdb[OPC_CDB_MAX];
	char why[256];

	for (unsigned i = 0; i < n; i++) {
		const struct opc_entry *e = &tab[i];

		if (e->flags & OPC_F_ANY_LUN)
			continue;
		for (int v = 0; v < 2; v++) {
			row_cdb(e, v == 1, cdb);
			struct cmd *c = absent(cdb, e->cdb_len,
					       e->dir == OPC_DIR_IN ? 4096 : 0);
			ck_assert_msg(harness_sense_is(c, SK_ILLEGAL_REQUEST,
						       0x25, 0x00, why,
						       sizeof(why)),
				      "%02x/%02x: %s", e->op, e->sa, why);
			ck_assert_uint_eq(c->t.data_in_len, 0);
		}
		checked++;
	}
	ck_assert_uint_gt(checked, 20);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("opcodes");
	TCase *tc = tcase_create("rsoc");
	TCase *absent_lun = tcase_create("absent-lun");

	harness_add(tc, lookups);
	harness_add(tc, table_shape);
	harness_add(tc, table_matches_decoder);
	harness_add(tc, encode_all);
	harness_add(tc, encode_one);
	harness_add(tc, encode_one_rctd);
	harness_add(tc, rsoc_executor_answers_and_cuts_to_allocation_length);
	harness_add(tc, rows_decode_to_themselves_in_their_direction);
	harness_add(tc, rows_follow_the_standards_permissions);
	harness_add(tc, only_three_commands_run_with_a_unit_attention);
	harness_add(tc, length_fields_follow_sbc);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(absent_lun, absent_setup, absent_teardown);
	harness_add(absent_lun,
		    absent_lun_inquiry_reports_peripheral_qualifier_011b);
	harness_add(absent_lun, absent_lun_report_luns_lists_the_device);
	harness_add(absent_lun,
		    absent_lun_request_sense_reports_lun_not_supported);
	harness_add(absent_lun, absent_lun_other_rows_answer_lun_not_supported);
	suite_add_tcase(s, absent_lun);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, suite);
}
