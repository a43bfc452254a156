/*
 * CDB decoding (SPC-4 4.2, SBC-3 5): one pass that checks the CDB length
 * against the group code and the CONTROL byte, finds the command's row
 * in the command table (scsi/opcodes.h) and runs the row's decoder, which
 * checks reserved and unsupported fields and extracts what the executor
 * needs into struct cdb_req. Failures come back as ILLEGAL REQUEST sense
 * with a field pointer.
 */
#ifndef TCQ_CDB_H
#define TCQ_CDB_H
#include <stdbool.h>
#include <stdint.h>
#include "scsi/task.h"
#include "scsi/sense.h"

/* cdb_req.flags, by opcode. */
#define CDBF_EVPD 0x01		/* INQUIRY */
#define CDBF_DBD 0x01		/* MODE SENSE */
#define CDBF_LLBAA 0x02		/* MODE SENSE(10) */
#define CDBF_PC_SHIFT 6		/* MODE SENSE page control in bits 7:6 */
#define CDBF_SP 0x01		/* MODE SELECT */
#define CDBF_PF 0x10		/* MODE SELECT */
#define CDBF_PMI 0x01		/* READ CAPACITY */
#define CDBF_BYTCHK_MASK 0x03	/* VERIFY: BYTCHK value */
#define CDBF_DESC 0x01		/* REQUEST SENSE */
#define CDBF_ANCHOR 0x01	/* UNMAP */
#define CDBF_WS_NDOB 0x01	/* WRITE SAME (16): no data-out buffer */
#define CDBF_WS_UNMAP 0x08	/* WRITE SAME: deallocate */
#define CDBF_MSF 0x02		/* READ TOC/PMA/ATIP: MSF addresses */

/* What a command does to the medium, for ordering decisions. */
enum cdb_access { CDB_ACCESS_NONE, CDB_ACCESS_READ, CDB_ACCESS_WRITE };

/*
 * Decodes cdb (len bytes available, normally 16 or more) for a LUN of
 * block_size bytes. Returns 0, or -1 with *err filled: ILLEGAL REQUEST
 * with INVALID COMMAND OPERATION CODE or INVALID FIELD IN CDB (and field
 * pointer). Never trusts any length in the CDB.
 */
int cdb_decode(const uint8_t *cdb, uint16_t len, uint32_t block_size,
	       struct cdb_req *req, struct sense_info *err);

/* The same for a LUN whose command table feat names (OPC_FEAT_MMC: the
 * MMC device's, scsi/opcodes.h); cdb_decode is the block device's. */
int cdb_decode_for(const uint8_t *cdb, uint16_t len, uint32_t block_size,
		   unsigned feat, struct cdb_req *req, struct sense_info *err);

/* CDB length implied by an opcode's group code; 0 when not supported. */
uint16_t cdb_group_len(uint8_t opcode);

/* LBA range check (SBC-3 4.5): lba + blocks must fit nblocks. A zero
 * length checks the LBA only. Returns 0, or -1 with LBA OUT OF RANGE. */
int cdb_check_range(const struct cdb_req *req, uint64_t nblocks,
		    struct sense_info *err);

/* What the command of req does to the medium (its row's access). */
enum cdb_access cdb_access(const struct cdb_req *req);
#endif
