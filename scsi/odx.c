/*
 * ODX commands that make and report tokens: POPULATE TOKEN (SBC-4),
 * RECEIVE ROD TOKEN INFORMATION (SPC-4) and the third-party copy VPD
 * page that announces them; the range list both POPULATE TOKEN and WRITE
 * USING TOKEN carry. Tokens live in scsi/odx_store.c; WRITE USING TOKEN
 * is scsi/odx_wut.c.
 */
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/compiler.h"
#include "tcq/scsi_proto.h"
#include "scsi/lun.h"
#include "scsi/odx_priv.h"
#include "scsi/sbc_priv.h"
#include "scsi/spc.h"

#define PT_HDR 16		/* POPULATE TOKEN parameter list header */
#define RANGE_LEN 16		/* block device range descriptor */

struct exec_rc odx_parse_ranges(const struct lun *l, const uint8_t *p,
				uint32_t at, uint32_t dlen,
				struct odx_range *r, unsigned *n,
				uint64_t *blocks)
{
	*n = dlen / RANGE_LEN;
	*blocks = 0;
	if (*n > ODX_MAX_RANGES)
		return exec_sense(SK_ILLEGAL_REQUEST,
				  ASC_TOO_MANY_SEGMENT_DESCRIPTORS);
	for (unsigned i = 0; i < *n; i++) {
		const uint8_t *d = p + at + (size_t)RANGE_LEN * i;
		r[i].lba = get_be64(d);
		r[i].blocks = get_be32(d + 8);
		if (r[i].lba > l->nblocks ||
		    r[i].blocks > l->nblocks - r[i].lba)
			return exec_sense_info(SK_ILLEGAL_REQUEST,
					       ASC_LBA_OUT_OF_RANGE, r[i].lba);
		/* Ranges may not overlap (SBC-4: the same block twice). */
		for (unsigned j = 0; j < i; j++)
			if (r[i].blocks && r[j].blocks &&
			    r[i].lba < r[j].lba + r[j].blocks &&
			    r[j].lba < r[i].lba + r[i].blocks)
				return exec_param_field(
					(uint16_t)(at + RANGE_LEN * i), -1);
		*blocks += r[i].blocks;
	}
	return EXEC_OK;
}

/* The parameter list's lengths: header hdr bytes, its data length at 0,
 * the range descriptor length at dl_at. */
struct exec_rc odx_check_list(const struct tcq_task *t, uint32_t hdr,
			      uint32_t dl_at, uint32_t *dlen)
{
	uint32_t len = t->req.data_out_len;
	const uint8_t *p = t->buf;
	struct exec_rc list_len = exec_sense(SK_ILLEGAL_REQUEST,
					     ASC_PARAMETER_LIST_LENGTH_ERROR);

	if (len < hdr)
		return list_len;
	if (!p || t->buf_len < len)
		return exec_target_failure();
	*dlen = get_be16(p + dl_at);
	if (*dlen == 0 || *dlen % RANGE_LEN)
		return exec_param_field((uint16_t)dl_at, -1);
	if (*dlen / RANGE_LEN > ODX_MAX_RANGES)
		return exec_sense(SK_ILLEGAL_REQUEST,
				  ASC_TOO_MANY_SEGMENT_DESCRIPTORS);
	if (hdr + *dlen > len || get_be16(p) + 2u < hdr + *dlen)
		return list_len;
	return EXEC_OK;
}

/* ---- POPULATE TOKEN ------------------------------------------------------ */

static struct exec_rc pt_run(struct tcq_task *t, struct odx_result *res)
{
	const uint8_t *p = t->buf;
	struct odx_range r[ODX_MAX_RANGES];
	uint32_t dlen;
	unsigned n;
	struct exec_rc rc = odx_check_list(t, PT_HDR, 14, &dlen);

	if (exec_failed(rc))
		return rc;
	if (p[2] & ~0x03)		/* RTV, IMMED */
		return exec_param_field(2, -1);
	uint32_t secs = get_be32(p + 4);
	if (secs > ODX_MAX_TIMEOUT)
		return exec_param_field(4, -1);
	if (!secs)
		secs = ODX_DEFAULT_TIMEOUT;
	if ((p[2] & 0x02) && get_be32(p + 8) != ODX_ROD_PIT_VULN &&
	    get_be32(p + 8) != ODX_ROD_PIT_ANY)
		return exec_param_field(8, -1);
	rc = odx_parse_ranges(t->lun, p, PT_HDR, dlen, r, &n, &res->blocks);
	if (exec_failed(rc))
		return rc;
	if (res->blocks > ODX_MAX_BLOCKS)
		return exec_sense(SK_ILLEGAL_REQUEST,
				  ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	rc = odx_token_create(t->lun, r, n, res->blocks, secs, res->token);
	if (exec_failed(rc))
		return rc;
	res->has_token = true;
	return EXEC_OK;
}

struct exec_rc sbc_populate_token(struct tcq_task *t)
{
	uint32_t list_id = get_be32(t->cdb + 6);
	struct odx_result res;

	memset(&res, 0, sizeof(res));
	res.sa = XCOPY_POPULATE_TOKEN;
	struct exec_rc rc = pt_run(t, &res);
	if (exec_failed(rc)) {
		odx_result_fail(t, res.sa, list_id, rc, 0);
		return rc;
	}
	res.status = ODX_CS_OK;
	odx_result_put(t->lun, t->nexus, list_id, &res);
	return exec_good(t);
}

/* ---- RECEIVE ROD TOKEN INFORMATION --------------------------------------- */

struct exec_rc sbc_receive_rod_token_info(struct tcq_task *t)
{
	uint8_t b[32 + SENSE_BUF_MAX + 4 + 2 + ODX_TOKEN_LEN];
	struct odx_result r;

	if (!odx_result_take(t->lun, t->nexus, get_be32(t->cdb + 2), &r))
		return exec_cdb_field(2, -1);	/* no such list identifier */
	memset(b, 0, sizeof(b));
	b[4] = r.sa;			/* RESPONSE TO SERVICE ACTION */
	b[5] = r.status;		/* COPY OPERATION STATUS */
	b[12] = r.scsi_status;		/* its command's status */
	b[13] = r.sense_len;		/* LENGTH OF THE SENSE DATA FIELD */
	b[14] = r.sense_len;		/* SENSE DATA LENGTH */
	b[15] = 0xf1;			/* TRANSFER COUNT UNITS: blocks */
	put_be64(b + 16, r.blocks);
	memcpy(b + 32, r.sense, r.sense_len);
	uint8_t *d = b + 32 + r.sense_len;
	uint32_t n = 32 + r.sense_len + 4;
	if (r.has_token) {		/* ROD TOKEN DESCRIPTORS */
		put_be32(d, 2 + ODX_TOKEN_LEN);
		memcpy(d + 6, r.token, ODX_TOKEN_LEN);
		n += 2 + ODX_TOKEN_LEN;
	}
	put_be32(b, n - 4);		/* AVAILABLE DATA */
	return spc_reply(t, b, n);
}

/* ---- the third-party copy VPD page (SPC-4 7.8.17) ------------------------ */

/* Block Device ROD Token Limits (SBC-4). */
static uint8_t *vpd_limits(const struct lun *l, uint8_t *d)
{
	put_be16(d, 0x0000);
	put_be16(d + 2, 0x20);
	put_be16(d + 10, ODX_MAX_RANGES);
	put_be32(d + 12, ODX_MAX_TIMEOUT);
	put_be32(d + 16, ODX_DEFAULT_TIMEOUT);
	put_be64(d + 20, ODX_MAX_BLOCKS);	/* MAXIMUM TOKEN TRANSFER SIZE */
	put_be64(d + 28, SBC_WS_CHUNK / l->block_size); /* OPTIMAL */
	return d + 36;
}

/* Supported Commands: the copy manager's opcodes, service actions. */
static uint8_t *vpd_commands(uint8_t *d)
{
	static const uint8_t list[] = {
		SOP_EXTENDED_COPY, 3, XCOPY_LID1, XCOPY_POPULATE_TOKEN,
		XCOPY_WRITE_USING_TOKEN,
		SOP_RECEIVE_COPY_RESULTS, 3, RCR_COPY_STATUS,
		RCR_OPERATING_PARAMS, RCR_ROD_TOKEN_INFO,
	};
	uint16_t len = ALIGN_UP((uint16_t)(1 + sizeof(list)), 4);

	put_be16(d, 0x0001);
	put_be16(d + 2, len);
	d[4] = sizeof(list);
	memcpy(d + 5, list, sizeof(list));
	return d + 4 + len;
}

/* ROD Token Features, with its block device part. */
static uint8_t *vpd_features(const struct lun *l, uint8_t *d)
{
	uint64_t max = (uint64_t)ODX_MAX_BLOCKS * l->block_size;

	put_be16(d, 0x0106);
	put_be16(d + 2, 44 + 48);
	d[4] = 0;			/* REMOTE TOKENS: none */
	put_be32(d + 16, 1);		/* MINIMUM TOKEN LIFETIME */
	put_be32(d + 20, 0xffffffffu);	/* MAXIMUM: no limit while used */
	put_be32(d + 24, ODX_MAX_TIMEOUT);
	put_be16(d + 46, 48);
	uint8_t *b = d + 48;
	b[0] = PDT_DIRECT_ACCESS;
	put_be16(b + 2, 44);
	put_be16(b + 6, 1);		/* OPTIMAL ... GRANULARITY: a block */
	put_be64(b + 8, max);		/* MAXIMUM BYTES IN BLOCK ROD */
	put_be64(b + 16, max);		/* OPTIMAL BYTES IN BLOCK ROD */
	put_be64(b + 24, SBC_WS_CHUNK);	/* OPTIMAL BYTES TO TOKEN ... */
	put_be64(b + 32, SBC_WS_CHUNK);	/* ... FROM TOKEN PER SEGMENT */
	return d + 96;
}

/* Supported ROD Types: ours (token in and out), the zero token (in). */
static uint8_t *vpd_rod_types(uint8_t *d)
{
	put_be16(d, 0x0108);
	put_be16(d + 2, 4 + 24);
	put_be16(d + 6, 24);
	put_be32(d + 8, ODX_ROD_PIT_VULN);
	d[12] = 0x03;			/* TOKEN_IN, TOKEN_OUT */
	put_be32(d + 20, ODX_ROD_ZERO);
	d[24] = 0x02;			/* TOKEN_IN */
	return d + 32;
}

uint32_t odx_vpd_tpc(const struct lun *l, uint8_t *p)
{
	uint8_t *d = vpd_limits(l, p + 4);

	d = vpd_commands(d);
	d = vpd_features(l, d);
	d = vpd_rod_types(d);
	put_be16(p + 2, (uint16_t)(d - p - 4));
	return (uint32_t)(d - p);
}
