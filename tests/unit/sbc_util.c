/* The SBC suites' LUN and block helpers (sbc_util.h). */
#include <stdlib.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/stats.h"
#include "tests/unit/sbc_util.h"

struct harness_lun H;

void setup(void)
{
	harness_lun_setup(&H, "ram", NBLOCKS * BS, 2);
	ck_assert_ptr_nonnull(H.lun->sbc);
}

void teardown(void)
{
	harness_lun_teardown(&H);
}

void setup_mem(uint32_t caw_blocks, uint64_t lost_lba)
{
	harness_lun_open_bdev(&H, harness_mem_bdev(1u << 20, caw_blocks,
						   lost_lba));
	harness_nexus_join(&H, 2);
}

struct cmd *run(unsigned n, const uint8_t *cdb, uint16_t clen,
		const void *out, uint32_t len, uint32_t in_len)
{
	return run_cdb(&H, n, cdb, clen, out, len, in_len);
}

void cdb_rw(uint8_t *cdb, unsigned len, uint8_t op, uint8_t b1,
	    uint64_t lba, uint32_t n)
{
	memset(cdb, 0, len);
	cdb[0] = op;
	cdb[1] = b1;
	if (len == 10) {
		put_be32(cdb + 2, (uint32_t)lba);
		put_be16(cdb + 7, (uint16_t)n);
	} else {
		put_be64(cdb + 2, lba);
		put_be32(cdb + 10, n);
	}
}

void cdb16(uint8_t *cdb, uint8_t op, uint8_t b1, uint64_t lba, uint32_t n)
{
	cdb_rw(cdb, 16, op, b1, lba, n);
}

void write16(uint64_t lba, const void *data, uint32_t blocks)
{
	uint8_t cdb[16];

	cdb16(cdb, SOP_WRITE_16, 0, lba, blocks);
	EXPECT_GOOD(run(A, cdb, 16, data, blocks * BS, 0));
}

void read16(uint64_t lba, void *out, uint32_t blocks)
{
	uint8_t cdb[16];

	cdb16(cdb, SOP_READ_16, 0, lba, blocks);
	struct cmd *c = run(A, cdb, 16, NULL, 0, blocks * BS);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, blocks * BS);
	memcpy(out, cmd_data(c), blocks * BS);
}

void expect_blocks(uint64_t lba, uint32_t blocks, uint8_t byte)
{
	uint8_t *rb = malloc(blocks * BS);

	ck_assert_ptr_nonnull(rb);
	read16(lba, rb, blocks);
	for (unsigned i = 0; i < blocks * BS; i++)
		ck_assert_msg(rb[i] == byte, "byte %u is %#x, not %#x", i,
			      rb[i], byte);
	free(rb);
}

uint64_t backend_ios(void)
{
	struct stats_snapshot snap;

	stats_snapshot(H.lun, &snap);
	return snap.c.ios;
}

uint8_t vpd_byte(uint8_t page, unsigned b)
{
	uint8_t cdb[6] = { SOP_INQUIRY, 0x01, page, 0, 64, 0 };
	struct cmd *c = run(A, cdb, 6, NULL, 0, 64);

	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 64);
	ck_assert_uint_eq(cmd_data(c)[1], page);
	return cmd_data(c)[b];
}

/* The Block Limits VPD page: SBC-3 6.5.3. */
uint8_t block_limits(unsigned b)
{
	return vpd_byte(0xb0, b);
}
