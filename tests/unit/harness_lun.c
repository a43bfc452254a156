/* The LUN fixture: a device with LUN 0 over a backend, nexuses on the
 * test thread's reactor, and commands run through lun_task_arrive as the
 * transport runs them. */
#include <stdlib.h>
#include <string.h>
#include "tcq/bufpool.h"
#include "tcq/scsi_proto.h"
#include "backend/bdev.h"
#include "scsi/taskset.h"
#include "tests/unit/harness.h"

#define HARNESS_IQN "iqn.2026-11.org.tcq:unit"

void harness_lun_open_bdev(struct harness_lun *h, struct bdev *bd)
{
	memset(h, 0, sizeof(*h));
	list_init(&h->cmds);
	ck_assert_int_eq(reactor_init(&h->r, 0), 0);
	h->bd = bd;
	strcpy(h->dev.name, HARNESS_IQN);
	h->lun = harness_lun_create(&h->dev, 0, bd);
	ck_assert_ptr_nonnull(h->lun);
	h->dev.luns[0] = h->lun;
	h->dev.nluns = 1;
}

void harness_lun_open(struct harness_lun *h, const char *spec, uint64_t size)
{
	struct bdev_params bp = { .size = size, .queue_depth = 8 };
	char err[256];
	struct bdev *bd = bdev_open(spec, &bp, err, sizeof(err));

	ck_assert_msg(bd != NULL, "%s: %s", spec, err);
	harness_lun_open_bdev(h, bd);
}

void harness_nexus_join(struct harness_lun *h, unsigned n)
{
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };

	ck_assert_uint_le(h->nnexus + n, HARNESS_NEXUSES);
	for (unsigned i = h->nnexus; i < h->nnexus + n; i++) {
		h->ts[i] = lun_nexus_join(h->lun, &h->r, &h->nexus[i]);
		ck_assert_ptr_nonnull(h->ts[i]);
	}
	n += h->nnexus;
	for (unsigned i = h->nnexus; i < n; i++) {
		h->nnexus = i + 1;
		/* SAM-5 5.14: a new I_T nexus first hears of the power on. */
		EXPECT_SENSE(run_cdb(h, i, tur, sizeof(tur), NULL, 0, 0),
			     SK_UNIT_ATTENTION, 0x29, 0x00);
		/* POWER ON, RESET, OR BUS DEVICE RESET OCCURRED */
	}
}

void harness_lun_setup(struct harness_lun *h, const char *spec,
		       uint64_t size, unsigned nexuses)
{
	harness_lun_open(h, spec, size);
	harness_nexus_join(h, nexuses);
}

static void cmd_free(struct cmd *c)
{
	if (c->t.dir_out && c->t.buf)
		bufpool_free(c->t.buf, c->t.buf_len ? c->t.buf_len : 1);
	else
		lun_task_release(&c->t);
	free(c);
}

void harness_lun_teardown(struct harness_lun *h)
{
	while (!list_empty(&h->cmds)) {
		struct cmd *c = list_first_entry(&h->cmds, struct cmd, node);

		list_del(&c->node);
		cmd_free(c);
	}
	for (unsigned i = 0; i < h->nnexus; i++)
		lun_nexus_leave(h->ts[i]);
	lun_destroy(h->lun);
	bdev_close(h->bd);
	reactor_fini(&h->r);
	bufpool_thread_drain();
}

unsigned harness_seq;

static void task_done(struct tcq_task *t)
{
	struct cmd *c = (struct cmd *)t;

	c->done = true;
	c->ndone++;
	c->done_seq = ++harness_seq;
	reactor_stop(reactor_self());
}

/* On the reactor, as the transport does it: arrival, then the data. */
static void arrive(void *arg)
{
	struct cmd *c = arg;

	if (lun_task_arrive(c->ts, &c->t))
		lun_task_data_ready(&c->t);
}

static struct cmd *start_at(struct harness_lun *h, unsigned n,
			     uint64_t lun_nr, uint8_t attr, const uint8_t *cdb,
			     uint16_t cdb_len, const void *out,
			     uint32_t out_len, uint32_t in_len)
{
	struct cmd *c = calloc(1, sizeof(*c));
	struct tcq_task *t = &c->t;

	ck_assert_ptr_nonnull(c);
	ck_assert_uint_lt(n, h->nnexus);
	ck_assert_uint_le(cdb_len, sizeof(t->cdb));
	list_add_tail(&c->node, &h->cmds);
	lun_task_init(t);
	memcpy(t->cdb, cdb, cdb_len);
	/* The BHS carries 16 CDB bytes whatever the command's length. */
	t->cdb_len = cdb_len < 16 ? 16 : cdb_len;
	t->lun = sdev_lun(&h->dev, lun_nr);
	t->lun_nr = lun_nr;
	t->dev = &h->dev;
	t->nexus = &h->nexus[n];
	t->attr = attr;
	t->done = task_done;
	c->ts = t->lun ? h->ts[n] : NULL;
	if (out) {
		t->dir_out = true;
		t->exp_len = out_len;
		t->buf = bufpool_alloc(out_len ? out_len : 1);
		ck_assert_ptr_nonnull(t->buf);
		t->buf_len = out_len;
		memcpy(t->buf, out, out_len);
	} else if (in_len) {
		t->dir_in = true;
		t->exp_len = in_len;
	}
	ck_assert_int_eq(reactor_post(&h->r, arrive, c), 0);
	return c;
}

void wait_cmd(struct harness_lun *h, struct cmd *c)
{
	if (!c->done)
		harness_run_until(&h->r, &c->done, HARNESS_WATCHDOG_MS);
}

struct cmd *start_cdb(struct harness_lun *h, unsigned n, uint8_t attr,
		      const uint8_t *cdb, uint16_t cdb_len, const void *out,
		      uint32_t out_len, uint32_t in_len)
{
	return start_at(h, n, 0, attr, cdb, cdb_len, out, out_len, in_len);
}

struct cmd *run_cdb_at(struct harness_lun *h, unsigned n, uint64_t lun_nr,
		       const uint8_t *cdb, uint16_t cdb_len, const void *out,
		       uint32_t out_len, uint32_t in_len)
{
	struct cmd *c = start_at(h, n, lun_nr, TASK_ATTR_SIMPLE, cdb, cdb_len,
				 out, out_len, in_len);

	wait_cmd(h, c);
	return c;
}

struct cmd *run_cdb(struct harness_lun *h, unsigned n, const uint8_t *cdb,
		    uint16_t cdb_len, const void *out, uint32_t out_len,
		    uint32_t in_len)
{
	return run_cdb_at(h, n, 0, cdb, cdb_len, out, out_len, in_len);
}

static void harness_tmf_done(struct tmf *m)
{
	struct harness_tmf *c = m->arg;

	c->done = true;
	c->seq = ++harness_seq;
	reactor_stop(reactor_self());
}

static void harness_tmf_go(void *arg)
{
	tmf_execute(arg);
}

enum tmf_response harness_run_tmf(struct harness_lun *h,
				  struct harness_tmf *c, enum tmf_function fn,
				  unsigned n, struct tcq_task *t)
{
	memset(c, 0, sizeof(*c));
	c->m.fn = fn;
	c->m.dev = &h->dev;
	c->m.lun = h->lun;
	c->m.nexus = harness_nexus(h, n);
	c->m.task = t;
	c->m.done = harness_tmf_done;
	c->m.arg = c;
	ck_assert_int_eq(reactor_post(&h->r, harness_tmf_go, &c->m), 0);
	harness_run_until(&h->r, &c->done, HARNESS_WATCHDOG_MS);
	return c->m.response;
}
