/*
 * CHAP as iSCSI uses it (RFC 7143 section 12.1.3, RFC 1994): the
 * algorithm numbers of CHAP_A, their digests, the response
 * R = H(I || secret || C), random challenges and a constant-time
 * comparison. The target (target/auth.c) and the initiator
 * (initiator/native_chap.c) build their halves of the exchange on these.
 */
#ifndef TCQ_CHAP_H
#define TCQ_CHAP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CHAP_A values: IANA "PPP Authentication Algorithms" (5 is the MD5 of
 * RFC 1994 that RFC 7143 requires; 6..8 add SHA-1, SHA-256, SHA3-256). */
#define CHAP_ALG_MD5 5
#define CHAP_ALG_SHA1 6
#define CHAP_ALG_SHA256 7
#define CHAP_ALG_SHA3_256 8
#define CHAP_ALG_COUNT 4		/* the algorithms above */

#define CHAP_DIGEST_MAX 32		/* SHA-256 / SHA3-256 */
/* RFC 7143 12.1.3: C and R are binary values of at most 1024 bytes. */
#define CHAP_BINARY_MAX 1024

/* One algorithm by name ("MD5", "SHA-1", "SHA1", "SHA-256", "SHA256",
 * "SHA3-256", "SHA3256", "SHA3_256", any case) or number, given as the
 * len bytes at name; the CHAP_A value, or -1. */
int chap_alg_parse(const char *name, size_t len);
/* "MD5", "SHA-1", "SHA-256", "SHA3-256"; "?" for an unknown algorithm. */
const char *chap_alg_name(int alg);
/* Digest (and so response) length in bytes; 0 for an unknown algorithm. */
size_t chap_digest_len(int alg);

/* out (chap_digest_len(alg) bytes) = H(id || secret || challenge);
 * 0, or -1 for an unknown algorithm or a digest failure. */
int chap_response(int alg, uint8_t id, const void *secret, size_t slen,
		  const uint8_t *chal, size_t clen, uint8_t *out);

/* n random bytes (identifiers, challenges) from OpenSSL; 0 or -1. */
int chap_random(uint8_t *buf, size_t n);
/* Equal, in a time independent of where the bytes differ. */
bool chap_equal(const void *a, const void *b, size_t n);
/* Clears secrets and challenges so that the compiler cannot skip it. */
void chap_wipe(void *p, size_t n);
#endif
