/*
 * Fuzzer 1: the PDU codec. Any 48 bytes go through the structural checks
 * of both directions and every decoder; a decoded struct is encoded back
 * and decoded again, which must give the same struct (the codec loses
 * nothing it claims to keep).
 */
#include <stdlib.h>
#include <string.h>
#include "tcq/pdu.h"
#include "tests/fuzz/fuzz.h"

/* Fields a PDU defines only in some forms: the encoder writes them only
 * then, so the comparison ignores them otherwise. */
static void normalize_data_in(struct pdu_data_in *p)
{
	if (!p->status_present) {
		p->flags = 0;
		p->status = 0;
		p->residual = 0;
	}
}
static void normalize_none(void *p)
{
	(void)p;
}

#define ROUND_TRIP(name, bhs) ROUND_TRIP_N(name, bhs, normalize_none)
#define ROUND_TRIP_N(name, bhs, norm)                                      \
	do {                                                               \
		struct pdu_##name a, b;                                    \
		uint8_t out[ISCSI_BHS_LEN];                                \
		memset(&a, 0, sizeof(a));                                  \
		memset(&b, 0, sizeof(b));                                  \
		pdu_decode_##name(bhs, &a);                                \
		norm(&a);                                                  \
		memset(out, 0xa5, sizeof(out));                            \
		memcpy(out + BHS_DATA_LEN, (bhs) + BHS_DATA_LEN, 3);       \
		pdu_encode_##name(out, &a);                                \
		pdu_decode_##name(out, &b);                                \
		norm(&b);                                                  \
		if (memcmp(&a, &b, sizeof(a)) != 0)                        \
			abort();                                           \
	} while (0)

/* Decoding is idempotent: decode(encode(decode(x))) == decode(x). The
 * structs are memset first so their padding compares equal; the data
 * segment length is the caller's (pdu_set_data_len), so it is carried
 * over, while every other byte of the output starts as garbage to catch
 * a field the encoder forgets. */
int FUZZ_ENTRY(pdu)(const uint8_t *data, size_t size)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	const char *why = NULL;

	if (size < ISCSI_BHS_LEN)
		return 0;
	memcpy(bhs, data, ISCSI_BHS_LEN);
	/* A rejection must come with a reason code and an explanation. */
	if (pdu_check_initiator_bhs(bhs, &why) != 0 && !why)
		abort();
	why = NULL;
	if (pdu_check_target_bhs(bhs, &why) != 0 && !why)
		abort();
	(void)pdu_opcode_name(pdu_opcode(bhs));
	(void)pdu_lun_decode(get_be64(bhs + BHS_LUN));
	ROUND_TRIP(scsi_cmd, bhs);
	ROUND_TRIP(scsi_rsp, bhs);
	ROUND_TRIP(data_out, bhs);
	ROUND_TRIP_N(data_in, bhs, normalize_data_in);
	ROUND_TRIP(r2t, bhs);
	ROUND_TRIP(nop_out, bhs);
	ROUND_TRIP(nop_in, bhs);
	ROUND_TRIP(login_req, bhs);
	ROUND_TRIP(login_rsp, bhs);
	ROUND_TRIP(text_req, bhs);
	ROUND_TRIP(text_rsp, bhs);
	ROUND_TRIP(logout_req, bhs);
	ROUND_TRIP(logout_rsp, bhs);
	ROUND_TRIP(tmf_req, bhs);
	ROUND_TRIP(tmf_rsp, bhs);
	ROUND_TRIP(reject, bhs);
	ROUND_TRIP(async, bhs);
	ROUND_TRIP(snack, bhs);
	return 0;
}
