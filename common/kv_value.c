/*
 * Key values (RFC 7143 section 6.1): numerical-values, binary values in
 * hex or base64, booleans and lists of values.
 */
#include <string.h>
#include "tcq/kv_value.h"

/* ---- numbers ------------------------------------------------------------ */

int kv_hex_digit(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

int kv_parse_number(const char *s, uint64_t *v)
{
	uint64_t r = 0;
	unsigned base = 10;

	if (!s)
		return -1;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return -1;
	for (; *s; s++) {
		int d = kv_hex_digit((unsigned char)*s);

		if (d < 0 || (unsigned)d >= base)
			return -1;
		if (r > (UINT64_MAX - (uint64_t)d) / base)
			return -1;
		r = r * base + (uint64_t)d;
	}
	*v = r;
	return 0;
}

int kv_parse_number_in(const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	uint64_t r;

	if (kv_parse_number(s, &r) || r < lo || r > hi)
		return -1;
	*v = r;
	return 0;
}

/* ---- binary values ------------------------------------------------------ */

static int b64_digit(int ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	if (ch == '/')
		return 63;
	return -1;
}

static long decode_hex(const char *s, uint8_t *out, size_t max)
{
	size_t nd = strlen(s), n = 0;
	bool odd = nd & 1;	/* an odd count has an implied leading 0 */

	if (nd == 0 || (nd + 1) / 2 > max)
		return -1;
	for (size_t i = 0; i < nd;) {
		int hi = 0, lo;

		if (!(odd && i == 0)) {
			hi = kv_hex_digit((unsigned char)s[i++]);
			if (hi < 0)
				return -1;
		}
		lo = kv_hex_digit((unsigned char)s[i++]);
		if (lo < 0)
			return -1;
		out[n++] = (uint8_t)(hi << 4 | lo);
	}
	return (long)n;
}

static long decode_b64(const char *s, uint8_t *out, size_t max)
{
	size_t len = strlen(s), pad = 0, n = 0;
	uint32_t acc = 0;
	int bits = 0;

	if (len == 0 || len % 4)
		return -1;
	while (pad < 2 && len > pad && s[len - 1 - pad] == '=')
		pad++;
	for (size_t i = 0; i < len - pad; i++) {
		int v = b64_digit((unsigned char)s[i]);

		if (v < 0)
			return -1;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == max)
				return -1;
			out[n++] = (uint8_t)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	/* Leftover bits must be zero (canonical encoding). */
	if (acc)
		return -1;
	return n ? (long)n : -1;
}

long kv_decode_binary(const char *text, uint8_t *out, size_t max)
{
	if (!text || text[0] != '0')
		return -1;
	if (text[1] == 'x' || text[1] == 'X')
		return decode_hex(text + 2, out, max);
	if (text[1] == 'b' || text[1] == 'B')
		return decode_b64(text + 2, out, max);
	return -1;
}

int kv_encode_hex(const uint8_t *in, size_t len, char *out, size_t outsz)
{
	static const char digits[] = "0123456789abcdef";

	if (outsz < 2 * len + 3)
		return -1;
	out[0] = '0';
	out[1] = 'x';
	for (size_t i = 0; i < len; i++) {
		out[2 + 2 * i] = digits[in[i] >> 4];
		out[3 + 2 * i] = digits[in[i] & 15];
	}
	out[2 + 2 * len] = 0;
	return 0;
}

/* ---- booleans, refusals, lists ----------------------------------------- */

int kv_parse_bool(const char *s, bool *b)
{
	if (strcmp(s, "Yes") == 0)
		*b = true;
	else if (strcmp(s, "No") == 0)
		*b = false;
	else
		return -1;
	return 0;
}

const char *kv_bool_text(bool b)
{
	return b ? "Yes" : "No";
}

bool kv_is_refusal(const char *value)
{
	return !strcmp(value, "Reject") || !strcmp(value, "Irrelevant") ||
	       !strcmp(value, "NotUnderstood");
}

bool kv_list_has(const char *list, const char *item, size_t ilen)
{
	const char *p = list;

	while (*p) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l == ilen && memcmp(p, item, l) == 0)
			return true;
		if (!e)
			break;
		p = e + 1;
	}
	return false;
}

bool kv_list_pick(const char *offer, const char *accept, char *out,
		  size_t outsz)
{
	const char *p = offer;

	for (;;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l && l < outsz && kv_list_has(accept, p, l)) {
			memcpy(out, p, l);
			out[l] = '\0';
			return true;
		}
		if (!e)
			return false;
		p = e + 1;
	}
}
