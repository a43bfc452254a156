/*
 * cutread: cut-through READs (scsi/sbc_cut.c) against a running tcqd,
 * with the raw client of pdutest.c. Every Data-In is checked as it comes
 * against RFC 7143 11.7 and the keys we negotiated (MaxRecvDataSegmentLength
 * 8192 or 131072 offered, MaxBurstLength 32768 offered, tcqd's larger):
 * DataSN from 0 with no gap, Buffer Offset where the data so far ends
 * (DataPDUInOrder, DataSequenceInOrder), a segment of 1..MRDSL bytes,
 * sequences of at most MaxBurstLength with F on the last PDU of each, A
 * never set, the status only in the last (with F) or a SCSI Response.
 * What tcqd must answer comes from the specifications and from tcqd.conf(5)'s
 * rule for the piece (the initiator's MaxRecvDataSegmentLength, at most
 * half the READ, at least 64 KiB): never from what tcqd sent before.
 * Cases:
 *
 *   reads_follow_rfc7143         LUN 0 (delay, exponential, over ram):
 *       1 MiB written, then read whole, 300 blocks at LBA 8 (a piece cut
 *       short) and two pieces exactly, with CRC32C digests: every Data-In
 *       as above, GOOD collapsed into the last with no residual, the data
 *       as written, every data digest right
 *   failed_piece_medium_error    LUN 1 (fault at LBA 647 over a delay
 *       over ram: the failed piece is back first, those after it later): a
 *       1 MiB READ(10) at LBA 0, pieces of 64 KiB (128 blocks): CHECK
 *       CONDITION, MEDIUM ERROR, 11h/00h UNRECOVERED READ ERROR, VALID
 *       with INFORMATION 640 (the failed piece's first LBA, SBC-3 4.15),
 *       and no Data-In byte at or past offset 327680
 *   abort_task_of_cut_read       LUN 2 (delay 60 ms, one I/O at a time,
 *       over ram): a 1 MiB READ (16 pieces, one every 60 ms) aborted once
 *       its first Data-In came: FUNCTION COMPLETE, no status for the
 *       task, no Data-In for the pieces read after the abort, no PDU of
 *       it after the TMF response; the session goes on
 *   lun_reset_of_cut_read        the same with LOGICAL UNIT RESET
 *   read_512k, read_512k_mrdsl_128k, read_64k, read_128k_mrdsl_256k
 *       LUN 3 (ram): one
 *       READ, checked as above (cutthrough.sh counts its backend I/Os)
 *
 *   cutread HOST PORT TARGET-IQN [CASE...]       cutread --list
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"
#include "tests/integration/pdutest.h"
#include "tests/integration/ptcase.h"
#include "tests/integration/ptcmd.h"

#define OUR_MBL 32768u		/* below tcqd's max_burst_length */
#define WAIT_MS 10000

struct rd {
	uint64_t lun;
	uint32_t lba, len;		/* blocks of PC_BS; len in bytes */
	uint32_t mrdsl;			/* ours */
	uint8_t *buf;			/* len bytes read */
	/* what came */
	uint32_t itt, cmdsn, in, datasn, in_seq;
	int status;			/* -1: none */
	bool by_rsp;			/* status in a SCSI Response */
	uint8_t uo;			/* its O and U bits */
	int key, asc, ascq;		/* -1: no sense */
	bool info_valid;
	uint32_t info;
	bool bad;			/* a Data-In broke 11.7 */
};

static int login(struct pt_sess *s, const char *mrdsl, bool digests)
{
	char keys[64], num[16];
	struct pt_login_opts o = { .mrdsl = mrdsl, .digests = digests };

	snprintf(num, sizeof(num), "%u", OUR_MBL);
	o.keys = keys;
	o.keys_len = (uint32_t)pt_kv_add(keys, 0, sizeof(keys),
					 "MaxBurstLength", num);
	if (pt_login(s, &o) < 0) {
		PT_CHECK(0, "login");
		return -1;
	}
	return pc_tur_ua(s, NULL) == SAM_STAT_GOOD ? 0 : -1;
}

static int send_read(struct pt_sess *s, struct rd *r)
{
	struct pdu_scsi_cmd sc = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];

	if (sn_gt(s->exp_cmdsn, s->cmdsn))
		s->cmdsn = s->exp_cmdsn;
	r->itt = s->itt++;
	r->cmdsn = s->cmdsn;
	r->status = r->key = r->asc = r->ascq = -1;
	r->in = r->datasn = r->in_seq = 0;
	sc.final = sc.read = true;
	sc.attr = ISCSI_ATTR_SIMPLE;
	sc.lun = pdu_lun_encode(r->lun);
	sc.itt = r->itt;
	sc.edtl = r->len;
	sc.cmdsn = s->cmdsn++;
	sc.expstatsn = s->exp_statsn;
	sc.cdb[0] = SOP_READ_10;
	put_be32(sc.cdb + 2, r->lba);
	put_be16(sc.cdb + 7, (uint16_t)(r->len / PC_BS));
	pdu_encode_scsi_cmd(bhs, &sc);
	pdu_set_data_len(bhs, 0);
	return pt_sess_send(s, bhs, NULL, 0, 0, 0);
}

/* RFC 7143 11.7: one Data-In of r, given what came before. */
static void take_data_in(struct rd *r, const struct pt_rx *x)
{
	struct pdu_data_in d;
	bool ok;

	pdu_decode_data_in(x->bhs, &d);
	r->in_seq += x->len;
	ok = d.datasn == r->datasn && d.offset == r->in && x->len &&
	     x->len <= r->mrdsl && x->len <= r->len - r->in && !d.ack &&
	     d.ttt == ISCSI_RSVD_TAG && r->in_seq <= OUR_MBL &&
	     (r->in_seq < OUR_MBL || d.final) &&
	     (!d.status_present || d.final) &&
	     (!d.status_present || r->in + x->len == r->len);
	if (!ok && !r->bad)
		PT_CHECK(0, "Data-In DataSN %u (want %u) offset %u (want %u) "
			 "length %u (MRDSL %u), F=%d A=%d S=%d, %u bytes in "
			 "its sequence (MaxBurstLength %u) of a %u-byte read",
			 d.datasn, r->datasn, d.offset, r->in, x->len, r->mrdsl,
			 d.final, d.ack, d.status_present, r->in_seq, OUR_MBL,
			 r->len);
	r->bad |= !ok;
	if (ok)
		memcpy(r->buf + r->in, x->data, x->len);
	r->datasn++;
	r->in += x->len;
	if (d.final)
		r->in_seq = 0;
	if (d.status_present) {
		r->status = d.status;
		r->uo = d.flags & (ISCSI_FLAG_OVERFLOW | ISCSI_FLAG_UNDERFLOW);
	}
}

static void take_rsp(struct rd *r, const struct pt_rx *x)
{
	struct pdu_scsi_rsp rsp;
	const uint8_t *sn = x->data + 2;

	pdu_decode_scsi_rsp(x->bhs, &rsp);
	r->status = rsp.status;
	r->by_rsp = true;
	r->uo = rsp.flags & (ISCSI_FLAG_OVERFLOW | ISCSI_FLAG_UNDERFLOW);
	if (x->len < 2 + 18 || get_be16(x->data) < 18 ||
	    (sn[0] & 0x7f) != 0x70)
		return;		/* fixed format: the LUN's D_SENSE is 0 */
	r->key = sn[2] & 0x0f;
	r->asc = sn[12];
	r->ascq = sn[13];
	r->info_valid = sn[0] & 0x80;
	r->info = get_be32(sn + 3);
}

/* One PDU: r's, or a stray one (counted as bad). */
static void take(struct rd *r, const struct pt_rx *x)
{
	uint8_t op = pdu_opcode(x->bhs);

	if (pdu_itt(x->bhs) != r->itt) {
		PT_CHECK(0, "a PDU (opcode 0x%02x) of ITT 0x%x during the read",
			 op, pdu_itt(x->bhs));
		r->bad = true;
	} else if (op == ISCSI_OP_DATA_IN) {
		take_data_in(r, x);
	} else if (op == ISCSI_OP_SCSI_RSP) {
		take_rsp(r, x);
	} else {
		PT_CHECK(0, "opcode 0x%02x for the read", op);
		r->bad = true;
	}
}

/* Sends r and takes its PDUs until its status: 0, or -1 (checked). A
 * unit attention (the nexus' first command to the LUN) is sent again. */
static int run_read(struct pt_sess *s, struct rd *r)
{
	for (int tries = 0; tries < 4; tries++) {
		if (send_read(s, r) < 0) {
			PT_CHECK(0, "READ sent");
			return -1;
		}
		while (r->status < 0) {
			struct pt_rx x;

			if (pt_recv(s, &x, WAIT_MS) <= 0) {
				PT_CHECK(0, "status of the read within %d ms",
					 WAIT_MS);
				return -1;
			}
			take(r, &x);
			pt_rx_free(&x);
		}
		if (r->key != SK_UNIT_ATTENTION)
			return 0;
		pt_note("(unit attention: ASC 0x%02x ASCQ 0x%02x)", r->asc,
			r->ascq);
		r->by_rsp = false;
	}
	return 0;
}

/* A read that must end GOOD, collapsed, no residual, as want says. */
static void read_good(struct pt_sess *s, uint64_t lun, uint32_t lba,
		      uint32_t len, uint32_t mrdsl, const uint8_t *want)
{
	struct rd r = { .lun = lun, .lba = lba, .len = len, .mrdsl = mrdsl };

	r.buf = calloc(1, len);
	if (r.buf && run_read(s, &r) == 0)
		PT_CHECK(!r.bad && r.status == SAM_STAT_GOOD && !r.by_rsp &&
			 !r.uo && r.in == len &&
			 (want ? !memcmp(r.buf, want, len) :
			  !memcmp(r.buf, r.buf + 1, len - 1) && !r.buf[0]),
			 "READ of %u bytes at LBA %u: Data-In in order, GOOD "
			 "in the last (status %d, by response %d, O/U %x), "
			 "%u bytes, the data as written", len, lba, r.status,
			 r.by_rsp, r.uo, r.in);
	free(r.buf);
}

static void reads_follow_rfc7143(void)
{
	struct pt_sess s;
	uint32_t len = 1u << 20;
	uint8_t *pat = malloc(len);

	if (!pat || login(&s, "8192", true) < 0) {
		free(pat);
		return;
	}
	pc_fill(pat, len, 28);
	PT_CHECK(pc_rw(&s, true, 0, len, pat, 0) == SAM_STAT_GOOD,
		 "1 MiB written at LBA 0");
	read_good(&s, 0, 0, len, 8192, pat);
	read_good(&s, 0, 8, 300 * PC_BS, 8192, pat + 8 * PC_BS);
	read_good(&s, 0, 128, 2u << 16, 8192, pat + 128 * PC_BS);
	PT_CHECK(s.ddgst_checked > 0 && !s.digest_errors, "%u data digests "
		 "checked, %u wrong", s.ddgst_checked, s.digest_errors);
	pt_logout(&s);
	free(pat);
}

static void failed_piece_medium_error(void)
{
	struct pt_sess s;
	struct rd r = { .lun = 1, .lba = 0, .len = 1u << 20, .mrdsl = 8192 };
	uint32_t piece = 65536, failed = 647 / (piece / PC_BS);

	if (login(&s, "8192", false) < 0)
		return;
	r.buf = calloc(1, r.len);
	if (r.buf && run_read(&s, &r) == 0) {
		PT_CHECK(!r.bad && r.by_rsp &&
			 r.status == SAM_STAT_CHECK_CONDITION &&
			 r.key == SK_MEDIUM_ERROR && r.asc == 0x11 &&
			 r.ascq == 0 && r.info_valid &&
			 r.info == failed * (piece / PC_BS),
			 "CHECK CONDITION %d, key %d ASC %02xh/%02xh, VALID %d "
			 "INFORMATION %u (want 3, 11h/00h, %u)", r.status,
			 r.key, r.asc, r.ascq, r.info_valid, r.info,
			 failed * (piece / PC_BS));
		PT_CHECK(r.in <= failed * piece, "%u bytes of Data-In, none at "
			 "or past the failed piece's offset %u", r.in,
			 failed * piece);
	}
	free(r.buf);
	pt_logout(&s);
}

/* Task management of a cut READ in flight on LUN 2: fn once its first
 * Data-In came, then nothing of it after the answer. */
static void tmf_of_cut_read(uint8_t fn)
{
	struct pt_sess s;
	struct rd r = { .lun = 2, .lba = 0, .len = 1u << 20, .mrdsl = 8192 };
	struct pdu_tmf_req q = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];
	uint32_t tmf_itt, after = 0, ping_itt;
	int response = -1;
	struct pt_rx x;

	if (login(&s, "8192", false) < 0)
		return;
	/* past the nexus' unit attention on LUN 2 first */
	read_good(&s, 2, 0, 4096, 8192, NULL);
	r.buf = calloc(1, r.len);
	if (!r.buf || send_read(&s, &r) < 0) {
		PT_CHECK(0, "READ sent");
		goto out;
	}
	if (pt_recv(&s, &x, WAIT_MS) <= 0) {
		PT_CHECK(0, "a first Data-In");
		goto out;
	}
	take(&r, &x);
	pt_rx_free(&x);
	PT_CHECK(r.in > 0 && r.in < r.len && r.status < 0, "%u bytes of the "
		 "read came before its end (status %d)", r.in, r.status);
	q.immediate = true;
	q.function = fn;
	q.lun = pdu_lun_encode(r.lun);
	q.itt = tmf_itt = s.itt++;
	q.rtt = fn == ISCSI_TMF_ABORT_TASK ? r.itt : ISCSI_RSVD_TAG;
	q.refcmdsn = r.cmdsn;
	q.cmdsn = s.cmdsn;
	q.expstatsn = s.exp_statsn;
	pdu_encode_tmf_req(bhs, &q);
	pdu_set_data_len(bhs, 0);
	if (pt_sess_send(&s, bhs, NULL, 0, 0, 0) < 0) {
		PT_CHECK(0, "TMF sent");
		goto out;
	}
	while (response < 0 && pt_recv(&s, &x, WAIT_MS) > 0) {
		if (pdu_opcode(x.bhs) == ISCSI_OP_TMF_RSP &&
		    pdu_itt(x.bhs) == tmf_itt)
			response = x.bhs[BHS_B2];
		else
			take(&r, &x);	/* what was under way before */
		pt_rx_free(&x);
	}
	/* The pieces come one every 60 ms: after the abort, the 7 or more
	 * still in flight past half the READ must give no Data-In (that
	 * the TMF takes effect within 420 ms of the first Data-In is all
	 * this asks of the machine's speed). */
	PT_CHECK(response == ISCSI_TMF_RSP_COMPLETE && !r.bad &&
		 r.status < 0 && r.in <= r.len / 2, "TMF %u: response %d "
		 "(want 0), no status for the task (%d), %u bytes of Data-In "
		 "in order before it, the rest withheld", fn, response,
		 r.status, r.in);
	/* Anything tcqd queued for the task would come before this. */
	ping_itt = s.itt++;
	s.watch_itt = r.itt;
	s.watch_hits = 0;
	if (pt_send_nop_ping(&s, ping_itt, NULL, 0, 0) == 0)
		while (pt_recv(&s, &x, WAIT_MS) > 0) {
			bool pong = pdu_opcode(x.bhs) == ISCSI_OP_NOP_IN &&
				    pdu_itt(x.bhs) == ping_itt;

			after += pdu_itt(x.bhs) == r.itt;
			pt_rx_free(&x);
			if (pong)
				break;
		}
	PT_CHECK(after == 0, "%u PDUs of the task after the TMF response",
		 after);
	read_good(&s, 3, 0, 65536, 8192, NULL);
out:
	free(r.buf);
	pt_logout(&s);
}

static void abort_task_of_cut_read(void)
{
	tmf_of_cut_read(ISCSI_TMF_ABORT_TASK);
}

static void lun_reset_of_cut_read(void)
{
	tmf_of_cut_read(ISCSI_TMF_LUN_RESET);
}

static void read_on_lun3(const char *mrdsl, uint32_t len)
{
	struct pt_sess s;

	if (login(&s, mrdsl, false) < 0)
		return;
	read_good(&s, 3, 0, len, (uint32_t)atoi(mrdsl), NULL);
	pt_logout(&s);
}

static void read_512k(void)
{
	read_on_lun3("8192", 512u << 10);
}

static void read_512k_mrdsl_128k(void)
{
	read_on_lun3("131072", 512u << 10);
}

static void read_64k(void)
{
	read_on_lun3("8192", 64u << 10);
}

static void read_128k_mrdsl_256k(void)
{
	read_on_lun3("262144", 128u << 10);
}

static const struct pt_case cases[] = {
	PT_CASE(reads_follow_rfc7143),
	PT_CASE(failed_piece_medium_error),
	PT_CASE(abort_task_of_cut_read),
	PT_CASE(lun_reset_of_cut_read),
	PT_CASE(read_512k),
	PT_CASE(read_512k_mrdsl_128k),
	PT_CASE(read_64k),
	PT_CASE(read_128k_mrdsl_256k),
};

static const struct pt_driver driver = {
	.prog = "cutread",
	.initiator = "iqn.2026-12.org.tcq:cutread",
	.cases = cases,
	.ncases = PT_NCASES(cases),
};

int main(int argc, char **argv)
{
	return pt_main(&driver, argc, argv);
}
