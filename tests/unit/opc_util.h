/*
 * What the command table suites (test_opcodes, test_opc_rows) share: a
 * CDB for a row of the table built from its usage data.
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
#endif
