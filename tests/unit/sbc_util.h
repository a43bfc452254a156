/*
 * What the SBC suites (test_sbc, test_sbc_compare) share: their LUN of
 * the harness (ram, 64 MiB, two nexuses A and B, or the harness's memory
 * backend), and commands to write, read and check blocks with.
 */
#ifndef TCQ_TESTS_UNIT_SBC_UTIL_H
#define TCQ_TESTS_UNIT_SBC_UTIL_H
#include <stdint.h>
#include "tests/unit/harness.h"

#define BS 512u
#define NBLOCKS 131072u	/* 64 MiB: above MAXIMUM WRITE SAME LENGTH */
#define A 0		/* the two nexuses */
#define B 1

extern struct harness_lun H;

/* The checked fixture of the ram LUN. */
void setup(void);
void teardown(void);
/* A LUN over the memory backend instead (the check tears it down). */
void setup_mem(uint32_t caw_blocks, uint64_t lost_lba);

struct cmd *run(unsigned n, const uint8_t *cdb, uint16_t clen,
		const void *out, uint32_t len, uint32_t in_len);
/* A 10- or 16-byte CDB of the READ/WRITE layout: LBA and length. */
void cdb_rw(uint8_t *cdb, unsigned len, uint8_t op, uint8_t b1,
	    uint64_t lba, uint32_t n);
void cdb16(uint8_t *cdb, uint8_t op, uint8_t b1, uint64_t lba, uint32_t n);
/* WRITE (16) from nexus A, GOOD expected. */
void write16(uint64_t lba, const void *data, uint32_t blocks);
/* READ (16) from nexus A into out, GOOD expected. */
void read16(uint64_t lba, void *out, uint32_t blocks);
/* Every byte of the blocks is byte. */
void expect_blocks(uint64_t lba, uint32_t blocks, uint8_t byte);
/* Backend I/Os submitted for the LUN so far. */
uint64_t backend_ios(void);
/* Byte b of a VPD page (of 64 bytes); of the Block Limits page. */
uint8_t vpd_byte(uint8_t page, unsigned b);
uint8_t block_limits(unsigned b);
#endif
