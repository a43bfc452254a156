/*
 * The one table of commands the device server implements, and the
 * REPORT SUPPORTED OPERATION CODES parameter data built from it
 * (SPC-4 6.35). Every opcode that cdb_decode() accepts and lun_execute()
 * runs has exactly one entry here (per service action); anything else is
 * reported as not supported.
 */
#ifndef TCQ_OPCODES_H
#define TCQ_OPCODES_H
#include <stdbool.h>
#include <stdint.h>
#include "scsi/sense.h"

/* opc_entry.flags */
#define OPC_F_SA 0x01		/* the opcode has service actions */
#define OPC_F_THIN 0x02		/* only with a thin-provisioned backend */
#define OPC_F_SANITIZE 0x04	/* only where the LUN allows SANITIZE */

/* Features of a LUN that make conditional entries exist. */
#define OPC_FEAT_THIN 0x01
#define OPC_FEAT_SANITIZE 0x02

/* REPORT SUPPORTED OPERATION CODES CDB byte 2 (as in cdb_req.flags). */
#define RSOC_RCTD 0x80
#define RSOC_OPT_MASK 0x07
enum rsoc_option {
	RSOC_ALL = 0,		/* all_commands parameter data */
	RSOC_OP = 1,		/* one opcode without service actions */
	RSOC_OP_SA = 2,		/* one opcode with a service action */
	RSOC_OP_ANY = 3,	/* one opcode; SA used only if it has them */
};

/* SUPPORT field of the one_command parameter data. */
#define RSOC_SUPPORT_NONE 0x1	/* not supported */
#define RSOC_SUPPORT_STD 0x3	/* supported as a SCSI standard says */

#define OPC_CDB_MAX 16		/* longest CDB in the table */
#define OPC_MAX_ENTRIES 96	/* table capacity (checked at build time) */
#define OPC_DESC_LEN 8		/* command descriptor */
#define OPC_TIMEOUTS_LEN 12	/* command timeouts descriptor */
/* Largest parameter data either report format can produce. */
#define OPC_REPORT_MAX (4 + OPC_MAX_ENTRIES * (OPC_DESC_LEN + OPC_TIMEOUTS_LEN))

struct opc_entry {
	uint8_t op;
	uint8_t sa;		/* when flags has OPC_F_SA */
	uint8_t flags;
	uint8_t cdb_len;
	uint32_t nominal_to;	/* seconds; nominal processing time */
	uint32_t recommended_to; /* seconds; what an initiator should allow */
	/* CDB USAGE DATA: byte 0 the opcode, the service action in its own
	 * field, then a 1 for every bit the device server evaluates. */
	uint8_t usage[OPC_CDB_MAX];
};

/* The whole table, including entries a given LUN does not have. */
const struct opc_entry *opc_table(unsigned *n);

/* The entry for op (and sa when op has service actions) that a LUN with
 * features feat implements; NULL when it does not. */
const struct opc_entry *opc_find(uint8_t op, uint16_t sa, unsigned feat);

/* Whether the device server implements service actions for op. */
bool opc_has_sa(uint8_t op, unsigned feat);

/*
 * all_commands parameter data (reporting option 000b), with a command
 * timeouts descriptor after every descriptor when rctd. Writes at most
 * cap bytes into buf and returns the full length.
 */
uint32_t opc_encode_all(uint8_t *buf, uint32_t cap, bool rctd,
			unsigned feat);

/*
 * one_command parameter data for reporting options 001b-011b. Writes at
 * most cap bytes and returns the full length, or -1 with *err set to
 * ILLEGAL REQUEST, INVALID FIELD IN CDB (reserved option, or an option
 * that does not fit whether op has service actions).
 */
int opc_encode_one(uint8_t *buf, uint32_t cap, unsigned opt, uint8_t op,
		   uint16_t sa, bool rctd, unsigned feat,
		   struct sense_info *err);
#endif
