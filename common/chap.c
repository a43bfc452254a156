/*
 * CHAP primitives (see chap.h), on OpenSSL's EVP digests and RAND.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include "tcq/chap.h"

static const struct {
	int alg;
	const char *name;
	size_t len;
} chap_algs[CHAP_ALG_COUNT] = {
	{ CHAP_ALG_MD5, "MD5", 16 },
	{ CHAP_ALG_SHA1, "SHA-1", 20 },
	{ CHAP_ALG_SHA256, "SHA-256", 32 },
	{ CHAP_ALG_SHA3_256, "SHA3-256", 32 },
};

/* Spellings people write for the same algorithms. */
static const struct {
	const char *name;
	int alg;
} chap_aliases[] = {
	{ "SHA1", CHAP_ALG_SHA1 },
	{ "SHA256", CHAP_ALG_SHA256 },
	{ "SHA3256", CHAP_ALG_SHA3_256 },
	{ "SHA3_256", CHAP_ALG_SHA3_256 },
};

static const EVP_MD *chap_md(int alg)
{
	switch (alg) {
	case CHAP_ALG_MD5: return EVP_md5();
	case CHAP_ALG_SHA1: return EVP_sha1();
	case CHAP_ALG_SHA256: return EVP_sha256();
	case CHAP_ALG_SHA3_256: return EVP_sha3_256();
	}
	return NULL;
}

static bool same_name(const char *want, const char *s, size_t len)
{
	return strlen(want) == len && strncasecmp(want, s, len) == 0;
}

int chap_alg_parse(const char *name, size_t len)
{
	for (size_t i = 0; i < CHAP_ALG_COUNT; i++) {
		char num[4];

		snprintf(num, sizeof(num), "%d", chap_algs[i].alg);
		if (same_name(chap_algs[i].name, name, len) ||
		    same_name(num, name, len))
			return chap_algs[i].alg;
	}
	for (size_t i = 0; i < sizeof(chap_aliases) / sizeof(chap_aliases[0]);
	     i++)
		if (same_name(chap_aliases[i].name, name, len))
			return chap_aliases[i].alg;
	return -1;
}

const char *chap_alg_name(int alg)
{
	for (size_t i = 0; i < CHAP_ALG_COUNT; i++)
		if (chap_algs[i].alg == alg)
			return chap_algs[i].name;
	return "?";
}

size_t chap_digest_len(int alg)
{
	for (size_t i = 0; i < CHAP_ALG_COUNT; i++)
		if (chap_algs[i].alg == alg)
			return chap_algs[i].len;
	return 0;
}

int chap_response(int alg, uint8_t id, const void *secret, size_t slen,
		  const uint8_t *chal, size_t clen, uint8_t *out)
{
	const EVP_MD *md = chap_md(alg);
	EVP_MD_CTX *ctx;
	unsigned int len = 0;
	int ok;

	if (!md)
		return -1;
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -1;
	ok = EVP_DigestInit_ex(ctx, md, NULL) &&
	     EVP_DigestUpdate(ctx, &id, 1) &&
	     EVP_DigestUpdate(ctx, secret, slen) &&
	     EVP_DigestUpdate(ctx, chal, clen) &&
	     EVP_DigestFinal_ex(ctx, out, &len);
	EVP_MD_CTX_free(ctx);
	return ok && len == chap_digest_len(alg) ? 0 : -1;
}

int chap_random(uint8_t *buf, size_t n)
{
	return n <= (size_t)INT32_MAX && RAND_bytes(buf, (int)n) == 1 ? 0 : -1;
}

bool chap_equal(const void *a, const void *b, size_t n)
{
	return CRYPTO_memcmp(a, b, n) == 0;
}

void chap_wipe(void *p, size_t n)
{
	OPENSSL_cleanse(p, n);
}
