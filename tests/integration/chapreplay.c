/*
 * chapreplay: what a captured CHAP exchange is worth (RFC 7143 12.1.3,
 * RFC 1994): every login gets a fresh challenge, so a CHAP_R recorded in
 * one login is refused (0201h, the connection closed) when replayed in
 * another, and an initiator's CHAP_C equal to the target's own challenge
 * (reflection, mutual CHAP) is refused. A raw login (pdutest) with MD5.
 *
 *   chapreplay -u USER -s SECRET HOST PORT TARGET-IQN [CASE...]
 *   chapreplay --list
 *
 * The target must ask CHAP of USER:SECRET and have a mutual CHAP secret.
 * Exit status: 0 when every case passed, 1 otherwise, 2 on usage errors.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tcq/chap.h"
#include "tcq/iscsi_proto.h"
#include "tcq/kv_value.h"
#include "tcq/pdu.h"
#include "tests/integration/pdutest.h"
#include "tests/integration/ptcase.h"

static const char *chap_user, *chap_secret;

/* One login's CHAP exchange as a wiretap would record it. */
struct chap_rec {
	char i[16];		/* CHAP_I as sent */
	char c[2 * CHAP_BINARY_MAX + 3];	/* CHAP_C as sent */
	char r[2 * CHAP_DIGEST_MAX + 3];	/* our CHAP_R */
};

struct login {
	int fd;
	uint32_t itt;
	uint8_t isid[6];
	int status;		/* class << 8 | detail of the last answer */
	struct pdu_login_rsp rsp;
};

/* One Login Request with keys from stage csg (to the next stage when
 * transit); the answer's text (to free by the caller) in r. 0, or -1
 * when no Login Response came (the connection closed: -2). */
static int exchange_in(struct login *lg, uint8_t csg, bool transit,
		       const char *keys, size_t klen, struct pt_rx *r)
{
	struct pdu_login_req q = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];
	int rc;

	q.transit = transit;
	q.csg = csg;
	q.nsg = !transit ? csg : csg == ISCSI_STAGE_SECURITY ?
		ISCSI_STAGE_OPERATIONAL : ISCSI_STAGE_FULL_FEATURE;
	q.version_max = q.version_min = ISCSI_VERSION;
	memcpy(q.isid, lg->isid, 6);
	q.itt = lg->itt;
	q.cmdsn = 1;
	q.data_len = (uint32_t)klen;
	pdu_encode_login_req(bhs, &q);
	pdu_set_data_len(bhs, (uint32_t)klen);
	if (pt_send_pdu(lg->fd, bhs, keys, (uint32_t)klen) < 0)
		return -2;
	rc = pt_recv_raw(lg->fd, r, pt_now_ms() + 5000);
	if (rc <= 0)
		return rc < 0 ? -2 : -1;
	if (pdu_opcode(r->bhs) != ISCSI_OP_LOGIN_RSP) {
		pt_rx_free(r);
		return -1;
	}
	pdu_decode_login_rsp(r->bhs, &lg->rsp);
	lg->status = lg->rsp.status_class << 8 | lg->rsp.status_detail;
	return 0;
}

/* The same in the security stage. */
static int exchange(struct login *lg, bool transit, const char *keys,
		    size_t klen, struct pt_rx *r)
{
	return exchange_in(lg, ISCSI_STAGE_SECURITY, transit, keys, klen, r) <
		       0 ? -1 : 0;
}

/* Connects and asks for CHAP with MD5 up to the target's challenge,
 * recorded in rec: 0, or -1 (noted). */
static int login_to_challenge(struct login *lg, struct chap_rec *rec)
{
	static uint8_t seq;
	char keys[512];
	size_t n = 0;
	struct pt_rx r;
	const char *i, *c;

	memset(lg, 0, sizeof(*lg));
	lg->fd = pt_tcp_connect();
	if (lg->fd < 0)
		return -1;
	lg->itt = 0x1000;
	memcpy(lg->isid, (uint8_t[]){ 0x80, 0xc4, 0xa9, 0x17,
				      (uint8_t)getpid(), ++seq }, 6);
	n = pt_kv_add(keys, n, sizeof(keys), "InitiatorName", pt_initiator);
	n = pt_kv_add(keys, n, sizeof(keys), "TargetName", pt_target_iqn);
	n = pt_kv_add(keys, n, sizeof(keys), "SessionType", "Normal");
	n = pt_kv_add(keys, n, sizeof(keys), "AuthMethod", "CHAP");
	if (exchange(lg, false, keys, n, &r) < 0) {
		pt_note("AuthMethod=CHAP not answered");
		return -1;
	}
	pt_rx_free(&r);
	if (lg->status) {
		pt_note("AuthMethod=CHAP refused (status %04x)", lg->status);
		return -1;
	}
	n = pt_kv_add(keys, 0, sizeof(keys), "CHAP_A", "5");
	if (exchange(lg, false, keys, n, &r) < 0) {
		pt_note("CHAP_A=5 not answered");
		return -1;
	}
	if (lg->status) {
		pt_note("CHAP_A=5 refused (status %04x)", lg->status);
		pt_rx_free(&r);
		return -1;
	}
	i = pt_kv_find(r.data, r.len, "CHAP_I");
	c = pt_kv_find(r.data, r.len, "CHAP_C");
	if (!i || !c || strlen(i) >= sizeof(rec->i) ||
	    strlen(c) >= sizeof(rec->c)) {
		pt_note("no usable CHAP_I and CHAP_C in the answer");
		pt_rx_free(&r);
		return -1;
	}
	snprintf(rec->i, sizeof(rec->i), "%s", i);
	snprintf(rec->c, sizeof(rec->c), "%s", c);
	pt_rx_free(&r);
	return 0;
}

/* Our right answer to rec's challenge, into rec->r: 0, or -1. */
static int answer(struct chap_rec *rec)
{
	uint8_t chal[CHAP_BINARY_MAX], out[CHAP_DIGEST_MAX];
	long clen = kv_decode_binary(rec->c, chal, sizeof(chal));
	unsigned id;

	if (clen <= 0 || sscanf(rec->i, "%u", &id) != 1 || id > 255 ||
	    chap_response(CHAP_ALG_MD5, (uint8_t)id, chap_secret,
			  strlen(chap_secret), chal, (size_t)clen, out))
		return -1;
	return kv_encode_hex(out, chap_digest_len(CHAP_ALG_MD5), rec->r,
			     sizeof(rec->r));
}

/* Sends CHAP_N and CHAP_R (and CHAP_I, CHAP_C for mutual CHAP when
 * mutual_c): the login's status, or -1 when none came. */
static int send_response(struct login *lg, const char *r_hex,
			 const char *mutual_c)
{
	char keys[2048];
	size_t n = 0;
	struct pt_rx r;

	n = pt_kv_add(keys, n, sizeof(keys), "CHAP_N", chap_user);
	n = pt_kv_add(keys, n, sizeof(keys), "CHAP_R", r_hex);
	if (mutual_c) {
		n = pt_kv_add(keys, n, sizeof(keys), "CHAP_I", "77");
		n = pt_kv_add(keys, n, sizeof(keys), "CHAP_C", mutual_c);
	}
	if (exchange(lg, true, keys, n, &r) < 0)
		return -1;
	pt_rx_free(&r);
	return lg->status;
}

/* A refused login ends the connection (RFC 7143 11.13.5: a status
 * class other than 0 closes it): the next Login Request, one that would
 * go on to the full feature phase after a successful security stage,
 * gets no answer and the connection ends. */
static bool closed_by_target(struct login *lg)
{
	char keys[64];
	size_t n = pt_kv_add(keys, 0, sizeof(keys), "MaxRecvDataSegmentLength",
			     "65536");
	struct pt_rx r;
	int rc = exchange_in(lg, ISCSI_STAGE_OPERATIONAL, true, keys, n, &r);

	if (rc == 0) {
		pt_note("the next Login Request was answered (status %04x)",
			lg->status);
		pt_rx_free(&r);
	}
	return rc == -2;
}

/* A right answer logs in; the exchange recorded in rec. */
static bool record_login(struct chap_rec *rec)
{
	struct login lg;
	int st;

	if (login_to_challenge(&lg, rec) < 0 || answer(rec) < 0) {
		if (lg.fd >= 0)
			close(lg.fd);
		return false;
	}
	st = send_response(&lg, rec->r, NULL);
	close(lg.fd);
	PT_CHECK(st == 0, "the right CHAP_R logs in (status %04x)", st);
	return st == 0;
}

/* Two logins, two challenges: CHAP_C differs, and so the pair (CHAP_I,
 * CHAP_C) (an identifier alone is one byte, so it may repeat). */
static void fresh_challenge_each_login(void)
{
	struct chap_rec a, b;

	if (!record_login(&a) || !record_login(&b))
		return;
	pt_note("login 1: CHAP_I=%s CHAP_C=%s", a.i, a.c);
	pt_note("login 2: CHAP_I=%s CHAP_C=%s", b.i, b.c);
	PT_CHECK(strcmp(a.c, b.c) != 0, "the second login's CHAP_C is new");
	PT_CHECK(strcmp(a.c, b.c) != 0 || strcmp(a.i, b.i) != 0,
		 "the (CHAP_I, CHAP_C) pair is new");
	PT_CHECK(strcmp(a.r, b.r) != 0, "so is the right CHAP_R");
}

/* A CHAP_N/CHAP_R recorded from a good login, replayed in a new one
 * whatever its challenge: 0201h, and the connection closed. */
static void replayed_response_refused(void)
{
	struct chap_rec a, b;
	struct login lg;
	int st;

	if (!record_login(&a))
		return;
	if (login_to_challenge(&lg, &b) < 0) {
		PT_CHECK(false, "the second login reaches its challenge");
		return;
	}
	st = send_response(&lg, a.r, NULL);
	PT_CHECK(st == 0x0201, "the replayed CHAP_R is refused 0201h "
		 "(authentication failure), got %04x", st);
	PT_CHECK(closed_by_target(&lg), "and the target closes");
	close(lg.fd);
}

/* Mutual CHAP with the initiator's challenge equal to the target's own
 * (a reflection, which would make the target compute our answer): 0201h,
 * though CHAP_R is right. */
static void reflected_challenge_refused(void)
{
	struct chap_rec a;
	struct login lg;
	int st;

	if (login_to_challenge(&lg, &a) < 0 || answer(&a) < 0) {
		PT_CHECK(false, "the login reaches its challenge");
		if (lg.fd >= 0)
			close(lg.fd);
		return;
	}
	st = send_response(&lg, a.r, a.c);
	PT_CHECK(st == 0x0201, "CHAP_C equal to the target's challenge is "
		 "refused 0201h, got %04x", st);
	PT_CHECK(closed_by_target(&lg), "and the target closes");
	close(lg.fd);
}

/* The control: the same mutual login with a challenge of our own logs
 * in, so the refusal above is the reflection's. */
static void mutual_with_own_challenge_logs_in(void)
{
	struct chap_rec a;
	struct login lg;
	int st;

	if (login_to_challenge(&lg, &a) < 0 || answer(&a) < 0) {
		PT_CHECK(false, "the login reaches its challenge");
		if (lg.fd >= 0)
			close(lg.fd);
		return;
	}
	st = send_response(&lg, a.r, "0x0123456789abcdef0123456789abcdef");
	PT_CHECK(st == 0, "mutual CHAP with our own challenge logs in "
		 "(status %04x)", st);
	close(lg.fd);
}

static const struct pt_case cases[] = {
	PT_CASE(fresh_challenge_each_login),
	PT_CASE(replayed_response_refused),
	PT_CASE(reflected_challenge_refused),
	PT_CASE(mutual_with_own_challenge_logs_in),
};

int main(int argc, char **argv)
{
	static const char usage[] =
		"chapreplay -u USER -s SECRET HOST PORT TARGET-IQN [CASE...]";
	int ch;

	pt_prog = "chapreplay";
	pt_initiator = "iqn.2026-11.org.tcq:chapreplay";
	if (argc == 2 && !strcmp(argv[1], "--list"))
		return pt_run_cases(1, argv + 1, cases, PT_NCASES(cases),
				    usage);
	while ((ch = getopt(argc, argv, "u:s:")) != -1) {
		switch (ch) {
		case 'u': chap_user = optarg; break;
		case 's': chap_secret = optarg; break;
		default: fprintf(stderr, "usage: %s\n", usage); return 2;
		}
	}
	if (!chap_user || !chap_secret) {
		fprintf(stderr, "usage: %s\n", usage);
		return 2;
	}
	return pt_run_cases(argc - optind, argv + optind, cases,
			    PT_NCASES(cases), usage);
}
