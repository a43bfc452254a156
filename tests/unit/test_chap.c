/*
 * The shared CHAP primitives (common/chap.c): algorithm numbers and
 * names, digest lengths, and the response R = H(I || secret || C) of
 * RFC 1994 section 4.1 for each CHAP_A value iSCSI knows (RFC 7143
 * 12.1.3), against known answers.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/chap.h"
#include "tests/unit/harness.h"

static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = 0;

	for (; h[2 * n]; n++) {
		unsigned v;

		sscanf(h + 2 * n, "%2x", &v);
		out[n] = (uint8_t)v;
	}
	return n;
}

START_TEST(alg_numbers_and_lengths)
{
	/* CHAP_A values of the PPP Authentication Algorithms registry. */
	ck_assert_int_eq(CHAP_ALG_MD5, 5);
	ck_assert_int_eq(CHAP_ALG_SHA1, 6);
	ck_assert_int_eq(CHAP_ALG_SHA256, 7);
	ck_assert_int_eq(CHAP_ALG_SHA3_256, 8);
	/* Digest sizes of MD5, SHA-1, SHA-256 and SHA3-256. */
	ck_assert_uint_eq(chap_digest_len(5), 16);
	ck_assert_uint_eq(chap_digest_len(6), 20);
	ck_assert_uint_eq(chap_digest_len(7), 32);
	ck_assert_uint_eq(chap_digest_len(8), 32);
	ck_assert_uint_eq(chap_digest_len(4), 0);
	ck_assert_uint_eq(chap_digest_len(9), 0);
	ck_assert_int_le(32, CHAP_DIGEST_MAX);
	ck_assert_int_eq(CHAP_BINARY_MAX, 1024);
	ck_assert_str_eq(chap_alg_name(5), "MD5");
	ck_assert_str_eq(chap_alg_name(6), "SHA-1");
	ck_assert_str_eq(chap_alg_name(7), "SHA-256");
	ck_assert_str_eq(chap_alg_name(8), "SHA3-256");
	ck_assert_str_eq(chap_alg_name(9), "?");
}
END_TEST

START_TEST(alg_names)
{
	static const struct {
		const char *name;
		int alg;
	} names[] = {
		{ "MD5", 5 }, { "md5", 5 }, { "5", 5 },
		{ "SHA-1", 6 }, { "sha1", 6 }, { "6", 6 },
		{ "SHA-256", 7 }, { "SHA256", 7 }, { "7", 7 },
		{ "SHA3-256", 8 }, { "sha3_256", 8 }, { "SHA3256", 8 },
		{ "8", 8 },
		{ "MD4", -1 }, { "", -1 }, { "05", -1 }, { "SHA-", -1 },
		{ "9", -1 }, { "SHA-2567", -1 },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ck_assert_msg(chap_alg_parse(names[i].name,
					     strlen(names[i].name)) ==
			      names[i].alg, "%s", names[i].name);
	/* Only len bytes count: the name may sit in a longer list. */
	ck_assert_int_eq(chap_alg_parse("MD5,SHA-1", 3), 5);
	ck_assert_int_eq(chap_alg_parse("SHA-1,MD5", 5), 6);
}
END_TEST

/*
 * Known answers: expected = H(id || secret || challenge), computed once
 * with python3 hashlib (hashlib.new(alg, bytes([id]) + secret +
 * challenge).hexdigest()) and checked with `openssl dgst`.
 */
static const struct {
	int alg;
	uint8_t id;
	const char *secret;
	const char *chal_hex;
	const char *want_hex;
} known[] = {
	/* challenge 00 01 02 ... as long as the digest */
	{ 5, 0x2a, "this-is-a-secret", "000102030405060708090a0b0c0d0e0f",
	  "2099bc44fc8f290e6c6d3c7683df20c5" },
	{ 6, 0x2a, "this-is-a-secret",
	  "000102030405060708090a0b0c0d0e0f10111213",
	  "9d3ae62231e9a3522a7e4f6a3ff4d99157184390" },
	{ 7, 0x2a, "this-is-a-secret",
	  "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
	  "88fc7f8d94fa85c2f9535b263079018c4c351f7d008151beb045f58d6317005b" },
	{ 8, 0x2a, "this-is-a-secret",
	  "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
	  "4abe7625a3c441bfd46a4075a9c20a80aef3559719e9e9cdf10433fb572c4c19" },
	/* a 12-byte challenge; the identifier alone changes the answer */
	{ 5, 0x2a, "secret-of-12", "0123456789abcdeffedcba98",
	  "ba0fe01337506461370d8fe3032ccb08" },
	{ 5, 0x2b, "secret-of-12", "0123456789abcdeffedcba98",
	  "949208b8f9a8f4dd8bb8123cb0abfbe1" },
	/* MD5 of the four bytes 00 'a' 'b' 'c' */
	{ 5, 0x00, "ab", "63", "7a3949eab1a4b3609fb05f2699ebeb8f" },
	/* a 48-byte challenge, byte i = i * 37 + 5 */
	{ 7, 200, "0123456789abcdefghij",
	  "052a4f7499bee3082d52779cc1e60b30557a9fc4e90e33587da2c7ec11365b80"
	  "a5caef14395e83a8cdf2173c6186abd0",
	  "e369f6b44aae7cc2dd37de6f23d653bf2cd3ee631a3a638a415a93a2a0ea2b52" },
	{ 6, 200, "0123456789abcdefghij",
	  "052a4f7499bee3082d52779cc1e60b30557a9fc4e90e33587da2c7ec11365b80"
	  "a5caef14395e83a8cdf2173c6186abd0",
	  "84121bc6555953e733b9813ba5f1a70c02d83c5a" },
	{ 8, 200, "0123456789abcdefghij",
	  "052a4f7499bee3082d52779cc1e60b30557a9fc4e90e33587da2c7ec11365b80"
	  "a5caef14395e83a8cdf2173c6186abd0",
	  "47c1c2c3cdde2d4b44d91da9ab5f25d594e5a7ba9a34d4a32566de0d2054c5d5" },
};

START_TEST(response_known_answers)
{
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		uint8_t chal[64], want[CHAP_DIGEST_MAX], got[CHAP_DIGEST_MAX];
		size_t clen = unhex(known[i].chal_hex, chal);
		size_t wlen = unhex(known[i].want_hex, want);

		ck_assert_uint_eq(chap_digest_len(known[i].alg), wlen);
		memset(got, 0, sizeof(got));
		ck_assert_int_eq(chap_response(known[i].alg, known[i].id,
					       known[i].secret,
					       strlen(known[i].secret), chal,
					       clen, got), 0);
		ck_assert_msg(memcmp(got, want, wlen) == 0,
			      "vector %zu (CHAP_A=%d)", i, known[i].alg);
	}
}
END_TEST

START_TEST(response_unknown_alg)
{
	uint8_t out[CHAP_DIGEST_MAX];

	ck_assert_int_eq(chap_response(9, 0, "x", 1, (const uint8_t *)"c", 1,
				       out), -1);
	ck_assert_int_eq(chap_response(4, 0, "x", 1, (const uint8_t *)"c", 1,
				       out), -1);
}
END_TEST

START_TEST(equal_in_constant_time)
{
	uint8_t a[32], b[32];

	memset(a, 7, sizeof(a));
	memcpy(b, a, sizeof(b));
	ck_assert(chap_equal(a, b, 32));
	b[31] ^= 1;
	ck_assert(!chap_equal(a, b, 32));
	b[31] ^= 1;
	b[0] ^= 0x80;
	ck_assert(!chap_equal(a, b, 32));
	ck_assert(chap_equal(a, b + 1, 0));
}
END_TEST

START_TEST(random_and_wipe)
{
	static const uint8_t zero[32];
	uint8_t a[32] = { 0 }, b[32] = { 0 };

	/* Two draws of 256 bits agree with probability 2^-256. */
	ck_assert_int_eq(chap_random(a, sizeof(a)), 0);
	ck_assert_int_eq(chap_random(b, sizeof(b)), 0);
	ck_assert(memcmp(a, zero, sizeof(a)) != 0);
	ck_assert(memcmp(a, b, sizeof(a)) != 0);
	chap_wipe(a, sizeof(a));
	ck_assert_mem_eq(a, zero, sizeof(a));
}
END_TEST

static Suite *chap_suite(void)
{
	Suite *s = suite_create("chap");
	TCase *tc = tcase_create("primitives");

	harness_add(tc, alg_numbers_and_lengths);
	harness_add(tc, alg_names);
	harness_add(tc, response_known_answers);
	harness_add(tc, response_unknown_alg);
	harness_add(tc, equal_in_constant_time);
	harness_add(tc, random_and_wipe);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, chap_suite);
}
