/* A CDB for each row of the command table (see opc_util.h). */
#include <string.h>
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
