/* Unit tests for the target's CHAP exchange (target/auth.c), access
 * control (target/acl.c) and their configuration. The CHAP primitives
 * have test_chap.c. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tcq/chap.h"
#include "tcq/iscsi_proto.h"
#include "tcq/kv_value.h"
#include "target/acl.h"
#include "target/auth.h"
#include "target/config.h"
#include "tcq/kv.h"
#include "tcq/login_keys.h"
#include "tests/unit/harness.h"

#define SECRET "this-is-a-secret"
#define MSECRET "target-secret-42"
#define IUSER "iqn.2026-11.org.tcq:init"
#define TUSER "iqn.2026-11.org.tcq:target"

static void unhex(const char *h, uint8_t *out)
{
	for (size_t i = 0; h[2 * i]; i++) {
		unsigned v;

		sscanf(h + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
}

/* Value of key in a kvbuf ("k=v\0" pairs), or NULL. */
static const char *kv_get(const struct kvbuf *b, const char *key)
{
	size_t kl = strlen(key);

	for (size_t off = 0; off < b->len; off += strlen(b->data + off) + 1) {
		const char *p = b->data + off;

		if (!strncmp(p, key, kl) && p[kl] == '=')
			return p + kl + 1;
	}
	return NULL;
}

/* ---- configuration of algorithms and credentials ------------------------ */

START_TEST(test_alg_lists)
{
	uint8_t a[CHAP_ALG_COUNT];
	char err[200];

	ck_assert_int_eq(auth_chap_algs_parse("SHA3-256, SHA-256,SHA-1,MD5", a,
					      CHAP_ALG_COUNT, err,
					      sizeof(err)), 4);
	ck_assert_uint_eq(a[0], 8);
	ck_assert_uint_eq(a[1], 7);
	ck_assert_uint_eq(a[2], 6);
	ck_assert_uint_eq(a[3], 5);
	ck_assert_int_eq(auth_chap_algs_parse("md5", a, 4, err, sizeof(err)), 1);
	ck_assert_uint_eq(a[0], 5);
	ck_assert_int_eq(auth_chap_algs_parse("MD5,RC4", a, 4, err,
					      sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "RC4"));
	ck_assert_int_eq(auth_chap_algs_parse("MD5,md5", a, 4, err,
					      sizeof(err)), -1);
	ck_assert_int_eq(auth_chap_algs_parse("", a, 4, err, sizeof(err)), -1);
}
END_TEST

START_TEST(test_cred_parse)
{
	struct auth_cred c;
	char err[200];

	ck_assert_int_eq(auth_cred_parse(IUSER ":" SECRET, &c, err,
					 sizeof(err)), 0);
	ck_assert_str_eq(c.user, IUSER);
	ck_assert_str_eq(c.secret, SECRET);
	ck_assert_int_eq(auth_cred_parse("user:short", &c, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "too short"));
	ck_assert_int_eq(auth_cred_parse("nocolon", &c, err, sizeof(err)), -1);
	ck_assert_int_eq(auth_cred_parse(":" SECRET, &c, err, sizeof(err)), -1);
	ck_assert_int_eq(auth_cred_parse("user:", &c, err, sizeof(err)), -1);
}
END_TEST

/* ---- the exchange -------------------------------------------------------- */

static uint8_t rand_fill;

static int fixed_rand(uint8_t *buf, int n)
{
	for (int i = 0; i < n; i++)
		buf[i] = (uint8_t)(rand_fill + i);
	return 0;
}

static const uint8_t prefs[] = { 8, 7, 6, 5 };

struct ex {
	struct auth_chap_state st;
	struct auth_chap_cfg cfg;
	struct kvbuf rsp;
	uint8_t chal[CHAP_DIGEST_MAX];
	long chal_len;
	unsigned id;
};

static void ex_setup(struct ex *e, bool mutual)
{
	memset(e, 0, sizeof(*e));
	auth_rand_bytes = fixed_rand;
	rand_fill = 0x40;
	auth_chap_init(&e->st);
	kvbuf_init(&e->rsp);
	snprintf(e->cfg.chap.user, sizeof(e->cfg.chap.user), IUSER);
	snprintf(e->cfg.chap.secret, sizeof(e->cfg.chap.secret), SECRET);
	if (mutual) {
		snprintf(e->cfg.mutual.user, sizeof(e->cfg.mutual.user), TUSER);
		snprintf(e->cfg.mutual.secret, sizeof(e->cfg.mutual.secret),
			 MSECRET);
	}
}

/* Sends CHAP_A=offer; checks the chosen algorithm and keeps the challenge. */
static void ex_challenge(struct ex *e, const char *offer, int want_alg)
{
	char num[16];

	auth_chap_key(&e->st, "CHAP_A", offer);
	ck_assert_int_eq(auth_chap_step(&e->st, &e->cfg, prefs, 4, &e->rsp), 0);
	snprintf(num, sizeof(num), "%d", want_alg);
	ck_assert_str_eq(kv_get(&e->rsp, "CHAP_A"), num);
	ck_assert_ptr_nonnull(kv_get(&e->rsp, "CHAP_I"));
	e->id = (unsigned)atoi(kv_get(&e->rsp, "CHAP_I"));
	ck_assert_uint_eq(e->id, 0x40);		/* from fixed_rand */
	e->chal_len = kv_decode_binary(kv_get(&e->rsp, "CHAP_C"), e->chal,
				       sizeof(e->chal));
	ck_assert_int_eq(e->chal_len, (long)chap_digest_len(want_alg));
	kvbuf_reset(&e->rsp);
}

static void ex_respond(struct ex *e, int alg, const char *user,
		       const char *secret)
{
	uint8_t r[CHAP_DIGEST_MAX];
	char hex[2 * CHAP_DIGEST_MAX + 3];

	ck_assert_int_eq(chap_response(alg, (uint8_t)e->id, secret,
				       strlen(secret), e->chal,
				       (size_t)e->chal_len, r), 0);
	kv_encode_hex(r, chap_digest_len(alg), hex, sizeof(hex));
	auth_chap_key(&e->st, "CHAP_N", user);
	auth_chap_key(&e->st, "CHAP_R", hex);
}

START_TEST(test_chap_one_way)
{
	struct ex e;

	ex_setup(&e, false);
	/* The target's preference wins over the initiator's order. */
	ex_challenge(&e, "5,7,6", 7);
	ex_respond(&e, 7, IUSER, SECRET);
	ck_assert_int_eq(auth_chap_step(&e.st, &e.cfg, prefs, 4, &e.rsp), 0);
	ck_assert_int_eq(e.st.phase, CHAP_DONE);
	ck_assert_uint_eq(e.rsp.len, 0);	/* nothing to say back */
	kvbuf_free(&e.rsp);
}
END_TEST

START_TEST(test_chap_each_alg)
{
	static const char *const offers[] = { "5", "6", "7", "8" };

	for (int i = 0; i < 4; i++) {
		struct ex e;

		ex_setup(&e, false);
		ex_challenge(&e, offers[i], 5 + i);
		/* base64 CHAP_R is as good as hex */
		{
			uint8_t r[CHAP_DIGEST_MAX];
			static const char b64[] =
				"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
			char v[64] = "0b";
			size_t n = chap_digest_len(5 + i), o = 2;

			chap_response(5 + i, (uint8_t)e.id, SECRET,
				      strlen(SECRET), e.chal,
				      (size_t)e.chal_len, r);
			for (size_t j = 0; j < n; j += 3) {
				uint32_t w = (uint32_t)r[j] << 16 |
					     (j + 1 < n ? (uint32_t)r[j + 1] << 8 : 0) |
					     (j + 2 < n ? r[j + 2] : 0);

				v[o++] = b64[w >> 18 & 63];
				v[o++] = b64[w >> 12 & 63];
				v[o++] = j + 1 < n ? b64[w >> 6 & 63] : '=';
				v[o++] = j + 2 < n ? b64[w & 63] : '=';
			}
			v[o] = 0;
			auth_chap_key(&e.st, "CHAP_N", IUSER);
			auth_chap_key(&e.st, "CHAP_R", v);
		}
		ck_assert_int_eq(auth_chap_step(&e.st, &e.cfg, prefs, 4,
						&e.rsp), 0);
		ck_assert_int_eq(e.st.phase, CHAP_DONE);
		kvbuf_free(&e.rsp);
	}
}
END_TEST

START_TEST(test_chap_wrong_secret_and_user)
{
	struct ex e;

	ex_setup(&e, false);
	ex_challenge(&e, "5", 5);
	ex_respond(&e, 5, IUSER, "not-the-secret!!");
	ck_assert_int_eq(auth_chap_step(&e.st, &e.cfg, prefs, 4, &e.rsp),
			 ISCSI_LS_AUTH_FAILED);
	ck_assert_str_eq(e.st.why, "wrong CHAP response");
	/* once failed, always failed */
	ck_assert_int_eq(auth_chap_step(&e.st, &e.cfg, prefs, 4, &e.rsp),
			 ISCSI_LS_AUTH_FAILED);
	kvbuf_free(&e.rsp);

	ex_setup(&e, false);
	ex_challenge(&e, "5", 5);
	ex_respond(&e, 5, "iqn.2026-11.org.evil:x", SECRET);
	ck_assert_int_eq(auth_chap_step(&e.st, &e.cfg, prefs, 4, &e.rsp),
			 ISCSI_LS_AUTH_FAILED);
	ck_assert_str_eq(e.st.why, "unknown CHAP user");
	kvbuf_free(&e.rsp);

	/* a response of the wrong length */
	ex_setup(&e, false);
	ex_challenge(&e, "7", 7);
	auth_chap_key(&e.st, "CHAP_N", IUSER);
	auth_chap_key(&e.st, "CHAP_R", "0x0011");
	ck_assert_int_eq(auth_chap_step(&e.st, &e.cfg, prefs, 4, &e.rsp),
			 ISCSI_LS_AUTH_FAILED);
	kvbuf_free(&e.rsp);
}
END_TEST

START_TEST(test_chap_protocol_errors)
{
	struct ex e;

	/* no common algorithm: CHAP_A=Reject and a failure */
	ex_setup(&e, false);
	auth_chap_key(&e.st, "CHAP_A", "1,2,250");
	ck_assert_int_eq(auth_chap_step(&e.st, &e.cfg, prefs, 4, &e.rsp),
			 ISCSI_LS_AUTH_FAILED);
	ck_assert_str_eq(kv_get(&e.rsp, "CHAP_A"), "Reject");
	kvbuf_free(&e.rsp);

	/* only MD5 allowed by the configuration */
	ex_setup(&e, false);
	{
		const uint8_t md5only[] = { 5 };

		auth_chap_key(&e.st, "CHAP_A", "7,8");
		ck_assert_int_eq(auth_chap_step(&e.st, &e.cfg, md5only, 1,
						&e.rsp), ISCSI_LS_AUTH_FAILED);
	}
	kvbuf_free(&e.rsp);

	/* a response before any challenge */
	ex_setup(&e, false);
	auth_chap_key(&e.st, "CHAP_N", IUSER);
	auth_chap_key(&e.st, "CHAP_R", "0x00");
	ck_assert_int_eq(auth_chap_step(&e.st, &e.cfg, prefs, 4, &e.rsp),
			 ISCSI_LS_AUTH_FAILED);
	kvbuf_free(&e.rsp);

	/* a key twice in one text */
	ex_setup(&e, false);
	auth_chap_key(&e.st, "CHAP_A", "5");
	auth_chap_key(&e.st, "CHAP_A", "5");
	ck_assert_int_eq(auth_chap_step(&e.st, &e.cfg, prefs, 4, &e.rsp),
			 ISCSI_LS_AUTH_FAILED);
	kvbuf_free(&e.rsp);

	/* no keys at all: nothing happens yet */
	ex_setup(&e, false);
	ck_assert_int_eq(auth_chap_step(&e.st, &e.cfg, prefs, 4, &e.rsp), 0);
	ck_assert_int_eq(e.st.phase, CHAP_WAIT_A);
	kvbuf_free(&e.rsp);
}
END_TEST

START_TEST(test_chap_mutual)
{
	struct ex e;
	uint8_t ic[16], want[CHAP_DIGEST_MAX], got[CHAP_DIGEST_MAX];
	char hex[40];

	for (int i = 0; i < 16; i++)
		ic[i] = (uint8_t)(0xa0 + i);
	ex_setup(&e, true);
	ex_challenge(&e, "5", 5);
	ex_respond(&e, 5, IUSER, SECRET);
	kv_encode_hex(ic, 16, hex, sizeof(hex));
	auth_chap_key(&e.st, "CHAP_I", "77");
	auth_chap_key(&e.st, "CHAP_C", hex);
	ck_assert_int_eq(auth_chap_step(&e.st, &e.cfg, prefs, 4, &e.rsp), 0);
	ck_assert_str_eq(kv_get(&e.rsp, "CHAP_N"), TUSER);
	ck_assert_int_eq(kv_decode_binary(kv_get(&e.rsp, "CHAP_R"), got,
					  sizeof(got)), 16);
	/* MD5(77 || MSECRET || a0..af), by python3 hashlib and openssl dgst. */
	unhex("c340314483d80e78839eef92a0f816be", want);
	ck_assert_mem_eq(got, want, 16);
	kvbuf_free(&e.rsp);
}
END_TEST

START_TEST(test_chap_reflection)
{
	struct ex e;
	char hex[2 * CHAP_DIGEST_MAX + 3];

	ex_setup(&e, true);
	ex_challenge(&e, "7", 7);
	ex_respond(&e, 7, IUSER, SECRET);
	/* The initiator sends our own challenge back. */
	kv_encode_hex(e.chal, (size_t)e.chal_len, hex, sizeof(hex));
	auth_chap_key(&e.st, "CHAP_I", "1");
	auth_chap_key(&e.st, "CHAP_C", hex);
	ck_assert_int_eq(auth_chap_step(&e.st, &e.cfg, prefs, 4, &e.rsp),
			 ISCSI_LS_AUTH_FAILED);
	ck_assert_str_eq(e.st.why, "reflected CHAP challenge");
	ck_assert_ptr_null(kv_get(&e.rsp, "CHAP_R"));
	kvbuf_free(&e.rsp);

	/* mutual asked, none configured */
	ex_setup(&e, false);
	ex_challenge(&e, "5", 5);
	ex_respond(&e, 5, IUSER, SECRET);
	auth_chap_key(&e.st, "CHAP_I", "1");
	auth_chap_key(&e.st, "CHAP_C", "0x0102030405060708");
	ck_assert_int_eq(auth_chap_step(&e.st, &e.cfg, prefs, 4, &e.rsp),
			 ISCSI_LS_AUTH_FAILED);
	kvbuf_free(&e.rsp);

	/* mutual secret equal to the initiator's */
	ex_setup(&e, true);
	snprintf(e.cfg.mutual.secret, sizeof(e.cfg.mutual.secret), SECRET);
	ex_challenge(&e, "5", 5);
	ex_respond(&e, 5, IUSER, SECRET);
	auth_chap_key(&e.st, "CHAP_I", "1");
	auth_chap_key(&e.st, "CHAP_C", "0x0102030405060708");
	ck_assert_int_eq(auth_chap_step(&e.st, &e.cfg, prefs, 4, &e.rsp),
			 ISCSI_LS_AUTH_FAILED);
	ck_assert_str_eq(e.st.why, "mutual secret equals the initiator's");
	kvbuf_free(&e.rsp);
}
END_TEST

/* ---- ACLs ---------------------------------------------------------------- */

START_TEST(test_acl_names)
{
	ck_assert(acl_name_match("iqn.2026-11.org.tcq:a", "iqn.2026-11.org.tcq:a"));
	ck_assert(acl_name_match("iqn.2026-11.org.tcq:a", "IQN.2026-11.ORG.TCQ:A"));
	ck_assert(!acl_name_match("iqn.2026-11.org.tcq:a", "iqn.2026-11.org.tcq:ab"));
	ck_assert(!acl_name_match("iqn.2026-11.org.tcq:ab", "iqn.2026-11.org.tcq:a"));
	ck_assert(acl_name_match("iqn.2026-11.org.tcq:*", "iqn.2026-11.org.tcq:host7"));
	ck_assert(acl_name_match("iqn.2026-11.org.tcq:*", "iqn.2026-11.org.tcq:"));
	ck_assert(!acl_name_match("iqn.2026-11.org.tcq:*", "iqn.2026-11.org.evil:x"));
	ck_assert(acl_name_match("*:host?", "iqn.2026-11.org.tcq:host7"));
	ck_assert(!acl_name_match("*:host?", "iqn.2026-11.org.tcq:host77"));
	ck_assert(acl_name_match("iqn.*.tcq:*7", "iqn.2026-11.org.tcq:host7"));
	ck_assert(acl_name_match("*", "anything"));
	ck_assert(acl_name_match("a*b*c", "axxbyyc"));
	ck_assert(!acl_name_match("a*b*c", "axxbyy"));
	ck_assert(acl_name_match("**a", "a"));
}
END_TEST

static struct sockaddr_storage sa4(const char *ip)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *s = (struct sockaddr_in *)&ss;

	memset(&ss, 0, sizeof(ss));
	s->sin_family = AF_INET;
	ck_assert_int_eq(inet_pton(AF_INET, ip, &s->sin_addr), 1);
	return ss;
}

static struct sockaddr_storage sa6(const char *ip)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	s->sin6_family = AF_INET6;
	ck_assert_int_eq(inet_pton(AF_INET6, ip, &s->sin6_addr), 1);
	return ss;
}

#define SA(x) ((const struct sockaddr *)&(x))

START_TEST(test_acl_nets)
{
	struct acl_net n;
	struct sockaddr_storage a;
	char err[200];

	ck_assert_int_eq(acl_parse_net("10.1.2.3/8", &n, err, sizeof(err)), 0);
	ck_assert_uint_eq(n.prefix, 8);
	ck_assert_uint_eq(n.addr[1], 0);	/* host bits cleared */
	a = sa4("10.200.0.1");
	ck_assert(acl_net_match(&n, SA(a)));
	a = sa4("11.0.0.1");
	ck_assert(!acl_net_match(&n, SA(a)));
	a = sa6("::ffff:10.9.9.9");		/* v4-mapped */
	ck_assert(acl_net_match(&n, SA(a)));

	ck_assert_int_eq(acl_parse_net("192.168.1.0/23", &n, err, sizeof(err)), 0);
	a = sa4("192.168.0.77");
	ck_assert(acl_net_match(&n, SA(a)));
	a = sa4("192.168.2.1");
	ck_assert(!acl_net_match(&n, SA(a)));

	ck_assert_int_eq(acl_parse_net("127.0.0.1", &n, err, sizeof(err)), 0);
	ck_assert_uint_eq(n.prefix, 32);
	a = sa4("127.0.0.1");
	ck_assert(acl_net_match(&n, SA(a)));
	a = sa4("127.0.0.2");
	ck_assert(!acl_net_match(&n, SA(a)));

	ck_assert_int_eq(acl_parse_net("0.0.0.0/0", &n, err, sizeof(err)), 0);
	a = sa4("203.0.113.9");
	ck_assert(acl_net_match(&n, SA(a)));
	a = sa6("2001:db8::1");
	ck_assert(!acl_net_match(&n, SA(a)));	/* family differs */

	ck_assert_int_eq(acl_parse_net("2001:db8:1::/48", &n, err, sizeof(err)), 0);
	a = sa6("2001:db8:1:ffff::5");
	ck_assert(acl_net_match(&n, SA(a)));
	a = sa6("2001:db8:2::5");
	ck_assert(!acl_net_match(&n, SA(a)));
	a = sa4("10.0.0.1");
	ck_assert(!acl_net_match(&n, SA(a)));

	ck_assert_int_eq(acl_parse_net("fe80::1/127", &n, err, sizeof(err)), 0);
	a = sa6("fe80::0");
	ck_assert(acl_net_match(&n, SA(a)));
	a = sa6("fe80::2");
	ck_assert(!acl_net_match(&n, SA(a)));

	ck_assert_int_eq(acl_parse_net("10.0.0.0/33", &n, err, sizeof(err)), -1);
	ck_assert_int_eq(acl_parse_net("::/129", &n, err, sizeof(err)), -1);
	ck_assert_int_eq(acl_parse_net("10.0.0/8", &n, err, sizeof(err)), -1);
	ck_assert_int_eq(acl_parse_net("10.0.0.0/", &n, err, sizeof(err)), -1);
	ck_assert_int_eq(acl_parse_net("/8", &n, err, sizeof(err)), -1);
	ck_assert_int_eq(acl_parse_net("10.0.0.0/8x", &n, err, sizeof(err)), -1);
	ck_assert_int_eq(acl_parse_net("host.example", &n, err, sizeof(err)), -1);
}
END_TEST

START_TEST(test_acl_allows)
{
	struct acl a, b;
	struct sockaddr_storage lo = sa4("127.0.0.1"), far = sa4("192.0.2.1");
	char err[200];

	acl_init(&a);
	ck_assert(acl_empty(&a));
	ck_assert(acl_allows(&a, "iqn.2026-11.org.x:any", SA(far)));
	ck_assert_int_eq(acl_add_name(&a, "iqn.2026-11.org.tcq:*", err,
				      sizeof(err)), 0);
	ck_assert_int_eq(acl_add_name(&a, "IQN.2026-11.ORG.OTHER:ONE", err,
				      sizeof(err)), 0);
	ck_assert_int_eq(acl_add_name(&a, "bad name", err, sizeof(err)), -1);
	ck_assert(acl_allows(&a, "iqn.2026-11.org.tcq:h1", SA(far)));
	ck_assert(acl_allows(&a, "iqn.2026-11.org.other:one", SA(far)));
	ck_assert(!acl_allows(&a, "iqn.2026-11.org.other:two", SA(far)));
	/* with networks too, both must match */
	ck_assert_int_eq(acl_add_net(&a, "127.0.0.0/8", err, sizeof(err)), 0);
	ck_assert_int_eq(acl_add_net(&a, "::1/128", err, sizeof(err)), 0);
	ck_assert_int_eq(acl_add_net(&a, "nonsense", err, sizeof(err)), -1);
	ck_assert(acl_allows(&a, "iqn.2026-11.org.tcq:h1", SA(lo)));
	ck_assert(!acl_allows(&a, "iqn.2026-11.org.tcq:h1", SA(far)));
	ck_assert(!acl_allows(&a, "iqn.2026-11.org.evil:h1", SA(lo)));
	ck_assert_int_eq(acl_copy(&b, &a), 0);
	acl_free(&a);
	ck_assert(acl_allows(&b, "iqn.2026-11.org.tcq:h1", SA(lo)));
	ck_assert_int_eq(b.nnames, 2);
	ck_assert_int_eq(b.nnets, 2);
	acl_free(&b);
	ck_assert(acl_empty(&b));
}
END_TEST

/* ---- configuration ------------------------------------------------------- */

#define T1 "iqn.2026-11.org.tcq:disk1"

static bool has_msg(const struct cfg *c, const char *needle)
{
	for (int i = 0; i < c->nmsgs; i++)
		if (strstr(c->msgs[i], needle))
			return true;
	return false;
}

START_TEST(test_config_keys)
{
	struct cfg c;
	struct cfg_target *t;

	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "t.conf",
		"[global]\n"
		"max_sessions = 10\n"
		"login_idle_timeout = 3\n"
		"max_pending_logins = 32\n"
		"chap_algorithms = SHA-256, MD5\n"
		"discovery_chap_user = disc\n"
		"discovery_chap_secret = discovery-secret\n"
		"[target " T1 "]\n"
		"chap_user = " IUSER "\n"
		"chap_secret = " SECRET "\n"
		"mutual_chap_user = " TUSER "\n"
		"mutual_chap_secret = " MSECRET "\n"
		"allow_initiator = iqn.2026-11.org.tcq:*\n"
		"allow_initiator = iqn.2026-11.org.other:one\n"
		"allow_network = 127.0.0.0/8\n"
		"allow_network = ::1\n"
		"max_sessions = 4\n"
		"max_sessions_per_initiator = 2\n"
		"[lun " T1 " 0]\n"
		"backend = null\n"
		"size = 1M\n"), 0);
	ck_assert_uint_eq(c.set.max_sessions, 10);
	ck_assert_uint_eq(c.set.login_idle_timeout_s, 3);
	ck_assert_uint_eq(c.set.max_pending_logins, 32);
	ck_assert_uint_eq(c.set.nchap_algs, 2);
	ck_assert_uint_eq(c.set.chap_algs[0], 7);
	ck_assert_uint_eq(c.set.chap_algs[1], 5);
	ck_assert_str_eq(c.set.discovery_chap.chap.user, "disc");
	ck_assert(c.has_secrets);
	t = c.targets[0];
	ck_assert_str_eq(t->chap.chap.user, IUSER);
	ck_assert_str_eq(t->chap.chap.secret, SECRET);
	ck_assert_str_eq(t->chap.mutual.user, TUSER);
	ck_assert_int_eq(t->acl.nnames, 2);
	ck_assert_int_eq(t->acl.nnets, 2);
	ck_assert_uint_eq(t->max_sessions, 4);
	ck_assert_uint_eq(t->max_sessions_per_initiator, 2);
	cfg_free(&c);
}
END_TEST

START_TEST(test_config_refusals)
{
	struct cfg c;

	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "t.conf",
		"[target " T1 "]\n"
		"chap_user = u\n"
		"chap_secret = short\n"
		"[lun " T1 " 0]\nbackend = null\nsize = 1M\n"), -1);
	ck_assert(has_msg(&c, "t.conf:3: bad value for 'chap_secret'"));
	ck_assert(!has_msg(&c, "short\n"));	/* never echoed */
	cfg_free(&c);

	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "t.conf",
		"[target " T1 "]\n"
		"chap_user = u\n"
		"chap_secret = " SECRET "\n"
		"mutual_chap_user = t\n"
		"mutual_chap_secret = " SECRET "\n"
		"[lun " T1 " 0]\nbackend = null\nsize = 1M\n"), -1);
	ck_assert(has_msg(&c, "must differ"));
	cfg_free(&c);

	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "t.conf",
		"[target " T1 "]\n"
		"mutual_chap_user = t\n"
		"mutual_chap_secret = " MSECRET "\n"
		"chap_user = u\n"
		"[lun " T1 " 0]\nbackend = null\nsize = 1M\n"), -1);
	ck_assert(has_msg(&c, "CHAP needs both a user and a secret"));
	ck_assert(has_msg(&c, "mutual CHAP needs (one-way) CHAP too") ||
		  has_msg(&c, "CHAP needs both"));
	cfg_free(&c);

	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "t.conf",
		"[global]\nchap_algorithms = MD4\n"
		"[target " T1 "]\n"
		"allow_network = 10.0.0.0/40\n"
		"allow_initiator = bad name\n"
		"[lun " T1 " 0]\nbackend = null\nsize = 1M\n"), -1);
	ck_assert(has_msg(&c, "t.conf:2:"));
	ck_assert(has_msg(&c, "t.conf:4:"));
	ck_assert(has_msg(&c, "t.conf:5:"));
	cfg_free(&c);
}
END_TEST

START_TEST(test_config_file_mode)
{
	char path[] = "/tmp/tcq-test-auth-XXXXXX";
	int fd = mkstemp(path);
	struct cfg c;
	static const char text[] =
		"[target " T1 "]\n"
		"chap_user = u\n"
		"chap_secret = " SECRET "\n"
		"[lun " T1 " 0]\nbackend = null\nsize = 1M\n";

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, sizeof(text) - 1),
			 (ssize_t)sizeof(text) - 1);
	close(fd);
	chmod(path, 0600);
	cfg_init(&c);
	ck_assert_int_eq(cfg_load_file(&c, path), 0);
	ck_assert(!has_msg(&c, "readable by group or others"));
	cfg_free(&c);
	chmod(path, 0644);
	cfg_init(&c);
	ck_assert_int_eq(cfg_load_file(&c, path), 0);	/* a warning only */
	ck_assert(has_msg(&c, "readable by group or others"));
	cfg_free(&c);
	unlink(path);
}
END_TEST

static Suite *auth_suite(void)
{
	Suite *s = suite_create("auth");
	TCase *tc = tcase_create("core");

	harness_add(tc, test_alg_lists);
	harness_add(tc, test_cred_parse);
	harness_add(tc, test_chap_one_way);
	harness_add(tc, test_chap_each_alg);
	harness_add(tc, test_chap_wrong_secret_and_user);
	harness_add(tc, test_chap_protocol_errors);
	harness_add(tc, test_chap_mutual);
	harness_add(tc, test_chap_reflection);
	harness_add(tc, test_acl_names);
	harness_add(tc, test_acl_nets);
	harness_add(tc, test_acl_allows);
	harness_add(tc, test_config_keys);
	harness_add(tc, test_config_refusals);
	harness_add(tc, test_config_file_mode);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, auth_suite);
}
