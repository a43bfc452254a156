/* Sense data as SPC-4 4.5 lays it out, for the EXPECT_SENSE family: the
 * response code says the format, the fields come from where that format
 * keeps them. */
#include <stdio.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "tests/unit/harness.h"

/* Fixed format (4.5.3): VALID and INFORMATION in bytes 0-6, the key in
 * byte 2, ASC/ASCQ in 12-13, the sense-key specific bytes in 15-17. */
static bool parse_fixed(const uint8_t *b, unsigned len,
			struct harness_sense *s)
{
	if (len < 14)
		return false;
	s->key = b[2] & 0x0f;
	s->asc = b[12];
	s->ascq = b[13];
	s->info_valid = b[0] & 0x80;
	s->info = get_be32(b + 3);
	if (len >= 18) {
		memcpy(s->sks, b + 15, 3);
		s->sksv = b[15] & 0x80;
	}
	return true;
}

/* Descriptor format (4.5.2): key, ASC, ASCQ in bytes 1-3, then
 * descriptors from byte 8: Information (00h) and sense-key specific
 * (02h) are the ones the checks read. */
static bool parse_desc(const uint8_t *b, unsigned len,
		       struct harness_sense *s)
{
	unsigned end;

	if (len < 8)
		return false;
	s->desc = true;
	s->key = b[1] & 0x0f;
	s->asc = b[2];
	s->ascq = b[3];
	end = 8u + b[7] < len ? 8u + b[7] : len;
	for (unsigned off = 8; off + 2 <= end; off += 2u + b[off + 1]) {
		const uint8_t *d = b + off;

		if (off + 2u + d[1] > end)
			return false;	/* a descriptor past the data */
		if (d[0] == 0x00 && d[1] == 0x0a) {
			s->info_valid = d[2] & 0x80;
			s->info = get_be64(d + 4);
		} else if (d[0] == 0x02 && d[1] == 0x06) {
			memcpy(s->sks, d + 4, 3);
			s->sksv = d[4] & 0x80;
		}
	}
	return true;
}

bool harness_sense_parse(const uint8_t *b, unsigned len,
			 struct harness_sense *s)
{
	memset(s, 0, sizeof(*s));
	if (!len)
		return false;
	switch (b[0] & 0x7f) {
	case 0x70:
	case 0x71:
		return parse_fixed(b, len, s);
	case 0x72:
	case 0x73:
		return parse_desc(b, len, s);
	default:
		return false;
	}
}

/* c's sense, when it ended in CHECK CONDITION with sense data. */
static bool cmd_sense(const struct cmd *c, struct harness_sense *s,
		      char *msg, size_t len)
{
	if (c->t.status != SAM_STAT_CHECK_CONDITION) {
		snprintf(msg, len, "status %#x, expected CHECK CONDITION",
			 c->t.status);
		return false;
	}
	if (!harness_sense_parse(c->t.sense, c->t.sense_len, s)) {
		snprintf(msg, len, "no sense data we can read (%u bytes, "
			 "response code %#x)", c->t.sense_len,
			 c->t.sense_len ? c->t.sense[0] : 0);
		return false;
	}
	return true;
}

bool harness_sense_is(const struct cmd *c, uint8_t key, uint8_t asc,
		      uint8_t ascq, char *msg, size_t len)
{
	struct harness_sense s;

	if (!cmd_sense(c, &s, msg, len))
		return false;
	if (s.key == key && s.asc == asc && s.ascq == ascq)
		return true;
	snprintf(msg, len, "sense %02x/%02x/%02x, expected %02x/%02x/%02x",
		 s.key, s.asc, s.ascq, key, asc, ascq);
	return false;
}

bool harness_field_is(const struct cmd *c, bool cd, uint16_t byte, int bit,
		      char *msg, size_t len)
{
	struct harness_sense s;

	if (!cmd_sense(c, &s, msg, len))
		return false;
	/* SKSV | C/D | reserved (0) | BPV | BIT POINTER, FIELD POINTER. */
	uint8_t want = (uint8_t)(0x80 | (cd ? 0x40 : 0) |
				 (bit >= 0 ? 0x08 | (bit & 7) : 0));
	if (s.sks[0] == want && get_be16(s.sks + 1) == byte)
		return true;
	snprintf(msg, len, "sense-key specific %02x %02x %02x, expected "
		 "%02x %02x %02x", s.sks[0], s.sks[1], s.sks[2], want,
		 byte >> 8, byte & 0xff);
	return false;
}

bool harness_info_is(const struct cmd *c, uint64_t info, char *msg,
		     size_t len)
{
	struct harness_sense s;

	if (!cmd_sense(c, &s, msg, len))
		return false;
	if (s.info_valid && s.info == info)
		return true;
	snprintf(msg, len, "INFORMATION %s%#llx, expected %#llx",
		 s.info_valid ? "" : "(not valid) ",
		 (unsigned long long)s.info, (unsigned long long)info);
	return false;
}

const char *harness_sense_text(const struct cmd *c)
{
	static char text[48];
	struct harness_sense s;

	if (!harness_sense_parse(c->t.sense, c->t.sense_len, &s))
		return "";
	snprintf(text, sizeof(text), " (sense %02x/%02x/%02x)", s.key, s.asc,
		 s.ascq);
	return text;
}
