/* Unit tests for the native initiator's pure parts: URL parsing, the
 * judging of the target's key answers, its CHAP algorithm list, and a
 * whole login against a scripted target. The shared CHAP digests and
 * value encodings have test_chap.c and test_login_keys.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memmem */
#endif
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include "initiator/native.h"
#include "tcq/kv_value.h"
#include "tcq/pdu.h"
#include "tests/unit/harness.h"

/* ---- URL ---------------------------------------------------------------- */

START_TEST(url_plain)
{
	struct native_url u;
	char err[128];

	ck_assert_int_eq(native_url_parse("iscsi://127.0.0.1:3262/iqn.2026-11.org.tcq:x/3",
					  &u, err, sizeof(err)), 0);
	ck_assert_str_eq(u.host, "127.0.0.1");
	ck_assert_uint_eq(u.port, 3262);
	ck_assert_str_eq(u.target, "iqn.2026-11.org.tcq:x");
	ck_assert_uint_eq(u.lun, 3);
	ck_assert_str_eq(u.user, "");
}
END_TEST

START_TEST(url_default_port_and_creds)
{
	struct native_url u;
	char err[128];

	ck_assert_int_eq(native_url_parse("iscsi://alice%s3cr@t@localhost/iqn.a:b/0",
					  &u, err, sizeof(err)), 0);
	ck_assert_str_eq(u.user, "alice");
	ck_assert_str_eq(u.secret, "s3cr@t");
	ck_assert_str_eq(u.host, "localhost");
	ck_assert_uint_eq(u.port, 3260);
	ck_assert_uint_eq(u.lun, 0);
}
END_TEST

START_TEST(url_ipv6)
{
	struct native_url u;
	char err[128];

	ck_assert_int_eq(native_url_parse("iscsi://[::1]:3300/iqn.x:y/12",
					  &u, err, sizeof(err)), 0);
	ck_assert_str_eq(u.host, "::1");
	ck_assert_uint_eq(u.port, 3300);
	ck_assert_uint_eq(u.lun, 12);
	ck_assert_int_eq(native_url_parse("iscsi://[::1]/iqn.x:y/1",
					  &u, err, sizeof(err)), 0);
	ck_assert_uint_eq(u.port, 3260);
}
END_TEST

START_TEST(url_bad)
{
	static const char *const bad[] = {
		"http://127.0.0.1/iqn.x/1",
		"iscsi://127.0.0.1",
		"iscsi://127.0.0.1/iqn.x",
		"iscsi://127.0.0.1/iqn.x/",
		"iscsi://127.0.0.1/iqn.x/abc",
		"iscsi://127.0.0.1/iqn.x/99999",
		"iscsi://127.0.0.1:0/iqn.x/1",
		"iscsi://127.0.0.1:70000/iqn.x/1",
		"iscsi://127.0.0.1:/iqn.x/1",
		"iscsi://127.0.0.1:12a/iqn.x/1",
		"iscsi://[::1/iqn.x/1",
		"iscsi://[::1]x/iqn.x/1",
		"iscsi:///iqn.x/1",
		"iscsi://h//1",
		"iscsi://user@h/iqn.x/1",
		"iscsi://%pw@h/iqn.x/1",
		"iscsi://h/a/b/1",
		NULL,
	};
	struct native_url u;
	char err[128];

	for (int i = 0; bad[i]; i++) {
		err[0] = '\0';
		ck_assert_msg(native_url_parse(bad[i], &u, err, sizeof(err)) == -1,
			      "accepted %s", bad[i]);
		ck_assert_msg(err[0], "no error text for %s", bad[i]);
	}
	ck_assert_int_eq(native_url_parse(NULL, &u, err, sizeof(err)), -1);
}
END_TEST

/* ---- key answers ---------------------------------------------------------- */

static void neg_setup(struct native_neg *n, bool digests)
{
	struct native_offer o;

	native_offer_defaults(&o);
	o.header_digest = o.data_digest = digests;
	native_neg_init(n, &o);
}

START_TEST(keys_offer_text)
{
	struct native_offer o;
	struct kvbuf b;

	native_offer_defaults(&o);
	o.header_digest = true;
	kvbuf_init(&b);
	ck_assert_int_eq(native_offer_add(&o, &b), 0);
	ck_assert_ptr_nonnull(memmem(b.data, b.len, "HeaderDigest=CRC32C,None\0", 25));
	ck_assert_ptr_nonnull(memmem(b.data, b.len, "DataDigest=None\0", 16));
	ck_assert_ptr_nonnull(memmem(b.data, b.len, "MaxRecvDataSegmentLength=262144\0", 32));
	ck_assert_ptr_nonnull(memmem(b.data, b.len, "InitialR2T=No\0", 14));
	ck_assert_ptr_nonnull(memmem(b.data, b.len, "ImmediateData=Yes\0", 18));
	ck_assert_ptr_nonnull(memmem(b.data, b.len, "MaxConnections=1\0", 17));
	ck_assert_ptr_nonnull(memmem(b.data, b.len, "ErrorRecoveryLevel=0\0", 21));
	kvbuf_free(&b);
}
END_TEST

START_TEST(keys_declarative_and_min)
{
	struct native_neg n;

	neg_setup(&n, true);
	ck_assert_int_eq(native_neg_answer(&n, "MaxRecvDataSegmentLength", "65536"), 0);
	ck_assert_uint_eq(n.p.max_send_dsl, 65536);
	ck_assert_uint_eq(n.p.max_recv_dsl, 262144);	/* ours is unchanged */
	ck_assert_int_eq(native_neg_answer(&n, "MaxBurstLength", "0x40000"), 0);
	ck_assert_uint_eq(n.p.max_burst, 262144);
	ck_assert_int_eq(native_neg_answer(&n, "FirstBurstLength", "524288"), 0);
	ck_assert_int_eq(native_neg_answer(&n, "MaxOutstandingR2T", "2"), 0);
	ck_assert_uint_eq(n.p.max_outstanding_r2t, 2);
	ck_assert_int_eq(native_neg_answer(&n, "DefaultTime2Wait", "2"), 0);
	ck_assert_uint_eq(n.p.default_time2wait, 2);
	ck_assert_int_eq(native_neg_answer(&n, "DefaultTime2Retain", "0"), 0);
	ck_assert_uint_eq(n.p.default_time2retain, 0);
	ck_assert_int_eq(native_neg_answer(&n, "ErrorRecoveryLevel", "0"), 0);
	native_neg_finish(&n);
	/* FirstBurstLength never exceeds MaxBurstLength. */
	ck_assert_uint_eq(n.p.first_burst, 262144);
	native_neg_free(&n);
}
END_TEST

START_TEST(keys_min_violations)
{
	struct native_neg n;

	neg_setup(&n, false);
	ck_assert_int_eq(native_neg_answer(&n, "MaxOutstandingR2T", "5"), -1);
	ck_assert_ptr_nonnull(strstr(n.err, "MaxOutstandingR2T"));
	ck_assert_int_eq(native_neg_answer(&n, "MaxConnections", "2"), -1);
	ck_assert_int_eq(native_neg_answer(&n, "ErrorRecoveryLevel", "1"), -1);
	ck_assert_int_eq(native_neg_answer(&n, "DefaultTime2Retain", "20"), -1);
	ck_assert_int_eq(native_neg_answer(&n, "MaxRecvDataSegmentLength", "511"), -1);
	ck_assert_int_eq(native_neg_answer(&n, "MaxRecvDataSegmentLength", "16777216"), -1);
	ck_assert_int_eq(native_neg_answer(&n, "MaxBurstLength", "lots"), -1);
	ck_assert_int_eq(native_neg_answer(&n, "MaxBurstLength", ""), -1);
	native_neg_free(&n);
}
END_TEST

START_TEST(keys_max_rule)
{
	struct native_neg n;
	struct native_offer o;

	native_offer_defaults(&o);
	o.default_time2wait = 5;
	native_neg_init(&n, &o);
	ck_assert_int_eq(native_neg_answer(&n, "DefaultTime2Wait", "4"), -1);
	ck_assert_int_eq(native_neg_answer(&n, "DefaultTime2Wait", "7"), 0);
	ck_assert_uint_eq(n.p.default_time2wait, 7);
	native_neg_free(&n);
}
END_TEST

START_TEST(keys_boolean)
{
	struct native_neg n;

	neg_setup(&n, false);
	/* InitialR2T: OR, we offered No, the target decides. */
	ck_assert_int_eq(native_neg_answer(&n, "InitialR2T", "Yes"), 0);
	ck_assert(n.p.initial_r2t);
	ck_assert_int_eq(native_neg_answer(&n, "InitialR2T", "No"), 0);
	ck_assert(!n.p.initial_r2t);
	/* ImmediateData: AND, we offered Yes, the target decides. */
	ck_assert_int_eq(native_neg_answer(&n, "ImmediateData", "No"), 0);
	ck_assert(!n.p.immediate_data);
	/* DataPDUInOrder: OR with our Yes must stay Yes. */
	ck_assert_int_eq(native_neg_answer(&n, "DataPDUInOrder", "No"), -1);
	ck_assert_int_eq(native_neg_answer(&n, "DataSequenceInOrder", "Yes"), 0);
	ck_assert_int_eq(native_neg_answer(&n, "ImmediateData", "maybe"), -1);
	native_neg_free(&n);
}
END_TEST

START_TEST(keys_digest)
{
	struct native_neg n;

	neg_setup(&n, true);
	ck_assert_int_eq(native_neg_answer(&n, "HeaderDigest", "CRC32C"), 0);
	ck_assert(n.p.header_digest);
	ck_assert_int_eq(native_neg_answer(&n, "DataDigest", "None"), 0);
	ck_assert(!n.p.data_digest);
	ck_assert_int_eq(native_neg_answer(&n, "DataDigest", "MD5"), -1);
	native_neg_free(&n);

	/* CRC32C when we only offered None is a violation. */
	neg_setup(&n, false);
	ck_assert_int_eq(native_neg_answer(&n, "HeaderDigest", "CRC32C"), -1);
	ck_assert_int_eq(native_neg_answer(&n, "HeaderDigest", "None"), 0);
	native_neg_free(&n);
}
END_TEST

START_TEST(keys_notunderstood_reject_irrelevant)
{
	struct native_neg n;

	neg_setup(&n, true);
	/* The RFC default stays: InitialR2T=Yes, MaxRecvDSL 8192, ... */
	ck_assert_int_eq(native_neg_answer(&n, "InitialR2T", "NotUnderstood"), 0);
	ck_assert(n.p.initial_r2t);
	ck_assert_int_eq(native_neg_answer(&n, "HeaderDigest", "Reject"), 0);
	ck_assert(!n.p.header_digest);
	ck_assert_int_eq(native_neg_answer(&n, "FirstBurstLength", "Irrelevant"), 0);
	ck_assert_uint_eq(n.p.first_burst, 65536);
	ck_assert_int_eq(native_neg_answer(&n, "MaxBurstLength", "Reject"), 0);
	ck_assert_uint_eq(n.p.max_burst, 262144);
	ck_assert_uint_eq(n.p.max_send_dsl, 8192);
	/* Informational declarations need no answer. */
	ck_assert_int_eq(native_neg_answer(&n, "TargetPortalGroupTag", "1"), 0);
	ck_assert_int_eq(n.reply.len, 0);
	/* A key the target proposes that we do not know: NotUnderstood. */
	ck_assert_int_eq(native_neg_answer(&n, "X-com.example.Foo", "bar"), 0);
	ck_assert_int_eq(n.reply.len, strlen("X-com.example.Foo=NotUnderstood") + 1);
	ck_assert_str_eq(n.reply.data, "X-com.example.Foo=NotUnderstood");
	native_neg_free(&n);
}
END_TEST

/* ---- CHAP ------------------------------------------------------------------ */

START_TEST(chap_algs_list)
{
	int algs[NATIVE_CHAP_MAX_ALGS];

	ck_assert_int_eq(native_chap_parse_algs("SHA3-256,SHA-256,SHA-1,MD5", algs, 4), 4);
	ck_assert_int_eq(algs[0], 8);
	ck_assert_int_eq(algs[1], 7);
	ck_assert_int_eq(algs[2], 6);
	ck_assert_int_eq(algs[3], 5);
	ck_assert_int_eq(native_chap_parse_algs("md5", algs, 4), 1);
	ck_assert_int_eq(algs[0], 5);
	ck_assert_int_eq(native_chap_parse_algs("MD5,MD5,7", algs, 4), 2);
	ck_assert_int_eq(algs[1], 7);
	ck_assert_int_eq(native_chap_parse_algs("MD4", algs, 4), -1);
	ck_assert_int_eq(native_chap_parse_algs("MD5,,SHA-1", algs, 4), -1);
}
END_TEST

START_TEST(login_status_text)
{
	ck_assert_str_eq(native_login_status_str(0x0201), "authentication failed");
	ck_assert_str_eq(native_login_status_str(0x0203), "target not found");
	ck_assert_str_eq(native_login_status_str(0x0301), "service unavailable");
	ck_assert_str_eq(native_login_status_str(0x0277), "initiator error");
}
END_TEST


/* ---- login against a scripted fake target (socketpair) ------------------- */

struct fake {
	int fd;
	int mode;		/* 0: CHAP SHA-256 mutual + continuation, 1: not found */
	int failures;		/* checks that failed inside the target thread */
	const uint8_t *isid;	/* the ISID the login must carry, or NULL */
};

static int fake_read(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads one Login Request; its text (NUL-terminated) into text. */
static int fake_recv(struct fake *f, struct pdu_login_req *r, char *text)
{
	uint8_t bhs[ISCSI_BHS_LEN], pad[4];

	if (fake_read(f->fd, bhs, sizeof(bhs)))
		return -1;
	pdu_decode_login_req(bhs, r);
	if (r->data_len > 8192 || fake_read(f->fd, text, r->data_len) ||
	    fake_read(f->fd, pad, pdu_pad(r->data_len)))
		return -1;
	text[r->data_len] = '\0';
	return 0;
}

static void fake_send(struct fake *f, const struct pdu_login_req *q,
		      bool transit, bool cont, uint8_t nsg, uint16_t status,
		      uint16_t tsih, const char *text, size_t len)
{
	struct pdu_login_rsp r;
	uint8_t bhs[ISCSI_BHS_LEN];
	static const uint8_t zero[4];

	memset(&r, 0, sizeof(r));
	r.transit = transit;
	r.cont = cont;
	r.csg = q->csg;
	r.nsg = transit ? nsg : 0;
	r.data_len = (uint32_t)len;
	memcpy(r.isid, q->isid, 6);
	r.tsih = tsih;
	r.itt = q->itt;
	r.statsn = 100;
	r.expcmdsn = q->cmdsn;
	r.maxcmdsn = q->cmdsn + 31;
	r.status_class = (uint8_t)(status >> 8);
	r.status_detail = (uint8_t)status;
	pdu_encode_login_rsp(bhs, &r);
	/* The initiator may have hung up already (a refused login):
	 * no SIGPIPE for that. */
	if (send(f->fd, bhs, sizeof(bhs), MSG_NOSIGNAL) < 0 ||
	    (len && send(f->fd, text, len, MSG_NOSIGNAL) < 0) ||
	    (pdu_pad((uint32_t)len) &&
	     send(f->fd, zero, pdu_pad((uint32_t)len), MSG_NOSIGNAL) < 0))
		f->failures++;
}

/* Value of key in a NUL-separated text of len bytes. */
static const char *kv_get(const char *text, size_t len, const char *key)
{
	size_t kl = strlen(key);

	for (size_t off = 0; off < len; off += strlen(text + off) + 1)
		if (!strncmp(text + off, key, kl) && text[off + kl] == '=')
			return text + off + kl + 1;
	return NULL;
}

#define FAKE_CHECK(f, cond) do { if (!(cond)) { (f)->failures++; \
	fprintf(stderr, "fake target: %s failed\n", #cond); return NULL; } } while (0)

static void *fake_target(void *arg)
{
	struct fake *f = arg;
	struct pdu_login_req q;
	char text[8193], out[512], hex[2 + 64 + 1];
	uint8_t chal[32], buf[1 + 64 + 32], want[32], got[32];
	const char *v;
	int n;

	FAKE_CHECK(f, !fake_recv(f, &q, text));
	/* A login again of the same session: its ISID, TSIH 0. */
	FAKE_CHECK(f, !f->isid || (!memcmp(q.isid, f->isid, 6) && q.tsih == 0));
	if (f->mode == 1) {
		fake_send(f, &q, false, false, 0, 0x0203, 0, NULL, 0);
		return NULL;
	}
	/* Security stage: AuthMethod, then CHAP_A. */
	FAKE_CHECK(f, q.csg == 0 && !q.transit && q.tsih == 0);
	FAKE_CHECK(f, (v = kv_get(text, q.data_len, "AuthMethod")) && !strcmp(v, "CHAP,None"));
	FAKE_CHECK(f, (v = kv_get(text, q.data_len, "TargetName")) && !strcmp(v, "iqn.t:fake"));
	n = snprintf(out, sizeof(out), "AuthMethod=CHAP") + 1;
	fake_send(f, &q, false, false, 0, 0, 0, out, (size_t)n);
	FAKE_CHECK(f, !fake_recv(f, &q, text));
	FAKE_CHECK(f, (v = kv_get(text, q.data_len, "CHAP_A")) && !strcmp(v, "7,5"));
	for (int i = 0; i < 32; i++)
		chal[i] = (uint8_t)(0xa0 + i);
	kv_encode_hex(chal, 32, hex, sizeof(hex));
	n = snprintf(out, sizeof(out), "CHAP_A=7%cCHAP_I=9%cCHAP_C=%s", 0, 0, hex) + 1;
	fake_send(f, &q, false, false, 0, 0, 0, out, (size_t)n);
	/* CHAP_R = SHA-256(9 || "initsecret" || chal), computed here alone. */
	FAKE_CHECK(f, !fake_recv(f, &q, text));
	FAKE_CHECK(f, q.transit && q.nsg == 1);
	FAKE_CHECK(f, (v = kv_get(text, q.data_len, "CHAP_N")) && !strcmp(v, "alice"));
	buf[0] = 9;
	memcpy(buf + 1, "initsecret", 10);
	memcpy(buf + 11, chal, 32);
	EVP_Digest(buf, 43, want, NULL, EVP_sha256(), NULL);
	FAKE_CHECK(f, (v = kv_get(text, q.data_len, "CHAP_R")) &&
		   kv_decode_binary(v, got, sizeof(got)) == 32 &&
		   !memcmp(got, want, 32));
	/* Mutual: answer the initiator's challenge with the target secret. */
	{
		uint8_t ichal[64];
		int il;
		unsigned id;

		FAKE_CHECK(f, (v = kv_get(text, q.data_len, "CHAP_I")) && sscanf(v, "%u", &id) == 1);
		FAKE_CHECK(f, (v = kv_get(text, q.data_len, "CHAP_C")) &&
			   (il = kv_decode_binary(v, ichal, sizeof(ichal))) > 0);
		buf[0] = (uint8_t)id;
		memcpy(buf + 1, "tgtsecret", 9);
		memcpy(buf + 10, ichal, (size_t)il);
		EVP_Digest(buf, 10 + (size_t)il, want, NULL, EVP_sha256(), NULL);
		kv_encode_hex(want, 32, hex, sizeof(hex));
	}
	n = snprintf(out, sizeof(out), "CHAP_N=tgt%cCHAP_R=%s", 0, hex) + 1;
	fake_send(f, &q, true, false, 1, 0, 0, out, (size_t)n);
	/* Operational stage: the answer comes in two PDUs (C bit). */
	FAKE_CHECK(f, !fake_recv(f, &q, text));
	FAKE_CHECK(f, q.csg == 1 && q.transit && q.nsg == 3);
	FAKE_CHECK(f, (v = kv_get(text, q.data_len, "HeaderDigest")) && !strcmp(v, "CRC32C,None"));
	FAKE_CHECK(f, !kv_get(text, q.data_len, "InitiatorName"));
	n = snprintf(out, sizeof(out), "HeaderDigest=CRC32C%cMaxRecvData", 0);
	fake_send(f, &q, false, true, 0, 0, 0, out, (size_t)n);
	FAKE_CHECK(f, !fake_recv(f, &q, text));
	FAKE_CHECK(f, q.data_len == 0 && !q.transit);
	n = snprintf(out, sizeof(out), "SegmentLength=65536%cInitialR2T=Yes%cMaxBurstLength=131072%cX-vendor=1",
		     0, 0, 0) + 1;
	fake_send(f, &q, false, false, 0, 0, 0, out, (size_t)n);
	/* Target kept T=0 and proposed X-vendor: we answer NotUnderstood. */
	FAKE_CHECK(f, !fake_recv(f, &q, text));
	FAKE_CHECK(f, (v = kv_get(text, q.data_len, "X-vendor")) && !strcmp(v, "NotUnderstood"));
	fake_send(f, &q, true, false, 3, 0, 7, NULL, 0);
	return NULL;
}

static int run_fake_login(int mode, const uint8_t *isid,
			  struct native_login_result *res,
			  char *err, size_t errlen, int *failures)
{
	struct native_login_cfg cfg;
	struct fake f;
	pthread_t th;
	int sv[2], rc;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	f.fd = sv[1];
	f.mode = mode;
	f.failures = 0;
	f.isid = isid;
	memset(&cfg, 0, sizeof(cfg));
	cfg.isid = isid;
	cfg.initiator_name = "iqn.i:test";
	cfg.target_name = "iqn.t:fake";
	cfg.chap_user = "alice";
	cfg.chap_secret = "initsecret";
	cfg.mutual_user = "tgt";
	cfg.mutual_secret = "tgtsecret";
	cfg.chap_algs[0] = CHAP_ALG_SHA256;
	cfg.chap_algs[1] = CHAP_ALG_MD5;
	cfg.n_chap_algs = 2;
	native_offer_defaults(&cfg.offer);
	cfg.offer.header_digest = true;
	cfg.timeout_ms = 5000;
	ck_assert_int_eq(pthread_create(&th, NULL, fake_target, &f), 0);
	rc = native_login(sv[0], &cfg, res, err, errlen);
	close(sv[0]);
	pthread_join(th, NULL);
	close(sv[1]);
	*failures = f.failures;
	return rc;
}

START_TEST(login_chap_mutual_continuation)
{
	struct native_login_result res;
	char err[256] = "";
	int failures;

	ck_assert_msg(run_fake_login(0, NULL, &res, err, sizeof(err), &failures) == 0,
		      "login failed: %s", err);
	ck_assert_int_eq(failures, 0);
	ck_assert_uint_eq(res.tsih, 7);
	ck_assert(res.p.header_digest);
	ck_assert(!res.p.data_digest);
	ck_assert_uint_eq(res.p.max_send_dsl, 65536);
	ck_assert_uint_eq(res.p.max_burst, 131072);
	ck_assert(res.p.initial_r2t);
	ck_assert_uint_eq(res.exp_statsn, 101);
	ck_assert_uint_eq(res.max_cmdsn, res.cmdsn + 31);
}
END_TEST

/* --reconnect logs in with the ISID of the lost session (reinstatement). */
START_TEST(login_again_with_the_same_isid)
{
	static const uint8_t isid[6] = { 0x80, 0x12, 0x34, 0x56, 0x78, 0x9a };
	struct native_login_result res;
	char err[256] = "";
	int failures;

	ck_assert_msg(run_fake_login(0, isid, &res, err, sizeof(err),
				     &failures) == 0, "login failed: %s", err);
	ck_assert_int_eq(failures, 0);
	ck_assert_mem_eq(res.isid, isid, 6);
	ck_assert_uint_eq(res.tsih, 7);
}
END_TEST

START_TEST(login_status_error)
{
	struct native_login_result res;
	char err[256] = "";
	int failures;

	ck_assert_int_eq(run_fake_login(1, NULL, &res, err, sizeof(err), &failures), -1);
	ck_assert_int_eq(failures, 0);
	ck_assert_msg(strstr(err, "target not found") != NULL, "error: %s", err);
}
END_TEST

static Suite *native_suite(void)
{
	Suite *s = suite_create("native");
	TCase *t = tcase_create("url");

	harness_add(t, url_plain);
	harness_add(t, url_default_port_and_creds);
	harness_add(t, url_ipv6);
	harness_add(t, url_bad);
	suite_add_tcase(s, t);
	t = tcase_create("keys");
	harness_add(t, keys_offer_text);
	harness_add(t, keys_declarative_and_min);
	harness_add(t, keys_min_violations);
	harness_add(t, keys_max_rule);
	harness_add(t, keys_boolean);
	harness_add(t, keys_digest);
	harness_add(t, keys_notunderstood_reject_irrelevant);
	harness_add(t, login_status_text);
	suite_add_tcase(s, t);
	t = tcase_create("chap");
	harness_add(t, chap_algs_list);
	suite_add_tcase(s, t);
	t = tcase_create("login");
	harness_add(t, login_chap_mutual_continuation);
	harness_add(t, login_status_error);
	harness_add(t, login_again_with_the_same_isid);
	suite_add_tcase(s, t);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, native_suite);
}
