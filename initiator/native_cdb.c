/*
 * The native engine's CDBs of the command mixes (tcq-bench --fua,
 * --sync-every, --unmap, --write-same, --caw, --xcopy; bench_mix.c):
 * SYNCHRONIZE CACHE(16), UNMAP, WRITE SAME(16) with and without UNMAP,
 * COMPARE AND WRITE (SBC-3 5.23, 5.28, 5.42, 5.2) and EXTENDED COPY
 * LID1 block to block within the LUN (SPC-4 6.3), with their parameter
 * lists; and the NAA designator EXTENDED COPY names the LUN by (SPC-4
 * 7.8.6). READ and WRITE stay in engine_native.c.
 */
#include <errno.h>
#include <string.h>
#include "initiator/native_sess.h"
#include "tcq/byteorder.h"

#define UNMAP_LIST_LEN 24	/* 8-byte header, one 16-byte descriptor */
#define XC_HDR_LEN 16
#define XC_CSCD_LEN 32		/* identification descriptor (E4h) */
#define XC_SEG_LEN 28		/* block device to block device (02h) */
#define XC_LIST_LEN (XC_HDR_LEN + XC_CSCD_LEN + XC_SEG_LEN)
#define CAW_MAX_BLOCKS 255	/* its NUMBER OF LOGICAL BLOCKS: one byte */

/* EXTENDED COPY's parameter list: one identification CSCD descriptor
 * (this LUN) used as source and destination of one block-to-block
 * segment. */
static void xcopy_list(const struct engine *e, const struct bench_io *io,
		       uint8_t *p)
{
	uint8_t *d = p + XC_HDR_LEN, *s = d + XC_CSCD_LEN;

	memset(p, 0, XC_LIST_LEN);
	p[0] = 0;			/* LIST IDENTIFIER: 0 with usage 11b */
	p[1] = 3 << 3;			/* LIST ID USAGE 11b: no results kept */
	put_be16(p + 2, XC_CSCD_LEN);	/* CSCD DESCRIPTOR LIST LENGTH */
	put_be32(p + 8, XC_SEG_LEN);	/* SEGMENT DESCRIPTOR LIST LENGTH */
	put_be32(p + 12, 0);		/* INLINE DATA LENGTH */
	d[0] = 0xe4;			/* identification descriptor */
	d[1] = 0x00;			/* LU ID TYPE 0, direct access device */
	d[4] = 0x01;			/* CODE SET: binary */
	d[5] = 0x03;			/* association LU, designator NAA */
	d[7] = 16;			/* DESIGNATOR LENGTH */
	memcpy(d + 8, e->naa, 16);
	put_be24(d + 29, e->block_size);	/* DISK BLOCK LENGTH */
	s[0] = 0x02;			/* block device to block device */
	put_be16(s + 2, XC_SEG_LEN - 4);	/* DESCRIPTOR LENGTH */
	put_be16(s + 4, 0);		/* SOURCE CSCD DESCRIPTOR ID */
	put_be16(s + 6, 0);		/* DESTINATION CSCD DESCRIPTOR ID */
	put_be16(s + 10, (uint16_t)io->blocks);
	put_be64(s + 12, io->lba);
	put_be64(s + 20, io->lba2);
}

static bool in_lun(const struct engine *e, uint64_t lba, uint32_t blocks)
{
	return blocks && lba < e->nblocks && blocks <= e->nblocks - lba;
}

int native_cdb_build(const struct engine *e, struct bench_io *io,
		     uint8_t *cdb, uint32_t *edtl)
{
	uint8_t *p = io->buf;

	memset(cdb, 0, 16);
	*edtl = 0;
	if (io->cmd == BENCH_CMD_SYNC16) {
		cdb[0] = 0x91;	/* LBA 0, NUMBER OF LOGICAL BLOCKS 0: all */
		return 0;
	}
	if (!in_lun(e, io->lba, io->blocks))
		return -EINVAL;
	switch (io->cmd) {
	case BENCH_CMD_UNMAP:
		cdb[0] = 0x42;
		put_be16(cdb + 7, UNMAP_LIST_LEN);	/* PARAMETER LIST LENGTH */
		memset(p, 0, UNMAP_LIST_LEN);
		put_be16(p, UNMAP_LIST_LEN - 2);	/* UNMAP DATA LENGTH */
		put_be16(p + 2, 16);	/* UNMAP BLOCK DESCRIPTOR DATA LENGTH */
		put_be64(p + 8, io->lba);
		put_be32(p + 16, io->blocks);
		*edtl = UNMAP_LIST_LEN;
		return 0;
	case BENCH_CMD_WS:
	case BENCH_CMD_WS_UNMAP:
		cdb[0] = 0x93;
		if (io->cmd == BENCH_CMD_WS_UNMAP)
			cdb[1] = 0x08;	/* UNMAP */
		put_be64(cdb + 2, io->lba);
		put_be32(cdb + 10, io->blocks);
		*edtl = e->block_size;	/* one block, repeated */
		return 0;
	case BENCH_CMD_CAW:
		if (io->blocks > CAW_MAX_BLOCKS)
			return -EINVAL;
		cdb[0] = 0x89;
		put_be64(cdb + 2, io->lba);
		cdb[13] = (uint8_t)io->blocks;
		*edtl = 2 * io->blocks * e->block_size;	/* verify, then write */
		return 0;
	case BENCH_CMD_XCOPY:
		if (!e->have_naa || io->blocks > 0xffff ||
		    !in_lun(e, io->lba2, io->blocks))
			return -EINVAL;
		cdb[0] = 0x83;
		cdb[1] = 0x00;	/* service action: EXTENDED COPY (LID1) */
		put_be32(cdb + 10, XC_LIST_LEN);	/* PARAMETER LIST LENGTH */
		xcopy_list(e, io, p);
		*edtl = XC_LIST_LEN;
		return 0;
	}
	return -EINVAL;
}

bool native_vpd83_naa(const uint8_t *page, uint32_t len, uint8_t *naa)
{
	uint32_t end, off;

	if (len < 4 || page[1] != 0x83)
		return false;
	end = 4 + get_be16(page + 2);
	if (end > len)
		end = len;
	for (off = 4; off + 4 <= end; off += 4u + page[off + 3]) {
		const uint8_t *d = page + off;

		/* designator type 3 (NAA), association 0 (the LU), the
		 * 16-byte form EXTENDED COPY's descriptor carries */
		if ((d[1] & 0x0f) == 3 && (d[1] & 0x30) == 0 && d[3] == 16 &&
		    off + 4 + 16 <= end) {
			memcpy(naa, d + 4, 16);
			return true;
		}
	}
	return false;
}
