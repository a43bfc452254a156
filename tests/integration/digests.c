/*
 * digests: CRC32C header and data digests (RFC 7143 12.1) against a
 * running tcqd, with the raw client of pdutest.c. Cases:
 *
 *   crc32c_rfc3720_test_vectors: crc32c() itself (RFC 3720 B.4)
 *   digests_granted_and_checked_on_io: a session asking for both digests
 *     gets the ones expected and serves TEST UNIT READY, a NOP-Out with
 *     data, and a 64 KiB WRITE (immediate data and R2T-solicited
 *     Data-Out) read back and compared; every digest the target sends is
 *     checked
 *   bad_header_digest_drops_connection: a PDU with a corrupted header
 *     digest: the target drops the connection (ERL 0) and does not
 *     answer the command
 *   bad_data_digest_in_data_out_drops_connection,
 *   bad_data_digest_in_immediate_data_drops_connection: a WRITE whose
 *     last Data-Out, or whose immediate data, carries a wrong data digest:
 *     the connection is dropped, no status comes, and a new session reads
 *     the old blocks back
 *
 *   digests [-d HD,DD] HOST PORT TARGET-IQN [CASE...]    digests --list
 *
 * HD,DD: the digests the target is expected to grant when asked for both
 * (default CRC32C,CRC32C; e.g. None,CRC32C when it is configured with
 * header_digest = deny). A case that needs a digest the target does not
 * grant fails.
 * The LUN must have 512-byte blocks and hold at least 3000 of them.
 * Exit status: 0 when every case passed, 1 otherwise, 2 on usage errors.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tcq/crc32c.h"
#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"
#include "tests/integration/pdutest.h"
#include "tests/integration/ptcase.h"
#include "tests/integration/ptcmd.h"

#define BS 512u
#define XFER (64u << 10)
#define LBA_GOOD 1000u
#define LBA_BAD 2000u

static uint8_t wbuf[XFER], rbuf[XFER], oldbuf[XFER];
static bool want_hd = true, want_dd = true;

static int login_dg(struct pt_sess *s, const char *immediate)
{
	struct pt_login_opts o = { 0 };

	o.digests = true;
	o.immediate_data = immediate;
	if (pt_login(s, &o) < 0)
		return -1;
	if (s->hdgst != want_hd || s->ddgst != want_dd) {
		PT_CHECK(0, "the target accepted HeaderDigest=%s DataDigest=%s (want %s, %s)",
			 s->hdgst ? "CRC32C" : "None",
			 s->ddgst ? "CRC32C" : "None",
			 want_hd ? "CRC32C" : "None",
			 want_dd ? "CRC32C" : "None");
		pt_close(s);
		return -1;
	}
	return 0;
}

/* Writes blocks from wbuf at lba: imm bytes as immediate data, the rest
 * on R2Ts. Returns the status, or -1. */
static int write_blocks(struct pt_sess *s, uint32_t lba, uint32_t len,
			const uint8_t *data, uint32_t imm)
{
	struct pc_cmd c;

	pc_rw10(&c, true, lba, (uint16_t)(len / BS), (uint8_t *)data, BS);
	c.imm_len = imm;
	return pc_run(s, &c, 5000);
}

static int read_blocks(struct pt_sess *s, uint32_t lba, uint32_t len,
		       uint8_t *data)
{
	struct pc_cmd c;
	int st;

	memset(data, 0xee, len);
	pc_rw10(&c, false, lba, (uint16_t)(len / BS), data, BS);
	st = pc_run(s, &c, 5000);
	if (st == SAM_STAT_GOOD && (c.in_bytes != len || c.in_bad)) {
		pt_note("READ returned %u of %u bytes%s", c.in_bytes, len,
			c.in_bad ? " (some outside the buffer)" : "");
		return -1;
	}
	return st;
}

static void crc32c_rfc3720_test_vectors(void)
{
	static const uint8_t zeros[32];
	uint8_t ones[32], inc[32];
	unsigned i;

	memset(ones, 0xff, sizeof(ones));
	for (i = 0; i < 32; i++)
		inc[i] = (uint8_t)i;
	pt_note("CRC32C test vectors (RFC 3720 B.4)");
	PT_CHECK(crc32c(zeros, 32) == 0x8a9136aau,
		 "32 bytes of zeros: 0x%08x (want 0x8a9136aa)",
		 crc32c(zeros, 32));
	PT_CHECK(crc32c(ones, 32) == 0x62a8ab43u,
		 "32 bytes of 0xff: 0x%08x (want 0x62a8ab43)", crc32c(ones, 32));
	PT_CHECK(crc32c(inc, 32) == 0x46dd794eu,
		 "bytes 0..31: 0x%08x (want 0x46dd794e)", crc32c(inc, 32));
	PT_CHECK(crc32c("123456789", 9) == 0xe3069283u,
		 "\"123456789\": 0x%08x (want 0xe3069283)",
		 crc32c("123456789", 9));
}

static void digests_granted_and_checked_on_io(void)
{
	static const char ping[] = "digests: NOP-Out payload, 47 bytes + padding";
	struct pt_sess s;
	struct pt_rx r;
	uint32_t imm, itt;
	int st, rc;

	pt_note("a session asking for CRC32C header and data digests");
	if (login_dg(&s, "Yes") < 0) {
		PT_CHECK(0, "login with HeaderDigest=CRC32C DataDigest=CRC32C");
		return;
	}
	PT_CHECK(1, "login negotiated HeaderDigest=%s DataDigest=%s",
		 want_hd ? "CRC32C" : "None", want_dd ? "CRC32C" : "None");
	PT_CHECK(pt_tur(&s) == SAM_STAT_GOOD, "TEST UNIT READY is GOOD");

	/* A ping with data: the target echoes it with its own digest. */
	itt = s.itt++;
	rc = pt_send_nop_ping(&s, itt, ping, sizeof(ping), sizeof(ping));
	rc = rc < 0 ? -1 : pt_recv(&s, &r, 5000);
	if (rc > 0) {
		PT_CHECK(pdu_opcode(r.bhs) == ISCSI_OP_NOP_IN &&
			 pdu_itt(r.bhs) == itt && r.len == sizeof(ping) &&
			 !memcmp(r.data, ping, sizeof(ping)),
			 "NOP-Out with %u data bytes echoed in a NOP-In",
			 (unsigned)sizeof(ping));
		pt_rx_free(&r);
	} else {
		PT_CHECK(0, "NOP-In for a NOP-Out with data (%s)",
			 rc ? "connection closed" : "timeout");
	}

	pc_fill(wbuf, XFER, 0xd16e57);
	/* Part immediate (its data digest), the rest on R2Ts. */
	imm = s.peer_mrdsl < 16384 ? s.peer_mrdsl : 16384;
	st = write_blocks(&s, LBA_GOOD, XFER, wbuf, imm);
	PT_CHECK(st == SAM_STAT_GOOD,
		 "WRITE(10) of 64 KiB (%u bytes immediate) is GOOD (status %d)",
		 imm, st);
	st = read_blocks(&s, LBA_GOOD, XFER, rbuf);
	PT_CHECK(st == SAM_STAT_GOOD && !memcmp(rbuf, wbuf, XFER),
		 "READ(10) returns the 64 KiB written (status %d%s)", st,
		 st == SAM_STAT_GOOD && memcmp(rbuf, wbuf, XFER) ?
			 ", DATA DIFFERS" : "");
	PT_CHECK(s.digest_errors == 0 && (s.hdgst_checked >= 5) == want_hd &&
		 (s.ddgst_checked >= 2) == want_dd,
		 "every digest from the target was right: %u header and %u data digests checked, %u wrong",
		 s.hdgst_checked, s.ddgst_checked, s.digest_errors);
	pt_logout(&s);
}

static void bad_header_digest_drops_connection(void)
{
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };
	struct pdu_scsi_cmd sc = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];
	struct pt_sess s;
	int dropped;

	pt_note("a TEST UNIT READY with a corrupted header digest");
	if (!want_hd) {
		PT_CHECK(0, "this target grants no header digest to corrupt");
		return;
	}
	if (login_dg(&s, "Yes") < 0) {
		PT_CHECK(0, "login with digests");
		return;
	}
	PT_CHECK(pt_tur(&s) == SAM_STAT_GOOD, "TEST UNIT READY is GOOD first");
	sc.final = true;
	sc.attr = ISCSI_ATTR_SIMPLE;
	sc.itt = s.itt++;
	sc.cmdsn = s.cmdsn++;
	sc.expstatsn = s.exp_statsn;
	memcpy(sc.cdb, tur, sizeof(tur));
	pdu_encode_scsi_cmd(bhs, &sc);
	pdu_set_data_len(bhs, 0);
	s.watch_itt = sc.itt;
	if (pt_sess_send(&s, bhs, NULL, 0, 0x00010000u, 0) < 0) {
		PT_CHECK(0, "send the corrupted PDU");
		pt_close(&s);
		return;
	}
	dropped = pt_wait_closed(&s, 3000) >= 0;
	PT_CHECK(dropped, "the target dropped the connection");
	PT_CHECK(s.watch_hits == 0,
		 "and sent nothing for the corrupted command (%u PDUs)",
		 s.watch_hits);
	pt_close(&s);
}

/* A WRITE of new data over LBA_BAD whose data digest is wrong, either in
 * the immediate data or in the last Data-Out. */
static void test_bad_data(bool immediate)
{
	const char *what = immediate ? "immediate data" : "last Data-Out";
	uint32_t len = immediate ? 8192 : XFER;
	struct pc_cmd c, *one[1] = { &c };
	struct pt_sess s;
	int rc, st;

	pt_note("a WRITE whose %s has a wrong data digest", what);
	if (!want_dd) {
		PT_CHECK(0, "this target grants no data digest to corrupt");
		return;
	}
	/* Known old content, written and checked on a clean session. */
	if (login_dg(&s, "Yes") < 0) {
		PT_CHECK(0, "login with digests");
		return;
	}
	/* A new I_T nexus starts with a unit attention: clear it. */
	pt_tur(&s);
	pc_fill(oldbuf, XFER, immediate ? 0x01d1 : 0x01d2);
	st = write_blocks(&s, LBA_BAD, XFER, oldbuf, 0);
	PT_CHECK(st == SAM_STAT_GOOD, "(%s) the old content is written (status %d)",
		 what, st);
	pt_logout(&s);

	if (login_dg(&s, immediate ? "Yes" : "No") < 0) {
		PT_CHECK(0, "login with digests");
		return;
	}
	PT_CHECK(pt_tur(&s) == SAM_STAT_GOOD, "(%s) TEST UNIT READY is GOOD",
		 what);
	pc_fill(wbuf, XFER, 0xbad0 + immediate);
	pc_rw10(&c, true, LBA_BAD, (uint16_t)(len / BS), wbuf, BS);
	if (immediate) {
		if (s.peer_mrdsl < len)
			len = c.edtl = s.peer_mrdsl & ~(BS - 1);
		put_be16(c.cdb + 7, (uint16_t)(len / BS));
		c.imm_len = len;
		c.imm_dd_xor = 0x80000000u;
	} else {
		c.last_dd_xor = 0x00000100u;
	}
	if (pc_start(&s, &c) < 0) {
		PT_CHECK(0, "(%s) send WRITE(10)", what);
		pt_close(&s);
		return;
	}
	/* R2Ts are answered as they come; the last Data-Out is bad. */
	rc = pc_wait(&s, one, 1, &c, pc_is_done, 3000, NULL);
	PT_CHECK(rc < 0 && !c.done,
		 "(%s) the target dropped the connection without a status (%s, status %d)",
		 what, rc < 0 ? "closed" : rc ? "answered" : "still open",
		 c.status);
	if (!immediate)
		PT_CHECK(c.n_r2t >= 1, "(%s) after %u R2T(s)", what, c.n_r2t);
	pt_close(&s);

	if (login_dg(&s, "Yes") < 0) {
		PT_CHECK(0, "login with digests after the drop");
		return;
	}
	PT_CHECK(pt_tur(&s) == SAM_STAT_GOOD,
		 "(%s) a new session serves TEST UNIT READY", what);
	st = read_blocks(&s, LBA_BAD, XFER, rbuf);
	PT_CHECK(st == SAM_STAT_GOOD && !memcmp(rbuf, oldbuf, XFER),
		 "(%s) the blocks still hold the old content: the WRITE was not executed (status %d%s)",
		 what, st,
		 st != SAM_STAT_GOOD ? "" :
		 !memcmp(rbuf, wbuf, len) ? ", NEW DATA WRITTEN" :
		 memcmp(rbuf, oldbuf, XFER) ? ", CONTENT CHANGED" : "");
	PT_CHECK(s.digest_errors == 0, "(%s) no digest errors from the target (%u)",
		 what, s.digest_errors);
	pt_logout(&s);
}

static void bad_data_digest_in_data_out_drops_connection(void)
{
	test_bad_data(false);
}

static void bad_data_digest_in_immediate_data_drops_connection(void)
{
	test_bad_data(true);
}

static const struct pt_case cases[] = {
	PT_CASE(crc32c_rfc3720_test_vectors),
	PT_CASE(digests_granted_and_checked_on_io),
	PT_CASE(bad_header_digest_drops_connection),
	PT_CASE(bad_data_digest_in_data_out_drops_connection),
	PT_CASE(bad_data_digest_in_immediate_data_drops_connection),
};

int main(int argc, char **argv)
{
	char hd[8] = "", dd[8] = "";
	int opt;

	pt_prog = "digests";
	pt_initiator = "iqn.2026-11.org.tcq:digests";
	while ((opt = getopt(argc, argv, "d:")) != -1) {
		if (opt != 'd' ||
		    sscanf(optarg, "%7[^,],%7s", hd, dd) != 2 ||
		    (strcmp(hd, "None") && strcmp(hd, "CRC32C")) ||
		    (strcmp(dd, "None") && strcmp(dd, "CRC32C"))) {
			fprintf(stderr, "digests: -d HD,DD with each None or CRC32C\n");
			return 2;
		}
		want_hd = !strcmp(hd, "CRC32C");
		want_dd = !strcmp(dd, "CRC32C");
	}
	return pt_run_cases(argc - optind, argv + optind, cases,
			    PT_NCASES(cases),
			    "digests [-d HD,DD] HOST PORT TARGET-IQN [CASE...] | --list");
}
