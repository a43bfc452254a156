/*
 * The login key machinery both sides share: the key table
 * (common/login_keys.c) row by row against RFC 7143, the defaults and
 * result functions built on it, the value parsers (common/kv_value.c)
 * and the key=value text codec (common/kv.c).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/kv.h"
#include "tcq/kv_value.h"
#include "tcq/login_keys.h"
#include "tests/unit/harness.h"

/* ---- the table ----------------------------------------------------------- */

#define I LOGIN_SENT_BY_INITIATOR
#define T LOGIN_SENT_BY_TARGET
#define IT LOGIN_SENT_BY_BOTH
#define CO LOGIN_SCOPE_CONNECTION
#define SW LOGIN_SCOPE_SESSION

/*
 * Written from the key definitions: RFC 7143 13.1-13.21, 13.23, 13.26
 * (obsolete markers), 12.1 (AuthMethod), 12.1.3 (CHAP_*; CHAP_I is a
 * number 0..255), and RFC 7144 for iSCSIProtocolLevel (0..31, default
 * 0, minimum). "Use", "Senders", "Scope", the range, "Default is" and
 * "Irrelevant when: SessionType=Discovery" of each key.
 */
static const struct {
	const char *name;
	enum login_key_kind kind;
	enum login_key_rule rule;
	enum login_key_scope scope;
	enum login_key_use use;
	unsigned senders;
	uint32_t min, max;
	const char *def;
	bool irrelevant_in_discovery;
} rfc[] = {
	{ "HeaderDigest", LOGIN_KIND_LIST, LOGIN_RULE_FIRST_MATCH, CO,
	  LOGIN_USE_IO, IT, 0, 0, "None", false },
	{ "DataDigest", LOGIN_KIND_LIST, LOGIN_RULE_FIRST_MATCH, CO,
	  LOGIN_USE_IO, IT, 0, 0, "None", false },
	{ "MaxConnections", LOGIN_KIND_NUMBER, LOGIN_RULE_MIN, SW,
	  LOGIN_USE_LO, IT, 1, 65535, "1", true },
	{ "SendTargets", LOGIN_KIND_STRING, LOGIN_RULE_DECLARATIVE, SW,
	  LOGIN_USE_FFP, I, 0, 0, NULL, false },
	{ "TargetName", LOGIN_KIND_STRING, LOGIN_RULE_DECLARATIVE, SW,
	  LOGIN_USE_IO, IT, 0, 0, NULL, false },
	{ "InitiatorName", LOGIN_KIND_STRING, LOGIN_RULE_DECLARATIVE, SW,
	  LOGIN_USE_IO, I, 0, 0, NULL, false },
	{ "TargetAlias", LOGIN_KIND_STRING, LOGIN_RULE_DECLARATIVE, SW,
	  LOGIN_USE_ALL, T, 0, 0, NULL, false },
	{ "InitiatorAlias", LOGIN_KIND_STRING, LOGIN_RULE_DECLARATIVE, SW,
	  LOGIN_USE_ALL, I, 0, 0, NULL, false },
	{ "TargetAddress", LOGIN_KIND_STRING, LOGIN_RULE_DECLARATIVE, SW,
	  LOGIN_USE_ALL, T, 0, 0, NULL, false },
	{ "TargetPortalGroupTag", LOGIN_KIND_NUMBER, LOGIN_RULE_DECLARATIVE,
	  SW, LOGIN_USE_IO, T, 0, 65535, NULL, false },
	{ "InitialR2T", LOGIN_KIND_BOOLEAN, LOGIN_RULE_OR, SW, LOGIN_USE_LO,
	  IT, 0, 0, "Yes", true },
	{ "ImmediateData", LOGIN_KIND_BOOLEAN, LOGIN_RULE_AND, SW,
	  LOGIN_USE_LO, IT, 0, 0, "Yes", true },
	{ "MaxRecvDataSegmentLength", LOGIN_KIND_NUMBER,
	  LOGIN_RULE_DECLARATIVE, CO, LOGIN_USE_ALL, IT, 512, 16777215,
	  "8192", false },
	{ "MaxBurstLength", LOGIN_KIND_NUMBER, LOGIN_RULE_MIN, SW,
	  LOGIN_USE_LO, IT, 512, 16777215, "262144", true },
	{ "FirstBurstLength", LOGIN_KIND_NUMBER, LOGIN_RULE_MIN, SW,
	  LOGIN_USE_LO, IT, 512, 16777215, "65536", true },
	{ "DefaultTime2Wait", LOGIN_KIND_NUMBER, LOGIN_RULE_MAX, SW,
	  LOGIN_USE_LO, IT, 0, 3600, "2", false },
	{ "DefaultTime2Retain", LOGIN_KIND_NUMBER, LOGIN_RULE_MIN, SW,
	  LOGIN_USE_LO, IT, 0, 3600, "20", false },
	{ "MaxOutstandingR2T", LOGIN_KIND_NUMBER, LOGIN_RULE_MIN, SW,
	  LOGIN_USE_LO, IT, 1, 65535, "1", true },
	{ "DataPDUInOrder", LOGIN_KIND_BOOLEAN, LOGIN_RULE_OR, SW,
	  LOGIN_USE_LO, IT, 0, 0, "Yes", true },
	{ "DataSequenceInOrder", LOGIN_KIND_BOOLEAN, LOGIN_RULE_OR, SW,
	  LOGIN_USE_LO, IT, 0, 0, "Yes", true },
	{ "ErrorRecoveryLevel", LOGIN_KIND_NUMBER, LOGIN_RULE_MIN, SW,
	  LOGIN_USE_LO, IT, 0, 2, "0", false },
	{ "SessionType", LOGIN_KIND_STRING, LOGIN_RULE_DECLARATIVE, SW,
	  LOGIN_USE_LO, I, 0, 0, "Normal", false },
	{ "AuthMethod", LOGIN_KIND_LIST, LOGIN_RULE_FIRST_MATCH, CO,
	  LOGIN_USE_SECURITY, IT, 0, 0, NULL, false },
	{ "TaskReporting", LOGIN_KIND_LIST, LOGIN_RULE_FIRST_MATCH, SW,
	  LOGIN_USE_LO, IT, 0, 0, "RFC3720", true },
	{ "iSCSIProtocolLevel", LOGIN_KIND_NUMBER, LOGIN_RULE_MIN, SW,
	  LOGIN_USE_IO, IT, 0, 31, "0", false },
	{ "IFMarker", LOGIN_KIND_BOOLEAN, LOGIN_RULE_OBSOLETE, CO,
	  LOGIN_USE_IO, IT, 0, 0, NULL, false },
	{ "OFMarker", LOGIN_KIND_BOOLEAN, LOGIN_RULE_OBSOLETE, CO,
	  LOGIN_USE_IO, IT, 0, 0, NULL, false },
	{ "IFMarkInt", LOGIN_KIND_NUMBER, LOGIN_RULE_OBSOLETE, CO,
	  LOGIN_USE_IO, IT, 0, 0, NULL, false },
	{ "OFMarkInt", LOGIN_KIND_NUMBER, LOGIN_RULE_OBSOLETE, CO,
	  LOGIN_USE_IO, IT, 0, 0, NULL, false },
	{ "CHAP_A", LOGIN_KIND_LIST, LOGIN_RULE_AUTH, CO, LOGIN_USE_SECURITY,
	  IT, 0, 0, NULL, false },
	{ "CHAP_I", LOGIN_KIND_NUMBER, LOGIN_RULE_AUTH, CO,
	  LOGIN_USE_SECURITY, IT, 0, 255, NULL, false },
	{ "CHAP_C", LOGIN_KIND_BINARY, LOGIN_RULE_AUTH, CO,
	  LOGIN_USE_SECURITY, IT, 0, 0, NULL, false },
	{ "CHAP_N", LOGIN_KIND_STRING, LOGIN_RULE_AUTH, CO,
	  LOGIN_USE_SECURITY, IT, 0, 0, NULL, false },
	{ "CHAP_R", LOGIN_KIND_BINARY, LOGIN_RULE_AUTH, CO,
	  LOGIN_USE_SECURITY, IT, 0, 0, NULL, false },
};
#define N_RFC (sizeof(rfc) / sizeof(rfc[0]))

START_TEST(table_matches_rfc)
{
	bool covered[LOGIN_KEY_COUNT] = { false };

	ck_assert_uint_eq(N_RFC, LOGIN_KEY_COUNT);
	for (size_t i = 0; i < N_RFC; i++) {
		int id = login_key_lookup(rfc[i].name);
		const struct login_key *k;

		ck_assert_msg(id >= 0, "%s is not in the table", rfc[i].name);
		ck_assert_msg(!covered[id], "%s twice", rfc[i].name);
		covered[id] = true;
		k = login_key(id);
		ck_assert_str_eq(k->name, rfc[i].name);
		ck_assert_msg(k->kind == rfc[i].kind, "%s kind", k->name);
		ck_assert_msg(k->rule == rfc[i].rule, "%s rule", k->name);
		ck_assert_msg(k->scope == rfc[i].scope, "%s scope", k->name);
		ck_assert_msg(k->use == rfc[i].use, "%s use", k->name);
		ck_assert_msg(k->senders == rfc[i].senders, "%s senders",
			      k->name);
		ck_assert_msg(k->min == rfc[i].min && k->max == rfc[i].max,
			      "%s range %u..%u", k->name, k->min, k->max);
		if (rfc[i].def)
			ck_assert_msg(k->rfc_default &&
				      !strcmp(k->rfc_default, rfc[i].def),
				      "%s default", k->name);
		else
			ck_assert_msg(!k->rfc_default, "%s default", k->name);
		ck_assert_msg(k->irrelevant_in_discovery ==
			      rfc[i].irrelevant_in_discovery,
			      "%s irrelevant in discovery", k->name);
	}
}
END_TEST

START_TEST(lookup_is_exact)
{
	ck_assert_int_eq(login_key_lookup("MaxBurstLength"),
			 LOGIN_KEY_MAX_BURST);
	ck_assert_int_eq(login_key_lookup("maxburstlength"), -1);
	ck_assert_int_eq(login_key_lookup("MaxBurstLength "), -1);
	ck_assert_int_eq(login_key_lookup("X-com.example.foo"), -1);
	ck_assert_int_eq(login_key_lookup(""), -1);
}
END_TEST

/* ---- defaults and result functions --------------------------------------- */

START_TEST(defaults)
{
	struct login_params p;

	ck_assert_uint_eq(login_key_default(LOGIN_KEY_MAX_BURST), 262144);
	ck_assert_uint_eq(login_key_default(LOGIN_KEY_TIME2RETAIN), 20);
	ck_assert_uint_eq(login_key_default(LOGIN_KEY_IMMEDIATE_DATA), 1);
	ck_assert_uint_eq(login_key_default(LOGIN_KEY_TARGET_PORTAL_GROUP_TAG),
			  0);
	login_params_defaults(&p);
	ck_assert_uint_eq(p.max_recv_dsl, 8192);
	ck_assert_uint_eq(p.max_send_dsl, 8192);
	ck_assert_uint_eq(p.max_connections, 1);
	ck_assert_uint_eq(p.max_burst, 262144);
	ck_assert_uint_eq(p.first_burst, 65536);
	ck_assert(p.initial_r2t && p.immediate_data);
	ck_assert_uint_eq(p.default_time2wait, 2);
	ck_assert_uint_eq(p.default_time2retain, 20);
	ck_assert_uint_eq(p.max_outstanding_r2t, 1);
	ck_assert(p.data_pdu_in_order && p.data_sequence_in_order);
	ck_assert_uint_eq(p.erl, 0);
	ck_assert(!p.header_digest && !p.data_digest);
}
END_TEST

START_TEST(result_functions)
{
	/* RFC 7143 6.2.2: Minimum, Maximum, OR, AND. */
	ck_assert_uint_eq(login_key_result_number(LOGIN_RULE_MIN, 8192, 512),
			  512);
	ck_assert_uint_eq(login_key_result_number(LOGIN_RULE_MIN, 3, 7), 3);
	ck_assert_uint_eq(login_key_result_number(LOGIN_RULE_MAX, 2, 20), 20);
	ck_assert_uint_eq(login_key_result_number(LOGIN_RULE_MAX, 9, 0), 9);
	ck_assert(login_key_result_bool(LOGIN_RULE_OR, false, true));
	ck_assert(login_key_result_bool(LOGIN_RULE_OR, true, false));
	ck_assert(!login_key_result_bool(LOGIN_RULE_OR, false, false));
	ck_assert(!login_key_result_bool(LOGIN_RULE_AND, true, false));
	ck_assert(!login_key_result_bool(LOGIN_RULE_AND, false, true));
	ck_assert(login_key_result_bool(LOGIN_RULE_AND, true, true));
}
END_TEST

START_TEST(params_store)
{
	struct login_params p;

	memset(&p, 0, sizeof(p));
	/* The peer's MaxRecvDataSegmentLength limits what we send. */
	ck_assert(login_params_store(&p, LOGIN_KEY_MAX_RECV_DSL, 65536));
	ck_assert_uint_eq(p.max_send_dsl, 65536);
	ck_assert_uint_eq(p.max_recv_dsl, 0);
	ck_assert(login_params_store(&p, LOGIN_KEY_ERROR_RECOVERY_LEVEL, 2));
	ck_assert_uint_eq(p.erl, 2);
	ck_assert(login_params_store(&p, LOGIN_KEY_DATA_DIGEST, 1));
	ck_assert(p.data_digest && !p.header_digest);
	ck_assert(login_params_store(&p, LOGIN_KEY_TIME2WAIT, 3600));
	ck_assert_uint_eq(p.default_time2wait, 3600);
	ck_assert(!login_params_store(&p, LOGIN_KEY_TARGET_PORTAL_GROUP_TAG,
				      1));
	ck_assert(!login_params_store(&p, LOGIN_KEY_PROTOCOL_LEVEL, 1));
}
END_TEST

/* ---- numbers ------------------------------------------------------------ */

/* A numerical-value (RFC 7143 6.1): a decimal constant, or a hex constant
 * after 0x or 0X, below 2^64; base64 is for binary values only. */
static const struct {
	const char *text;
	int rc;
	uint64_t value;
} numbers[] = {
	{ "0", 0, 0 }, { "8192", 0, 8192 }, { "0x2000", 0, 8192 },
	{ "0XfF", 0, 255 }, { "0xABCdef", 0, 0xabcdef },
	{ "18446744073709551615", 0, UINT64_MAX },
	{ "0xffffffffffffffff", 0, UINT64_MAX },
	{ "18446744073709551616", -1, 0 }, { "0x10000000000000000", -1, 0 },
	{ "99999999999999999999999", -1, 0 },
	{ "", -1, 0 }, { "0x", -1, 0 }, { "12a", -1, 0 }, { "0x12g", -1, 0 },
	{ "+1", -1, 0 }, { "-1", -1, 0 }, { "1 ", -1, 0 }, { " 1", -1, 0 },
	{ "0bAQ==", -1, 0 },
};

/* A key's range, here MaxRecvDataSegmentLength's 512..2^24-1, and the
 * small ranges of the initiator's URL (port 1..65535, LUN 0..16383). */
static const struct {
	const char *text;
	uint64_t lo, hi;
	int rc;
	uint64_t value;
} ranged[] = {
	{ "511", 512, 16777215, -1, 0 }, { "512", 512, 16777215, 0, 512 },
	{ "16777215", 512, 16777215, 0, 16777215 },
	{ "16777216", 512, 16777215, -1, 0 },
	{ "0xffffff", 512, 16777215, 0, 16777215 },
	{ "0x1000000", 512, 16777215, -1, 0 },
	{ "8192", 512, 16777215, 0, 8192 },
	{ "0x2000", 0, 1u << 24, 0, 8192 },
	{ "0", 1, 65535, -1, 0 }, { "65535", 1, 65535, 0, 65535 },
	{ "16384", 0, 16383, -1, 0 },
	{ "-1", 0, 10, -1, 0 }, { "11", 0, 10, -1, 0 }, { "1 ", 0, 10, -1, 0 },
	{ "99999999999999999999999", 0, UINT64_MAX, -1, 0 },
};

START_TEST(number_syntax_and_bounds)
{
	uint64_t v;

	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		v = 12345;
		ck_assert_msg(kv_parse_number(numbers[i].text, &v) ==
			      numbers[i].rc, "'%s'", numbers[i].text);
		ck_assert_msg(v == (numbers[i].rc ? 12345 : numbers[i].value),
			      "'%s' read as %llu", numbers[i].text,
			      (unsigned long long)v);
	}
	for (size_t i = 0; i < sizeof(ranged) / sizeof(ranged[0]); i++) {
		v = 12345;
		ck_assert_msg(kv_parse_number_in(ranged[i].text, ranged[i].lo,
						 ranged[i].hi, &v) ==
			      ranged[i].rc, "'%s' in %llu..%llu",
			      ranged[i].text, (unsigned long long)ranged[i].lo,
			      (unsigned long long)ranged[i].hi);
		ck_assert(v == (ranged[i].rc ? 12345 : ranged[i].value));
	}
	ck_assert_int_eq(kv_parse_number(NULL, &v), -1);
	ck_assert_int_eq(kv_parse_number_in(NULL, 0, 10, &v), -1);
}
END_TEST

/* ---- binary values ------------------------------------------------------ */

START_TEST(binary_hex_and_base64)
{
	uint8_t out[16];
	char hex[20];
	static const uint8_t dead[] = { 0xde, 0xad, 0xbe, 0xef, 0x01 };
	static const uint8_t v[] = { 0xde, 0xad, 0x00, 0x0f };

	ck_assert_int_eq(kv_decode_binary("0xdeadbeef01", out, 8), 5);
	ck_assert_mem_eq(out, dead, 5);
	ck_assert_int_eq(kv_decode_binary("0XDEADBEEF01", out, 8), 5);
	ck_assert_mem_eq(out, dead, 5);
	ck_assert_int_eq(kv_decode_binary("0xdeAD000f", out, sizeof(out)), 4);
	ck_assert_mem_eq(out, v, 4);
	/* odd digit count: an implied leading zero */
	ck_assert_int_eq(kv_decode_binary("0xabc", out, 8), 2);
	ck_assert_uint_eq(out[0], 0x0a);
	ck_assert_uint_eq(out[1], 0xbc);
	ck_assert_int_eq(kv_decode_binary("0XF", out, sizeof(out)), 1);
	ck_assert_uint_eq(out[0], 0x0f);
	/* RFC 4648 base64: "3q2+7wE=" is de ad be ef 01 */
	ck_assert_int_eq(kv_decode_binary("0b3q2+7wE=", out, 8), 5);
	ck_assert_mem_eq(out, dead, 5);
	ck_assert_int_eq(kv_decode_binary("0b3q0ADw==", out, sizeof(out)), 4);
	ck_assert_mem_eq(out, v, 4);
	ck_assert_int_eq(kv_decode_binary("0B//4=", out, 8), 2);
	ck_assert_uint_eq(out[0], 0xff);
	ck_assert_uint_eq(out[1], 0xfe);
	ck_assert_int_eq(kv_decode_binary("0BAAEC", out, sizeof(out)), 3);
	/* malformed */
	ck_assert_int_eq(kv_decode_binary("deadbeef", out, 8), -1);
	ck_assert_int_eq(kv_decode_binary("0x", out, 8), -1);
	ck_assert_int_eq(kv_decode_binary("0xzz", out, sizeof(out)), -1);
	ck_assert_int_eq(kv_decode_binary("0xdeadbeeg", out, 8), -1);
	ck_assert_int_eq(kv_decode_binary("0b3q2+7wE", out, 8), -1);
	ck_assert_int_eq(kv_decode_binary("0b3q0AD", out, sizeof(out)), -1);
	ck_assert_int_eq(kv_decode_binary("0b3q2*7wE=", out, 8), -1);
	ck_assert_int_eq(kv_decode_binary("0b3q=ADw==", out, sizeof(out)), -1);
	ck_assert_int_eq(kv_decode_binary("0b//5=", out, 8), -1);
	ck_assert_int_eq(kv_decode_binary(NULL, out, 8), -1);
	/* longer than the buffer */
	ck_assert_int_eq(kv_decode_binary("0x1234", out, 1), -1);
	ck_assert_int_eq(kv_decode_binary("0x001122334455667788", out, 8), -1);
	ck_assert_int_eq(kv_decode_binary("0x0102030405", out, 4), -1);
	/* encoding */
	ck_assert_int_eq(kv_encode_hex(dead, 5, hex, sizeof(hex)), 0);
	ck_assert_str_eq(hex, "0xdeadbeef01");
	ck_assert_int_eq(kv_encode_hex(dead, 5, hex, 12), -1);
	ck_assert_int_eq(kv_encode_hex(v, 4, hex, 2 + 2 * 4 + 1), 0);
	ck_assert_str_eq(hex, "0xdead000f");
}
END_TEST

START_TEST(binary_large)
{
	/* CHAP_C and CHAP_R may be as long as 1024 bytes (RFC 7143 12.1.3). */
	static uint8_t out[1025];
	static char text[2 + 2 * 1025 + 1];

	memcpy(text, "0x", 2);
	for (int i = 0; i < 1024; i++)
		memcpy(text + 2 + 2 * i, "a5", 2);
	text[2 + 2 * 1024] = '\0';
	ck_assert_int_eq(kv_decode_binary(text, out, 1024), 1024);
	ck_assert_uint_eq(out[0], 0xa5);
	ck_assert_uint_eq(out[1023], 0xa5);
	memcpy(text + 2 + 2 * 1024, "a5", 3);
	ck_assert_int_eq(kv_decode_binary(text, out, 1024), -1);
	/* 1023 zero bytes in base64: 341 groups "AAAA" */
	memcpy(text, "0b", 2);
	for (int i = 0; i < 341; i++)
		memcpy(text + 2 + 4 * i, "AAAA", 4);
	text[2 + 4 * 341] = '\0';
	ck_assert_int_eq(kv_decode_binary(text, out, 1024), 1023);
	ck_assert_int_eq(kv_decode_binary(text, out, 1022), -1);
}
END_TEST

/* ---- booleans, refusals, lists ----------------------------------------- */

START_TEST(booleans_and_lists)
{
	char pick[16];
	bool b;

	ck_assert_int_eq(kv_parse_bool("Yes", &b), 0);
	ck_assert(b);
	ck_assert_int_eq(kv_parse_bool("No", &b), 0);
	ck_assert(!b);
	ck_assert_int_eq(kv_parse_bool("yes", &b), -1);
	ck_assert_int_eq(kv_parse_bool("", &b), -1);
	ck_assert_str_eq(kv_bool_text(true), "Yes");
	ck_assert_str_eq(kv_bool_text(false), "No");
	ck_assert(kv_is_refusal("Reject"));
	ck_assert(kv_is_refusal("Irrelevant"));
	ck_assert(kv_is_refusal("NotUnderstood"));
	ck_assert(!kv_is_refusal("None"));
	ck_assert(!kv_is_refusal("reject"));
	/* The responder picks the first offered value it supports. */
	ck_assert(kv_list_pick("CRC32C,None", "None,CRC32C", pick,
			       sizeof(pick)));
	ck_assert_str_eq(pick, "CRC32C");
	ck_assert(kv_list_pick("MD5,None", "CRC32C,None", pick, sizeof(pick)));
	ck_assert_str_eq(pick, "None");
	ck_assert(!kv_list_pick("MD5,SHA1", "CRC32C,None", pick, sizeof(pick)));
	ck_assert(!kv_list_pick("CRC32C", "CRC32C", pick, 6));	/* no room */
	ck_assert(kv_list_has("CHAP,None", "None", 4));
	ck_assert(!kv_list_has("CHAP,None", "Non", 3));
}
END_TEST

/* ---- the text codec ------------------------------------------------------ */

struct collect {
	int n;
	char keys[8][64];
	char vals[8][64];
};

static int collect_fn(void *arg, const char *key, const char *value)
{
	struct collect *c = arg;

	if (c->n < 8) {
		snprintf(c->keys[c->n], 64, "%s", key);
		snprintf(c->vals[c->n], 64, "%s", value);
	}
	c->n++;
	return 0;
}

START_TEST(split_ok)
{
	static const char t[] = "A=1\0Bee=two\0Empty=\0";
	struct collect c = { 0 };
	const char *why;

	ck_assert_int_eq(kv_split(t, sizeof(t) - 1, collect_fn, &c, &why), 0);
	ck_assert_int_eq(c.n, 3);
	ck_assert_str_eq(c.keys[1], "Bee");
	ck_assert_str_eq(c.vals[1], "two");
	ck_assert_str_eq(c.keys[2], "Empty");
	ck_assert_str_eq(c.vals[2], "");
}
END_TEST

START_TEST(split_malformed)
{
	struct collect c = { 0 };
	const char *why = NULL;
	char big[9000];
	char longkey[80];

	/* no '=' */
	ck_assert_int_eq(kv_split("Novalue\0", 8, collect_fn, &c, &why), -1);
	ck_assert_ptr_nonnull(why);
	/* missing NUL at the end */
	ck_assert_int_eq(kv_split("A=1\0B=2", 7, collect_fn, &c, &why), -1);
	/* empty key */
	ck_assert_int_eq(kv_split("=x\0", 3, collect_fn, &c, &why), -1);
	/* key of 64 bytes */
	memset(longkey, 'K', 64);
	memcpy(longkey + 64, "=1", 3);
	ck_assert_int_eq(kv_split(longkey, 67, collect_fn, &c, &why), -1);
	/* value over 8192 */
	memcpy(big, "K=", 2);
	memset(big + 2, 'v', 8193);
	big[8195] = '\0';
	ck_assert_int_eq(kv_split(big, 8196, collect_fn, &c, &why), -1);
	/* bad characters */
	ck_assert_int_eq(kv_split("K y=1\0", 6, collect_fn, &c, &why), -1);
	ck_assert_int_eq(kv_split("K=\x01\0", 4, collect_fn, &c, &why), -1);
	ck_assert_int_eq(c.n, 0);
	/* a key of exactly 63 bytes is fine */
	longkey[63] = '=';
	longkey[64] = '1';
	longkey[65] = '\0';
	ck_assert_int_eq(kv_split(longkey, 66, collect_fn, &c, &why), 0);
	ck_assert_int_eq(c.n, 1);
}
END_TEST

START_TEST(kvbuf_build)
{
	struct kvbuf b;

	kvbuf_init(&b);
	ck_assert_int_eq(kvbuf_add(&b, "A", "x"), 0);
	ck_assert_int_eq(kvbuf_addf(&b, "N", "%u", 512u), 0);
	ck_assert_uint_eq(b.len, 4 + 6);
	ck_assert_mem_eq(b.data, "A=x\0N=512\0", 10);
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(kvbuf_add(&b, "Key", "Value"), 0);
	ck_assert_uint_eq(b.len, 10 + 1000 * 10);
	kvbuf_reset(&b);
	ck_assert_uint_eq(b.len, 0);
	kvbuf_free(&b);
}
END_TEST

static Suite *login_keys_suite(void)
{
	Suite *s = suite_create("login_keys");
	TCase *tc = tcase_create("table");

	harness_add(tc, table_matches_rfc);
	harness_add(tc, lookup_is_exact);
	harness_add(tc, defaults);
	harness_add(tc, result_functions);
	harness_add(tc, params_store);
	suite_add_tcase(s, tc);
	tc = tcase_create("values");
	harness_add(tc, number_syntax_and_bounds);
	harness_add(tc, binary_hex_and_base64);
	harness_add(tc, binary_large);
	harness_add(tc, booleans_and_lists);
	suite_add_tcase(s, tc);
	tc = tcase_create("text");
	harness_add(tc, split_ok);
	harness_add(tc, split_malformed);
	harness_add(tc, kvbuf_build);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, login_keys_suite);
}
