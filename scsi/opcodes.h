/*
 * The one table of commands the device server implements (scsi/opcodes.c).
 * Each row holds every fact about one opcode (per service action): its
 * decoder (cdb_decode), its executor (lun_execute), its data direction,
 * what it does to the medium, the states it may run in (reservations,
 * ALUA, not ready, no LUN) and what REPORT SUPPORTED OPERATION CODES says
 * of it (scsi/rsoc.c, SPC-4 6.35). Anything not in the table is INVALID
 * COMMAND OPERATION CODE and reported as not supported.
 */
#ifndef TCQ_OPCODES_H
#define TCQ_OPCODES_H
#include <stdbool.h>
#include <stdint.h>
#include "scsi/cdb.h"
#include "scsi/exec.h"
#include "scsi/sense.h"

struct opc_entry;
struct tcq_task;

/* Data-Out or Data-In the command may move. */
enum opc_dir { OPC_DIR_NONE, OPC_DIR_IN, OPC_DIR_OUT };

/*
 * What an I_T nexus that holds no persistent reservation may run while
 * another holds one (SPC-4 5.13.1, table 66).
 */
enum opc_resv {
	OPC_RESV_CONFLICT,	/* RESERVATION CONFLICT unless the type
				 * lets registrants in and it is one */
	OPC_RESV_READ,		/* also allowed by the Write Exclusive
				 * types: reads the medium or state */
	OPC_RESV_ALLOWED,	/* allowed whatever the reservation (PR OUT
				 * and RESERVE/RELEASE check their own) */
};

/* opc_entry.flags: how the row is looked up and where it is present. */
#define OPC_F_SA 0x0001		/* the opcode has service actions */
#define OPC_F_THIN 0x0002	/* only with a thin-provisioned backend */
#define OPC_F_SANITIZE 0x0004	/* only where the LUN allows SANITIZE */
/* ... the states it runs in (each checked before the executor runs): */
#define OPC_F_ANY_LUN 0x0008	/* also for a LUN that does not exist
				 * (SAM-5 incorrect logical unit
				 * selection) */
#define OPC_F_ALUA_ANY 0x0010	/* in every ALUA access state (SPC-4
				 * 5.15.2.4.4-5: unavailable, transitioning) */
#define OPC_F_ALUA_STANDBY 0x0020 /* also in the standby state (5.15.2.4.4) */
#define OPC_F_SANITIZING 0x0040	/* while a SANITIZE runs (SBC-3 4.11) */
#define OPC_F_NO_MEDIUM 0x0080	/* without a medium (tray open) */
#define OPC_F_SPC2_OK 0x0100	/* while another nexus holds a RESERVE(6/10)
				 * reservation (SPC-2 5.5.1) */
/* ... and what it does: */
#define OPC_F_SPC2_RESV 0x0200	/* RESERVE/RELEASE (6/10) themselves */
#define OPC_F_TRIM_OVERFLOW 0x0400 /* Data-Out beyond what the initiator
				 * sends runs on what it sends (the
				 * overflow rule a of SAM-5 / FCP-4) */
#define OPC_F_RANGE_IN_DATA 0x0800 /* the medium ranges it writes are in
				 * its parameter data (UNMAP): it
				 * overlaps everything */
#define OPC_F_UA_OK 0x1000	/* runs while a unit attention is pending
				 * instead of reporting it (SAM-5 5.14:
				 * INQUIRY, REPORT LUNS, REQUEST SENSE,
				 * which returns it as its data) */

/* Features of a LUN that make conditional entries exist. */
#define OPC_FEAT_THIN 0x01
#define OPC_FEAT_SANITIZE 0x02
#define OPC_FEAT_ALL (OPC_FEAT_THIN | OPC_FEAT_SANITIZE)
/* Not a feature of the block table: the LUN is an MMC device (type
 * cdrom), whose commands are the rows of scsi/mmc_opcodes.c instead. */
#define OPC_FEAT_MMC 0x04

#define OPC_CDB_MAX 16		/* longest CDB in the table */
#define OPC_MAX_ENTRIES 96	/* table capacity (checked at build time) */

/* One row: one opcode, or one service action of an opcode. */
struct opc_entry {
	uint8_t op;
	uint8_t sa;		/* when flags has OPC_F_SA */
	uint16_t flags;		/* OPC_F_* */
	uint8_t cdb_len;
	uint8_t dir;		/* enum opc_dir */
	uint8_t access;		/* enum cdb_access: medium read or write
				 * (ordering, write protection) */
	uint8_t resv;		/* enum opc_resv */
	/* First byte of the field that counts its blocks (TRANSFER LENGTH,
	 * NUMBER OF LOGICAL BLOCKS, VERIFICATION or PREFETCH LENGTH): where
	 * the decoder reads it and field pointers point; 0: none. */
	uint8_t len_byte;
	/* Checks the CDB's fields into req (scsi/cdb_priv.h); for an
	 * opcode with service actions every row shares one decoder. */
	int (*decode)(const struct opc_entry *e, const uint8_t *cdb,
		      uint32_t bs, struct cdb_req *req,
		      struct sense_info *err);
	/* Runs an enabled task whose data is in (scsi/exec.h): EXEC_OK
	 * when it completes the task itself, now or later; a failure is
	 * what lun_execute completes the task with. */
	struct exec_rc (*exec)(struct tcq_task *t);
	uint32_t nominal_to;	/* seconds; nominal processing time */
	uint32_t recommended_to; /* seconds; what an initiator should allow */
	/* CDB USAGE DATA: byte 0 the opcode, the service action in its own
	 * field, then a 1 for every bit the device server evaluates. */
	uint8_t usage[OPC_CDB_MAX];
};

/* The whole table, including entries a given LUN does not have. */
const struct opc_entry *opc_table(unsigned *n);
/* The table of a LUN with features feat: the MMC device's with
 * OPC_FEAT_MMC, else the block device's (opc_table). */
const struct opc_entry *opc_table_for(unsigned feat, unsigned *n);

/* The entry for op (and sa when op has service actions) that a LUN with
 * features feat implements; NULL when it does not. */
const struct opc_entry *opc_find(uint8_t op, uint16_t sa, unsigned feat);
/* The first entry of op in the table of feat (OPC_FEAT_MMC or not),
 * whatever the other features (the decoder of an opcode with service
 * actions); NULL when op is not implemented at all. */
const struct opc_entry *opc_first(uint8_t op, unsigned feat);

/* Whether the device server implements service actions for op. */
bool opc_has_sa(uint8_t op, unsigned feat);
/* Whether e exists on a LUN with features feat. */
bool opc_present(const struct opc_entry *e, unsigned feat);

#endif
