/*
 * The command table: one row per opcode (and service action) the device
 * server implements, with everything known of it (see opcodes.h). To add
 * a command: write its decoder (cdb_decode.c) and executor, add its row
 * here; decode, dispatch, the permission checks and REPORT SUPPORTED
 * OPERATION CODES follow from the row.
 */
#include <string.h>
#include "tcq/compiler.h"
#include "tcq/scsi_proto.h"
#include "scsi/alua.h"
#include "scsi/cdb_priv.h"
#include "scsi/mmc.h"
#include "scsi/odx.h"
#include "scsi/opcodes.h"
#include "scsi/pr.h"
#include "scsi/rsoc.h"
#include "scsi/sbc.h"
#include "scsi/spc.h"

/* Timeouts in seconds, by class of command: emulated ones complete at
 * once; media access waits for the backend queue; a cache flush or an
 * UNMAP of a large range can take much longer. */
#define TO_EMUL .nominal_to = 1, .recommended_to = 5
#define TO_IO .nominal_to = 1, .recommended_to = 30
#define TO_FLUSH .nominal_to = 10, .recommended_to = 60
/* SANITIZE and EXTENDED COPY go over a whole medium. */
#define TO_SANITIZE .nominal_to = 60, .recommended_to = 3600

/* Data direction and what the command does to the medium. */
#define NO_DATA .dir = OPC_DIR_NONE
#define DATA_IN .dir = OPC_DIR_IN
#define DATA_OUT .dir = OPC_DIR_OUT
#define READS .access = CDB_ACCESS_READ
#define WRITES .access = CDB_ACCESS_WRITE

/* Reservation classes (SPC-4 5.13.1, table 66). */
#define RESV_ALLOWED .resv = OPC_RESV_ALLOWED
#define RESV_READ .resv = OPC_RESV_READ
#define RESV_CONFLICT .resv = OPC_RESV_CONFLICT

/* Commands that report the device's state run in every state: ALUA
 * standby and unavailable, a SANITIZE in progress, no medium, another
 * nexus' RESERVE(6/10). */
#define F_REPORTS (OPC_F_ALUA_ANY | OPC_F_SANITIZING | OPC_F_NO_MEDIUM | \
		   OPC_F_SPC2_OK)
/* Commands on the device's settings and reservations run in standby
 * (SPC-4 5.15.2.4.4) and without a medium. */
#define F_SETTINGS (OPC_F_ALUA_STANDBY | OPC_F_NO_MEDIUM)

/* Usage data patterns shared by several commands. CONTROL is 0x04 in every
 * CDB: NACA is honoured (NormACA=1); LINK is rejected like a reserved bit
 * and the vendor bits are ignored. */
#define CTL 0x04
#define LBA4 0xff, 0xff, 0xff, 0xff
#define LBA8 LBA4, LBA4
#define LEN2 0xff, 0xff
#define LEN4 LBA4
/* READ/WRITE byte 1: DPO and FUA; xxPROTECT are 0 (no protection
 * information: a non-zero value is rejected), FUA_NV/obsolete ignored. */
#define RW1 0x18
/* VERIFY byte 1: DPO and BYTCHK; VRPROTECT 0 as above. */
#define VFY1 0x16
/* The GROUP NUMBER field is decoded but not acted on (no grouping
 * function), so it shows as ignored (0) everywhere. */

/* The block count of the 6, 10, 12 and 16-byte layouts the block
 * commands share (SBC-3 5): TRANSFER LENGTH at byte 4, 7, 6 or 10. */
#define BLK_LEN(len) .len_byte = ((len) == 6 ? 4 : (len) == 10 ? 7 : \
				   (len) == 12 ? 6 : 10)

/* READ, WRITE, VERIFY, WRITE AND VERIFY in their 10, 12, 16-byte forms. */
#define READ_ROW(o, len, ...) \
	{ .op = o, .cdb_len = len, .decode = cdb_dec_read_write, \
	  .exec = sbc_read, DATA_IN, READS, RESV_READ, TO_IO, BLK_LEN(len), \
	  .usage = { o, __VA_ARGS__ } }
#define WRITE_ROW(o, len, ...) \
	{ .op = o, .cdb_len = len, .decode = cdb_dec_read_write, \
	  .exec = sbc_write, DATA_OUT, WRITES, RESV_CONFLICT, TO_IO, \
	  BLK_LEN(len), .flags = OPC_F_TRIM_OVERFLOW, \
	  .usage = { o, __VA_ARGS__ } }
#define VERIFY_ROW(o, len, ...) \
	{ .op = o, .cdb_len = len, .decode = cdb_dec_verify, \
	  .exec = sbc_verify, DATA_OUT, READS, RESV_READ, TO_IO, \
	  BLK_LEN(len), .usage = { o, __VA_ARGS__ } }
#define WRITE_VERIFY_ROW(o, len, ...) \
	{ .op = o, .cdb_len = len, .decode = cdb_dec_write_verify, \
	  .exec = sbc_write_verify, DATA_OUT, WRITES, RESV_CONFLICT, TO_IO, \
	  BLK_LEN(len), .flags = OPC_F_TRIM_OVERFLOW, \
	  .usage = { o, __VA_ARGS__ } }
/* PERSISTENT RESERVE IN / OUT, one row per service action. PR OUT byte 2
 * is SCOPE and TYPE where the service action reads them. */
#define PR_IN_ROW(s) \
	{ .op = SOP_PERSISTENT_RESERVE_IN, .sa = s, .cdb_len = 10, \
	  .flags = OPC_F_SA | F_SETTINGS, .decode = cdb_dec_pr_in, \
	  .exec = pr_in, DATA_IN, RESV_ALLOWED, TO_EMUL, \
	  .usage = { SOP_PERSISTENT_RESERVE_IN, s, 0, 0, 0, 0, 0, LEN2, CTL } }
#define PR_OUT_ROW(s, scope_type) \
	{ .op = SOP_PERSISTENT_RESERVE_OUT, .sa = s, .cdb_len = 10, \
	  .flags = OPC_F_SA | F_SETTINGS, .decode = cdb_dec_pr_out, \
	  .exec = pr_out, DATA_OUT, RESV_ALLOWED, TO_EMUL, \
	  .usage = { SOP_PERSISTENT_RESERVE_OUT, s, scope_type, 0, 0, LEN4, \
		     CTL } }

/*
 * A usage bit is 1 only where a CDB bit changes what the device server
 * does; bits it rejects when set (reserved, protection fields, SP, CmdDt,
 * ANCHOR) and bits nothing reads (PF, IMMED of START STOP UNIT and
 * PRE-FETCH, GROUP NUMBER) are 0.
 */
static const struct opc_entry opc_tab[] = {
	/* ---- SPC-4: state, identity, settings (scsi/spc.c) ---- */
	{ .op = SOP_TEST_UNIT_READY, .cdb_len = 6,
	  .decode = cdb_dec_test_unit_ready, .exec = spc_test_unit_ready,
	  NO_DATA, RESV_ALLOWED, TO_EMUL,
	  .usage = { SOP_TEST_UNIT_READY, 0, 0, 0, 0, CTL } },
	{ .op = SOP_REQUEST_SENSE, .cdb_len = 6,
	  .flags = F_REPORTS | OPC_F_ANY_LUN | OPC_F_UA_OK,
	  .decode = cdb_dec_request_sense, .exec = spc_request_sense,
	  DATA_IN, RESV_ALLOWED, TO_EMUL,
	  .usage = { SOP_REQUEST_SENSE, 0x01 /* DESC */, 0, 0, 0xff, CTL } },
	{ .op = SOP_INQUIRY, .cdb_len = 6,
	  .flags = F_REPORTS | OPC_F_ANY_LUN | OPC_F_UA_OK,
	  .decode = cdb_dec_inquiry, .exec = spc_inquiry,
	  DATA_IN, RESV_ALLOWED, TO_EMUL,
	  .usage = { SOP_INQUIRY, 0x01 /* EVPD */, 0xff, LEN2, CTL } },
	{ .op = SOP_REPORT_LUNS, .cdb_len = 12,
	  .flags = F_REPORTS | OPC_F_ANY_LUN | OPC_F_UA_OK,
	  .decode = cdb_dec_report_luns, .exec = spc_report_luns,
	  DATA_IN, RESV_ALLOWED, TO_EMUL,
	  .usage = { SOP_REPORT_LUNS, 0, 0xff /* SELECT REPORT */, 0, 0, 0,
		     LEN4, 0, CTL } },
	{ .op = SOP_MODE_SELECT_6, .cdb_len = 6, .flags = F_SETTINGS,
	  .decode = cdb_dec_mode_select, .exec = spc_mode_select,
	  DATA_OUT, RESV_CONFLICT, TO_EMUL,
	  .usage = { SOP_MODE_SELECT_6, 0, 0, 0, 0xff, CTL } },
	{ .op = SOP_MODE_SENSE_6, .cdb_len = 6, .flags = F_SETTINGS,
	  .decode = cdb_dec_mode_sense, .exec = spc_mode_sense,
	  DATA_IN, RESV_READ, TO_EMUL,
	  .usage = { SOP_MODE_SENSE_6, 0x08 /* DBD */, 0xff, 0xff, 0xff,
		     CTL } },
	{ .op = SOP_MODE_SELECT_10, .cdb_len = 10, .flags = F_SETTINGS,
	  .decode = cdb_dec_mode_select, .exec = spc_mode_select,
	  DATA_OUT, RESV_CONFLICT, TO_EMUL,
	  .usage = { SOP_MODE_SELECT_10, 0, 0, 0, 0, 0, 0, LEN2, CTL } },
	{ .op = SOP_MODE_SENSE_10, .cdb_len = 10, .flags = F_SETTINGS,
	  .decode = cdb_dec_mode_sense, .exec = spc_mode_sense,
	  DATA_IN, RESV_READ, TO_EMUL,
	  .usage = { SOP_MODE_SENSE_10, 0x18 /* LLBAA, DBD */, 0xff, 0xff, 0,
		     0, 0, LEN2, CTL } },
	/* LOG SENSE (scsi/spc_log.c): PC, PAGE CODE, SUBPAGE CODE,
	 * PARAMETER POINTER; SP and the obsolete PPC are rejected. */
	{ .op = SOP_LOG_SENSE, .cdb_len = 10, .flags = F_SETTINGS,
	  .decode = cdb_dec_log_sense, .exec = spc_log_sense,
	  DATA_IN, RESV_ALLOWED, TO_EMUL,
	  .usage = { SOP_LOG_SENSE, 0, 0xff, 0xff, 0, LEN2, LEN2, CTL } },
	/* MAINTENANCE IN (scsi/rsoc.c, scsi/alua.c); RTPG byte 1 bits 7:5:
	 * PARAMETER DATA FORMAT. */
	{ .op = SOP_MAINTENANCE_IN, .sa = MI_REPORT_SUPPORTED_OPCODES,
	  .cdb_len = 12, .flags = OPC_F_SA | F_REPORTS,
	  .decode = cdb_dec_maintenance_in,
	  .exec = rsoc_report_supported_opcodes,
	  DATA_IN, RESV_ALLOWED, TO_EMUL,
	  .usage = { SOP_MAINTENANCE_IN, MI_REPORT_SUPPORTED_OPCODES,
		     RSOC_RCTD | RSOC_OPT_MASK, 0xff, LEN2, LEN4, 0, CTL } },
	{ .op = SOP_MAINTENANCE_IN, .sa = MI_REPORT_TARGET_PORT_GROUPS,
	  .cdb_len = 12, .flags = OPC_F_SA | F_REPORTS,
	  .decode = cdb_dec_maintenance_in, .exec = alua_report_tpg,
	  DATA_IN, RESV_ALLOWED, TO_EMUL,
	  .usage = { SOP_MAINTENANCE_IN, 0xe0 | MI_REPORT_TARGET_PORT_GROUPS,
		     0, 0, 0, 0, LEN4, 0, CTL } },

	/* ---- reservations (scsi/pr_in.c, pr_out.c, pr_spc2.c); RESERVE/RELEASE
	 * take no fields */
	PR_IN_ROW(0), PR_IN_ROW(1), PR_IN_ROW(2), PR_IN_ROW(3),
	PR_OUT_ROW(0, 0), PR_OUT_ROW(1, 0xff), PR_OUT_ROW(2, 0xff),
	PR_OUT_ROW(3, 0), PR_OUT_ROW(4, 0xff), PR_OUT_ROW(5, 0xff),
	PR_OUT_ROW(6, 0), PR_OUT_ROW(7, 0xff),
	{ .op = SOP_RESERVE_6, .cdb_len = 6,
	  .flags = OPC_F_NO_MEDIUM | OPC_F_SPC2_RESV,
	  .decode = cdb_dec_reserve_6, .exec = pr_reserve,
	  NO_DATA, RESV_ALLOWED, TO_EMUL,
	  .usage = { SOP_RESERVE_6, 0, 0, 0, 0, CTL } },
	{ .op = SOP_RELEASE_6, .cdb_len = 6,
	  .flags = OPC_F_NO_MEDIUM | OPC_F_SPC2_RESV | OPC_F_SPC2_OK,
	  .decode = cdb_dec_reserve_6, .exec = pr_release,
	  NO_DATA, RESV_ALLOWED, TO_EMUL,
	  .usage = { SOP_RELEASE_6, 0, 0, 0, 0, CTL } },
	{ .op = SOP_RESERVE_10, .cdb_len = 10,
	  .flags = OPC_F_NO_MEDIUM | OPC_F_SPC2_RESV,
	  .decode = cdb_dec_reserve_10, .exec = pr_reserve,
	  NO_DATA, RESV_ALLOWED, TO_EMUL,
	  .usage = { SOP_RESERVE_10, 0, 0, 0, 0, 0, 0, 0, 0, CTL } },
	{ .op = SOP_RELEASE_10, .cdb_len = 10,
	  .flags = OPC_F_NO_MEDIUM | OPC_F_SPC2_RESV | OPC_F_SPC2_OK,
	  .decode = cdb_dec_reserve_10, .exec = pr_release,
	  NO_DATA, RESV_ALLOWED, TO_EMUL,
	  .usage = { SOP_RELEASE_10, 0, 0, 0, 0, 0, 0, 0, 0, CTL } },

	/* ---- SBC-3 media access (scsi/sbc.c) ---- */
	READ_ROW(SOP_READ_6, 6, 0x1f, 0xff, 0xff, 0xff, CTL),
	READ_ROW(SOP_READ_10, 10, RW1, LBA4, 0, LEN2, CTL),
	READ_ROW(SOP_READ_12, 12, RW1, LBA4, LEN4, 0, CTL),
	READ_ROW(SOP_READ_16, 16, RW1, LBA8, LEN4, 0, CTL),
	WRITE_ROW(SOP_WRITE_6, 6, 0x1f, 0xff, 0xff, 0xff, CTL),
	WRITE_ROW(SOP_WRITE_10, 10, RW1, LBA4, 0, LEN2, CTL),
	WRITE_ROW(SOP_WRITE_12, 12, RW1, LBA4, LEN4, 0, CTL),
	WRITE_ROW(SOP_WRITE_16, 16, RW1, LBA8, LEN4, 0, CTL),
	VERIFY_ROW(SOP_VERIFY_10, 10, VFY1, LBA4, 0, LEN2, CTL),
	VERIFY_ROW(SOP_VERIFY_12, 12, VFY1, LBA4, LEN4, 0, CTL),
	VERIFY_ROW(SOP_VERIFY_16, 16, VFY1, LBA8, LEN4, 0, CTL),
	/* WRITE AND VERIFY byte 1: DPO and BYTCHK 0/1 (bit 1). */
	WRITE_VERIFY_ROW(SOP_WRITE_VERIFY_10, 10, 0x12, LBA4, 0, LEN2, CTL),
	WRITE_VERIFY_ROW(SOP_WRITE_VERIFY_12, 12, 0x12, LBA4, LEN4, 0, CTL),
	WRITE_VERIFY_ROW(SOP_WRITE_VERIFY_16, 16, 0x12, LBA8, LEN4, 0, CTL),
	{ .op = SOP_PRE_FETCH_10, .cdb_len = 10, .decode = cdb_dec_sync,
	  .exec = sbc_prefetch, NO_DATA, RESV_READ, TO_EMUL, BLK_LEN(10),
	  .usage = { SOP_PRE_FETCH_10, 0, LBA4, 0, LEN2, CTL } },
	{ .op = SOP_PRE_FETCH_16, .cdb_len = 16, .decode = cdb_dec_sync,
	  .exec = sbc_prefetch, NO_DATA, RESV_READ, TO_EMUL, BLK_LEN(16),
	  .usage = { SOP_PRE_FETCH_16, 0, LBA8, LEN4, 0, CTL } },
	{ .op = SOP_SYNC_CACHE_10, .cdb_len = 10, .decode = cdb_dec_sync,
	  .exec = sbc_sync_cache, NO_DATA, RESV_CONFLICT, TO_FLUSH,
	  BLK_LEN(10),
	  .usage = { SOP_SYNC_CACHE_10, 0x02 /* IMMED */, LBA4, 0, LEN2,
		     CTL } },
	{ .op = SOP_SYNC_CACHE_16, .cdb_len = 16, .decode = cdb_dec_sync,
	  .exec = sbc_sync_cache, NO_DATA, RESV_CONFLICT, TO_FLUSH,
	  BLK_LEN(16),
	  .usage = { SOP_SYNC_CACHE_16, 0x02 /* IMMED */, LBA8, LEN4, 0,
		     CTL } },
	{ .op = SOP_READ_CAPACITY_10, .cdb_len = 10,
	  .decode = cdb_dec_read_capacity_10, .exec = sbc_read_capacity10,
	  DATA_IN, RESV_ALLOWED, TO_EMUL,
	  .usage = { SOP_READ_CAPACITY_10, 0, LBA4, 0, 0, 0x01 /* PMI */,
		     CTL } },
	{ .op = SOP_SERVICE_ACTION_IN_16, .sa = SAI_READ_CAPACITY_16,
	  .cdb_len = 16, .flags = OPC_F_SA,
	  .decode = cdb_dec_service_action_in, .exec = sbc_read_capacity16,
	  DATA_IN, RESV_ALLOWED, TO_EMUL,
	  .usage = { SOP_SERVICE_ACTION_IN_16, SAI_READ_CAPACITY_16, LBA8,
		     LEN4, 0x01 /* PMI */, CTL } },
	{ .op = SOP_SERVICE_ACTION_IN_16, .sa = SAI_GET_LBA_STATUS,
	  .cdb_len = 16, .flags = OPC_F_SA,
	  .decode = cdb_dec_service_action_in, .exec = sbc_get_lba_status,
	  DATA_IN, RESV_READ, TO_IO,
	  .usage = { SOP_SERVICE_ACTION_IN_16, SAI_GET_LBA_STATUS, LBA8,
		     LEN4, 0, CTL } },
	{ .op = SOP_START_STOP_UNIT, .cdb_len = 6, .flags = OPC_F_NO_MEDIUM,
	  .decode = cdb_dec_start_stop, .exec = sbc_start_stop,
	  NO_DATA, RESV_CONFLICT, TO_EMUL,
	  .usage = { SOP_START_STOP_UNIT, 0, 0, 0,
		     0xf3 /* POWER CONDITION, LOEJ, START */, CTL } },
	{ .op = SOP_PREVENT_ALLOW, .cdb_len = 6, .flags = OPC_F_NO_MEDIUM,
	  .decode = cdb_dec_prevent_allow, .exec = sbc_prevent_allow,
	  NO_DATA, RESV_CONFLICT, TO_EMUL,
	  .usage = { SOP_PREVENT_ALLOW, 0, 0, 0, 0x01 /* PREVENT */, CTL } },
	{ .op = SOP_READ_DEFECT_DATA_10, .cdb_len = 10,
	  .decode = cdb_dec_read_defect_10, .exec = sbc_read_defect_data,
	  DATA_IN, RESV_READ, TO_EMUL,
	  .usage = { SOP_READ_DEFECT_DATA_10, 0, 0x1f, 0, 0, 0, 0, LEN2,
		     CTL } },
	{ .op = SOP_READ_DEFECT_DATA_12, .cdb_len = 12,
	  .decode = cdb_dec_read_defect_12, .exec = sbc_read_defect_data,
	  DATA_IN, RESV_READ, TO_EMUL,
	  .usage = { SOP_READ_DEFECT_DATA_12, 0x1f, 0, 0, 0, 0, LEN4, 0,
		     CTL } },

	/* ---- SBC-3/4 writes in several steps (scsi/sbc_rmw.c, sbc_ws.c) */
	{ .op = SOP_ORWRITE_16, .cdb_len = 16, .decode = cdb_dec_orwrite,
	  .exec = sbc_orwrite, DATA_OUT, WRITES, RESV_CONFLICT, TO_IO,
	  BLK_LEN(16),
	  .usage = { SOP_ORWRITE_16, RW1, LBA8, LEN4, 0, CTL } },
	{ .op = SOP_COMPARE_AND_WRITE, .cdb_len = 16,
	  .decode = cdb_dec_compare_and_write, .exec = sbc_compare_and_write,
	  DATA_OUT, WRITES, RESV_CONFLICT, TO_IO,
	  .len_byte = 13,	/* NUMBER OF LOGICAL BLOCKS, one byte */
	  .usage = { SOP_COMPARE_AND_WRITE, RW1, LBA8, 0, 0, 0, 0xff, 0,
		     CTL } },
	{ .op = SOP_WRITE_ATOMIC_16, .cdb_len = 16,
	  .decode = cdb_dec_write_atomic, .exec = sbc_write_atomic,
	  DATA_OUT, WRITES, RESV_CONFLICT, TO_IO,
	  .len_byte = 12,	/* TRANSFER LENGTH, two bytes */
	  .usage = { SOP_WRITE_ATOMIC_16, RW1, LBA8, 0, 0, LEN2, 0, CTL } },
	/* WRITE SAME byte 1: UNMAP (and NDOB in the 16-byte CDB). */
	{ .op = SOP_WRITE_SAME_10, .cdb_len = 10, .decode = cdb_dec_write_same,
	  .exec = sbc_write_same, DATA_OUT, WRITES, RESV_CONFLICT, TO_FLUSH,
	  BLK_LEN(10),
	  .usage = { SOP_WRITE_SAME_10, 0x08, LBA4, 0, LEN2, CTL } },
	{ .op = SOP_WRITE_SAME_16, .cdb_len = 16, .decode = cdb_dec_write_same,
	  .exec = sbc_write_same, DATA_OUT, WRITES, RESV_CONFLICT, TO_FLUSH,
	  BLK_LEN(16),
	  .usage = { SOP_WRITE_SAME_16, 0x09, LBA8, LEN4, 0, CTL } },
	{ .op = SOP_UNMAP, .cdb_len = 10,
	  .flags = OPC_F_THIN | OPC_F_RANGE_IN_DATA,
	  .decode = cdb_dec_unmap, .exec = sbc_unmap,
	  DATA_OUT, WRITES, RESV_CONFLICT, TO_FLUSH,
	  .usage = { SOP_UNMAP, 0, 0, 0, 0, 0, 0, LEN2, CTL } },

	/* ---- SANITIZE (scsi/sbc_sanitize.c), copies (scsi/xcopy.c) ---- */
	{ .op = SOP_SANITIZE, .sa = SAN_OVERWRITE, .cdb_len = 10,
	  .flags = OPC_F_SA | OPC_F_SANITIZE, .decode = cdb_dec_sanitize,
	  .exec = sbc_sanitize, DATA_OUT, RESV_CONFLICT, TO_SANITIZE,
	  .usage = { SOP_SANITIZE, SAN_OVERWRITE, 0, 0, 0, 0, 0, LEN2, CTL } },
	{ .op = SOP_SANITIZE, .sa = SAN_BLOCK_ERASE, .cdb_len = 10,
	  .flags = OPC_F_SA | OPC_F_SANITIZE | OPC_F_THIN,
	  .decode = cdb_dec_sanitize, .exec = sbc_sanitize,
	  DATA_OUT, RESV_CONFLICT, TO_SANITIZE,
	  .usage = { SOP_SANITIZE, SAN_BLOCK_ERASE, 0, 0, 0, 0, 0, LEN2,
		     CTL } },
	{ .op = SOP_SANITIZE, .sa = SAN_CRYPTO_ERASE, .cdb_len = 10,
	  .flags = OPC_F_SA | OPC_F_SANITIZE | OPC_F_THIN,
	  .decode = cdb_dec_sanitize, .exec = sbc_sanitize,
	  DATA_OUT, RESV_CONFLICT, TO_SANITIZE,
	  .usage = { SOP_SANITIZE, SAN_CRYPTO_ERASE, 0, 0, 0, 0, 0, LEN2,
		     CTL } },
	{ .op = SOP_SANITIZE, .sa = SAN_EXIT_FAILURE_MODE, .cdb_len = 10,
	  .flags = OPC_F_SA | OPC_F_SANITIZE, .decode = cdb_dec_sanitize,
	  .exec = sbc_sanitize, DATA_OUT, RESV_CONFLICT, TO_EMUL,
	  .usage = { SOP_SANITIZE, SAN_EXIT_FAILURE_MODE, 0, 0, 0, 0, 0, LEN2,
		     CTL } },
	{ .op = SOP_EXTENDED_COPY, .sa = XCOPY_LID1, .cdb_len = 16,
	  .flags = OPC_F_SA, .decode = cdb_dec_extended_copy,
	  .exec = sbc_extended_copy, DATA_OUT, RESV_CONFLICT, TO_SANITIZE,
	  .usage = { SOP_EXTENDED_COPY, XCOPY_LID1, 0, 0, 0, 0, 0, 0, 0, 0,
		     LEN4, 0, CTL } },
	{ .op = SOP_RECEIVE_COPY_RESULTS, .sa = RCR_COPY_STATUS, .cdb_len = 16,
	  .flags = OPC_F_SA | OPC_F_NO_MEDIUM,
	  .decode = cdb_dec_receive_copy_results,
	  .exec = sbc_receive_copy_results, DATA_IN, RESV_READ, TO_EMUL,
	  .usage = { SOP_RECEIVE_COPY_RESULTS, RCR_COPY_STATUS, 0xff, 0, 0, 0,
		     0, 0, 0, 0, LEN4, 0, CTL } },
	{ .op = SOP_RECEIVE_COPY_RESULTS, .sa = RCR_OPERATING_PARAMS,
	  .cdb_len = 16, .flags = OPC_F_SA | OPC_F_NO_MEDIUM,
	  .decode = cdb_dec_receive_copy_results,
	  .exec = sbc_receive_copy_results, DATA_IN, RESV_READ, TO_EMUL,
	  .usage = { SOP_RECEIVE_COPY_RESULTS, RCR_OPERATING_PARAMS, 0, 0, 0,
		     0, 0, 0, 0, 0, LEN4, 0, CTL } },

	/* ---- ODX: token-based copy (scsi/odx.c, scsi/odx_wut.c) ---- */
	{ .op = SOP_EXTENDED_COPY, .sa = XCOPY_POPULATE_TOKEN, .cdb_len = 16,
	  .flags = OPC_F_SA, .decode = cdb_dec_extended_copy,
	  .exec = sbc_populate_token, DATA_OUT, RESV_READ, TO_EMUL,
	  .usage = { SOP_EXTENDED_COPY, XCOPY_POPULATE_TOKEN, 0, 0, 0, 0,
		     LEN4, LEN4, 0, CTL } },
	{ .op = SOP_EXTENDED_COPY, .sa = XCOPY_WRITE_USING_TOKEN,
	  .cdb_len = 16, .flags = OPC_F_SA | OPC_F_RANGE_IN_DATA,
	  .decode = cdb_dec_extended_copy, .exec = sbc_write_using_token,
	  DATA_OUT, WRITES, RESV_CONFLICT, TO_SANITIZE,
	  .usage = { SOP_EXTENDED_COPY, XCOPY_WRITE_USING_TOKEN, 0, 0, 0, 0,
		     LEN4, LEN4, 0, CTL } },
	{ .op = SOP_RECEIVE_COPY_RESULTS, .sa = RCR_ROD_TOKEN_INFO,
	  .cdb_len = 16, .flags = OPC_F_SA | OPC_F_NO_MEDIUM,
	  .decode = cdb_dec_receive_copy_results,
	  .exec = sbc_receive_rod_token_info, DATA_IN, RESV_READ, TO_EMUL,
	  .usage = { SOP_RECEIVE_COPY_RESULTS, RCR_ROD_TOKEN_INFO, LEN4, 0,
		     0, 0, 0, LEN4, 0, CTL } },
};

_Static_assert(ARRAY_SIZE(opc_tab) <= OPC_MAX_ENTRIES,
	       "raise OPC_MAX_ENTRIES");

const struct opc_entry *opc_table(unsigned *n)
{
	*n = ARRAY_SIZE(opc_tab);
	return opc_tab;
}

const struct opc_entry *opc_table_for(unsigned feat, unsigned *n)
{
	return feat & OPC_FEAT_MMC ? mmc_opc_table(n) : opc_table(n);
}

bool opc_present(const struct opc_entry *e, unsigned feat)
{
	return (!(e->flags & OPC_F_THIN) || (feat & OPC_FEAT_THIN)) &&
	       (!(e->flags & OPC_F_SANITIZE) || (feat & OPC_FEAT_SANITIZE));
}

/* Rows of one opcode indexed by it, per table (the block device's, the
 * MMC device's): decode runs on every command. Built before main runs,
 * so the lookup is one load. */
static const struct opc_entry *first_of[2][256];

__attribute__((constructor)) static void build_index(void)
{
	for (unsigned k = 0; k < 2; k++) {
		unsigned n;
		const struct opc_entry *tab =
			opc_table_for(k ? OPC_FEAT_MMC : 0, &n);

		for (unsigned i = n; i-- > 0;)
			first_of[k][tab[i].op] = &tab[i];
	}
}

const struct opc_entry *opc_first(uint8_t op, unsigned feat)
{
	return first_of[feat & OPC_FEAT_MMC ? 1 : 0][op];
}

const struct opc_entry *opc_find(uint8_t op, uint16_t sa, unsigned feat)
{
	unsigned n;
	const struct opc_entry *tab = opc_table_for(feat, &n);

	for (unsigned i = 0; i < n; i++) {
		const struct opc_entry *e = &tab[i];

		if (e->op != op || !opc_present(e, feat))
			continue;
		if (!(e->flags & OPC_F_SA) || e->sa == sa)
			return e;
	}
	return NULL;
}

bool opc_has_sa(uint8_t op, unsigned feat)
{
	unsigned n;
	const struct opc_entry *tab = opc_table_for(feat, &n);

	for (unsigned i = 0; i < n; i++)
		if (tab[i].op == op && opc_present(&tab[i], feat))
			return tab[i].flags & OPC_F_SA;
	return false;
}
