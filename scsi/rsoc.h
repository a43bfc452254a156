/*
 * REPORT SUPPORTED OPERATION CODES (SPC-4 6.35): the parameter data,
 * built from the command table (scsi/opcodes.h), and the executor.
 */
#ifndef TCQ_RSOC_H
#define TCQ_RSOC_H
#include <stdbool.h>
#include <stdint.h>
#include "scsi/opcodes.h"
#include "scsi/sense.h"

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

#define OPC_DESC_LEN 8		/* command descriptor */
#define OPC_TIMEOUTS_LEN 12	/* command timeouts descriptor */
/* Largest parameter data either report format can produce. */
#define OPC_REPORT_MAX (4 + OPC_MAX_ENTRIES * (OPC_DESC_LEN + OPC_TIMEOUTS_LEN))

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
/* The executor of MAINTENANCE IN / REPORT SUPPORTED OPERATION CODES. */
struct exec_rc rsoc_report_supported_opcodes(struct tcq_task *t);
#endif
