/*
 * Reservations kept in a LUN store (scsi/pr_store.c) against an in-memory
 * store: the serialization round trip, two "gateways" (two LUNs, each its
 * own store handle on one shared object) seeing each other's changes and
 * unit attentions, and the compare-and-set retry when another writer gets
 * in between the load and the write.
 */
#include <check.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/sdev.h"
#include "scsi/lun.h"
#include "backend/lun_store.h"
#include "scsi/pr.h"
#include "scsi/pr_priv.h"
#include "scsi/taskset.h"
#include "tests/unit/harness.h"

/* ---- the in-memory store ------------------------------------------------ */

#define MAX_HANDLES 4

struct mem_obj {
	pthread_mutex_t lock;
	uint8_t blob[LUN_STORE_BLOB_MAX];
	size_t len;
	uint64_t version;
	struct lun_store *handles[MAX_HANDLES];
	int nhandles;
	int cas_calls, cas_conflicts, notifies;
	/* Before the next cas: another writer stores this blob first. */
	uint8_t *interloper;
	size_t interloper_len;
};

static struct mem_obj obj = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int mem_load(struct lun_store *s, void *buf, size_t cap, size_t *len,
		    uint64_t *version)
{
	struct mem_obj *o = s->priv;

	pthread_mutex_lock(&o->lock);
	*len = o->len;
	*version = o->version;
	if (o->len <= cap)
		memcpy(buf, o->blob, o->len);
	pthread_mutex_unlock(&o->lock);
	return *len <= cap ? 0 : -EFBIG;
}

static int mem_cas(struct lun_store *s, uint64_t version, const void *buf,
		   size_t len)
{
	struct mem_obj *o = s->priv;
	int rc = 0;

	pthread_mutex_lock(&o->lock);
	o->cas_calls++;
	if (o->interloper) {
		memcpy(o->blob, o->interloper, o->interloper_len);
		o->len = o->interloper_len;
		o->version++;
		free(o->interloper);
		o->interloper = NULL;
	}
	if (version != o->version) {
		o->cas_conflicts++;
		rc = LUN_STORE_CONFLICT;
	} else {
		memcpy(o->blob, buf, len);
		o->len = len;
		o->version++;
	}
	pthread_mutex_unlock(&o->lock);
	return rc;
}

/* Delivers to every handle (the sender's own included), as RADOS does,
 * synchronously: the acks are the returns. */
static int mem_notify(struct lun_store *s, const void *msg, size_t len,
		      unsigned timeout_ms)
{
	struct mem_obj *o = s->priv;

	o->notifies++;
	for (int i = 0; i < o->nhandles; i++) {
		struct lun_store *h = o->handles[i];

		if (h->on_msg)
			h->on_msg(h->arg, msg, len);
	}
	return 0;
}

static void mem_close(struct lun_store *s)
{
	struct mem_obj *o = s->priv;

	for (int i = 0; i < o->nhandles; i++)
		if (o->handles[i] == s)
			o->handles[i] = o->handles[--o->nhandles];
}

static const struct lun_store_ops mem_ops = {
	mem_load, mem_cas, mem_notify, mem_close,
};

static struct lun_store *mem_open(void)
{
	struct lun_store *s = calloc(1, sizeof(*s));

	ck_assert_ptr_nonnull(s);
	lun_store_init(s, &mem_ops, &obj, "mem");
	obj.handles[obj.nhandles++] = s;
	return s;
}

/* ---- nexuses and commands ----------------------------------------------- */

struct fake_nexus {
	const char *port;
};

static struct fake_nexus na = { "iqn.2026-11.org.tcq:init1,i,0x230000000001" };
static struct fake_nexus nb = { "iqn.2026-11.org.tcq:init2,i,0x230000000002" };

static const char *fake_port(const void *nexus)
{
	return ((const struct fake_nexus *)nexus)->port;
}

static const struct sdev_ops fake_ops = { .initiator_port = fake_port };

/* Two gateways: LUN g1 and LUN g2 on one object. */
static struct sdev tgt1 = { .ops = &fake_ops }, tgt2;
static struct lun *g1, *g2;
static struct taskset *a1, *b1, *a2, *b2;	/* nexus a and b on each */
static struct tcq_task task;
static int done_calls;
static uint8_t data[4096];
static uint32_t data_len;

static void done_cb(struct tcq_task *t)
{
	__atomic_add_fetch(&done_calls, 1, __ATOMIC_RELEASE);
}

/* Runs one command; PR commands finish on the store's worker. */
static uint8_t run(struct taskset *ts, const uint8_t *cdb, unsigned clen,
		   const void *out, uint32_t out_len)
{
	struct tcq_task *t = &task;
	static uint8_t obuf[1024];
	struct timespec ms = { 0, 1000000 };

	memset(t, 0, sizeof(*t));
	memcpy(t->cdb, cdb, clen);
	t->cdb_len = 16;
	t->lun = ts->lun;
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
	for (int i = 0; i < 5000 &&
	     !__atomic_load_n(&done_calls, __ATOMIC_ACQUIRE); i++)
		nanosleep(&ms, NULL);
	ck_assert_int_eq(done_calls, 1);
	data_len = 0;
	if (!out_len && t->buf) {
		data_len = t->data_in_len;
		memcpy(data, t->buf, data_len);
	}
	lun_task_release(t);
	return t->status;
}

static uint16_t last_asc(void)
{
	return (uint16_t)(task.sense[12] << 8 | task.sense[13]);
}

static uint8_t tur(struct taskset *ts)
{
	uint8_t cdb[16] = { SOP_TEST_UNIT_READY };

	return run(ts, cdb, 6, NULL, 0);
}

static uint8_t write10(struct taskset *ts)
{
	uint8_t cdb[16] = { SOP_WRITE_10 };
	static uint8_t blk[512];

	put_be16(cdb + 7, 1);
	return run(ts, cdb, 10, blk, sizeof(blk));
}

static uint8_t prout(struct taskset *ts, uint8_t sa, uint8_t type,
		     uint64_t rk, uint64_t sark)
{
	uint8_t cdb[16] = { SOP_PERSISTENT_RESERVE_OUT, sa, type };
	uint8_t p[24] = { 0 };

	put_be32(cdb + 5, sizeof(p));
	put_be64(p, rk);
	put_be64(p + 8, sark);
	return run(ts, cdb, 10, p, sizeof(p));
}

static uint8_t read_keys(struct taskset *ts)
{
	uint8_t cdb[16] = { SOP_PERSISTENT_RESERVE_IN, PRI_READ_KEYS };

	put_be16(cdb + 7, 1024);
	return run(ts, cdb, 10, NULL, 0);
}

/* Clears pending UAs of ts (each new nexus starts with POWER ON). */
static void drain_ua(struct taskset *ts)
{
	for (int i = 0; i < 8 && tur(ts) != SAM_STAT_GOOD; i++)
		;
}

static void setup(void)
{
	char err[256];

	memset(&obj.blob, 0, sizeof(obj.blob));
	obj.len = 0;
	obj.version = 0;
	obj.nhandles = 0;
	obj.cas_calls = obj.cas_conflicts = obj.notifies = 0;
	snprintf(tgt1.name, sizeof(tgt1.name), "iqn.2026-11.org.tcq:gw");
	tgt2 = tgt1;
	g1 = harness_lun_create(&tgt1, 0, NULL);
	g2 = harness_lun_create(&tgt2, 0, NULL);
	ck_assert_ptr_nonnull(g1);
	ck_assert_ptr_nonnull(g2);
	g1->rel_port_id = 1;
	g2->rel_port_id = 2;
	ck_assert_int_eq(pr_store_attach(g1, mem_open(), err, sizeof(err)), 0);
	ck_assert_int_eq(pr_store_attach(g2, mem_open(), err, sizeof(err)), 0);
	a1 = lun_nexus_join(g1, NULL, &na);
	b1 = lun_nexus_join(g1, NULL, &nb);
	a2 = lun_nexus_join(g2, NULL, &na);
	b2 = lun_nexus_join(g2, NULL, &nb);
	drain_ua(a1);
	drain_ua(b1);
	drain_ua(a2);
	drain_ua(b2);
}

static void teardown(void)
{
	lun_nexus_leave(a1);
	lun_nexus_leave(b1);
	lun_nexus_leave(a2);
	lun_nexus_leave(b2);
	lun_destroy(g1);
	lun_destroy(g2);
}

/* ---- serialization ------------------------------------------------------ */

static struct pr_state ps_in, ps_out;
static uint8_t blob[LUN_STORE_BLOB_MAX];

static void fill_state(struct pr_state *ps)
{
	memset(ps, 0, sizeof(*ps));
	ps->generation = 7;
	ps->nregs = 3;
	for (unsigned i = 0; i < ps->nregs; i++) {
		ps->regs[i].key = 0x1111000000000000ull + i;
		snprintf(ps->regs[i].port, PR_PORT_MAX,
			 "iqn.2026-11.org.tcq:i%u,i,0x23000000000%u", i, i);
	}
	ps->regs[1].holder = true;
	ps->regs[2].all_tg_pt = true;
	ps->resv = true;
	ps->type = PR_TYPE_EA_RO;
	ps->aptpl = true;
	ps->r2 = true;
	snprintf(ps->r2_port, PR_PORT_MAX, "iqn.2026-11.org.tcq:x,i,0x1");
	ps->r2_rtpi = 3;
	ps->r2_gw = 0xfeedfacecafebeefull;
}

START_TEST(round_trip)
{
	size_t n;

	fill_state(&ps_in);
	n = pr_encode(&ps_in, blob, sizeof(blob));
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(pr_decode(&ps_out, blob, n), 0);
	ck_assert_uint_eq(ps_out.generation, 7);
	ck_assert_uint_eq(ps_out.nregs, 3);
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_uint_eq(ps_out.regs[i].key, ps_in.regs[i].key);
		ck_assert_str_eq(ps_out.regs[i].port, ps_in.regs[i].port);
		ck_assert_int_eq(ps_out.regs[i].holder, ps_in.regs[i].holder);
		ck_assert_int_eq(ps_out.regs[i].all_tg_pt,
				 ps_in.regs[i].all_tg_pt);
	}
	ck_assert(ps_out.resv);
	ck_assert_uint_eq(ps_out.type, PR_TYPE_EA_RO);
	ck_assert(ps_out.aptpl);
	ck_assert(ps_out.r2);
	ck_assert_str_eq(ps_out.r2_port, ps_in.r2_port);
	ck_assert_uint_eq(ps_out.r2_rtpi, 3);
	ck_assert_uint_eq(ps_out.r2_gw, 0xfeedfacecafebeefull);
	ck_assert_ptr_null(ps_out.r2_nexus);
	/* Too small a buffer: nothing, not a cut blob. */
	ck_assert_uint_eq(pr_encode(&ps_in, blob, n - 1), 0);
}
END_TEST

START_TEST(malformed_rejected)
{
	size_t n;

	fill_state(&ps_in);
	n = pr_encode(&ps_in, blob, sizeof(blob));
	/* Every truncation, and trailing garbage. */
	for (size_t cut = 0; cut < n; cut++)
		ck_assert_int_eq(pr_decode(&ps_out, blob, cut), -1);
	ck_assert_int_eq(pr_decode(&ps_out, blob, n + 1), -1);
	/* Bad magic. */
	blob[0] ^= 1;
	ck_assert_int_eq(pr_decode(&ps_out, blob, n), -1);
	blob[0] ^= 1;
	/* A reservation type that does not exist (byte 9). */
	blob[9] = 2;
	ck_assert_int_eq(pr_decode(&ps_out, blob, n), -1);
	blob[9] = PR_TYPE_EA_RO;
	/* More registrations than a LUN holds (bytes 10-11). */
	put_be16(blob + 10, PR_REGS_MAX + 1);
	ck_assert_int_eq(pr_decode(&ps_out, blob, n), -1);
	put_be16(blob + 10, 3);
	ck_assert_int_eq(pr_decode(&ps_out, blob, n), 0);
}
END_TEST

/* ---- two gateways ------------------------------------------------------- */

START_TEST(shared_between_gateways)
{
	/* a registers and reserves Write Exclusive through gateway 1. */
	ck_assert_uint_eq(prout(a1, PRO_REGISTER, 0, 0, 0xaa), SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(a1, PRO_RESERVE, PR_TYPE_WE, 0xaa, 0),
			  SAM_STAT_GOOD);
	/* Gateway 2 knows it without asking the store: its data path
	 * refuses b's write, lets a's through. */
	ck_assert(pr_active(g2));
	ck_assert_uint_eq(write10(b2), SAM_STAT_RESERVATION_CONFLICT);
	ck_assert_uint_ne(write10(a2), SAM_STAT_RESERVATION_CONFLICT);
	ck_assert_uint_eq(read_keys(b2), SAM_STAT_GOOD);
	ck_assert_uint_eq(get_be32(data + 4), 8);
	ck_assert_uint_eq(get_be64(data + 8), 0xaa);
	/* b registers through gateway 2 and preempts a: a's nexus on
	 * gateway 1 gets REGISTRATIONS PREEMPTED. */
	ck_assert_uint_eq(prout(b2, PRO_REGISTER, 0, 0, 0xbb), SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(b2, PRO_PREEMPT, PR_TYPE_WE, 0xbb, 0xaa),
			  SAM_STAT_GOOD);
	ck_assert_uint_eq(tur(a1), SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(last_asc(), ASC_REGISTRATIONS_PREEMPTED);
	ck_assert_uint_eq(tur(a1), SAM_STAT_GOOD);
	/* Nexus b on gateway 2 caused it and gets none. */
	ck_assert_uint_eq(tur(b2), SAM_STAT_GOOD);
	/* Gateway 1's copy: b holds it now, a's write conflicts there. */
	ck_assert_uint_eq(write10(a1), SAM_STAT_RESERVATION_CONFLICT);
	ck_assert_uint_eq(read_keys(a1), SAM_STAT_GOOD);
	ck_assert_uint_eq(get_be32(data + 4), 8);
	ck_assert_uint_eq(get_be64(data + 8), 0xbb);
	ck_assert_uint_eq(prout(b1, PRO_CLEAR, 0, 0xbb, 0), SAM_STAT_GOOD);
	ck_assert(!pr_active(g1));
	ck_assert(!pr_active(g2));
}
END_TEST

/* Another writer gets in between our load and our write: the command
 * loads again and applies itself on top, losing nothing. */
START_TEST(cas_retry)
{
	struct pr_state other;
	size_t n;

	ck_assert_uint_eq(prout(a1, PRO_REGISTER, 0, 0, 0xaa), SAM_STAT_GOOD);
	ck_assert_int_eq(obj.cas_conflicts, 0);
	/* The interloper: the stored state plus a registration of b. */
	pthread_mutex_lock(&obj.lock);
	ck_assert_int_eq(pr_decode(&other, obj.blob, obj.len), 0);
	other.regs[other.nregs].key = 0xbb;
	snprintf(other.regs[other.nregs].port, PR_PORT_MAX, "%s", nb.port);
	other.nregs++;
	other.generation++;
	obj.interloper = malloc(LUN_STORE_BLOB_MAX);
	n = pr_encode(&other, obj.interloper, LUN_STORE_BLOB_MAX);
	obj.interloper_len = n;
	obj.cas_calls = 0;
	pthread_mutex_unlock(&obj.lock);

	ck_assert_uint_eq(prout(a1, PRO_RESERVE, PR_TYPE_EA, 0xaa, 0),
			  SAM_STAT_GOOD);
	ck_assert_int_eq(obj.cas_calls, 2);
	ck_assert_int_eq(obj.cas_conflicts, 1);
	/* Both changes stand: b's key (the interloper's) and a's
	 * reservation (ours). */
	pthread_mutex_lock(&obj.lock);
	ck_assert_int_eq(pr_decode(&other, obj.blob, obj.len), 0);
	pthread_mutex_unlock(&obj.lock);
	ck_assert_uint_eq(other.nregs, 2);
	ck_assert(other.resv);
	ck_assert_uint_eq(other.type, PR_TYPE_EA);
	/* And gateway 2 enforces it: b is registered but not the holder of
	 * an Exclusive Access reservation; a (through either gateway) is. */
	ck_assert_uint_eq(write10(b2), SAM_STAT_RESERVATION_CONFLICT);
	ck_assert_uint_ne(write10(a2), SAM_STAT_RESERVATION_CONFLICT);
}
END_TEST

/* A gateway that starts later finds the state in the store. */
START_TEST(restart_loads)
{
	struct sdev t3 = tgt1;
	struct lun *g3 = harness_lun_create(&t3, 0, NULL);
	struct taskset *b3;
	char err[256];

	ck_assert_uint_eq(prout(a1, PRO_REGISTER, 0, 0, 0xaa), SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(a1, PRO_RESERVE, PR_TYPE_EA, 0xaa, 0),
			  SAM_STAT_GOOD);
	ck_assert_ptr_nonnull(g3);
	ck_assert_int_eq(pr_store_attach(g3, mem_open(), err, sizeof(err)), 0);
	ck_assert(pr_active(g3));
	b3 = lun_nexus_join(g3, NULL, &nb);
	drain_ua(b3);
	ck_assert_uint_eq(write10(b3), SAM_STAT_RESERVATION_CONFLICT);
	lun_nexus_leave(b3);
	lun_destroy(g3);
}
END_TEST

/* A gateway that missed a message (its notify never arrived) catches up
 * by itself: the worker re-reads the stored state when idle. */
START_TEST(missed_message_refreshes)
{
	struct sdev t3 = tgt1;
	struct lun *g3 = harness_lun_create(&t3, 0, NULL);
	struct lun_store *s3 = mem_open();
	struct taskset *b3;
	struct pr_state st;
	char err[256];
	int i;

	ck_assert_ptr_nonnull(g3);
	mem_close(s3);		/* deaf: no message reaches it */
	s3->refresh_ms = 20;
	ck_assert_int_eq(pr_store_attach(g3, s3, err, sizeof(err)), 0);
	ck_assert(!pr_active(g3));
	b3 = lun_nexus_join(g3, NULL, &nb);
	drain_ua(b3);

	ck_assert_uint_eq(prout(a1, PRO_REGISTER, 0, 0, 0xaa), SAM_STAT_GOOD);
	ck_assert_uint_eq(prout(a1, PRO_RESERVE, PR_TYPE_EA, 0xaa, 0),
			  SAM_STAT_GOOD);
	pthread_mutex_lock(&obj.lock);
	ck_assert_int_eq(pr_decode(&st, obj.blob, obj.len), 0);
	pthread_mutex_unlock(&obj.lock);
	ck_assert(st.resv);
	/* Within a few refresh periods gateway 3 enforces it. */
	for (i = 0; i < 200 && !pr_active(g3); i++)
		usleep(10000);
	ck_assert_msg(pr_active(g3), "gateway 3 never saw the reservation");
	ck_assert_uint_eq(write10(b3), SAM_STAT_RESERVATION_CONFLICT);
	lun_nexus_leave(b3);
	lun_destroy(g3);
}
END_TEST

static Suite *lun_store_suite(void)
{
	Suite *s = suite_create("lun_store");
	TCase *c = tcase_create("serialize");

	harness_add(c, round_trip);
	harness_add(c, malformed_rejected);
	suite_add_tcase(s, c);
	c = tcase_create("gateways");
	tcase_add_checked_fixture(c, setup, teardown);
	harness_add(c, shared_between_gateways);
	harness_add(c, cas_retry);
	harness_add(c, restart_loads);
	harness_add(c, missed_message_refreshes);
	suite_add_tcase(s, c);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, lun_store_suite);
}
