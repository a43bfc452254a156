/*
 * Reservations and unit attentions without a network: two (or three) fake
 * I_T nexuses drive one LUN through lun_task_arrive, as the transport
 * does, and check status, sense, and the PERSISTENT RESERVE IN data.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/sdev.h"
#include "scsi/lun.h"
#include "scsi/pr.h"
#include "scsi/taskset.h"
#include "scsi/ua.h"
#include "tests/unit/harness.h"

struct fake_nexus {
	const char *port;
};

static struct fake_nexus na = { "iqn.2026-11.org.tcq:init1,i,0x230000000001" };
static struct fake_nexus nb = { "iqn.2026-11.org.tcq:init2,i,0x230000000002" };
static struct fake_nexus nc = { "iqn.2026-11.org.tcq:init3,i,0x230000000003" };

static const char *fake_port(const void *nexus)
{
	return ((const struct fake_nexus *)nexus)->port;
}

static const struct sdev_ops fake_ops = { .initiator_port = fake_port };

static struct sdev tgt = { .ops = &fake_ops };
static struct lun *lun;
static struct taskset *tsa, *tsb;
static struct tcq_task task;
static int done_calls;
static uint8_t data[4096];	/* Data-In of the last command */
static uint32_t data_len;

static void done_cb(struct tcq_task *t)
{
	done_calls++;
}

/* Runs one command to completion; returns its status. */
static uint8_t run(struct taskset *ts, const uint8_t *cdb, unsigned clen,
		   const void *out, uint32_t out_len)
{
	struct tcq_task *t = &task;
	static uint8_t obuf[1024];

	memset(t, 0, sizeof(*t));
	memcpy(t->cdb, cdb, clen);
	t->cdb_len = 16;
	t->lun = lun;
	t->nexus = ts->nexus;
	t->attr = TASK_ATTR_SIMPLE;
	t->done = done_cb;
	t->exp_len = out_len ? out_len : sizeof(data);
	if (out_len) {
		memcpy(obuf, out, out_len);
		t->buf = obuf;
		t->buf_len = out_len;
		t->dir_out = true;
		t->data_ready = true;
	} else {
		t->dir_in = true;
	}
	done_calls = 0;
	lun_task_arrive(ts, t);
	ck_assert_int_eq(done_calls, 1);
	data_len = 0;
	if (!out_len && t->buf) {
		data_len = t->data_in_len;
		memcpy(data, t->buf, data_len);
	}
	lun_task_release(t);
	return t->status;
}

/* ASC/ASCQ of a fixed-format sense in the last task. */
static uint16_t last_asc(void)
{
	return (uint16_t)(task.sense[12] << 8 | task.sense[13]);
}

static uint8_t last_key(void)
{
	return task.sense[2] & 0x0f;
}

static uint8_t tur(struct taskset *ts)
{
	uint8_t cdb[16] = { SOP_TEST_UNIT_READY };

	return run(ts, cdb, 6, NULL, 0);
}

static uint8_t prout(struct taskset *ts, uint8_t sa, uint8_t type,
		     uint64_t rk, uint64_t sark, uint8_t flags)
{
	uint8_t cdb[16] = { SOP_PERSISTENT_RESERVE_OUT, sa, type };
	uint8_t p[24] = { 0 };

	put_be32(cdb + 5, sizeof(p));
	put_be64(p, rk);
	put_be64(p + 8, sark);
	p[20] = flags;
	return run(ts, cdb, 10, p, sizeof(p));
}

static uint8_t prin(struct taskset *ts, uint8_t sa)
{
	uint8_t cdb[16] = { SOP_PERSISTENT_RESERVE_IN, sa };

	put_be16(cdb + 7, 1024);
	return run(ts, cdb, 10, NULL, 0);
}

static uint8_t simple(struct taskset *ts, uint8_t op)
{
	uint8_t cdb[16] = { op };

	if (op == SOP_MODE_SENSE_6) {
		cdb[2] = 0x3f;
		cdb[4] = 0xff;
	} else if (op == SOP_INQUIRY || op == SOP_REQUEST_SENSE) {
		cdb[4] = 0xff;
	}
	return run(ts, cdb, 6, NULL, 0);
}

/* Clears the POWER ON UA of a fresh nexus. */
static struct taskset *nexus(struct fake_nexus *n)
{
	struct taskset *ts = lun_nexus_join(lun, NULL, n);

	ck_assert_ptr_nonnull(ts);
	ck_assert_uint_eq(tur(ts), SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_POWER_ON_RESET);
	ck_assert_uint_eq(tur(ts), SAM_STAT_GOOD);
	return ts;
}

static void setup(void)
{
	snprintf(tgt.name, sizeof(tgt.name), "iqn.2026-11.org.tcq:unit");
	lun = harness_lun_create(&tgt, 0, NULL);
	ck_assert_ptr_nonnull(lun);
	tsa = nexus(&na);
	tsb = nexus(&nb);
}

static void teardown(void)
{
	lun_nexus_leave(tsa);
	lun_nexus_leave(tsb);
	lun_destroy(lun);
}

/* Read through B: the tests leave A's unit attentions for A to see. */
static uint32_t generation(void)
{
	ck_assert_uint_eq(prin(tsb, PRI_READ_KEYS), SAM_STAT_GOOD);
	return get_be32(data);
}

static unsigned nkeys(void)
{
	ck_assert_uint_eq(prin(tsb, PRI_READ_KEYS), SAM_STAT_GOOD);
	return get_be32(data + 4) / 8;
}

/* ---- unit attentions -------------------------------------------------- */

START_TEST(ua_power_on_then_clear)
{
	struct taskset *ts = lun_nexus_join(lun, NULL, &nc);

	/* INQUIRY runs and leaves the UA; the next command reports it. */
	ck_assert_uint_eq(simple(ts, SOP_INQUIRY), SAM_STAT_GOOD);
	ck_assert_uint_eq(tur(ts), SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_key(), SK_UNIT_ATTENTION);
	ck_assert_uint_eq(last_asc(), ASC_POWER_ON_RESET);
	ck_assert_uint_eq(tur(ts), SAM_STAT_GOOD);
	lun_nexus_leave(ts);
}
END_TEST

START_TEST(ua_request_sense_reports_and_queues)
{
	ua_establish(tsa, ASC_CAPACITY_DATA_CHANGED);
	ua_establish(tsa, ASC_MODE_PARAMETERS_CHANGED);
	ua_establish(tsa, ASC_CAPACITY_DATA_CHANGED);	/* not twice */
	ck_assert_uint_eq(simple(tsa, SOP_REQUEST_SENSE), SAM_STAT_GOOD);
	ck_assert_uint_eq(data[2] & 0x0f, SK_UNIT_ATTENTION);
	ck_assert_uint_eq(get_be16(data + 12), ASC_CAPACITY_DATA_CHANGED);
	ck_assert_uint_eq(tur(tsa), SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_MODE_PARAMETERS_CHANGED);
	ck_assert_uint_eq(tur(tsa), SAM_STAT_GOOD);
	ck_assert_uint_eq(simple(tsa, SOP_REQUEST_SENSE), SAM_STAT_GOOD);
	ck_assert_uint_eq(data[2] & 0x0f, SK_NO_SENSE);
	/* Other nexus untouched. */
	ck_assert_uint_eq(tur(tsb), SAM_STAT_GOOD);
}
END_TEST

START_TEST(ua_lun_reset_all)
{
	ua_establish(tsa, ASC_CAPACITY_DATA_CHANGED);
	lun_reset(lun);
	ck_assert_uint_eq(tur(tsa), SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_BUS_DEVICE_RESET);
	ck_assert_uint_eq(tur(tsa), SAM_STAT_GOOD);	/* superseded */
	ck_assert_uint_eq(tur(tsb), SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_BUS_DEVICE_RESET);
}
END_TEST

START_TEST(ua_capacity_changed)
{
	uint8_t cdb[16] = { SOP_READ_CAPACITY_10 };

	lun_capacity_changed(lun, 2048);
	ck_assert_uint_eq(run(tsa, cdb, 10, NULL, 0), SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_CAPACITY_DATA_CHANGED);
	ck_assert_uint_eq(run(tsa, cdb, 10, NULL, 0), SAM_STAT_GOOD);
	ck_assert_uint_eq(get_be32(data), 2047);
	ck_assert_uint_eq(tur(tsb), SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_CAPACITY_DATA_CHANGED);
}
END_TEST

START_TEST(ua_mode_select_other_nexus)
{
	uint8_t cdb[16] = { SOP_MODE_SENSE_6, 0x08, 0x08, 0, 0xff };
	uint8_t p[64];

	ck_assert_uint_eq(run(tsa, cdb, 6, NULL, 0), SAM_STAT_GOOD);
	ck_assert_uint_ge(data_len, 4 + 20);
	memcpy(p, data, 4 + 20);
	p[0] = 0;
	p[4] &= 0x3f;		/* PS */
	p[4 + 2] ^= 0x04;	/* WCE */
	uint8_t sel[16] = { SOP_MODE_SELECT_6, 0x10, 0, 0, 24 };
	ck_assert_uint_eq(run(tsa, sel, 6, p, 24), SAM_STAT_GOOD);
	ck_assert_uint_eq(tur(tsa), SAM_STAT_GOOD);
	ck_assert_uint_eq(tur(tsb), SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_MODE_PARAMETERS_CHANGED);
}
END_TEST

/* ---- PERSISTENT RESERVE ----------------------------------------------- */

START_TEST(pr_register_keys_generation)
{
	uint32_t g0 = generation();

	ck_assert_uint_eq(nkeys(), 0);
	ck_assert_uint_eq(prout(tsa, PRO_REGISTER, 0, 0, 0x1111, 0),
			  SAM_STAT_GOOD);
	/* Unregistered with a non-zero RESERVATION KEY: conflict. */
	ck_assert_uint_eq(prout(tsb, PRO_REGISTER, 0, 5, 0x2222, 0),
			  SAM_STAT_RESERVATION_CONFLICT);
	ck_assert_uint_eq(prout(tsb, PRO_REGISTER_IGNORE, 0, 5, 0x2222, 0),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(nkeys(), 2);
	ck_assert_uint_eq(generation(), g0 + 2);
	ck_assert_uint_eq(get_be64(data + 8), 0x1111);
	ck_assert_uint_eq(get_be64(data + 16), 0x2222);
	/* Registered, wrong key: conflict; right key: change it. */
	ck_assert_uint_eq(prout(tsa, PRO_REGISTER, 0, 0x9, 0x3333, 0),
			  SAM_STAT_RESERVATION_CONFLICT);
	ck_assert_uint_eq(prout(tsa, PRO_REGISTER, 0, 0x1111, 0x3333, 0),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(generation(), g0 + 3);
	ck_assert_uint_eq(get_be64(data + 8), 0x3333);
	/* Unregister. */
	ck_assert_uint_eq(prout(tsa, PRO_REGISTER, 0, 0x3333, 0, 0),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(nkeys(), 1);
	/* Bad parameter list length. */
	uint8_t cdb[16] = { SOP_PERSISTENT_RESERVE_OUT, PRO_REGISTER };
	uint8_t p[20] = { 0 };
	put_be32(cdb + 5, sizeof(p));
	ck_assert_uint_eq(run(tsa, cdb, 10, p, sizeof(p)),
			  SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_PARAMETER_LIST_LENGTH_ERROR);
}
END_TEST

START_TEST(pr_service_action_range)
{
	for (uint8_t sa = 0; sa < 4; sa++)
		ck_assert_uint_eq(prin(tsa, sa), SAM_STAT_GOOD);
	for (uint8_t sa = 4; sa < 0x20; sa++) {
		ck_assert_uint_eq(prin(tsa, sa), SAM_STAT_CHECK_CONDITION);
		ck_assert_uint_eq(last_asc(), ASC_INVALID_FIELD_IN_CDB);
	}
}
END_TEST

START_TEST(pr_report_caps)
{
	ck_assert_uint_eq(prin(tsa, PRI_REPORT_CAPS), SAM_STAT_GOOD);
	ck_assert_uint_eq(data_len, 8);
	ck_assert_uint_eq(get_be16(data), 8);
	ck_assert_uint_eq(data[2], 0x1d);	/* CRH SIP_C ATP_C PTPL_C */
	ck_assert_uint_eq(data[3] & 0x80, 0x80);	/* TMV */
	ck_assert_uint_eq(get_be16(data + 4), 0xea01);
}
END_TEST

/* Access of nexus B while A holds a reservation of type, B registered
 * or not: MODE SENSE stands for reads, MODE SELECT for writes. */
static void access_case(uint8_t type, bool reg_read, bool reg_write,
			bool unreg_read, bool unreg_write)
{
	uint8_t sel[16] = { SOP_MODE_SELECT_6, 0x10 };

	ck_assert_uint_eq(prout(tsa, PRO_REGISTER, 0, 0, 0xa, 0),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(tsb, PRO_REGISTER, 0, 0, 0xb, 0),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(tsa, PRO_RESERVE, type, 0xa, 0, 0),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(prin(tsa, PRI_READ_RESERVATION), SAM_STAT_GOOD);
	ck_assert_uint_eq(get_be32(data + 4), 16);
	ck_assert_uint_eq(get_be64(data + 8),
			  type >= PR_TYPE_WE_AR ? 0 : 0xa);
	ck_assert_uint_eq(data[21], type);
	/* The holder does everything. */
	ck_assert_uint_eq(simple(tsa, SOP_MODE_SENSE_6), SAM_STAT_GOOD);
	ck_assert_uint_eq(run(tsa, sel, 6, NULL, 0), SAM_STAT_GOOD);
	ck_assert_uint_eq(simple(tsb, SOP_MODE_SENSE_6),
			  reg_read ? SAM_STAT_GOOD : SAM_STAT_RESERVATION_CONFLICT);
	ck_assert_uint_eq(run(tsb, sel, 6, NULL, 0),
			  reg_write ? SAM_STAT_GOOD : SAM_STAT_RESERVATION_CONFLICT);
	/* Always allowed. */
	ck_assert_uint_eq(simple(tsb, SOP_INQUIRY), SAM_STAT_GOOD);
	ck_assert_uint_eq(tur(tsb), SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(tsb, PRO_REGISTER, 0, 0xb, 0, 0),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(simple(tsb, SOP_MODE_SENSE_6),
			  unreg_read ? SAM_STAT_GOOD : SAM_STAT_RESERVATION_CONFLICT);
	ck_assert_uint_eq(run(tsb, sel, 6, NULL, 0),
			  unreg_write ? SAM_STAT_GOOD : SAM_STAT_RESERVATION_CONFLICT);
	/* Release with the wrong type, then the right one. */
	ck_assert_uint_eq(prout(tsa, PRO_RELEASE,
				type == PR_TYPE_WE ? PR_TYPE_EA : PR_TYPE_WE,
				0xa, 0, 0), SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_INVALID_RELEASE_OF_PR);
	ck_assert_uint_eq(prout(tsa, PRO_RELEASE, type, 0xa, 0, 0),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(prin(tsa, PRI_READ_RESERVATION), SAM_STAT_GOOD);
	ck_assert_uint_eq(get_be32(data + 4), 0);
	ck_assert_uint_eq(run(tsb, sel, 6, NULL, 0), SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(tsa, PRO_REGISTER, 0, 0xa, 0, 0),
			  SAM_STAT_GOOD);
}

START_TEST(pr_access_we) { access_case(PR_TYPE_WE, 1, 0, 1, 0); }
END_TEST
START_TEST(pr_access_ea) { access_case(PR_TYPE_EA, 0, 0, 0, 0); }
END_TEST
START_TEST(pr_access_wero) { access_case(PR_TYPE_WE_RO, 1, 1, 1, 0); }
END_TEST
START_TEST(pr_access_earo) { access_case(PR_TYPE_EA_RO, 1, 1, 0, 0); }
END_TEST
START_TEST(pr_access_wear) { access_case(PR_TYPE_WE_AR, 1, 1, 1, 0); }
END_TEST
START_TEST(pr_access_eaar) { access_case(PR_TYPE_EA_AR, 1, 1, 0, 0); }
END_TEST

START_TEST(pr_reserve_conflicts)
{
	ck_assert_uint_eq(prout(tsa, PRO_REGISTER, 0, 0, 0xa, 0), SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(tsb, PRO_REGISTER, 0, 0, 0xb, 0), SAM_STAT_GOOD);
	/* Wrong key, unregistered nexus. */
	ck_assert_uint_eq(prout(tsa, PRO_RESERVE, PR_TYPE_WE, 0xb, 0, 0),
			  SAM_STAT_RESERVATION_CONFLICT);
	ck_assert_uint_eq(prout(tsa, PRO_RESERVE, PR_TYPE_WE, 0xa, 0, 0),
			  SAM_STAT_GOOD);
	/* Again with the same type: fine; another type or holder: no. */
	ck_assert_uint_eq(prout(tsa, PRO_RESERVE, PR_TYPE_WE, 0xa, 0, 0),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(tsa, PRO_RESERVE, PR_TYPE_EA, 0xa, 0, 0),
			  SAM_STAT_RESERVATION_CONFLICT);
	ck_assert_uint_eq(prout(tsb, PRO_RESERVE, PR_TYPE_WE, 0xb, 0, 0),
			  SAM_STAT_RESERVATION_CONFLICT);
	/* Invalid type and scope. */
	ck_assert_uint_eq(prout(tsa, PRO_RESERVE, 2, 0xa, 0, 0),
			  SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_INVALID_FIELD_IN_CDB);
	ck_assert_uint_eq(prout(tsa, PRO_RESERVE, 0x10 | PR_TYPE_WE, 0xa, 0, 0),
			  SAM_STAT_CHECK_CONDITION);
	/* A non-holder's RELEASE is GOOD and changes nothing. */
	ck_assert_uint_eq(prout(tsb, PRO_RELEASE, PR_TYPE_WE, 0xb, 0, 0),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(prin(tsa, PRI_READ_RESERVATION), SAM_STAT_GOOD);
	ck_assert_uint_eq(get_be32(data + 4), 16);
	/* CRH: RESERVE(6) from the holder is GOOD, from B a conflict. */
	ck_assert_uint_eq(simple(tsa, SOP_RESERVE_6), SAM_STAT_GOOD);
	ck_assert_uint_eq(simple(tsb, SOP_RESERVE_6),
			  SAM_STAT_RESERVATION_CONFLICT);
	/* Unregistering the holder releases. */
	ck_assert_uint_eq(prout(tsa, PRO_REGISTER, 0, 0xa, 0, 0), SAM_STAT_GOOD);
	ck_assert_uint_eq(prin(tsa, PRI_READ_RESERVATION), SAM_STAT_GOOD);
	ck_assert_uint_eq(get_be32(data + 4), 0);
}
END_TEST

START_TEST(pr_preempt_and_clear)
{
	ck_assert_uint_eq(prout(tsa, PRO_REGISTER, 0, 0, 0xa, 0), SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(tsb, PRO_REGISTER, 0, 0, 0xb, 0), SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(tsa, PRO_RESERVE, PR_TYPE_EA, 0xa, 0, 0),
			  SAM_STAT_GOOD);
	uint32_t g = generation();
	/* Unknown key to preempt: conflict. */
	ck_assert_uint_eq(prout(tsb, PRO_PREEMPT, PR_TYPE_WE, 0xb, 0x77, 0),
			  SAM_STAT_RESERVATION_CONFLICT);
	ck_assert_uint_eq(prout(tsb, PRO_PREEMPT_ABORT, PR_TYPE_WE, 0xb, 0xa,
				0), SAM_STAT_GOOD);
	ck_assert_uint_eq(generation(), g + 1);
	ck_assert_uint_eq(get_be32(data + 4), 8);
	ck_assert_uint_eq(get_be64(data + 8), 0xb);
	ck_assert_uint_eq(prin(tsb, PRI_READ_RESERVATION), SAM_STAT_GOOD);
	ck_assert_uint_eq(get_be64(data + 8), 0xb);
	ck_assert_uint_eq(data[21], PR_TYPE_WE);
	/* A learns it was preempted; B itself gets no UA. */
	ck_assert_uint_eq(tur(tsa), SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_REGISTRATIONS_PREEMPTED);
	ck_assert_uint_eq(tur(tsa), SAM_STAT_GOOD);
	ck_assert_uint_eq(tur(tsb), SAM_STAT_GOOD);
	/* Preempt without a reservation removes registrations only. */
	ck_assert_uint_eq(prout(tsa, PRO_REGISTER, 0, 0, 0xa, 0), SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(tsb, PRO_RELEASE, PR_TYPE_WE, 0xb, 0, 0),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(tsb, PRO_PREEMPT, PR_TYPE_WE, 0xb, 0, 0),
			  SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	ck_assert_uint_eq(prout(tsb, PRO_PREEMPT, PR_TYPE_WE, 0xb, 0xa, 0),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(nkeys(), 1);
	ck_assert_uint_eq(prin(tsb, PRI_READ_RESERVATION), SAM_STAT_GOOD);
	ck_assert_uint_eq(get_be32(data + 4), 0);
	ck_assert_uint_eq(tur(tsa), SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_REGISTRATIONS_PREEMPTED);
	/* CLEAR drops everything and tells the others. */
	ck_assert_uint_eq(prout(tsa, PRO_REGISTER, 0, 0, 0xa, 0), SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(tsb, PRO_RESERVE, PR_TYPE_WE, 0xb, 0, 0),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(tsb, PRO_CLEAR, 0, 0xa, 0, 0),
			  SAM_STAT_RESERVATION_CONFLICT);
	ck_assert_uint_eq(prout(tsb, PRO_CLEAR, 0, 0xb, 0, 0), SAM_STAT_GOOD);
	ck_assert_uint_eq(nkeys(), 0);
	ck_assert_uint_eq(tur(tsa), SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_RESERVATIONS_PREEMPTED);
	ck_assert_uint_eq(tur(tsb), SAM_STAT_GOOD);
	ck_assert_uint_eq(lun->resv_active, 0);
}
END_TEST

START_TEST(pr_all_registrants_release_ua)
{
	ck_assert_uint_eq(prout(tsa, PRO_REGISTER, 0, 0, 0xa, 0), SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(tsb, PRO_REGISTER, 0, 0, 0xb, 0), SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(tsa, PRO_RESERVE, PR_TYPE_WE_AR, 0xa, 0, 0),
			  SAM_STAT_GOOD);
	/* Every registrant holds it: B may release it too. */
	ck_assert_uint_eq(prout(tsb, PRO_RELEASE, PR_TYPE_WE_AR, 0xb, 0, 0),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(tur(tsa), SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_RESERVATIONS_RELEASED);
	ck_assert_uint_eq(tur(tsb), SAM_STAT_GOOD);
}
END_TEST

START_TEST(pr_full_status_and_move)
{
	ck_assert_uint_eq(prout(tsa, PRO_REGISTER, 0, 0, 0xa, 0x04 /* ALL_TG_PT */),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(tsa, PRO_RESERVE, PR_TYPE_EA, 0xa, 0, 0),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(prin(tsa, PRI_READ_FULL_STATUS), SAM_STAT_GOOD);
	size_t plen = strlen(na.port) + 1, tl = (plen + 3) & ~3u;
	ck_assert_uint_eq(get_be32(data + 4), 24 + 4 + tl);
	ck_assert_uint_eq(get_be64(data + 8), 0xa);
	ck_assert_uint_eq(data[8 + 12], 0x03);	/* ALL_TG_PT, R_HOLDER */
	ck_assert_uint_eq(data[8 + 13], PR_TYPE_EA);
	ck_assert_uint_eq(get_be32(data + 8 + 20), 4 + tl);
	ck_assert_uint_eq(data[8 + 24], 0x45);	/* format 01b, iSCSI */
	ck_assert_uint_eq(get_be16(data + 8 + 26), tl);
	ck_assert_str_eq((const char *)data + 8 + 28, na.port);

	/* REGISTER AND MOVE to B (not registered yet), A unregistered. */
	uint8_t cdb[16] = { SOP_PERSISTENT_RESERVE_OUT, PRO_REGISTER_MOVE,
			    PR_TYPE_EA };
	uint8_t p[24 + 4 + 64] = { 0 };
	size_t bl = strlen(nb.port) + 1, btl = (bl + 3) & ~3u;
	put_be64(p, 0xa);
	put_be64(p + 8, 0xb);
	p[17] = 0x02;		/* UNREG */
	put_be16(p + 18, lun->rel_port_id);
	put_be32(p + 20, (uint32_t)(4 + btl));
	p[24] = 0x45;
	put_be16(p + 26, (uint16_t)btl);
	memcpy(p + 28, nb.port, bl);
	put_be32(cdb + 5, (uint32_t)(28 + btl));
	ck_assert_uint_eq(run(tsa, cdb, 10, p, (uint32_t)(28 + btl)),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(prin(tsb, PRI_READ_RESERVATION), SAM_STAT_GOOD);
	ck_assert_uint_eq(get_be64(data + 8), 0xb);
	ck_assert_uint_eq(nkeys(), 1);
	ck_assert_uint_eq(simple(tsa, SOP_MODE_SENSE_6),
			  SAM_STAT_RESERVATION_CONFLICT);
	ck_assert_uint_eq(simple(tsb, SOP_MODE_SENSE_6), SAM_STAT_GOOD);
}
END_TEST

START_TEST(pr_spec_i_pt)
{
	uint8_t cdb[16] = { SOP_PERSISTENT_RESERVE_OUT, PRO_REGISTER };
	uint8_t p[28 + 64] = { 0 };
	/* Name-only TransportID (format 00b): every ISID of init2. */
	const char *name = "iqn.2026-11.org.tcq:init2";
	size_t nl = strlen(name) + 1, tl = (nl + 3) & ~3u;

	put_be64(p + 8, 0x5a);
	p[20] = 0x08;		/* SPEC_I_PT */
	put_be32(p + 24, (uint32_t)(4 + tl));
	p[28] = 0x05;
	put_be16(p + 30, (uint16_t)tl);
	memcpy(p + 32, name, nl);
	put_be32(cdb + 5, (uint32_t)(32 + tl));
	ck_assert_uint_eq(run(tsa, cdb, 10, p, (uint32_t)(32 + tl)),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(nkeys(), 2);
	/* B is registered through it: it can reserve with that key. */
	ck_assert_uint_eq(prout(tsb, PRO_RESERVE, PR_TYPE_WE, 0x5a, 0, 0),
			  SAM_STAT_GOOD);
	/* A malformed TransportID is refused. */
	p[28] = 0x01;		/* not iSCSI */
	ck_assert_uint_eq(prout(tsb, PRO_REGISTER, 0, 0x5a, 0, 0),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(tsa, PRO_REGISTER, 0, 0x5a, 0, 0),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(run(tsa, cdb, 10, p, (uint32_t)(32 + tl)),
			  SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	ck_assert_uint_eq(nkeys(), 0);
	/* So is a name with a control character or a space (RFC 3722):
	 * a newline would split the APTPL file's line
	 * (tests/fuzz/regress/pr_out/aptpl-newline-in-transport-id). */
	p[28] = 0x05;
	p[32 + 24] = '\n';	/* after "iqn.2026-11.org.tcq:init" */
	ck_assert_uint_eq(run(tsa, cdb, 10, p, (uint32_t)(32 + tl)),
			  SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	p[32 + 24] = ' ';
	ck_assert_uint_eq(run(tsa, cdb, 10, p, (uint32_t)(32 + tl)),
			  SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	ck_assert_uint_eq(nkeys(), 0);
	/* The name as it was registers again. */
	p[32 + 24] = '2';
	ck_assert_uint_eq(run(tsa, cdb, 10, p, (uint32_t)(32 + tl)),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(nkeys(), 2);
}
END_TEST

START_TEST(spc2_reserve_release)
{
	ck_assert_uint_eq(simple(tsa, SOP_RESERVE_6), SAM_STAT_GOOD);
	ck_assert_uint_eq(simple(tsa, SOP_RESERVE_6), SAM_STAT_GOOD);
	ck_assert_uint_eq(simple(tsb, SOP_RESERVE_6),
			  SAM_STAT_RESERVATION_CONFLICT);
	ck_assert_uint_eq(simple(tsb, SOP_MODE_SENSE_6),
			  SAM_STAT_RESERVATION_CONFLICT);
	ck_assert_uint_eq(tur(tsb), SAM_STAT_RESERVATION_CONFLICT);
	ck_assert_uint_eq(prin(tsb, PRI_READ_KEYS),
			  SAM_STAT_RESERVATION_CONFLICT);
	ck_assert_uint_eq(simple(tsb, SOP_INQUIRY), SAM_STAT_GOOD);
	/* B's RELEASE is GOOD and releases nothing. */
	ck_assert_uint_eq(simple(tsb, SOP_RELEASE_6), SAM_STAT_GOOD);
	ck_assert_uint_eq(tur(tsb), SAM_STAT_RESERVATION_CONFLICT);
	ck_assert_uint_eq(simple(tsa, SOP_MODE_SENSE_6), SAM_STAT_GOOD);
	ck_assert_uint_eq(simple(tsa, SOP_RELEASE_6), SAM_STAT_GOOD);
	ck_assert_uint_eq(tur(tsb), SAM_STAT_GOOD);
	/* RESERVE(10) and the loss of the holding nexus. */
	ck_assert_uint_eq(simple(tsb, SOP_RESERVE_10), SAM_STAT_GOOD);
	ck_assert_uint_eq(tur(tsa), SAM_STAT_RESERVATION_CONFLICT);
	lun_nexus_leave(tsb);
	tsb = nexus(&nb);
	ck_assert_uint_eq(tur(tsa), SAM_STAT_GOOD);
	/* A LUN reset ends it too. */
	ck_assert_uint_eq(simple(tsa, SOP_RESERVE_6), SAM_STAT_GOOD);
	lun_reset(lun);
	ck_assert_uint_eq(tur(tsb), SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(tur(tsb), SAM_STAT_GOOD);
	/* Third-party reservations are not supported. */
	uint8_t cdb[16] = { SOP_RESERVE_6, 0x10 };
	ck_assert_uint_eq(tur(tsa), SAM_STAT_CHECK_CONDITION);	/* the reset */
	ck_assert_uint_eq(run(tsa, cdb, 6, NULL, 0), SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_INVALID_FIELD_IN_CDB);
}
END_TEST

/* ---- APTPL ------------------------------------------------------------ */

START_TEST(pr_aptpl_persists)
{
	char dir[] = "/tmp/tcq-test-pr-XXXXXX", path[512], err[256];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	tgt.state_dir = dir;	/* where the device keeps APTPL files */
	ck_assert_uint_eq(prout(tsa, PRO_REGISTER, 0, 0, 0xa, 0x01),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(tsb, PRO_REGISTER, 0, 0, 0xb, 0x01),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(tsa, PRO_RESERVE, PR_TYPE_WE_RO, 0xa, 0, 0),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(prin(tsa, PRI_REPORT_CAPS), SAM_STAT_GOOD);
	ck_assert_uint_eq(data[3] & 0x01, 1);	/* PTPL_A */
	uint32_t g = generation();
	ck_assert_int_eq(pr_state_path(lun, dir, path, sizeof(path)), 0);
	ck_assert_int_eq(access(path, R_OK), 0);

	/* A "restart": a new LUN object reads the file. */
	struct lun *l2 = harness_lun_create(&tgt, 0, NULL);
	ck_assert_int_eq(pr_load(l2, dir, err, sizeof(err)), 0);
	ck_assert_int_eq(l2->resv_active, 1);
	struct lun *old = lun;
	lun = l2;
	struct taskset *t2 = nexus(&nb);
	ck_assert_uint_eq(prin(t2, PRI_READ_KEYS), SAM_STAT_GOOD);
	ck_assert_uint_eq(get_be32(data), g);
	ck_assert_uint_eq(get_be32(data + 4), 16);
	ck_assert_uint_eq(prin(t2, PRI_READ_RESERVATION), SAM_STAT_GOOD);
	ck_assert_uint_eq(get_be64(data + 8), 0xa);
	ck_assert_uint_eq(data[21], PR_TYPE_WE_RO);
	lun_nexus_leave(t2);
	lun_destroy(l2);
	lun = old;

	/* APTPL off: the file goes. */
	ck_assert_uint_eq(prout(tsa, PRO_REGISTER, 0, 0xa, 0xc, 0),
			  SAM_STAT_GOOD);
	ck_assert_int_ne(access(path, F_OK), 0);
	/* A corrupt file is an error at start-up. */
	FILE *f = fopen(path, "w");
	fputs("garbage\n", f);
	fclose(f);
	ck_assert_int_eq(pr_load(lun, dir, err, sizeof(err)), -1);
	unlink(path);
	rmdir(dir);
	tgt.state_dir = NULL;
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("pr");
	TCase *ua = tcase_create("ua"), *pr = tcase_create("pr");

	tcase_add_checked_fixture(ua, setup, teardown);
	tcase_add_checked_fixture(pr, setup, teardown);
	harness_add(ua, ua_power_on_then_clear);
	harness_add(ua, ua_request_sense_reports_and_queues);
	harness_add(ua, ua_lun_reset_all);
	harness_add(ua, ua_capacity_changed);
	harness_add(ua, ua_mode_select_other_nexus);
	harness_add(pr, pr_register_keys_generation);
	harness_add(pr, pr_service_action_range);
	harness_add(pr, pr_report_caps);
	harness_add(pr, pr_access_we);
	harness_add(pr, pr_access_ea);
	harness_add(pr, pr_access_wero);
	harness_add(pr, pr_access_earo);
	harness_add(pr, pr_access_wear);
	harness_add(pr, pr_access_eaar);
	harness_add(pr, pr_reserve_conflicts);
	harness_add(pr, pr_preempt_and_clear);
	harness_add(pr, pr_all_registrants_release_ua);
	harness_add(pr, pr_full_status_and_move);
	harness_add(pr, pr_spec_i_pt);
	harness_add(pr, spc2_reserve_release);
	harness_add(pr, pr_aptpl_persists);
	suite_add_tcase(s, ua);
	suite_add_tcase(s, pr);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, suite);
}
