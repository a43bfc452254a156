/*
 * Fuzzer: PERSISTENT RESERVE OUT (pr_out, scsi/pr_out.c) and its
 * parameter list, through the device server (fuzz_lun.h). Input: up to
 * eight commands separated by FUZZ_SEP, each byte 0 = SERVICE ACTION (bits
 * 0-4) and the nexus that sends it (bit 7), byte 1 = SCOPE and TYPE, the
 * rest the parameter list. After each, both nexuses read the keys, the
 * reservation and the full status (PERSISTENT RESERVE IN): whatever the
 * commands did, SPC-4 6.16 has those answered GOOD (or, to a nexus whose
 * registration was preempted, a unit attention first). At the end the
 * LUN is made again over the APTPL state the commands left, as tcqd does
 * when it starts, and that must succeed and answer the same way.
 */
#include <stdlib.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz_lun.h"

static void read_back(unsigned n)
{
	for (uint8_t sa = 0; sa <= 3; sa++) {
		uint8_t cdb[10] = { SOP_PERSISTENT_RESERVE_IN, sa };
		struct fuzz_io io = { 0 };

		put_be16(cdb + 7, 8192);
		if (fuzz_lun_run(n, cdb, sizeof(cdb), &io) != SAM_STAT_GOOD &&
		    io.key != SK_UNIT_ATTENTION)
			abort();
	}
}

static void one(unsigned i, const uint8_t *p, size_t len)
{
	uint8_t cdb[10] = { SOP_PERSISTENT_RESERVE_OUT };
	struct fuzz_io io = { 0 };
	unsigned n = 0;

	(void)i;
	if (len >= 1) {
		cdb[1] = p[0] & 0x1f;
		n = p[0] >> 7;
	}
	if (len >= 2)
		cdb[2] = p[1];
	p += len < 2 ? len : 2;
	len -= len < 2 ? len : 2;
	put_be32(cdb + 5, (uint32_t)len);
	io.out = p;
	io.out_len = (uint32_t)len;
	(void)fuzz_lun_run(n, cdb, sizeof(cdb), &io);
	read_back(0);
	read_back(1);
}

int FUZZ_ENTRY(pr_out)(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	fuzz_lun_open();
	fuzz_split(data, size, 8, one);
	/* SPC-4 5.13.5: what APTPL kept survives a power loss; the LUN is
	 * made again from it, and both nexuses can read it. */
	fuzz_lun_reopen();
	read_back(0);
	read_back(1);
	fuzz_lun_close();
	return 0;
}
