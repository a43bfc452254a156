/* The target's key negotiation engine, driven without a socket. The text
 * codec, the value parsers and the key table have test_login_keys.c. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "target/negotiate.h"
#include "tcq/kv.h"
#include "tcq/login_keys.h"
#include "tests/unit/harness.h"

static struct tcq_settings set;
static struct neg n;
static struct kvbuf rsp;

static void setup(void)
{
	memset(&set, 0, sizeof(set));
	set.max_recv_dsl = 262144;
	set.max_burst = 1048576;
	set.first_burst = 65536;
	set.max_outstanding_r2t = 1;
	set.initial_r2t = true;
	set.immediate_data = true;
	set.header_digest_allowed = true;
	set.data_digest_allowed = true;
	neg_init(&n, &set, NULL, true);
	kvbuf_init(&rsp);
}

static void teardown(void)
{
	kvbuf_free(&rsp);
}

/* Builds "k=v\0k=v\0" from a '|' separated string. */
static size_t mktext(char *out, const char *spec)
{
	size_t l = strlen(spec);

	memcpy(out, spec, l + 1);
	for (size_t i = 0; i < l; i++)
		if (out[i] == '|')
			out[i] = '\0';
	return l + 1;
}

static int run(enum neg_stage st, const char *spec)
{
	char text[4096];
	size_t len = mktext(text, spec);

	return neg_process(&n, st, text, len, &rsp);
}

/* The value the response gives key, or NULL when absent. */
static const char *rsp_get(const char *key)
{
	size_t kl = strlen(key);

	for (size_t off = 0; off < rsp.len;) {
		const char *p = rsp.data + off;

		if (!strncmp(p, key, kl) && p[kl] == '=')
			return p + kl + 1;
		off += strlen(p) + 1;
	}
	return NULL;
}

#define ck_rsp(key, val) do { \
	const char *v_ = rsp_get(key); \
	ck_assert_msg(v_ != NULL, "no %s in response", key); \
	ck_assert_str_eq(v_, val); \
} while (0)

/* ---- key rules ----------------------------------------------------------- */

START_TEST(digest_lists)
{
	ck_assert_int_eq(run(NEG_OPERATIONAL,
			     "HeaderDigest=CRC32C,None|DataDigest=None,CRC32C"),
			 NEG_OK);
	ck_rsp("HeaderDigest", "CRC32C");
	ck_rsp("DataDigest", "None");
	ck_assert(n.p.header_digest);
	ck_assert(!n.p.data_digest);
	/* Digests disallowed by the settings: None wins. */
	set.header_digest_allowed = false;
	neg_init(&n, &set, NULL, true);
	kvbuf_reset(&rsp);
	ck_assert_int_eq(run(NEG_OPERATIONAL, "HeaderDigest=CRC32C,None"), NEG_OK);
	ck_rsp("HeaderDigest", "None");
	ck_assert(!n.p.header_digest);
	/* Nothing we support. */
	neg_init(&n, &set, NULL, true);
	kvbuf_reset(&rsp);
	ck_assert_int_eq(run(NEG_OPERATIONAL, "DataDigest=MD5,SHA1"), NEG_OK);
	ck_rsp("DataDigest", "Reject");
}
END_TEST

START_TEST(numeric_min_max)
{
	ck_assert_int_eq(run(NEG_OPERATIONAL,
			     "MaxBurstLength=2097152|FirstBurstLength=0x8000|"
			     "MaxOutstandingR2T=8|DefaultTime2Wait=0|"
			     "DefaultTime2Retain=60|ErrorRecoveryLevel=2|"
			     "MaxConnections=4"), NEG_OK);
	ck_rsp("MaxBurstLength", "1048576");	/* min with ours */
	ck_rsp("FirstBurstLength", "32768");	/* hex offer, smaller */
	ck_rsp("MaxOutstandingR2T", "1");
	ck_rsp("DefaultTime2Wait", "2");	/* max */
	ck_rsp("DefaultTime2Retain", "20");	/* min */
	ck_rsp("ErrorRecoveryLevel", "0");
	ck_rsp("MaxConnections", "1");
	ck_assert_uint_eq(n.p.max_burst, 1048576);
	ck_assert_uint_eq(n.p.first_burst, 32768);
	ck_assert_uint_eq(n.p.default_time2wait, 2);
	ck_assert_uint_eq(n.p.erl, 0);
}
END_TEST

START_TEST(booleans)
{
	set.initial_r2t = false;
	set.immediate_data = true;
	neg_init(&n, &set, NULL, true);
	ck_assert_int_eq(run(NEG_OPERATIONAL,
			     "InitialR2T=No|ImmediateData=No|"
			     "DataPDUInOrder=No|DataSequenceInOrder=Yes"),
			 NEG_OK);
	ck_rsp("InitialR2T", "No");		/* OR(No, No) */
	ck_rsp("ImmediateData", "No");		/* AND(No, Yes) */
	ck_rsp("DataPDUInOrder", "Yes");	/* OR(No, Yes) */
	ck_rsp("DataSequenceInOrder", "Yes");
	ck_assert(!n.p.initial_r2t);
	ck_assert(!n.p.immediate_data);
	ck_assert(n.p.data_pdu_in_order);
	/* InitialR2T=No against our Yes gives Yes. */
	set.initial_r2t = true;
	neg_init(&n, &set, NULL, true);
	kvbuf_reset(&rsp);
	ck_assert_int_eq(run(NEG_OPERATIONAL, "InitialR2T=No|ImmediateData=Yes"),
			 NEG_OK);
	ck_rsp("InitialR2T", "Yes");
	ck_rsp("ImmediateData", "Yes");
}
END_TEST

START_TEST(bad_values)
{
	ck_assert_int_eq(run(NEG_OPERATIONAL,
			     "MaxBurstLength=lots|FirstBurstLength=511|"
			     "ImmediateData=maybe|MaxOutstandingR2T=0|"
			     "DefaultTime2Wait=3601|ErrorRecoveryLevel=3|"
			     "MaxRecvDataSegmentLength=16777216|"
			     "MaxConnections=-1|DefaultTime2Retain=0x"),
			 NEG_OK);
	ck_rsp("MaxBurstLength", "Reject");
	ck_rsp("FirstBurstLength", "Reject");
	ck_rsp("ImmediateData", "Reject");
	ck_rsp("MaxOutstandingR2T", "Reject");
	ck_rsp("DefaultTime2Wait", "Reject");
	ck_rsp("ErrorRecoveryLevel", "Reject");
	ck_rsp("MaxRecvDataSegmentLength", "Reject");
	ck_rsp("MaxConnections", "Reject");
	ck_rsp("DefaultTime2Retain", "Reject");
	/* Rejected values leave the defaults. */
	ck_assert_uint_eq(n.p.max_burst, 262144);
	ck_assert_uint_eq(n.p.max_send_dsl, 8192);
}
END_TEST

START_TEST(declarative)
{
	ck_assert_int_eq(run(NEG_SECURITY,
			     "InitiatorName=iqn.2024-01.test:init|"
			     "InitiatorAlias=box|SessionType=Normal|"
			     "TargetName=iqn.2024-01.test:tgt"), NEG_OK);
	/* Declarations get no answer. */
	ck_assert_uint_eq(rsp.len, 0);
	ck_assert(n.have_initiator_name && n.have_target_name);
	ck_assert_str_eq(n.initiator_name, "iqn.2024-01.test:init");
	ck_assert_str_eq(n.target_name, "iqn.2024-01.test:tgt");
	ck_assert_str_eq(n.initiator_alias, "box");
	ck_assert_int_eq(n.session_type, NEG_SESS_NORMAL);
	ck_assert_int_eq(run(NEG_OPERATIONAL, "MaxRecvDataSegmentLength=0x10000"),
			 NEG_OK);
	ck_assert_uint_eq(n.p.max_send_dsl, 65536);
	ck_assert_ptr_null(rsp_get("MaxRecvDataSegmentLength"));
}
END_TEST

START_TEST(not_understood_irrelevant)
{
	ck_assert_int_eq(run(NEG_OPERATIONAL,
			     "X-com.example.foo=1|X#bar=2|NoSuchKey=3|"
			     "SendTargets=All|TargetAlias=t|"
			     "TaskReporting=FastAbort,RFC3720|"
			     "iSCSIProtocolLevel=2"), NEG_OK);
	ck_rsp("X-com.example.foo", "NotUnderstood");
	ck_rsp("X#bar", "NotUnderstood");
	ck_rsp("NoSuchKey", "NotUnderstood");
	ck_rsp("SendTargets", "Irrelevant");	/* not in login */
	ck_rsp("TargetAlias", "Irrelevant");	/* target-only key */
	ck_rsp("TaskReporting", "RFC3720");
	ck_rsp("iSCSIProtocolLevel", "1");
	/* Discovery: session-wide data keys are irrelevant. */
	neg_init(&n, &set, NULL, true);
	kvbuf_reset(&rsp);
	ck_assert_int_eq(run(NEG_OPERATIONAL,
			     "MaxBurstLength=4096|SessionType=Discovery|"
			     "InitialR2T=No|HeaderDigest=None"), NEG_OK);
	ck_rsp("MaxBurstLength", "Irrelevant");
	ck_rsp("InitialR2T", "Irrelevant");
	ck_rsp("HeaderDigest", "None");
}
END_TEST

START_TEST(obsolete_markers)
{
	ck_assert_int_eq(run(NEG_OPERATIONAL,
			     "IFMarker=No|OFMarker=Yes|IFMarkInt=2048~8192|"
			     "OFMarkInt=1"), NEG_OK);
	ck_rsp("IFMarker", "Reject");
	ck_rsp("OFMarker", "Reject");
	ck_rsp("IFMarkInt", "Reject");
	ck_rsp("OFMarkInt", "Reject");
}
END_TEST

START_TEST(duplicates)
{
	ck_assert_int_eq(run(NEG_OPERATIONAL, "MaxBurstLength=4096|MaxBurstLength=8192"),
			 NEG_ERR_PROTOCOL);
	ck_assert_ptr_nonnull(n.why);
	/* Across PDUs of one negotiation too. */
	neg_init(&n, &set, NULL, true);
	ck_assert_int_eq(run(NEG_SECURITY, "InitiatorName=iqn.a:b"), NEG_OK);
	ck_assert_int_eq(run(NEG_OPERATIONAL, "InitiatorName=iqn.a:b"),
			 NEG_ERR_PROTOCOL);
	/* Unknown keys are not tracked. */
	neg_init(&n, &set, NULL, true);
	ck_assert_int_eq(run(NEG_OPERATIONAL, "X-a=1|X-a=2"), NEG_OK);
	/* Malformed text is a protocol error. */
	ck_assert_int_eq(run(NEG_OPERATIONAL, "garbage"), NEG_ERR_PROTOCOL);
}
END_TEST

START_TEST(stage_rules)
{
	/* AuthMethod in the operational stage. */
	ck_assert_int_eq(run(NEG_OPERATIONAL, "AuthMethod=None"),
			 NEG_ERR_PROTOCOL);
	neg_init(&n, &set, NULL, true);
	ck_assert_int_eq(run(NEG_SECURITY, "AuthMethod=CHAP,None"), NEG_OK);
	ck_rsp("AuthMethod", "None");
	ck_assert_str_eq(n.auth_method, "None");
	neg_init(&n, &set, NULL, true);
	kvbuf_reset(&rsp);
	ck_assert_int_eq(run(NEG_SECURITY, "AuthMethod=CHAP"), NEG_OK);
	ck_rsp("AuthMethod", "Reject");
	ck_assert(n.auth_rejected);
	/* Leading-only keys on a non-leading connection. */
	neg_init(&n, &set, NULL, false);
	kvbuf_reset(&rsp);
	ck_assert_int_eq(run(NEG_OPERATIONAL, "MaxBurstLength=4096|HeaderDigest=None"),
			 NEG_OK);
	ck_rsp("MaxBurstLength", "Reject");
	ck_rsp("HeaderDigest", "None");
	/* In the full feature phase only ALL/FFP keys. */
	neg_init(&n, &set, NULL, true);
	kvbuf_reset(&rsp);
	ck_assert_int_eq(run(NEG_FFP, "MaxBurstLength=4096|HeaderDigest=None|"
			     "MaxRecvDataSegmentLength=4096|SendTargets=All"),
			 NEG_OK);
	ck_rsp("MaxBurstLength", "Reject");
	ck_rsp("HeaderDigest", "Reject");
	ck_assert_ptr_null(rsp_get("MaxRecvDataSegmentLength"));
	ck_assert(n.mrdsl_changed);
	ck_assert_uint_eq(n.p.max_send_dsl, 4096);
	ck_assert(n.send_targets);
	ck_assert_str_eq(n.send_targets_val, "All");
}
END_TEST

START_TEST(long_values)
{
	char spec[600];

	memcpy(spec, "InitiatorAlias=", 15);
	memset(spec + 15, 'a', 256);
	spec[15 + 256] = '\0';
	ck_assert_int_eq(run(NEG_OPERATIONAL, spec), NEG_OK);
	ck_rsp("InitiatorAlias", "Reject");
	/* Names longer than 223 bytes are rejected too. */
	neg_init(&n, &set, NULL, true);
	kvbuf_reset(&rsp);
	memcpy(spec, "InitiatorName=", 14);
	memset(spec + 14, 'n', 224);
	spec[14 + 224] = '\0';
	ck_assert_int_eq(run(NEG_SECURITY, spec), NEG_OK);
	ck_rsp("InitiatorName", "Reject");
	ck_assert(!n.have_initiator_name);
}
END_TEST

START_TEST(target_offers)
{
	/* Ours differ from the defaults: MaxBurst 1 MiB, ImmediateData No,
	 * MaxOutstandingR2T 4. The initiator offered only MaxBurstLength. */
	set.immediate_data = false;
	set.max_outstanding_r2t = 4;
	neg_init(&n, &set, NULL, true);
	ck_assert_int_eq(run(NEG_OPERATIONAL, "MaxBurstLength=524288"), NEG_OK);
	ck_assert_int_eq(neg_add_offers(&n, NEG_OPERATIONAL, &rsp), NEG_OK);
	ck_rsp("MaxBurstLength", "524288");
	ck_rsp("MaxRecvDataSegmentLength", "262144");	/* always declared */
	ck_rsp("ImmediateData", "No");
	ck_rsp("MaxOutstandingR2T", "4");
	ck_assert_ptr_null(rsp_get("FirstBurstLength"));	/* = default */
	ck_assert_ptr_null(rsp_get("InitialR2T"));
	ck_assert(neg_pending(&n));
	/* The initiator answers; then nothing is pending. */
	kvbuf_reset(&rsp);
	ck_assert_int_eq(run(NEG_OPERATIONAL, "ImmediateData=No|MaxOutstandingR2T=2"),
			 NEG_OK);
	ck_assert_uint_eq(rsp.len, 0);	/* answers are not answered */
	ck_assert(!neg_pending(&n));
	ck_assert(!n.p.immediate_data);
	ck_assert_uint_eq(n.p.max_outstanding_r2t, 2);
	/* The declaration is made once. */
	ck_assert_int_eq(neg_add_offers(&n, NEG_OPERATIONAL, &rsp), NEG_OK);
	ck_assert_ptr_null(rsp_get("MaxRecvDataSegmentLength"));
}
END_TEST

START_TEST(first_burst_clamp)
{
	struct login_params out;

	ck_assert_int_eq(run(NEG_OPERATIONAL,
			     "MaxBurstLength=4096|FirstBurstLength=65536"),
			 NEG_OK);
	neg_result(&n, &out);
	ck_assert_uint_eq(out.max_burst, 4096);
	ck_assert_uint_le(out.first_burst, out.max_burst);
}
END_TEST

static Suite *negotiate_suite(void)
{
	Suite *s = suite_create("negotiate");
	TCase *tc = tcase_create("negotiation");

	tcase_add_checked_fixture(tc, setup, teardown);
	harness_add(tc, digest_lists);
	harness_add(tc, numeric_min_max);
	harness_add(tc, booleans);
	harness_add(tc, bad_values);
	harness_add(tc, declarative);
	harness_add(tc, not_understood_irrelevant);
	harness_add(tc, obsolete_markers);
	harness_add(tc, duplicates);
	harness_add(tc, stage_rules);
	harness_add(tc, long_values);
	harness_add(tc, target_offers);
	harness_add(tc, first_burst_clamp);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, negotiate_suite);
}
