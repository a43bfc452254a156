/*
 * Fuzzer: MODE SELECT(6) and (10) (spc_mode_select, scsi/spc.c) and their
 * parameter lists (SPC-4 6.11, 7.5), through the device server
 * (fuzz_lun.h). Input: up to eight commands separated by FUZZ_SEP, each
 * byte 0 = MODE SELECT(10) (bit 0), SP (bit 1), PF clear (bit 2), the
 * nexus (bit 7), the rest the parameter list (MODE SELECT(6): its first
 * 255 bytes). After each, MODE SENSE(10) of all pages and subpages in
 * each page control answers GOOD (or a unit attention: SPC-4 7.5.1 has a
 * changed page reported to the other nexus), and with what fits the
 * header's MODE DATA LENGTH.
 */
#include <stdlib.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz_lun.h"

static void sense_all(unsigned n)
{
	static uint8_t buf[4096];

	for (uint8_t pc = 0; pc < 3; pc++) {
		uint8_t cdb[10] = { SOP_MODE_SENSE_10, 0, (uint8_t)(pc << 6 | 0x3f),
				    0xff };
		struct fuzz_io io = { .in = buf, .in_len = sizeof(buf) };

		put_be16(cdb + 7, sizeof(buf));
		if (fuzz_lun_run(n, cdb, sizeof(cdb), &io) != SAM_STAT_GOOD) {
			if (io.key != SK_UNIT_ATTENTION)
				abort();
			continue;
		}
		/* SPC-4 7.5.5: MODE DATA LENGTH counts the bytes after it. */
		if (io.got < 8 || (uint32_t)get_be16(buf) + 2 < io.got)
			abort();
	}
}

static void one(unsigned i, const uint8_t *p, size_t len)
{
	uint8_t cdb[10] = { 0 };
	struct fuzz_io io = { 0 };
	uint8_t ctl = len ? p[0] : 0;

	(void)i;
	if (len) {
		p++;
		len--;
	}
	if (ctl & 1) {
		cdb[0] = SOP_MODE_SELECT_10;
		if (len > 0xffff)
			len = 0xffff;
		put_be16(cdb + 7, (uint16_t)len);
	} else {
		cdb[0] = SOP_MODE_SELECT_6;
		if (len > 0xff)
			len = 0xff;
		cdb[4] = (uint8_t)len;
	}
	cdb[1] = (uint8_t)((ctl & 4 ? 0 : 0x10) | (ctl & 2 ? 1 : 0));
	io.out = p;
	io.out_len = (uint32_t)len;
	(void)fuzz_lun_run(ctl >> 7, cdb, ctl & 1 ? 10 : 6, &io);
	sense_all(0);
	sense_all(1);
}

int FUZZ_ENTRY(spc_mode_select)(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	fuzz_lun_open();
	fuzz_split(data, size, 8, one);
	fuzz_lun_close();
	return 0;
}
