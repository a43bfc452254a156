/*
 * Values of login and text keys (RFC 7143 section 6.1): numbers, binary
 * values, booleans and lists of values, read and written the same way by
 * the target and the initiator.
 */
#ifndef TCQ_KV_VALUE_H
#define TCQ_KV_VALUE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The value of a hex digit (0-9, a-f, A-F), or -1. */
int kv_hex_digit(int ch);
/*
 * A numerical-value: a decimal constant, or a hex constant after 0x or
 * 0X, below 2^64. Leading zeros and signs: "+1" and "-1" are refused,
 * "012" reads as 12. Returns 0, or -1 when malformed or too large.
 */
int kv_parse_number(const char *s, uint64_t *v);
/* The same, and lo <= *v <= hi; NULL s is malformed. */
int kv_parse_number_in(const char *s, uint64_t lo, uint64_t hi,
		       uint64_t *v);

/*
 * A binary value (CHAP_C, CHAP_R, ...): a hex constant (0x/0X; an odd
 * digit count has an implied leading zero) or a base64 constant (0b/0B,
 * RFC 4648 with canonical padding). Returns the decoded length, or -1
 * when malformed, empty or longer than max.
 */
long kv_decode_binary(const char *text, uint8_t *out, size_t max);
/* "0x" + lower-case hex; -1 when out (2 * len + 3 bytes) is too small. */
int kv_encode_hex(const uint8_t *in, size_t len, char *out, size_t outsz);

/* A boolean-value: exactly "Yes" or "No"; -1 otherwise. */
int kv_parse_bool(const char *s, bool *b);
const char *kv_bool_text(bool b);

/* "Reject", "Irrelevant" or "NotUnderstood": the answer refuses the key,
 * and its RFC default stays in force. */
bool kv_is_refusal(const char *value);

/* Does the comma list contain the ilen bytes of item? */
bool kv_list_has(const char *list, const char *item, size_t ilen);
/* The first item of the offered list that accept contains, into out;
 * false when there is none (or it does not fit outsz). */
bool kv_list_pick(const char *offer, const char *accept, char *out,
		  size_t outsz);
#endif
