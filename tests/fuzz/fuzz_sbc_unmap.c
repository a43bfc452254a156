/*
 * Fuzzer: UNMAP (sbc_unmap, scsi/sbc.c) and its parameter list (SBC-4
 * 5.32), through the device server (fuzz_lun.h). Input: up to eight
 * commands separated by FUZZ_SEP, each byte 0 = ANCHOR (bit 0) and the
 * nexus (bit 7), the rest the parameter list. Blocks 0-15 hold a pattern
 * before the first; whatever UNMAP did, a READ of them afterwards answers
 * GOOD with either the pattern or zeros (the ram LUN unmaps to zeros,
 * SBC-4 4.7.4.5 LBPRZ), block by block, never anything else.
 */
#include <stdlib.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz_lun.h"

#define PAT_BLOCKS 16

static uint8_t pattern[PAT_BLOCKS * FUZZ_LUN_BS];
static uint8_t back[PAT_BLOCKS * FUZZ_LUN_BS];

static void rw10(uint8_t op, struct fuzz_io *io)
{
	uint8_t cdb[10] = { op };

	put_be16(cdb + 7, PAT_BLOCKS);
	if (fuzz_lun_run(0, cdb, sizeof(cdb), io) != SAM_STAT_GOOD)
		abort();
}

static void one(unsigned i, const uint8_t *p, size_t len)
{
	uint8_t cdb[10] = { SOP_UNMAP };
	struct fuzz_io io = { 0 };
	unsigned n = 0;

	(void)i;
	if (len >= 1) {
		cdb[1] = p[0] & 1;
		n = p[0] >> 7;
		p++;
		len--;
	}
	put_be16(cdb + 7, (uint16_t)(len > 0xffff ? 0xffff : len));
	io.out = p;
	io.out_len = (uint32_t)len;
	(void)fuzz_lun_run(n, cdb, sizeof(cdb), &io);
	io = (struct fuzz_io){ .in = back, .in_len = sizeof(back) };
	rw10(SOP_READ_10, &io);
	if (io.got != sizeof(back))
		abort();
	for (size_t b = 0; b < PAT_BLOCKS; b++) {
		const uint8_t *got = back + b * FUZZ_LUN_BS;

		if (memcmp(got, pattern + b * FUZZ_LUN_BS, FUZZ_LUN_BS) &&
		    (got[0] || memcmp(got, got + 1, FUZZ_LUN_BS - 1)))
			abort();
	}
}

int FUZZ_ENTRY(sbc_unmap)(const uint8_t *data, size_t size)
{
	struct fuzz_io io = { .out = pattern, .out_len = sizeof(pattern) };

	if (size > 65536)
		return 0;
	for (size_t b = 0; b < sizeof(pattern); b++)
		pattern[b] = (uint8_t)(b / FUZZ_LUN_BS * 7 + 1 + b);
	fuzz_lun_open();
	rw10(SOP_WRITE_10, &io);
	fuzz_split(data, size, 8, one);
	fuzz_lun_close();
	return 0;
}
