/*
 * Fuzzer: the SCSI Command's Additional Header Segments
 * (pdu_decode_cmd_ahs, common/pdu.c; RFC 7143 11.2.1.2: Extended CDB and
 * Bidirectional Read Expected Data Transfer Length). Input: byte 0 picks
 * the longest extended CDB accepted, the rest is the AHS, copied to an
 * exactly-sized heap buffer so a read past it is caught. On success the
 * Extended CDB lies inside the input and within the limit, and encoding it
 * again (pdu_encode_ext_cdb_ahs) decodes to the same bytes.
 */
#include <stdlib.h>
#include <string.h>
#include "tcq/pdu.h"
#include "tests/fuzz/fuzz.h"

int FUZZ_ENTRY(pdu_decode_cmd_ahs)(const uint8_t *data, size_t size)
{
	static const uint32_t limits[] = { 0, 1, 15, 16, 244, 255, 65535 };
	struct pdu_cmd_ahs a, b;
	uint8_t *ahs, *again;
	uint32_t len, max, n;

	if (size < 1 || size > 65536 + 1)
		return 0;
	max = limits[data[0] % (sizeof(limits) / sizeof(limits[0]))];
	len = (uint32_t)(size - 1);
	ahs = malloc(len ? len : 1);
	if (!ahs)
		return 0;
	memcpy(ahs, data + 1, len);
	if (pdu_decode_cmd_ahs(ahs, len, max, &a) == 0 && a.ext_cdb) {
		if (a.ext_cdb < ahs + 4 || a.ext_cdb_len > max ||
		    a.ext_cdb + a.ext_cdb_len > ahs + len)
			abort();
		again = malloc(a.ext_cdb_len + 8);
		if (!again)
			abort();
		n = pdu_encode_ext_cdb_ahs(again, a.ext_cdb, a.ext_cdb_len);
		if (n % 4 || pdu_decode_cmd_ahs(again, n, max, &b) != 0 ||
		    b.ext_cdb_len != a.ext_cdb_len || b.has_bidi_read_len ||
		    memcmp(b.ext_cdb, a.ext_cdb, a.ext_cdb_len))
			abort();
		free(again);
	}
	free(ahs);
	return 0;
}
