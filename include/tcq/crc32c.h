/* CRC32C (Castagnoli) as iSCSI digests use it: ISA-L's crc32_iscsi. */
#ifndef TCQ_CRC32C_H
#define TCQ_CRC32C_H
#include <stddef.h>
#include <stdint.h>
/* Digest of buf[0..len): the value sent on the wire (little-endian). */
uint32_t crc32c(const void *buf, size_t len);
/* Incremental form: start with seed 0xffffffff, finish with ~crc. */
uint32_t crc32c_update(uint32_t crc, const void *buf, size_t len);
#endif
