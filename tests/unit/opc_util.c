/* A CDB for each row of the command table; the block commands' length
 * fields from the standards (see opc_util.h). */
#include <string.h>
#include "tcq/scsi_proto.h"
#include "tests/unit/opc_util.h"

void row_cdb(const struct opc_entry *e, bool flags, uint8_t *cdb)
{
	memset(cdb, 0, OPC_CDB_MAX);
	for (unsigned b = 1; b + 1 < e->cdb_len; b++) {
		bool ff = e->usage[b] == 0xff;
		bool run = ff && (e->usage[b - 1] == 0xff ||
				  e->usage[b + 1] == 0xff);

		if (run && e->usage[b + 1] != 0xff)
			cdb[b] = 8;	/* the field's least significant byte */
		else if (flags && ff && !run)
			cdb[b] = 1;
		else if (flags && !ff)
			cdb[b] = e->usage[b];
	}
	cdb[0] = e->op;
	if (e->flags & OPC_F_SA)
		cdb[1] = (uint8_t)((cdb[1] & 0xe0) | e->sa);
}

/* SBC-3 5.7-5.42 and SBC-4 5.x (ORWRITE, WRITE ATOMIC), one line per
 * command: opcode, byte, width, bounded by MAXIMUM TRANSFER LENGTH. */
static const struct opc_len_spec specs[] = {
	{ SOP_READ_6, 4, 1, true },
	{ SOP_READ_10, 7, 2, true },
	{ SOP_READ_12, 6, 4, true },
	{ SOP_READ_16, 10, 4, true },
	{ SOP_WRITE_6, 4, 1, true },
	{ SOP_WRITE_10, 7, 2, true },
	{ SOP_WRITE_12, 6, 4, true },
	{ SOP_WRITE_16, 10, 4, true },
	{ SOP_VERIFY_10, 7, 2, true },
	{ SOP_VERIFY_12, 6, 4, true },
	{ SOP_VERIFY_16, 10, 4, true },
	{ SOP_WRITE_VERIFY_10, 7, 2, true },
	{ SOP_WRITE_VERIFY_12, 6, 4, true },
	{ SOP_WRITE_VERIFY_16, 10, 4, true },
	{ SOP_ORWRITE_16, 10, 4, true },
	{ SOP_COMPARE_AND_WRITE, 13, 1, true },
	{ SOP_WRITE_ATOMIC_16, 12, 2, true },
	{ SOP_PRE_FETCH_10, 7, 2, false },
	{ SOP_PRE_FETCH_16, 10, 4, false },
	{ SOP_SYNC_CACHE_10, 7, 2, false },
	{ SOP_SYNC_CACHE_16, 10, 4, false },
	{ SOP_WRITE_SAME_10, 7, 2, false },	/* MAXIMUM WRITE SAME */
	{ SOP_WRITE_SAME_16, 10, 4, false },	/* LENGTH bounds these */
};

const struct opc_len_spec *opc_len_specs(unsigned *n)
{
	*n = sizeof(specs) / sizeof(specs[0]);
	return specs;
}

const struct opc_len_spec *opc_len_spec(uint8_t op)
{
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		if (specs[i].op == op)
			return &specs[i];
	return NULL;
}
