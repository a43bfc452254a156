/*
 * What the command table suites (test_opcodes, test_opc_rows) share: a
 * CDB for a row of the table built from its usage data, and where the
 * block commands keep their block count, as SBC-3 and SBC-4 lay them out.
 */
#ifndef TCQ_TESTS_UNIT_OPC_UTIL_H
#define TCQ_TESTS_UNIT_OPC_UTIL_H
#include <stdbool.h>
#include <stdint.h>
#include "scsi/opcodes.h"

/* One CDB for row e: opcode, service action, the low byte of each field
 * of several bytes (a length, an LBA) set to 8; with flags also every
 * other usage bit, a one-byte field (page code, count) set to 1. */
void row_cdb(const struct opc_entry *e, bool flags, uint8_t *cdb);

/* The field that counts a block command's blocks (TRANSFER LENGTH,
 * VERIFICATION LENGTH, PREFETCH LENGTH, NUMBER OF LOGICAL BLOCKS): its
 * first byte and width, and whether the MAXIMUM TRANSFER LENGTH of the
 * Block Limits VPD page bounds it (SBC-4 6.6.4: the commands that move
 * blocks through the data buffers, and VERIFY). */
struct opc_len_spec {
	uint8_t op, byte, width;
	bool max_xfer;
};

/* The entry of opcode op; NULL: the opcode has no such field. */
const struct opc_len_spec *opc_len_spec(uint8_t op);
/* Every entry, n of them. */
const struct opc_len_spec *opc_len_specs(unsigned *n);
#endif
