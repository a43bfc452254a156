/*
 * cvepdu: the iSCSI-level inputs behind published CVEs of other targets
 * (LIO, tgt), sent raw to tcqd: over-long and unterminated login text,
 * a login full of unknown keys, an over-long CHAP_R in hex and base64, a
 * login PDU declaring a huge data segment, data right after a login PDU,
 * an ABORT TASK the transport answers itself followed by a LUN RESET,
 * and logouts racing READs in flight. Each case checks the answer
 * RFC 7143 gives and that tcqd then serves a clean session.
 * docs/security.md maps each case to its CVE.
 *
 *   cvepdu [-u USER -s SECRET] HOST PORT TARGET-IQN [CASE...]
 *   cvepdu --list
 *
 * The CHAP cases need a target that asks CHAP of USER:SECRET; the
 * others a target without CHAP. Exit status: 0 when every case passed,
 * 1 otherwise, 2 on usage errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcq/chap.h"
#include "tcq/iscsi_proto.h"
#include "tcq/kv_value.h"
#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"
#include "tests/integration/pdutest.h"
#include "tests/integration/ptcase.h"
#include "tests/integration/ptcmd.h"

#define LOGIN_MAX 8192		/* RFC 7143 13.12: MaxRecvDataSegmentLength
				 * until declared, so during the login */

static const char *chap_user, *chap_secret;

/* ---- a raw login ---------------------------------------------------- */

struct rl {
	int fd;
	uint8_t isid[6];
	uint8_t csg;
	struct pdu_login_rsp rsp;
	int status;		/* class << 8 | detail of the last answer */
};

static int rl_open(struct rl *l, uint8_t csg)
{
	static uint8_t seq;

	memset(l, 0, sizeof(*l));
	memcpy(l->isid, (uint8_t[]){ 0x80, 0x3c, 0x7e, 0x29,
				     (uint8_t)getpid(), ++seq }, 6);
	l->csg = csg;
	l->fd = pt_tcp_connect();
	if (l->fd < 0)
		PT_CHECK(0, "connect");
	return l->fd < 0 ? -1 : 0;
}

/* The Login Request header of l: transit to the next stage or not. */
static void rl_bhs(const struct rl *l, uint8_t *bhs, bool transit, bool cont,
		   uint32_t len)
{
	struct pdu_login_req q = { 0 };

	q.transit = transit;
	q.cont = cont;
	q.csg = l->csg;
	q.nsg = !transit ? 0 : l->csg == ISCSI_STAGE_SECURITY ?
		ISCSI_STAGE_OPERATIONAL : ISCSI_STAGE_FULL_FEATURE;
	q.version_max = q.version_min = ISCSI_VERSION;
	memcpy(q.isid, l->isid, 6);
	q.itt = 0x2000;
	q.cmdsn = 1;
	q.data_len = len;
	pdu_encode_login_req(bhs, &q);
	pdu_set_data_len(bhs, len);
}

/* One Login Request and its answer in r: 1 a Login Response (l->rsp,
 * l->status), 0 none in 5 s, -1 the connection closed, -2 another PDU. */
static int rl_exchange(struct rl *l, bool transit, const void *text,
		       uint32_t len, struct pt_rx *r)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	int rc;

	rl_bhs(l, bhs, transit, false, len);
	if (pt_send_pdu(l->fd, bhs, text, len) < 0)
		return -1;
	rc = pt_recv_raw(l->fd, r, pt_now_ms() + 5000);
	if (rc <= 0)
		return rc;
	if (pdu_opcode(r->bhs) != ISCSI_OP_LOGIN_RSP) {
		pt_note("answered with opcode 0x%02x", pdu_opcode(r->bhs));
		pt_rx_free(r);
		return -2;
	}
	pdu_decode_login_rsp(r->bhs, &l->rsp);
	l->status = l->rsp.status_class << 8 | l->rsp.status_detail;
	return 1;
}

/* The keys every leading login carries. */
static size_t base_keys(char *buf, size_t cap, bool chap)
{
	size_t n = 0;

	n = pt_kv_add(buf, n, cap, "InitiatorName", pt_initiator);
	n = pt_kv_add(buf, n, cap, "TargetName", pt_target_iqn);
	n = pt_kv_add(buf, n, cap, "SessionType", "Normal");
	if (chap)
		n = pt_kv_add(buf, n, cap, "AuthMethod", "CHAP");
	return n;
}

/* The target refuses with status want and ends the connection (RFC 7143
 * 11.13.5: a status class other than 0 closes it). */
static void refused_and_closed(struct rl *l, int rc, int want,
			       const char *what)
{
	struct pt_rx r;

	PT_CHECK(rc == 1 && l->status == want,
		 "%s: refused with login status %04x (got %s %04x)", what,
		 want, rc == 1 ? "status" : "no answer", rc == 1 ? l->status : 0);
	PT_CHECK(pt_recv_raw(l->fd, &r, pt_now_ms() + 5000) < 0,
		 "%s: then the target closes the connection", what);
	close(l->fd);
}

/* The target still serves a clean session. */
static void still_serving(const char *after)
{
	struct pt_sess s;

	if (pt_login(&s, NULL) < 0) {
		PT_CHECK(0, "a login after %s", after);
		return;
	}
	PT_CHECK(pt_tur(&s) == SAM_STAT_GOOD,
		 "after %s, a new session serves TEST UNIT READY", after);
	pt_logout(&s);
}

/* ---- login text ----------------------------------------------------- */

/*
 * CVE-2013-2850 (LIO): a key longer than 63 bytes was copied whole into
 * a fixed NotUnderstood answer. RFC 7143 6.1 caps key names at 63 bytes,
 * so a longer one is a malformed text: initiator error (0200h). A key of
 * exactly 63 bytes is legal and unknown: NotUnderstood (RFC 7143 6.2).
 */
static void cve_2013_2850_key_over_63_bytes_refused_0200(void)
{
	char text[1024], key[300];
	struct pt_rx r;
	struct rl l;
	size_t n;
	int rc;

	memset(key, 'K', 63);
	key[63] = 0;
	if (rl_open(&l, ISCSI_STAGE_OPERATIONAL) < 0)
		return;
	n = base_keys(text, sizeof(text), false);
	n = pt_kv_add(text, n, sizeof(text), key, "1");
	rc = rl_exchange(&l, true, text, (uint32_t)n, &r);
	PT_CHECK(rc == 1 && l.status == 0, "a 63-byte unknown key: login goes on");
	if (rc == 1) {
		const char *v = pt_kv_find(r.data, r.len, key);

		PT_CHECK(v && !strcmp(v, "NotUnderstood"),
			 "the 63-byte key is answered NotUnderstood");
		pt_rx_free(&r);
	}
	close(l.fd);

	memset(key, 'K', 299);
	key[299] = 0;
	if (rl_open(&l, ISCSI_STAGE_OPERATIONAL) < 0)
		return;
	n = base_keys(text, sizeof(text), false);
	n = pt_kv_add(text, n, sizeof(text), key, "1");
	rc = rl_exchange(&l, true, text, (uint32_t)n, &r);
	if (rc == 1) {
		PT_CHECK(r.len < strlen(key),
			 "the answer (%u bytes) cannot echo the long key",
			 r.len);
		pt_rx_free(&r);
	}
	refused_and_closed(&l, rc, ISCSI_LS_INIT_ERR, "a 299-byte key");
	still_serving("a 299-byte key");
}

/* A login text of exactly LOGIN_MAX bytes whose last pair is a long
 * unknown key's value; terminated or not. */
static size_t full_text(char *text, bool terminated)
{
	size_t n = base_keys(text, LOGIN_MAX, false);

	memcpy(text + n, "Zpad=", 5);
	memset(text + n + 5, 'a', LOGIN_MAX - n - 5);
	if (terminated)
		text[LOGIN_MAX - 1] = 0;
	return LOGIN_MAX;
}

/*
 * CVE-2026-90011 (LIO): a login data segment that fills the whole 8192
 * bytes left no room for a terminator, and the text was then read as a C
 * string. RFC 7143 6.1: every key=value ends with a NUL, so a text that
 * does not is malformed (0200h). The same text ending with a NUL is a
 * good login with one unknown key.
 */
static void cve_2026_90011_login_text_without_nul_refused_0200(void)
{
	static char text[LOGIN_MAX];
	struct pt_rx r;
	struct rl l;
	int rc;

	if (rl_open(&l, ISCSI_STAGE_OPERATIONAL) < 0)
		return;
	rc = rl_exchange(&l, true, text, (uint32_t)full_text(text, true), &r);
	PT_CHECK(rc == 1 && l.status == 0,
		 "8192 bytes ending with a NUL: login goes on (%04x)", l.status);
	if (rc == 1) {
		const char *v = pt_kv_find(r.data, r.len, "Zpad");

		PT_CHECK(v && !strcmp(v, "NotUnderstood"),
			 "its unknown key is answered NotUnderstood");
		pt_rx_free(&r);
	}
	close(l.fd);

	if (rl_open(&l, ISCSI_STAGE_OPERATIONAL) < 0)
		return;
	rc = rl_exchange(&l, true, text, (uint32_t)full_text(text, false), &r);
	if (rc == 1)
		pt_rx_free(&r);
	refused_and_closed(&l, rc, ISCSI_LS_INIT_ERR,
			   "8192 bytes without a final NUL");
	still_serving("an unterminated login text");
}

/*
 * CVE-2026-63887 (LIO): every unknown key adds a "key=NotUnderstood"
 * answer, and 8192 bytes of short unknown keys made an answer larger than
 * the buffer it was written into. tcqd must answer each of them (RFC 7143
 * 6.2) and send an answer longer than 8192 bytes in pieces, C bit set on
 * all but the last, each fetched with an empty Login Request (RFC 7143
 * 11.12.2, the C bit).
 */
static void cve_2026_63887_many_unknown_keys_each_not_understood(void)
{
	static char text[LOGIN_MAX], got[64 * 1024];
	size_t n, glen = 0;
	unsigned keys = 0, answered = 0, pieces = 0;
	struct pt_rx r;
	struct rl l;
	int rc;

	n = base_keys(text, sizeof(text), false);
	for (;;) {
		char k[16];
		size_t m;

		snprintf(k, sizeof(k), "Zk%04u", keys);
		m = pt_kv_add(text, n, sizeof(text), k, "1");
		if (m == n)
			break;
		n = m;
		keys++;
	}
	if (rl_open(&l, ISCSI_STAGE_OPERATIONAL) < 0)
		return;
	pt_note("%u unknown keys in %zu bytes", keys, n);
	rc = rl_exchange(&l, true, text, (uint32_t)n, &r);
	while (rc == 1 && l.status == 0 && pieces < 16) {
		pieces++;
		PT_CHECK(r.len <= LOGIN_MAX,
			 "piece %u: %u bytes, within 8192", pieces, r.len);
		if (r.len && glen + r.len <= sizeof(got)) {
			memcpy(got + glen, r.data, r.len);
			glen += r.len;
		}
		pt_rx_free(&r);
		if (!l.rsp.cont)
			break;
		rc = rl_exchange(&l, false, NULL, 0, &r);
	}
	PT_CHECK(rc == 1 && l.status == 0 && !l.rsp.cont,
		 "the login is answered in full (status %04x)", l.status);
	PT_CHECK(pieces > 1, "the answer came in %u pieces (C bit)", pieces);
	for (unsigned i = 0; i < keys; i++) {
		char k[16];
		const char *v;

		snprintf(k, sizeof(k), "Zk%04u", i);
		v = pt_kv_find((const uint8_t *)got, (uint32_t)glen, k);
		answered += v && !strcmp(v, "NotUnderstood");
	}
	PT_CHECK(answered == keys, "%u of %u unknown keys answered NotUnderstood",
		 answered, keys);
	close(l.fd);
	still_serving("a login of unknown keys");
}

/*
 * CVE-2011-0001 (tgt): a buffer overflow while receiving a login. A
 * Login Request declaring a data segment of 16 MiB, over what the target
 * can receive, is a protocol error: answered with a Reject,
 * reason 04h (protocol error, 11.17.1), or login status 0200h (initiator
 * error), and the connection closed before tcqd reads or buffers the
 * segment; it does not wait for the 16 MiB.
 */
static void cve_2011_0001_login_pdu_of_16mib_refused(void)
{
	static char text[4096];
	uint8_t bhs[ISCSI_BHS_LEN];
	struct pt_rx r;
	struct rl l;
	int rc;

	if (rl_open(&l, ISCSI_STAGE_OPERATIONAL) < 0)
		return;
	base_keys(text, sizeof(text), false);
	rl_bhs(&l, bhs, true, false, 0xffffff);
	PT_CHECK(send(l.fd, bhs, sizeof(bhs), MSG_NOSIGNAL) == sizeof(bhs) &&
			 send(l.fd, text, sizeof(text), MSG_NOSIGNAL) ==
				 sizeof(text),
		 "sent a Login Request declaring 16 MiB, and %zu bytes of it",
		 sizeof(text));
	rc = pt_recv_raw(l.fd, &r, pt_now_ms() + 5000);
	PT_CHECK(rc == 1, "the PDU is answered");
	if (rc == 1) {
		struct pdu_login_rsp lr;
		uint8_t op = pdu_opcode(r.bhs);

		pdu_decode_login_rsp(r.bhs, &lr);
		PT_CHECK((op == ISCSI_OP_REJECT &&
			  r.bhs[2] == ISCSI_REJECT_PROTOCOL_ERROR) ||
				 (op == ISCSI_OP_LOGIN_RSP &&
				  (lr.status_class << 8 | lr.status_detail) ==
					  ISCSI_LS_INIT_ERR),
			 "with Reject 04h or login status 0200h (opcode %02xh)",
			 op);
		pt_rx_free(&r);
		rc = pt_recv_raw(l.fd, &r, pt_now_ms() + 5000);
	}
	PT_CHECK(rc < 0, "the connection is closed (not waiting for 16 MiB)");
	close(l.fd);
	still_serving("a 16 MiB login PDU");
}

/* ---- CHAP ----------------------------------------------------------- */

/* Security stage up to the target's MD5 challenge, its CHAP_I and
 * CHAP_C kept in id and chal (*clen bytes): 0, or -1. */
static int chap_to_challenge(struct rl *l, unsigned *id, uint8_t *chal,
			     long *clen)
{
	char text[512];
	const char *i, *c;
	size_t n;
	struct pt_rx r;

	if (!chap_user) {
		pt_skip("no CHAP user given (-u, -s)");
		return -1;
	}
	if (rl_open(l, ISCSI_STAGE_SECURITY) < 0)
		return -1;
	n = base_keys(text, sizeof(text), true);
	if (rl_exchange(l, false, text, (uint32_t)n, &r) != 1 || l->status) {
		PT_CHECK(0, "AuthMethod=CHAP answered");
		return -1;
	}
	pt_rx_free(&r);
	n = pt_kv_add(text, 0, sizeof(text), "CHAP_A", "5");
	if (rl_exchange(l, false, text, (uint32_t)n, &r) != 1 || l->status) {
		PT_CHECK(0, "CHAP_A=5 answered with a challenge");
		return -1;
	}
	i = pt_kv_find(r.data, r.len, "CHAP_I");
	c = pt_kv_find(r.data, r.len, "CHAP_C");
	*clen = c ? kv_decode_binary(c, chal, CHAP_BINARY_MAX) : -1;
	PT_CHECK(i && sscanf(i, "%u", id) == 1 && *id < 256 && *clen > 0,
		 "the target sent CHAP_I and CHAP_C");
	pt_rx_free(&r);
	return *clen > 0 ? 0 : -1;
}

/* The target still serves: a CHAP login with the right response passes
 * the security stage, and its first operational Login Request is
 * answered with status 0. */
static void chap_still_serving(const char *after)
{
	uint8_t chal[CHAP_BINARY_MAX], dig[CHAP_DIGEST_MAX];
	char text[256], hex[2 * CHAP_DIGEST_MAX + 3];
	unsigned id;
	long clen;
	size_t n;
	struct pt_rx r;
	struct rl l;
	int rc;

	if (chap_to_challenge(&l, &id, chal, &clen) < 0)
		return;
	if (chap_response(CHAP_ALG_MD5, (uint8_t)id, chap_secret,
			  strlen(chap_secret), chal, (size_t)clen, dig) ||
	    kv_encode_hex(dig, chap_digest_len(CHAP_ALG_MD5), hex,
			  sizeof(hex)) < 0) {
		PT_CHECK(0, "compute the CHAP response");
		close(l.fd);
		return;
	}
	n = pt_kv_add(text, 0, sizeof(text), "CHAP_N", chap_user);
	n = pt_kv_add(text, n, sizeof(text), "CHAP_R", hex);
	rc = rl_exchange(&l, true, text, (uint32_t)n, &r);
	if (rc == 1)
		pt_rx_free(&r);
	l.csg = ISCSI_STAGE_OPERATIONAL;
	if (rc == 1 && l.status == 0)
		rc = rl_exchange(&l, true, NULL, 0, &r);
	if (rc == 1)
		pt_rx_free(&r);
	PT_CHECK(rc == 1 && l.status == 0,
		 "after %s, a CHAP login with the right response is "
		 "accepted into the operational stage", after);
	close(l.fd);
}

/* RFC 4648 base64 of in, with "0b" before it (RFC 7143 6.1). */
static void base64(const uint8_t *in, size_t len, char *out)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "abcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 2;

	memcpy(out, "0b", 2);
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;

		v |= i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0;
		v |= i + 2 < len ? in[i + 2] : 0;
		out[o++] = tab[v >> 18 & 63];
		out[o++] = tab[v >> 12 & 63];
		out[o++] = i + 1 < len ? tab[v >> 6 & 63] : '=';
		out[o++] = i + 2 < len ? tab[v & 63] : '=';
	}
	out[o] = 0;
}

/* How chap_r_refused forms CHAP_R. */
enum r_form {
	R_FIXED,		/* the value given */
	R_RIGHT_PLUS_HEX,	/* the right 16 bytes and one more, in hex */
	R_RIGHT_PLUS_B64,	/* the same in base64 */
};

/* CHAP_N and a CHAP_R formed as form says, to the operational stage:
 * refused 0201h. */
static void chap_r_refused(enum r_form form, const char *fixed,
			   const char *what)
{
	uint8_t chal[CHAP_BINARY_MAX], dig[CHAP_DIGEST_MAX + 1] = { 0 };
	char text[2048], value[512];
	unsigned id;
	long clen;
	size_t n;
	struct pt_rx r;
	struct rl l;
	int rc;

	if (chap_to_challenge(&l, &id, chal, &clen) < 0)
		return;
	if (form != R_FIXED &&
	    chap_response(CHAP_ALG_MD5, (uint8_t)id, chap_secret,
			  strlen(chap_secret), chal, (size_t)clen, dig)) {
		PT_CHECK(0, "compute the CHAP response");
		close(l.fd);
		return;
	}
	/* dig[16] stays 0: one byte past the MD5 digest */
	if (form == R_RIGHT_PLUS_HEX)
		kv_encode_hex(dig, 17, value, sizeof(value));
	else if (form == R_RIGHT_PLUS_B64)
		base64(dig, 17, value);
	else
		snprintf(value, sizeof(value), "%s", fixed);
	n = pt_kv_add(text, 0, sizeof(text), "CHAP_N", chap_user);
	n = pt_kv_add(text, n, sizeof(text), "CHAP_R", value);
	rc = rl_exchange(&l, true, text, (uint32_t)n, &r);
	if (rc == 1)
		pt_rx_free(&r);
	refused_and_closed(&l, rc, ISCSI_LS_AUTH_FAILED, what);
}

/*
 * CVE-2018-14633 (LIO): chap_server_compute_md5() decoded CHAP_R into a
 * 16-byte stack buffer whatever its length. An MD5 response is 16 bytes
 * (RFC 1994); one of 17 bytes, even the right 16 and one more, or of 100
 * bytes is a wrong response: authentication failure (0201h).
 */
static void cve_2018_14633_chap_r_over_digest_hex_refused_0201(void)
{
	char v[2 + 200 + 1] = "0x";

	chap_r_refused(R_RIGHT_PLUS_HEX, NULL,
		       "CHAP_R in hex: the right 16 bytes and one more");
	memset(v + 2, 'b', 200);
	v[202] = 0;
	chap_r_refused(R_FIXED, v, "CHAP_R of 100 bytes in hex");
	chap_still_serving("over-long CHAP_R in hex");
}

/*
 * CVE-2026-63886 (LIO): a base64 CHAP_R was decoded before its length
 * was checked; 127 base64 characters decode to 95 bytes. Refused 0201h,
 * as is the right digest and one more byte in base64.
 */
static void cve_2026_63886_chap_r_over_digest_base64_refused_0201(void)
{
	char v[2 + 127 + 1] = "0b";

	chap_r_refused(R_RIGHT_PLUS_B64, NULL,
		       "CHAP_R in base64: the right 16 bytes and one more");
	memset(v + 2, 'Q', 127);
	v[129] = 0;
	chap_r_refused(R_FIXED, v, "CHAP_R of 127 base64 characters");
	chap_still_serving("an over-long base64 CHAP_R");
}

/* ---- in the session ------------------------------------------------- */

/* A login to the full feature phase in one Login Request, and 48 more
 * bytes (a BHS of an opcode no initiator sends) in the same write. */
static int login_with_tail(struct rl *l)
{
	static uint8_t buf[ISCSI_BHS_LEN + 1024 + ISCSI_BHS_LEN];
	char text[1024];
	size_t n;

	if (rl_open(l, ISCSI_STAGE_OPERATIONAL) < 0)
		return -1;
	n = base_keys(text, sizeof(text), false);
	while (n % 4)
		text[n++] = 0;
	rl_bhs(l, buf, true, false, (uint32_t)n);
	memcpy(buf + ISCSI_BHS_LEN, text, n);
	memset(buf + ISCSI_BHS_LEN + n, 0, ISCSI_BHS_LEN);
	buf[ISCSI_BHS_LEN + n] = 0x1c | ISCSI_OP_IMMEDIATE;
	buf[ISCSI_BHS_LEN + n + 1] = 0x80;
	return send(l->fd, buf, ISCSI_BHS_LEN + n + ISCSI_BHS_LEN,
		    MSG_NOSIGNAL) < 0 ? -1 : 0;
}

/*
 * CVE-2022-50350 (LIO): data right behind a login PDU raced the login's
 * end, and a connection dropped then was used after it was freed. tcqd
 * answers the login, then either rejects the stray PDU (RFC 7143 11.17.1:
 * 05h, command not supported) or ends the connection: a PDU sent before
 * the final Login Response is a protocol error. Then 50 such logins are
 * dropped at once, unread.
 */
static void cve_2022_50350_data_after_login_pdu(void)
{
	struct pt_rx r;
	struct rl l;
	int rc;

	if (login_with_tail(&l) < 0) {
		PT_CHECK(0, "send a login and 48 bytes behind it");
		return;
	}
	rc = pt_recv_raw(l.fd, &r, pt_now_ms() + 5000);
	PT_CHECK(rc == 1 && pdu_opcode(r.bhs) == ISCSI_OP_LOGIN_RSP,
		 "the login is answered");
	if (rc == 1)
		pt_rx_free(&r);
	for (int i = 0; i < 4; i++) {
		rc = pt_recv_raw(l.fd, &r, pt_now_ms() + 5000);
		if (rc != 1 || pdu_opcode(r.bhs) == ISCSI_OP_REJECT)
			break;
		pt_rx_free(&r);	/* a NOP-In or an async message */
	}
	if (rc == 1) {
		PT_CHECK(r.bhs[2] == ISCSI_REJECT_CMD_NOT_SUPPORTED,
			 "the stray PDU rejected with reason %02xh (want 05h)",
			 r.bhs[2]);
		pt_rx_free(&r);
	} else {
		PT_CHECK(rc < 0, "or the connection ends (not left hanging)");
	}
	close(l.fd);
	for (int i = 0; i < 50; i++)
		if (login_with_tail(&l) == 0)
			close(l.fd);
	still_serving("logins with data behind them");
}

/*
 * CVE-2024-26845 (LIO): an ABORT TASK the iSCSI layer answered itself
 * ("unable to locate ITT") stayed on the list a LUN RESET waits on, and
 * the reset never completed. ABORT TASK of a task that does not exist,
 * RefCmdSN outside the window, answers 1 (RFC 7143 11.6.1 c); the LUN
 * RESET after it answers 0, function complete.
 */
static void cve_2024_26845_abort_unknown_task_then_lun_reset(void)
{
	struct pc_tmf a = { .function = ISCSI_TMF_ABORT_TASK,
			    .rtt = 0x7777 };
	struct pc_tmf lr = { .function = ISCSI_TMF_LUN_RESET,
			     .rtt = ISCSI_RSVD_TAG };
	struct pt_sess s;
	int rc;

	if (pt_login(&s, NULL) < 0 || pt_tur(&s) != SAM_STAT_GOOD) {
		PT_CHECK(0, "login and TEST UNIT READY");
		return;
	}
	a.refcmdsn = s.max_cmdsn + 10;
	rc = pc_tmf(&s, &a, NULL, 0, NULL);
	PT_CHECK(rc == ISCSI_TMF_RSP_NO_TASK,
		 "ABORT TASK of an unknown task answers %d (want 1)", rc);
	rc = pc_tmf(&s, &lr, NULL, 0, NULL);
	PT_CHECK(rc == ISCSI_TMF_RSP_COMPLETE,
		 "the LUN RESET after it answers %d (want 0)", rc);
	pt_logout(&s);
	still_serving("an abort of an unknown task and a LUN RESET");
}

/*
 * CVE-2026-23216 (LIO): connection cleanup raced commands still using
 * the connection. 20 sessions each send 16 READs of 64 KiB, a Logout
 * right behind them, and drop the connection without reading a byte.
 */
static void cve_2026_23216_logout_and_drop_with_reads_in_flight(void)
{
	static uint8_t bufs[16][64 * 1024];
	struct pc_cmd c[16];
	struct pdu_logout_req lo = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];
	unsigned sent = 0;

	for (int round = 0; round < 20; round++) {
		struct pt_sess s;

		if (pt_login(&s, NULL) < 0) {
			PT_CHECK(0, "login %d", round);
			return;
		}
		for (int i = 0; i < 16; i++) {
			pc_rw10(&c[i], false, (uint32_t)i * 128, 128, bufs[i],
				PC_BS);
			sent += pc_start(&s, &c[i]) == 0;
		}
		lo.immediate = true;
		lo.reason = ISCSI_LOGOUT_CLOSE_SESSION;
		lo.itt = s.itt++;
		lo.cmdsn = s.cmdsn;
		lo.expstatsn = s.exp_statsn;
		pdu_encode_logout_req(bhs, &lo);
		pt_sess_send(&s, bhs, NULL, 0, 0, 0);
		pt_close(&s);
	}
	PT_CHECK(sent == 20 * 16, "%u READs sent ahead of 20 logouts", sent);
	still_serving("logouts and drops with READs in flight");
}

static const struct pt_case cases[] = {
	PT_CASE(cve_2013_2850_key_over_63_bytes_refused_0200),
	PT_CASE(cve_2026_90011_login_text_without_nul_refused_0200),
	PT_CASE(cve_2026_63887_many_unknown_keys_each_not_understood),
	PT_CASE(cve_2011_0001_login_pdu_of_16mib_refused),
	PT_CASE(cve_2018_14633_chap_r_over_digest_hex_refused_0201),
	PT_CASE(cve_2026_63886_chap_r_over_digest_base64_refused_0201),
	PT_CASE(cve_2022_50350_data_after_login_pdu),
	PT_CASE(cve_2024_26845_abort_unknown_task_then_lun_reset),
	PT_CASE(cve_2026_23216_logout_and_drop_with_reads_in_flight),
};

int main(int argc, char **argv)
{
	static const char usage[] =
		"cvepdu [-u USER -s SECRET] HOST PORT TARGET-IQN [CASE...]";
	int ch;

	pt_prog = "cvepdu";
	pt_initiator = "iqn.2026-12.org.tcq:cvepdu";
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
	if (!chap_user != !chap_secret) {
		fprintf(stderr, "usage: %s\n", usage);
		return 2;
	}
	return pt_run_cases(argc - optind, argv + optind, cases,
			    PT_NCASES(cases), usage);
}
