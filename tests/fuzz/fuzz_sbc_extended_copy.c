/*
 * Fuzzer: EXTENDED COPY (sbc_extended_copy, scsi/xcopy.c) and its
 * parameter list (SPC-4 6.4: target and segment descriptors), through the
 * device server (fuzz_lun.h). Input: up to four commands separated by
 * FUZZ_SEP, each byte 0 = LID4 service action (bit 0), the LUN's own NAA
 * designator and block size written into every target descriptor of the
 * list (bit 1, so the fuzzer reaches the copy without guessing them), the
 * nexus (bit 7), the rest the parameter list. The medium starts with a
 * pattern, and a model of it checks a copy reported GOOD: each
 * block-to-block segment (02h) moved its blocks (segments whose ranges
 * overlap are left unchecked: SPC-4 leaves their order open; the model
 * then takes the medium as it is). After each,
 * RECEIVE COPY RESULTS (OPERATING PARAMETERS) answers GOOD.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz_lun.h"

#define HDR 16
#define TGT 32
#define SEG 28
#define LUN_BYTES ((size_t)FUZZ_LUN_BLOCKS * FUZZ_LUN_BS)

static uint8_t model[LUN_BYTES], back[LUN_BYTES];
static uint8_t list[65536];

/* The first 64 blocks hold a pattern, the rest zeros. */
#define PAT_BLOCKS 64

static void rw10(uint8_t op, uint16_t blocks, struct fuzz_io *io)
{
	uint8_t cdb[10] = { op };

	put_be16(cdb + 7, blocks);
	if (fuzz_lun_run(0, cdb, sizeof(cdb), io) != SAM_STAT_GOOD)
		abort();
}

/* The copy the list asks for, on the model; false when it cannot tell. */
static bool model_copy(const uint8_t *p, size_t len)
{
	uint32_t tdl, sdl;

	if (len < HDR)
		return false;
	tdl = get_be16(p + 2);
	sdl = get_be32(p + 8);
	if (HDR + (uint64_t)tdl + sdl > len)
		return false;
	for (uint32_t off = 0; off + SEG <= sdl; off += SEG) {
		const uint8_t *d = p + HDR + tdl + off;
		uint64_t n = get_be16(d + 10), s = get_be64(d + 12),
			 t = get_be64(d + 20);

		if (s > FUZZ_LUN_BLOCKS || n > FUZZ_LUN_BLOCKS - s ||
		    t > FUZZ_LUN_BLOCKS || n > FUZZ_LUN_BLOCKS - t)
			abort();	/* GOOD for blocks past the medium */
		if (s + n > t && t + n > s && n)
			return false;	/* overlapping: order left open */
		memcpy(model + t * FUZZ_LUN_BS, model + s * FUZZ_LUN_BS,
		       n * FUZZ_LUN_BS);
	}
	return true;
}

static void one(unsigned i, const uint8_t *p, size_t len)
{
	uint8_t cdb[16] = { SOP_EXTENDED_COPY };
	uint8_t rcr[16] = { SOP_RECEIVE_COPY_RESULTS, 0x03 };
	struct fuzz_io io = { 0 };
	uint8_t ctl = len ? p[0] : 0;
	bool checked;

	(void)i;
	if (len) {
		p++;
		len--;
	}
	memcpy(list, p, len);
	if ((ctl & 2) && len >= HDR) {
		uint32_t tdl = get_be16(list + 2);

		for (size_t off = HDR; off < HDR + (size_t)tdl &&
		     off + TGT <= len; off += TGT) {
			memcpy(list + off + 8, fuzz_lun_naa(), 16);
			put_be24(list + off + 29, FUZZ_LUN_BS);
		}
	}
	cdb[1] = ctl & 1;
	put_be32(cdb + 10, (uint32_t)len);
	io.out = list;
	io.out_len = (uint32_t)len;
	checked = fuzz_lun_run(ctl >> 7, cdb, sizeof(cdb), &io) ==
		  SAM_STAT_GOOD && model_copy(list, len);
	io = (struct fuzz_io){ .in = back, .in_len = sizeof(back) };
	rw10(SOP_READ_10, FUZZ_LUN_BLOCKS, &io);
	if (io.got != sizeof(back))
		abort();
	if (checked && memcmp(back, model, sizeof(back)))
		abort();	/* GOOD, but the blocks did not move */
	/* A copy the model cannot tell (overlapping segments, or one that
	 * failed after some segments: SPC-4 leaves those blocks open)
	 * leaves the medium as the truth for the next one. */
	memcpy(model, back, sizeof(model));
	put_be32(rcr + 10, 512);
	io = (struct fuzz_io){ 0 };
	if (fuzz_lun_run(ctl >> 7, rcr, sizeof(rcr), &io) != SAM_STAT_GOOD &&
	    io.key != SK_UNIT_ATTENTION)
		abort();
}

int FUZZ_ENTRY(sbc_extended_copy)(const uint8_t *data, size_t size)
{
	struct fuzz_io io = { .out = model,
			      .out_len = PAT_BLOCKS * FUZZ_LUN_BS };

	if (size > sizeof(list))
		return 0;
	memset(model, 0, sizeof(model));
	for (size_t b = 0; b < PAT_BLOCKS * FUZZ_LUN_BS; b++)
		model[b] = (uint8_t)(b / FUZZ_LUN_BS + b * 3);
	fuzz_lun_open();
	rw10(SOP_WRITE_10, PAT_BLOCKS, &io);
	fuzz_split(data, size, 4, one);
	fuzz_lun_close();
	return 0;
}
