/*
 * CHAP for the initiator (RFC 1994 as RFC 7143 12.1.3 uses it; SHA-1,
 * SHA-256 and SHA3-256 per RFC 9653): R = H(id || secret || challenge).
 * The digest is the target's (target/auth.c), so both sides compute CHAP
 * the same way.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>
#include <stdlib.h>
#include "target/auth.h"
#include "initiator/native.h"

size_t native_chap_digest_len(int alg)
{
	return auth_chap_digest_len(alg);
}

static int chap_alg_from_name(const char *s, size_t len)
{
	static const struct { const char *name; int alg; } tab[] = {
		{ "MD5", NATIVE_CHAP_MD5 }, { "5", NATIVE_CHAP_MD5 },
		{ "SHA-1", NATIVE_CHAP_SHA1 }, { "SHA1", NATIVE_CHAP_SHA1 },
		{ "6", NATIVE_CHAP_SHA1 },
		{ "SHA-256", NATIVE_CHAP_SHA256 }, { "SHA256", NATIVE_CHAP_SHA256 },
		{ "7", NATIVE_CHAP_SHA256 },
		{ "SHA3-256", NATIVE_CHAP_SHA3_256 }, { "8", NATIVE_CHAP_SHA3_256 },
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strlen(tab[i].name) == len &&
		    strncasecmp(tab[i].name, s, len) == 0)
			return tab[i].alg;
	return -1;
}

int native_chap_parse_algs(const char *s, int *algs, int max)
{
	int n = 0;

	while (s && *s) {
		const char *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		int alg = chap_alg_from_name(s, len);
		bool dup = false;

		if (alg < 0)
			return -1;
		for (int i = 0; i < n; i++)
			dup |= algs[i] == alg;
		if (!dup) {
			if (n == max)
				return -1;
			algs[n++] = alg;
		}
		s = end ? end + 1 : NULL;
	}
	return n;
}

int native_chap_response(int alg, uint8_t id, const char *secret,
			 const uint8_t *chal, size_t chal_len, uint8_t *out)
{
	if (auth_chap_response(alg, id, secret, strlen(secret), chal, chal_len,
			       out) < 0)
		return -1;
	return (int)auth_chap_digest_len(alg);
}
