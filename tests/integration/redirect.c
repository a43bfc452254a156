/*
 * redirect: a redirected target's Login Response as sent, byte by byte,
 * against RFC 7143 (redirect.sh), with the raw client of pdutest.c. Cases:
 *
 *   moved_temporarily_0101, moved_permanently_0102: the first Login
 *       Request of a normal session (security stage, AuthMethod=None) is
 *       answered with one Login Response: opcode 23h, status class 01h
 *       (Redirection, 11.13.5) and detail 01h / 02h, the request's ISID
 *       and ITT, TSIH 0 (no session), and the key TargetAddress naming
 *       -a ADDR:PORT without the comma and portal group tag (13.8: a
 *       redirect omits them); then the target closes the connection
 *       (11.13.5: a status class other than 0)
 *   discovery_lists_target_here: a discovery session is not redirected;
 *       SendTargets=All names the target with TargetAddress HOST:PORT of
 *       this portal and a portal group tag (13.8: SendTargets carries one)
 *   login_served_here: a normal login reaches the full feature phase and
 *       logs out (no redirect)
 *
 *   redirect [-a ADDR:PORT] HOST PORT TARGET-IQN [CASE...] | --list
 *
 * Exit status: 0 when every case passed, 1 otherwise, 77 skipped, 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tcq/byteorder.h"
#include "tcq/pdu.h"
#include "tests/integration/pdutest.h"
#include "tests/integration/ptcase.h"
#include "tests/integration/pttext.h"

static const char *want_addr;	/* -a: the TargetAddress expected */

static const uint8_t isid[6] = { 0x80, 0x3d, 0x1e, 0xc7, 0x00, 0x01 };
#define LOGIN_ITT 0x00c0ffeeu

/* The first Login Request of a leading normal login, in the security
 * stage (CSG 0, T=1 to NSG 1) with AuthMethod=None: a target served here
 * with CHAP would refuse it (0201h), one that moved redirects it. */
static int send_first_login(int fd)
{
	struct pdu_login_req lq = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];
	char keys[512];
	size_t n = 0;

	n = pt_kv_add(keys, n, sizeof(keys), "InitiatorName", pt_initiator);
	n = pt_kv_add(keys, n, sizeof(keys), "TargetName", pt_target_iqn);
	n = pt_kv_add(keys, n, sizeof(keys), "SessionType", "Normal");
	n = pt_kv_add(keys, n, sizeof(keys), "AuthMethod", "None");
	lq.transit = true;
	lq.csg = ISCSI_STAGE_SECURITY;
	lq.nsg = ISCSI_STAGE_OPERATIONAL;
	lq.version_max = ISCSI_VERSION;
	lq.version_min = ISCSI_VERSION;
	memcpy(lq.isid, isid, 6);
	lq.itt = LOGIN_ITT;
	lq.cmdsn = 1;
	lq.data_len = (uint32_t)n;
	pdu_encode_login_req(bhs, &lq);
	return pt_send_pdu(fd, bhs, keys, (uint32_t)n);
}

/* Every key of a NUL-separated text, for the notes. */
static void show_keys(const struct pt_rx *r)
{
	for (uint32_t off = 0; off < r->len;) {
		const char *k = (const char *)r->data + off;

		pt_note("  key %s", k);
		off += (uint32_t)strlen(k) + 1;
	}
}

static void moved(uint8_t detail)
{
	struct pt_sess s = { .fd = -1, .answer_pings = true,
			     .watch_itt = ISCSI_RSVD_TAG };
	const char *ta;
	struct pt_rx r;

	if (!want_addr) {
		pt_skip("no -a ADDR:PORT: the TargetAddress expected");
		return;
	}
	s.fd = pt_tcp_connect();
	if (s.fd < 0 || send_first_login(s.fd) < 0) {
		PT_CHECK(0, "connect and send the first Login Request");
		pt_close(&s);
		return;
	}
	if (pt_recv_raw(s.fd, &r, pt_now_ms() + 5000) <= 0) {
		PT_CHECK(0, "a Login Response to the first Login Request");
		pt_close(&s);
		return;
	}
	show_keys(&r);
	PT_CHECK((r.bhs[0] & 0x3f) == ISCSI_OP_LOGIN_RSP,
		 "opcode 0x%02x (want 23h, Login Response)", r.bhs[0] & 0x3f);
	PT_CHECK(r.bhs[36] == 0x01, "Status-Class (byte 36) 0x%02x (want 01h, "
		 "Redirection)", r.bhs[36]);
	PT_CHECK(r.bhs[37] == detail, "Status-Detail (byte 37) 0x%02x (want "
		 "%02xh, target moved %s)", r.bhs[37], detail,
		 detail == 1 ? "temporarily" : "permanently");
	PT_CHECK(!memcmp(r.bhs + 8, isid, 6), "the request's ISID (bytes 8-13)");
	PT_CHECK(get_be16(r.bhs + 14) == 0, "TSIH (bytes 14-15) %u (want 0: "
		 "no session)", get_be16(r.bhs + 14));
	PT_CHECK(get_be32(r.bhs + 16) == LOGIN_ITT, "the request's ITT "
		 "(bytes 16-19) 0x%08x", get_be32(r.bhs + 16));
	ta = r.data ? pt_kv_find(r.data, r.len, "TargetAddress") : NULL;
	PT_CHECK(ta && !strcmp(ta, want_addr), "TargetAddress=%s (want %s)",
		 ta ? ta : "(none)", want_addr);
	PT_CHECK(ta && !strchr(ta, ','), "TargetAddress without ',' and a "
		 "portal group tag (RFC 7143 13.8: a redirect omits them)");
	pt_rx_free(&r);
	PT_CHECK(pt_wait_closed(&s, 3000) >= 0, "the target closed the "
		 "connection after the redirect (RFC 7143 11.13.5)");
	pt_close(&s);
}

static void moved_temporarily_0101(void)
{
	moved(0x01);
}

static void moved_permanently_0102(void)
{
	moved(0x02);
}

static void discovery_lists_target_here(void)
{
	struct pt_login_opts o = { .discovery = true };
	char here[300];
	struct pt_text t;
	struct pt_sess s;
	bool named = false, listed = false;

	if (pt_login(&s, &o) < 0) {
		PT_CHECK(0, "discovery login (status 0x%04x): a discovery "
			 "session is not redirected", (unsigned)s.login_status);
		return;
	}
	PT_CHECK(1, "discovery login reaches the full feature phase");
	if (pt_text(&s, "SendTargets=All", 1u << 20, &t) < 0) {
		pt_close(&s);
		return;
	}
	snprintf(here, sizeof(here), "%s:%s,", pt_host, pt_port);
	for (size_t off = 0; off < t.len;) {
		const char *kv = (const char *)t.data + off;

		pt_note("  %s", kv);
		if (!strncmp(kv, "TargetName=", 11))
			named = !strcmp(kv + 11, pt_target_iqn);
		else if (named && !strncmp(kv, "TargetAddress=", 14) &&
			 !strncmp(kv + 14, here, strlen(here)) &&
			 kv[14 + strlen(here)] >= '0' &&
			 kv[14 + strlen(here)] <= '9')
			listed = true;
		off += strlen(kv) + 1;
	}
	PT_CHECK(listed, "SendTargets names %s at TargetAddress=%s:%s,TPGT "
		 "(this portal, with its portal group tag)", pt_target_iqn,
		 pt_host, pt_port);
	free(t.data);
	pt_logout(&s);
}

static void login_served_here(void)
{
	struct pt_sess s;

	if (pt_login(&s, NULL) < 0) {
		PT_CHECK(0, "normal login (status 0x%04x)",
			 (unsigned)s.login_status);
		return;
	}
	PT_CHECK(1, "normal login reaches the full feature phase here");
	pt_logout(&s);
}

static const struct pt_case cases[] = {
	PT_CASE(moved_temporarily_0101),
	PT_CASE(moved_permanently_0102),
	PT_CASE(discovery_lists_target_here),
	PT_CASE(login_served_here),
};

int main(int argc, char **argv)
{
	int opt;

	pt_prog = "redirect";
	pt_initiator = "iqn.2026-11.org.tcq:redirect";
	while ((opt = getopt(argc, argv, "a:")) != -1) {
		if (opt != 'a')
			return 2;
		want_addr = optarg;
	}
	return pt_run_cases(argc - optind, argv + optind, cases,
			    PT_NCASES(cases),
			    "redirect [-a ADDR:PORT] HOST PORT TARGET-IQN "
			    "[CASE...] | --list");
}
