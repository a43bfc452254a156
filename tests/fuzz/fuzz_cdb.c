/*
 * Fuzzer 3: the CDB decoder. Input: one byte picking the block size, then
 * the CDB (up to TASK_CDB_MAX bytes; its length is what the input gives).
 * The CDB is decoded for every block size a LUN may have, with the bytes
 * copied to an exactly-sized heap buffer so a read past the CDB is caught.
 * On success the decoded request must be self-consistent: transfer
 * lengths match blocks x block size for the block commands, and the
 * range check never accepts a range that wraps.
 */
#include <stdlib.h>
#include <string.h>
#include "scsi/cdb.h"
#include "scsi/task.h"
#include "tcq/scsi_proto.h"
#include "tests/fuzz/fuzz.h"

static const uint32_t block_sizes[] = { 512, 4096, 520, 1024, 2048, 4160,
					8192, 65536 };

static void check_req(const struct cdb_req *req, uint32_t bs)
{
	struct sense_info err;
	uint64_t nblocks[] = { 0, 1, 2048, UINT64_MAX, req->lba,
			       req->lba + req->blocks };

	switch (req->opcode) {
	case SOP_READ_6: case SOP_READ_10: case SOP_READ_12: case SOP_READ_16:
		/* A plain read moves exactly blocks x block size bytes,
		 * which the decoder accepted only if it fits 32 bits. */
		if (req->data_out_len ||
		    (uint64_t)req->data_in_len != (uint64_t)req->blocks * bs)
			abort();
		break;
	case SOP_WRITE_6: case SOP_WRITE_10: case SOP_WRITE_12:
	case SOP_WRITE_16:
		if (req->data_in_len ||
		    (uint64_t)req->data_out_len != (uint64_t)req->blocks * bs)
			abort();
		break;
	}
	(void)cdb_access(req);
	for (size_t i = 0; i < sizeof(nblocks) / sizeof(nblocks[0]); i++) {
		if (cdb_check_range(req, nblocks[i], &err) == 0) {
			if (req->lba > nblocks[i] ||
			    req->lba + req->blocks < req->lba ||
			    req->lba + req->blocks > nblocks[i])
				abort();
		} else if (err.key != SK_ILLEGAL_REQUEST) {
			abort();
		}
	}
}

int FUZZ_ENTRY(cdb)(const uint8_t *data, size_t size)
{
	struct cdb_req req;
	struct sense_info err;
	size_t len;
	uint8_t *cdb;

	if (size < 1)
		return 0;
	len = size - 1;
	if (len > TASK_CDB_MAX)
		len = TASK_CDB_MAX;
	cdb = malloc(len ? len : 1);
	if (!cdb)
		return 0;
	memcpy(cdb, data + 1, len);
	(void)cdb_group_len(len ? cdb[0] : 0);
	for (size_t i = 0; i < sizeof(block_sizes) / sizeof(block_sizes[0]);
	     i++) {
		uint32_t bs = block_sizes[(i + data[0]) %
			(sizeof(block_sizes) / sizeof(block_sizes[0]))];

		if (cdb_decode(cdb, (uint16_t)len, bs, &req, &err) == 0) {
			check_req(&req, bs);
		} else if (err.key != SK_ILLEGAL_REQUEST) {
			abort();	/* decoding fails only as ILLEGAL REQUEST */
		} else if (err.sksv && err.cd && err.field >= len) {
			abort();	/* field pointer outside the CDB */
		}
	}
	free(cdb);
	return 0;
}
