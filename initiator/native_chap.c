/*
 * CHAP for the initiator (RFC 1994 as RFC 7143 12.1.3 uses it; SHA-1,
 * SHA-256 and SHA3-256 per RFC 9653): R = H(id || secret || challenge),
 * through OpenSSL EVP. Binary values travel as 0x hex or 0b base64.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>
#include <stdlib.h>
#include <openssl/evp.h>
#include "initiator/native.h"

static const EVP_MD *chap_md(int alg)
{
	switch (alg) {
	case NATIVE_CHAP_MD5: return EVP_md5();
	case NATIVE_CHAP_SHA1: return EVP_sha1();
	case NATIVE_CHAP_SHA256: return EVP_sha256();
	case NATIVE_CHAP_SHA3_256: return EVP_sha3_256();
	default: return NULL;
	}
}

size_t native_chap_digest_len(int alg)
{
	switch (alg) {
	case NATIVE_CHAP_MD5: return 16;
	case NATIVE_CHAP_SHA1: return 20;
	case NATIVE_CHAP_SHA256: return 32;
	case NATIVE_CHAP_SHA3_256: return 32;
	default: return 0;
	}
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
	     EVP_DigestUpdate(ctx, secret, strlen(secret)) &&
	     EVP_DigestUpdate(ctx, chal, chal_len) &&
	     EVP_DigestFinal_ex(ctx, out, &len);
	EVP_MD_CTX_free(ctx);
	return ok ? (int)len : -1;
}

static int hex_val(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int b64_val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

static int hex_decode(const char *s, uint8_t *out, size_t max)
{
	size_t len = strlen(s), n = 0, i = 0;

	if (len == 0)
		return -1;
	/* An odd digit count means a leading zero nibble. */
	if (len & 1) {
		int v = hex_val((unsigned char)s[0]);

		if (v < 0 || max == 0)
			return -1;
		out[n++] = (uint8_t)v;
		i = 1;
	}
	for (; i < len; i += 2) {
		int hi = hex_val((unsigned char)s[i]);
		int lo = hex_val((unsigned char)s[i + 1]);

		if (hi < 0 || lo < 0 || n == max)
			return -1;
		out[n++] = (uint8_t)(hi << 4 | lo);
	}
	return (int)n;
}

static int b64_decode(const char *s, uint8_t *out, size_t max)
{
	size_t len = strlen(s), n = 0;
	uint32_t acc = 0;
	int bits = 0, pad = 0;

	if (len == 0 || len % 4)
		return -1;
	for (size_t i = 0; i < len; i++) {
		int v;

		if (s[i] == '=') {
			/* Padding only at the end, at most two. */
			if (i < len - 2)
				return -1;
			pad++;
			continue;
		}
		if (pad)
			return -1;
		v = b64_val((unsigned char)s[i]);
		if (v < 0)
			return -1;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == max)
				return -1;
			out[n++] = (uint8_t)(acc >> bits);
		}
	}
	return (int)n;
}

int native_binary_decode(const char *s, uint8_t *out, size_t max)
{
	if (!s || s[0] != '0')
		return -1;
	if (s[1] == 'x' || s[1] == 'X')
		return hex_decode(s + 2, out, max);
	if (s[1] == 'b' || s[1] == 'B')
		return b64_decode(s + 2, out, max);
	return -1;
}

void native_hex_encode(const uint8_t *in, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	*out++ = '0';
	*out++ = 'x';
	for (size_t i = 0; i < len; i++) {
		*out++ = digits[in[i] >> 4];
		*out++ = digits[in[i] & 15];
	}
	*out = '\0';
}
