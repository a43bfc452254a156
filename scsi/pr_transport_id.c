/*
 * iSCSI TransportIDs (SPC-4 7.6.4.6): how PR IN READ FULL STATUS names a
 * registration's initiator port, and how PR OUT names the ports it
 * registers (SPEC_I_PT) or moves a reservation to (REGISTER AND MOVE).
 *
 *   byte 0    FORMAT CODE (bits 7-6): 00b name only, 01b name and ISID;
 *             PROTOCOL IDENTIFIER (bits 3-0): 5h iSCSI
 *   byte 1    reserved
 *   bytes 2-3 ADDITIONAL LENGTH, big endian, a multiple of 4
 *   bytes 4-  "iname" (00b) or "iname,i,0xISID" (01b, 12 hex digits),
 *             NUL terminated, NUL padded to the length
 */
#include <ctype.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "scsi/pr_priv.h"

#define TID_ISCSI 0x05
#define TID_FMT_ISID 0x40	/* format code 01b */

uint32_t pr_transport_id_put(uint8_t *p, const char *port)
{
	size_t n = strlen(port) + 1;
	uint32_t len = (uint32_t)((n + 3) & ~(size_t)3);

	memset(p, 0, 4 + len);
	p[0] = (uint8_t)((strstr(port, ",i,0x") ? TID_FMT_ISID : 0) | TID_ISCSI);
	put_be16(p + 2, (uint16_t)len);
	memcpy(p + 4, port, n);
	return 4 + len;
}

/* "name,i,0xISID": a name before it and 12 hex digits after it. */
static bool isid_form(const char *port)
{
	const char *s = strstr(port, ",i,0x");

	if (!s || s == port || strlen(s + 5) != 12)
		return false;
	for (const char *h = s + 5; *h; h++)
		if (!isxdigit((unsigned char)*h))
			return false;
	return true;
}

uint32_t pr_transport_id_parse(const uint8_t *p, uint32_t avail, char *port)
{
	uint32_t len, n;
	uint8_t fmt;

	if (avail < 4 || (p[0] & 0x0f) != TID_ISCSI)
		return 0;
	fmt = p[0] >> 6;
	len = get_be16(p + 2);
	if (fmt > 1 || len < 4 || len % 4 || len > avail - 4 ||
	    len >= PR_PORT_MAX)
		return 0;
	n = (uint32_t)strnlen((const char *)p + 4, len);
	if (n == 0 || n == len)		/* must be NUL terminated */
		return 0;
	/* RFC 3722 (iSCSI stringprep) prohibits control characters and
	 * spaces in a name; a newline would also split the APTPL file's
	 * line (scsi/pr_aptpl.c) and forge or break what it keeps. */
	for (uint32_t i = 0; i < n; i++)
		if (p[4 + i] <= 0x20 || p[4 + i] == 0x7f)
			return 0;
	memcpy(port, p + 4, n);
	port[n] = 0;
	if (fmt == 1 ? !isid_form(port) : strchr(port, ',') != NULL)
		return 0;
	return 4 + len;
}
