/*
 * The MMC device's command table (scsi/mmc.h): the commands of an MMC-6
 * logical unit whose features are Profile List, Core, Morphing,
 * Removable Medium, Random Readable, CD Read and DVD Read (GET
 * CONFIGURATION, scsi/mmc_config.c), with the SPC-4 commands every
 * logical unit has. A LUN of type cdrom decodes through this table only
 * (OPC_FEAT_MMC, scsi/opcodes.c): the block device's other commands are
 * INVALID COMMAND OPERATION CODE on it, and it is what REPORT SUPPORTED
 * OPERATION CODES reports for it. The rows' fields are those of
 * scsi/opcodes.h.
 */
#include "tcq/compiler.h"
#include "tcq/scsi_proto.h"
#include "scsi/cdb_priv.h"
#include "scsi/mmc.h"
#include "scsi/opcodes.h"
#include "scsi/rsoc.h"
#include "scsi/sbc.h"
#include "scsi/spc.h"

#define TO_EMUL .nominal_to = 1, .recommended_to = 5
#define TO_IO .nominal_to = 1, .recommended_to = 30
#define CTL 0x04		/* CONTROL: NACA (as in scsi/opcodes.c) */
#define LBA4 0xff, 0xff, 0xff, 0xff
#define LEN2 0xff, 0xff
/* Reporting commands run without a medium and in every state. */
#define F_REPORTS (OPC_F_ALUA_ANY | OPC_F_NO_MEDIUM | OPC_F_SPC2_OK)
#define F_NOMED OPC_F_NO_MEDIUM

#define EMUL_IN(o, dec, ex, fl, ...) \
	{ .op = o, .cdb_len = (o) < 0x20 ? 6 : (o) < 0xa0 ? 10 : 12, \
	  .flags = fl, .decode = dec, .exec = ex, .dir = OPC_DIR_IN, \
	  .resv = OPC_RESV_ALLOWED, TO_EMUL, .usage = { o, __VA_ARGS__ } }
/* READ (10/12) read 2048-byte blocks as the block device's do; WRITE
 * (10/12) find a pressed disc (mmc_write). DPO and FUA are read. */
#define RW_ROW(o, len, ex, acc, d, ...) \
	{ .op = o, .cdb_len = len, .decode = cdb_dec_read_write, .exec = ex, \
	  .dir = d, .access = acc, .resv = OPC_RESV_READ, TO_IO, \
	  .len_byte = (len) == 10 ? 7 : 6, .usage = { o, __VA_ARGS__ } }

static const struct opc_entry mmc_tab[] = {
	/* ---- SPC-4 (scsi/spc.c), as every logical unit has them ---- */
	{ .op = SOP_TEST_UNIT_READY, .cdb_len = 6,
	  .decode = cdb_dec_test_unit_ready, .exec = spc_test_unit_ready,
	  .resv = OPC_RESV_ALLOWED, TO_EMUL,
	  .usage = { SOP_TEST_UNIT_READY, 0, 0, 0, 0, CTL } },
	EMUL_IN(SOP_REQUEST_SENSE, cdb_dec_request_sense, spc_request_sense,
		F_REPORTS | OPC_F_ANY_LUN | OPC_F_UA_OK, 0x01, 0, 0, 0xff,
		CTL),
	EMUL_IN(SOP_INQUIRY, cdb_dec_inquiry, spc_inquiry,
		F_REPORTS | OPC_F_ANY_LUN | OPC_F_UA_OK, 0x01, 0xff, LEN2,
		CTL),
	EMUL_IN(SOP_REPORT_LUNS, cdb_dec_report_luns, spc_report_luns,
		F_REPORTS | OPC_F_ANY_LUN | OPC_F_UA_OK, 0, 0xff, 0, 0, 0,
		LBA4, 0, CTL),
	{ .op = SOP_MAINTENANCE_IN, .sa = MI_REPORT_SUPPORTED_OPCODES,
	  .cdb_len = 12, .flags = OPC_F_SA | F_REPORTS,
	  .decode = cdb_dec_maintenance_in,
	  .exec = rsoc_report_supported_opcodes, .dir = OPC_DIR_IN,
	  .resv = OPC_RESV_ALLOWED, TO_EMUL,
	  .usage = { SOP_MAINTENANCE_IN, MI_REPORT_SUPPORTED_OPCODES,
		     RSOC_RCTD | RSOC_OPT_MASK, 0xff, LEN2, LBA4, 0, CTL } },
	/* Mode pages (scsi/mmc_mode.c): no block descriptors (MMC-6 7.2),
	 * so DBD and LLBAA change nothing. */
	EMUL_IN(SOP_MODE_SENSE_6, cdb_dec_mode_sense, mmc_mode_sense, F_NOMED,
		0, 0xff, 0xff, 0xff, CTL),
	EMUL_IN(SOP_MODE_SENSE_10, cdb_dec_mode_sense, mmc_mode_sense,
		F_NOMED, 0, 0xff, 0xff, 0, 0, 0, LEN2, CTL),
	{ .op = SOP_MODE_SELECT_10, .cdb_len = 10, .flags = F_NOMED,
	  .decode = cdb_dec_mode_select, .exec = mmc_mode_select,
	  .dir = OPC_DIR_OUT, .resv = OPC_RESV_CONFLICT, TO_EMUL,
	  .usage = { SOP_MODE_SELECT_10, 0, 0, 0, 0, 0, 0, LEN2, CTL } },

	/* ---- Removable Medium (scsi/mmc.c, scsi/sbc_media.c) ---- */
	{ .op = SOP_START_STOP_UNIT, .cdb_len = 6, .flags = F_NOMED,
	  .decode = cdb_dec_start_stop, .exec = mmc_start_stop,
	  .resv = OPC_RESV_CONFLICT, TO_EMUL,
	  .usage = { SOP_START_STOP_UNIT, 0, 0, 0, 0xf3, CTL } },
	{ .op = SOP_PREVENT_ALLOW, .cdb_len = 6, .flags = F_NOMED,
	  .decode = cdb_dec_prevent_allow, .exec = sbc_prevent_allow,
	  .resv = OPC_RESV_CONFLICT, TO_EMUL,
	  .usage = { SOP_PREVENT_ALLOW, 0, 0, 0, 0x01, CTL } },
	EMUL_IN(SOP_MECHANISM_STATUS, cdb_dec_mechanism_status,
		mmc_mechanism_status, F_NOMED, 0, 0, 0, 0, 0, 0, 0, LEN2, 0,
		CTL),

	/* ---- Core, Morphing (scsi/mmc.c, scsi/mmc_config.c) ---- */
	EMUL_IN(SOP_GET_CONFIGURATION, cdb_dec_get_configuration,
		mmc_get_configuration, F_NOMED, 0x03, LEN2, 0, 0, 0, LEN2,
		CTL),
	EMUL_IN(SOP_GET_EVENT_STATUS, cdb_dec_gesn, mmc_gesn,
		F_NOMED | OPC_F_UA_OK, 0x01, 0, 0, 0xff, 0, 0, LEN2, CTL),

	/* ---- Random Readable, CD Read, DVD Read ---- */
	{ .op = SOP_READ_CAPACITY_10, .cdb_len = 10,
	  .decode = cdb_dec_read_capacity_10, .exec = sbc_read_capacity10,
	  .dir = OPC_DIR_IN, .resv = OPC_RESV_ALLOWED, TO_EMUL,
	  .usage = { SOP_READ_CAPACITY_10, 0, LBA4, 0, 0, 0x01, CTL } },
	RW_ROW(SOP_READ_10, 10, sbc_read, CDB_ACCESS_READ, OPC_DIR_IN, 0x18,
	       LBA4, 0, LEN2, CTL),
	RW_ROW(SOP_READ_12, 12, sbc_read, CDB_ACCESS_READ, OPC_DIR_IN, 0x18,
	       LBA4, LBA4, 0, CTL),
	RW_ROW(SOP_WRITE_10, 10, mmc_write, CDB_ACCESS_WRITE, OPC_DIR_OUT,
	       0x18, LBA4, 0, LEN2, CTL),
	RW_ROW(SOP_WRITE_12, 12, mmc_write, CDB_ACCESS_WRITE, OPC_DIR_OUT,
	       0x18, LBA4, LBA4, 0, CTL),
	EMUL_IN(SOP_READ_TOC, cdb_dec_read_toc, mmc_read_toc, 0, 0x02, 0x0f,
		0, 0, 0, 0xff, LEN2, CTL),
	EMUL_IN(SOP_READ_DISC_INFO, cdb_dec_read_disc_info,
		mmc_read_disc_info, 0, 0x07, 0, 0, 0, 0, 0, LEN2, CTL),
	EMUL_IN(SOP_READ_TRACK_INFO, cdb_dec_read_track_info,
		mmc_read_track_info, 0, 0x03, LBA4, 0, LEN2, CTL),
	{ .op = SOP_READ_CD, .cdb_len = 12, .decode = cdb_dec_read_cd,
	  .exec = mmc_read_cd, .dir = OPC_DIR_IN, .access = CDB_ACCESS_READ,
	  .resv = OPC_RESV_READ, TO_IO, .len_byte = 6,
	  .usage = { SOP_READ_CD, 0x1c, LBA4, 0xff, 0xff, 0xff, 0x10, 0, CTL } },
	{ .op = SOP_READ_CD_MSF, .cdb_len = 12, .decode = cdb_dec_read_cd,
	  .exec = mmc_read_cd, .dir = OPC_DIR_IN, .access = CDB_ACCESS_READ,
	  .resv = OPC_RESV_READ, TO_IO,
	  .usage = { SOP_READ_CD_MSF, 0x1c, 0, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0x10, 0, CTL } },
	EMUL_IN(SOP_READ_DISC_STRUCTURE, cdb_dec_read_disc_structure,
		mmc_read_disc_structure, 0, 0, LBA4, 0xff, 0xff, LEN2, 0,
		CTL),
	/* The speeds asked for change nothing: no usage bits. */
	{ .op = SOP_SET_CD_SPEED, .cdb_len = 12, .flags = F_NOMED,
	  .decode = cdb_dec_set_cd_speed, .exec = mmc_set_cd_speed,
	  .resv = OPC_RESV_ALLOWED, TO_EMUL,
	  .usage = { SOP_SET_CD_SPEED, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, CTL } },
};

_Static_assert(ARRAY_SIZE(mmc_tab) <= OPC_MAX_ENTRIES,
	       "raise OPC_MAX_ENTRIES");

const struct opc_entry *mmc_opc_table(unsigned *n)
{
	*n = ARRAY_SIZE(mmc_tab);
	return mmc_tab;
}
