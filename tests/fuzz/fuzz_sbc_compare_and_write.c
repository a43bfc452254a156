/*
 * Fuzzer: COMPARE AND WRITE (sbc_compare_and_write, scsi/sbc_rmw.c) and
 * its Data-Out (SBC-4 5.2: NUMBER OF LOGICAL BLOCKS to compare, then as
 * many to write), through the device server (fuzz_lun.h). Input: up to
 * eight commands separated by FUZZ_SEP, each byte 0 = NUMBER OF LOGICAL
 * BLOCKS (0-3, bits 0-1; 0 is no transfer), a Data-Out one block short
 * or long (bits 2-3), the nexus (bit 7), byte 1 = the LBA (0-255), the
 * rest the data, repeated or cut to the length. A model of blocks 0-259
 * checks SBC-4's rule: GOOD only when the compare data equals the medium,
 * and then the medium holds the write data; a MISCOMPARE, or any other
 * error, leaves the medium unchanged.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz_lun.h"

#define MODEL_BLOCKS 260
#define MAX_NLB 3

static uint8_t model[MODEL_BLOCKS * FUZZ_LUN_BS];
static uint8_t data_out[(2 * MAX_NLB + 1) * FUZZ_LUN_BS];
static uint8_t back[MAX_NLB * FUZZ_LUN_BS];

static void read_back(uint32_t lba, uint32_t nlb)
{
	uint8_t cdb[10] = { SOP_READ_10 };
	struct fuzz_io io = { .in = back, .in_len = nlb * FUZZ_LUN_BS };

	put_be32(cdb + 2, lba);
	put_be16(cdb + 7, (uint16_t)nlb);
	if (fuzz_lun_run(0, cdb, sizeof(cdb), &io) != SAM_STAT_GOOD ||
	    io.got != nlb * FUZZ_LUN_BS)
		abort();
	if (memcmp(back, model + (size_t)lba * FUZZ_LUN_BS, io.got))
		abort();	/* the medium is not what SBC-4 says */
}

static void one(unsigned i, const uint8_t *p, size_t len)
{
	uint8_t cdb[16] = { SOP_COMPARE_AND_WRITE };
	struct fuzz_io io = { 0 };
	uint8_t ctl = len ? p[0] : 0;
	uint32_t lba = len > 1 ? p[1] : 0, nlb = ctl & 3, dlen;
	uint8_t *cmp = model + (size_t)lba * FUZZ_LUN_BS;
	bool same;

	(void)i;
	p += len < 2 ? len : 2;
	len -= len < 2 ? len : 2;
	dlen = 2 * nlb * FUZZ_LUN_BS;
	if ((ctl & 0xc) == 4 && dlen)
		dlen -= FUZZ_LUN_BS;
	else if ((ctl & 0xc) == 8)
		dlen += FUZZ_LUN_BS;
	for (uint32_t o = 0; o < dlen; o++)
		data_out[o] = len ? p[o % len] : 0;
	put_be64(cdb + 2, lba);
	cdb[13] = (uint8_t)nlb;
	io.out = data_out;
	io.out_len = dlen;
	same = !memcmp(data_out, cmp, nlb * FUZZ_LUN_BS);
	if (fuzz_lun_run(ctl >> 7, cdb, sizeof(cdb), &io) == SAM_STAT_GOOD) {
		if (!same && nlb)
			abort();	/* wrote although the compare failed */
		if (dlen == 2 * nlb * FUZZ_LUN_BS)
			memcpy(cmp, data_out + nlb * FUZZ_LUN_BS,
			       nlb * FUZZ_LUN_BS);
	} else if (io.key == SK_MISCOMPARE && same) {
		abort();	/* reported a miscompare of equal data */
	}
	read_back(lba, MAX_NLB);
}

int FUZZ_ENTRY(sbc_compare_and_write)(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	memset(model, 0, sizeof(model));
	fuzz_lun_open();
	fuzz_split(data, size, 8, one);
	fuzz_lun_close();
	return 0;
}
