/*
 * CRC32C for iSCSI digests over ISA-L. crc32_iscsi neither inverts the
 * seed nor the result, so the RFC 3720 convention (seed all ones, final
 * complement) is applied here. The digest goes on the wire least
 * significant byte first, which is the in-memory order of the returned
 * value on little-endian hosts.
 */
#include <limits.h>
#include <isa-l/crc.h>
#include "tcq/crc32c.h"

uint32_t crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	unsigned char *p = (unsigned char *)buf;

	/* crc32_iscsi takes an int length. */
	while (len > (size_t)INT_MAX) {
		crc = crc32_iscsi(p, INT_MAX, crc);
		p += INT_MAX;
		len -= INT_MAX;
	}
	return crc32_iscsi(p, (int)len, crc);
}

uint32_t crc32c(const void *buf, size_t len)
{
	return ~crc32c_update(0xffffffffu, buf, len);
}
