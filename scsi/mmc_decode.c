/*
 * The decoders of the MMC device's own rows (scsi/mmc_opcodes.c; see
 * cdb_priv.h): reserved fields checked, what the executor needs into
 * struct cdb_req. The SPC and SBC commands an MMC device shares with the
 * block device use the decoders of cdb_decode.c.
 */
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/cdb_priv.h"

/* ALLOCATION LENGTH at bytes 7-8 of a 10-byte CDB, 8-9 of a 12-byte
 * one: what most MMC commands return. */
static void alloc_at(const uint8_t *cdb, uint16_t byte, struct cdb_req *req)
{
	req->alloc_len = req->data_in_len = get_be16(cdb + byte);
}

/* READ TOC/PMA/ATIP (MMC-6 6.33): MSF, Format into subpage, Track/
 * Session Number into page. */
CDB_DECODER(cdb_dec_read_toc)
{
	if (cdb_rsvd(cdb, 1, 0xfd, err) || cdb_rsvd(cdb, 2, 0xf0, err) ||
	    cdb_rsvd_bytes(cdb, 3, 5, err))
		return -1;
	if (cdb[1] & 0x02)
		req->flags |= CDBF_MSF;
	req->subpage = cdb[2] & 0x0f;
	req->page = cdb[6];
	alloc_at(cdb, 7, req);
	return 0;
}

/* GET CONFIGURATION (MMC-6 6.6): RT into flags, Starting Feature Number
 * into lba. */
CDB_DECODER(cdb_dec_get_configuration)
{
	if (cdb_rsvd(cdb, 1, 0xfc, err) || cdb_rsvd_bytes(cdb, 4, 6, err))
		return -1;
	if ((cdb[1] & 3) == 3)	/* RT 11b is reserved */
		return cdb_bad_field(err, 1, 1);
	req->flags = cdb[1] & 3;
	req->lba = get_be16(cdb + 2);
	alloc_at(cdb, 7, req);
	return 0;
}

/* GET EVENT STATUS NOTIFICATION (MMC-6 6.7): Polled into flags, the
 * Notification Class Request into page. */
CDB_DECODER(cdb_dec_gesn)
{
	if (cdb_rsvd(cdb, 1, 0xfe, err) || cdb_rsvd_bytes(cdb, 2, 3, err) ||
	    cdb_rsvd_bytes(cdb, 5, 6, err))
		return -1;
	req->flags = cdb[1] & 1;
	req->page = cdb[4];
	alloc_at(cdb, 7, req);
	return 0;
}

/* READ DISC INFORMATION (MMC-6 6.22): Data Type into flags. */
CDB_DECODER(cdb_dec_read_disc_info)
{
	if (cdb_rsvd(cdb, 1, 0xf8, err) || cdb_rsvd_bytes(cdb, 2, 6, err))
		return -1;
	req->flags = cdb[1] & 7;
	alloc_at(cdb, 7, req);
	return 0;
}

/* READ TRACK INFORMATION (MMC-6 6.27): Address/Number Type into flags,
 * the LBA, track or session number into lba. OPEN (bit 2) asks for an
 * open track, which a finalized disc has not: refused with the reserved
 * bits. */
CDB_DECODER(cdb_dec_read_track_info)
{
	if (cdb_rsvd(cdb, 1, 0xfc, err) || cdb_rsvd_bytes(cdb, 6, 6, err))
		return -1;
	req->flags = cdb[1] & 3;
	req->lba = get_be32(cdb + 2);
	alloc_at(cdb, 7, req);
	return 0;
}

CDB_DECODER(cdb_dec_mechanism_status)
{
	if (cdb_rsvd_bytes(cdb, 1, 7, err) || cdb_rsvd_bytes(cdb, 10, 10, err))
		return -1;
	alloc_at(cdb, 8, req);
	return 0;
}

/* SET CD SPEED (MMC-6 6.37): Rotational Control 00b (CLV) or 01b (CAV);
 * the speeds are wishes. */
CDB_DECODER(cdb_dec_set_cd_speed)
{
	if (cdb_rsvd(cdb, 1, 0xfc, err) || cdb_rsvd_bytes(cdb, 6, 10, err))
		return -1;
	if ((cdb[1] & 3) > 1)
		return cdb_bad_field(err, 1, 1);
	return 0;
}

/* READ CD and READ CD MSF (MMC-6 6.19, 6.20): Expected Sector Type any
 * (000b) or Mode 1 (010b), user data only (byte 9: 10h; 00h moves
 * nothing), no sub-channel data. The MSF form's range is from its start
 * to (not including) its end. */
CDB_DECODER(cdb_dec_read_cd)
{
	uint8_t type = (cdb[1] >> 2) & 7;

	/* DAP (bit 1): no audio to mask errors in */
	if (cdb_rsvd(cdb, 1, 0xe3, err))
		return -1;
	if (type != 0 && type != 2)
		return cdb_bad_field(err, 1, 4);
	if (cdb[9] != 0x10 && cdb[9] != 0)
		return cdb_bad_field(err, 9, -1);
	if (cdb[10] & 0x07)
		return cdb_bad_field(err, 10, 2);
	if (cdb_rsvd(cdb, 10, 0xf8, err))
		return -1;
	if (cdb[0] == SOP_READ_CD) {
		req->lba = get_be32(cdb + 2);
		req->blocks = get_be24(cdb + 6);
	} else {
		uint32_t from = (cdb[3] * 60u + cdb[4]) * 75u + cdb[5];
		uint32_t to = (cdb[6] * 60u + cdb[7]) * 75u + cdb[8];

		if (cdb_rsvd(cdb, 2, 0xff, err))
			return -1;
		if (from < 150 || cdb[4] > 59 || cdb[5] > 74)
			return cdb_bad_field(err, 3, -1);
		if (to < from || cdb[7] > 59 || cdb[8] > 74)
			return cdb_bad_field(err, 6, -1);
		req->lba = from - 150;
		req->blocks = to - from;
	}
	if (cdb[9] == 0)
		req->blocks = 0;
	return cdb_set_xfer(e, req, bs, err);
}

/* READ DISC STRUCTURE (MMC-6 6.23): Media Type 0000b (DVD), the Format
 * Code into page, the Layer Number into subpage, no AGID. */
CDB_DECODER(cdb_dec_read_disc_structure)
{
	if (cdb_rsvd(cdb, 1, 0xf0, err) || cdb_rsvd(cdb, 10, 0x3f, err))
		return -1;
	if (cdb[1] & 0x0f)	/* BD structures: not a BD drive */
		return cdb_bad_field(err, 1, 3);
	if (cdb[10] & 0xc0)	/* AGID: no CSS authentication */
		return cdb_bad_field(err, 10, 7);
	req->lba = get_be32(cdb + 2);
	req->subpage = cdb[6];
	req->page = cdb[7];
	alloc_at(cdb, 8, req);
	return 0;
}
