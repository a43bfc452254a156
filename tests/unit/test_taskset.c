/*
 * Task set ordering against a reference model: every sequence of up to 5
 * tasks (SIMPLE, ORDERED, HEAD OF QUEUE) and every order of completion (for
 * up to 4 tasks also every interleaving of arrivals and completions). Plus
 * Data-Out holds, barrier policies, QAM=0 overlap, ACA and aborts.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/scsi_proto.h"
#include "scsi/lun.h"
#include "scsi/opcodes.h"
#include "scsi/taskset.h"
#include "tests/unit/harness.h"

#define MAXT 8

static struct tcq_task tasks[MAXT];
static int started[MAXT], done_calls[MAXT];
static struct lun fake_lun;

static unsigned sync_mask;	/* tasks that complete inside exec */

static void exec_cb(struct tcq_task *t)
{
	started[t->tag]++;
	if (sync_mask & (1u << t->tag)) {
		t->status = SAM_STAT_GOOD;
		taskset_complete(t);	/* like an emulated command */
	}
}

static void done_cb(struct tcq_task *t)
{
	done_calls[t->tag]++;
}

static struct taskset *fresh(void)
{
	sync_mask = 0;
	memset(tasks, 0, sizeof(tasks));
	memset(started, 0, sizeof(started));
	memset(done_calls, 0, sizeof(done_calls));
	static const struct taskset_ops ops = { .exec = exec_cb };

	return taskset_new(&fake_lun, NULL, NULL, &ops);
}

/* A fresh set on a LUN of the defaults (QAM=0, barrier drain). */
static struct taskset *fresh_default(void)
{
	memset(&fake_lun, 0, sizeof(fake_lun));
	return fresh();
}

/* The set must be empty: every task done. */
static void all_done(struct taskset *ts)
{
	ck_assert_uint_eq(taskset_count(ts), 0);
	taskset_free(ts);
}

static struct tcq_task *mk(int i, uint8_t attr)
{
	struct tcq_task *t = &tasks[i];

	t->tag = (uint32_t)i;
	t->attr = attr;
	t->done = done_cb;
	t->status = SAM_STAT_GOOD;
	t->req.opcode = SOP_TEST_UNIT_READY;
	t->req.cmd = opc_find(SOP_TEST_UNIT_READY, 0, OPC_FEAT_ALL);
	return t;
}

static void finish(struct tcq_task *t, uint8_t status)
{
	t->status = status;
	taskset_complete(t);
}

/* ---- reference model ------------------------------------------------- */

static const uint8_t attr_of[3] = {
	TASK_ATTR_SIMPLE, TASK_ATTR_ORDERED, TASK_ATTR_HEAD_OF_QUEUE
};

/* SAM-5: may task i (arrived, not done) be enabled? */
static bool model_enabled(const uint8_t *attr, const bool *dn, int i)
{
	if (attr[i] == TASK_ATTR_HEAD_OF_QUEUE)
		return true;
	for (int j = 0; j < i; j++) {
		if (dn[j])
			continue;
		if (attr[i] == TASK_ATTR_ORDERED || attr[j] != TASK_ATTR_SIMPLE)
			return false;
	}
	return true;
}

/* Events: -1 = next task arrives, k >= 0 = task k completes. */
static int npaths;

/* Replays a path on a fresh task set, comparing after every event; returns
 * in *run which tasks are running at the end. */
static void replay(const uint8_t *attr, int n, const int *ev, int nev,
		   bool *run, int *arrived_out)
{
	struct taskset *ts = fresh();
	bool dn[MAXT] = { false };
	int arrived = 0;

	ck_assert_ptr_nonnull(ts);
	for (int e = 0; e < nev; e++) {
		if (ev[e] < 0) {
			bool w = taskset_arrive(ts, mk(arrived, attr[arrived]));
			ck_assert(!w);
			arrived++;
		} else {
			ck_assert_int_eq(started[ev[e]], 1);
			finish(&tasks[ev[e]], SAM_STAT_GOOD);
			dn[ev[e]] = true;
			ck_assert_int_eq(done_calls[ev[e]], 1);
		}
		for (int i = 0; i < arrived; i++) {
			if (dn[i])
				continue;
			bool want = model_enabled(attr, dn, i);
			ck_assert_msg(started[i] == (want ? 1 : 0),
				      "task %d started %d, model %d (n=%d)",
				      i, started[i], want, n);
			ck_assert_int_eq(done_calls[i], 0);
		}
		unsigned left = 0;
		for (int i = 0; i < arrived; i++)
			left += !dn[i];
		ck_assert_uint_eq(taskset_count(ts), left);
	}
	for (int i = 0; i < n; i++)
		run[i] = i < arrived && !dn[i] && started[i];
	*arrived_out = arrived;
	taskset_free(ts);
}

static void explore(const uint8_t *attr, int n, int *ev, int nev,
		    bool interleave)
{
	bool run[MAXT];
	int arrived;

	replay(attr, n, ev, nev, run, &arrived);
	bool any = false;
	if (arrived < n) {
		ev[nev] = -1;
		explore(attr, n, ev, nev + 1, interleave);
		any = true;
		if (!interleave)
			return;	/* all arrivals first */
	}
	for (int i = 0; i < n; i++) {
		if (!run[i])
			continue;
		ev[nev] = i;
		explore(attr, n, ev, nev + 1, interleave);
		any = true;
	}
	if (!any) {
		/* Leaf: everything arrived and finished; nothing stuck. */
		ck_assert_int_eq(arrived, n);
		npaths++;
	}
}

static void all_sequences(int n, bool interleave)
{
	int combos = 1;
	uint8_t attr[MAXT];
	int ev[2 * MAXT];

	for (int i = 0; i < n; i++)
		combos *= 3;
	for (int c = 0; c < combos; c++) {
		int x = c;
		for (int i = 0; i < n; i++, x /= 3)
			attr[i] = attr_of[x % 3];
		explore(attr, n, ev, 0, interleave);
	}
}

START_TEST(model_all_orders)
{
	memset(&fake_lun, 0, sizeof(fake_lun));
	npaths = 0;
	for (int n = 1; n <= 4; n++)
		all_sequences(n, true);
	all_sequences(5, false);
	ck_assert_int_gt(npaths, 3 * 3 * 3 * 3 * 3);
}
END_TEST

/* ---- targeted cases ---------------------------------------------------- */

static struct tcq_task *mk_write(int i, uint8_t attr, uint64_t lba,
				 uint32_t blocks, bool ready)
{
	struct tcq_task *t = mk(i, attr);

	t->req.opcode = SOP_WRITE_10;
	t->req.cmd = opc_find(SOP_WRITE_10, 0, OPC_FEAT_ALL);
	t->req.lba = lba;
	t->req.blocks = blocks;
	t->req.data_out_len = blocks * 512;
	t->data_ready = ready;
	return t;
}

static struct tcq_task *mk_read(int i, uint8_t attr, uint64_t lba,
				uint32_t blocks)
{
	struct tcq_task *t = mk(i, attr);

	t->req.opcode = SOP_READ_10;
	t->req.cmd = opc_find(SOP_READ_10, 0, OPC_FEAT_ALL);
	t->req.lba = lba;
	t->req.blocks = blocks;
	t->req.data_in_len = blocks * 512;
	return t;
}

START_TEST(ordered_write_waiting_for_data_holds_newer)
{
	struct taskset *ts = fresh_default();

	ck_assert(taskset_arrive(ts, mk_write(0, TASK_ATTR_ORDERED, 0, 1,
					      false)));
	ck_assert(!taskset_arrive(ts, mk(1, TASK_ATTR_SIMPLE)));
	ck_assert_int_eq(started[0], 0);
	ck_assert_int_eq(started[1], 0);
	ck_assert_int_eq(tasks[0].state, TASK_WAIT_DATA);
	ck_assert_int_eq(tasks[1].state, TASK_DORMANT);
	taskset_data_ready(&tasks[0]);
	ck_assert_int_eq(started[0], 1);
	ck_assert_int_eq(started[1], 0);
	finish(&tasks[0], SAM_STAT_GOOD);
	ck_assert_int_eq(started[1], 1);
	finish(&tasks[1], SAM_STAT_GOOD);
	all_done(ts);
}
END_TEST

START_TEST(newer_ordered_waits_for_write_receiving_data)
{
	struct taskset *ts = fresh_default();

	ck_assert(taskset_arrive(ts, mk_write(0, TASK_ATTR_SIMPLE, 0, 8,
					      false)));
	ck_assert(!taskset_arrive(ts, mk(1, TASK_ATTR_ORDERED)));
	ck_assert(!taskset_arrive(ts, mk(2, TASK_ATTR_HEAD_OF_QUEUE)));
	ck_assert_int_eq(started[1], 0);
	ck_assert_int_eq(started[2], 1);	/* HEAD OF QUEUE: at once */
	finish(&tasks[2], SAM_STAT_GOOD);
	ck_assert_int_eq(started[1], 0);
	taskset_data_ready(&tasks[0]);
	ck_assert_int_eq(started[0], 1);
	ck_assert_int_eq(started[1], 0);
	finish(&tasks[0], SAM_STAT_GOOD);
	ck_assert_int_eq(started[1], 1);
	finish(&tasks[1], SAM_STAT_GOOD);
	taskset_free(ts);
}
END_TEST

START_TEST(barrier_ignore_and_flush)
{
	memset(&fake_lun, 0, sizeof(fake_lun));
	fake_lun.qam = 1;
	fake_lun.barrier = BARRIER_IGNORE;
	struct taskset *ts = fresh();

	taskset_arrive(ts, mk(0, TASK_ATTR_SIMPLE));
	taskset_arrive(ts, mk(1, TASK_ATTR_ORDERED));
	taskset_arrive(ts, mk(2, TASK_ATTR_SIMPLE));
	ck_assert_int_eq(started[0] + started[1] + started[2], 3);
	for (int i = 0; i < 3; i++)
		finish(&tasks[i], SAM_STAT_GOOD);
	taskset_free(ts);

	fake_lun.barrier = BARRIER_FLUSH;
	ts = fresh();
	taskset_arrive(ts, mk_write(0, TASK_ATTR_SIMPLE, 0, 1, true));
	taskset_arrive(ts, mk_write(1, TASK_ATTR_ORDERED, 8, 1, true));
	ck_assert_int_eq(started[1], 0);
	ck_assert(!tasks[0].order.barrier_flush);
	finish(&tasks[0], SAM_STAT_GOOD);
	ck_assert_int_eq(started[1], 1);
	ck_assert(tasks[1].order.barrier_flush);
	finish(&tasks[1], SAM_STAT_GOOD);
	taskset_free(ts);
}
END_TEST

START_TEST(qam0_overlap)
{
	struct taskset *ts = fresh_default();

	taskset_arrive(ts, mk_write(0, TASK_ATTR_SIMPLE, 0, 8, true));
	taskset_arrive(ts, mk_read(1, TASK_ATTR_SIMPLE, 4, 1));
	taskset_arrive(ts, mk_read(2, TASK_ATTR_SIMPLE, 100, 1));
	taskset_arrive(ts, mk_read(3, TASK_ATTR_SIMPLE, 8, 1));
	ck_assert_int_eq(started[0], 1);
	ck_assert_int_eq(started[1], 0);	/* reads what 0 writes */
	ck_assert_int_eq(started[2], 1);
	ck_assert_int_eq(started[3], 1);	/* adjacent, no overlap */
	finish(&tasks[0], SAM_STAT_GOOD);
	ck_assert_int_eq(started[1], 1);
	for (int i = 1; i < 4; i++)
		finish(&tasks[i], SAM_STAT_GOOD);
	taskset_free(ts);

	/* QAM=1 (unrestricted): no wait. */
	fake_lun.qam = 1;
	ts = fresh();
	taskset_arrive(ts, mk_write(0, TASK_ATTR_SIMPLE, 0, 8, true));
	taskset_arrive(ts, mk_read(1, TASK_ATTR_SIMPLE, 4, 1));
	ck_assert_int_eq(started[1], 1);
	finish(&tasks[1], SAM_STAT_GOOD);
	finish(&tasks[0], SAM_STAT_GOOD);
	taskset_free(ts);
}
END_TEST

START_TEST(aca_established_by_naca_holds_tasks_until_clear_aca)
{
	struct taskset *ts = fresh_default();
	struct tcq_task *t;

	/* ACA attribute with no ACA condition. */
	taskset_arrive(ts, mk(0, TASK_ATTR_ACA));
	ck_assert_int_eq(done_calls[0], 1);
	ck_assert_int_eq(tasks[0].status, SAM_STAT_CHECK_CONDITION);
	ck_assert_int_eq(tasks[0].sense[12], 0x49);

	t = mk(1, TASK_ATTR_ORDERED);
	t->req.control = CDB_CONTROL_NACA;
	taskset_arrive(ts, t);
	taskset_arrive(ts, mk(2, TASK_ATTR_SIMPLE));
	ck_assert_int_eq(started[2], 0);
	finish(t, SAM_STAT_CHECK_CONDITION);	/* establishes ACA */
	ck_assert(ts->aca);
	ck_assert_int_eq(started[2], 0);	/* blocked during ACA */
	taskset_arrive(ts, mk(3, TASK_ATTR_SIMPLE));
	ck_assert_int_eq(done_calls[3], 1);
	ck_assert_int_eq(tasks[3].status, SAM_STAT_ACA_ACTIVE);
	taskset_arrive(ts, mk(4, TASK_ATTR_ACA));
	ck_assert_int_eq(started[4], 1);
	taskset_arrive(ts, mk(5, TASK_ATTR_ACA));	/* one ACA task only */
	ck_assert_int_eq(tasks[5].status, SAM_STAT_ACA_ACTIVE);
	finish(&tasks[4], SAM_STAT_GOOD);
	ck_assert_int_eq(started[2], 0);
	taskset_clear_aca(ts);
	ck_assert_int_eq(started[2], 1);
	finish(&tasks[2], SAM_STAT_GOOD);
	/* NACA=0 CHECK CONDITION does not establish ACA. */
	taskset_arrive(ts, mk(6, TASK_ATTR_SIMPLE));
	finish(&tasks[6], SAM_STAT_CHECK_CONDITION);
	ck_assert(!ts->aca);
	all_done(ts);
}
END_TEST

START_TEST(abort_all_reporting_ends_waiting_tasks_task_aborted)
{
	struct taskset *ts = fresh_default();

	taskset_arrive(ts, mk(0, TASK_ATTR_SIMPLE));
	taskset_arrive(ts, mk(1, TASK_ATTR_ORDERED));
	taskset_arrive(ts, mk_write(2, TASK_ATTR_HEAD_OF_QUEUE, 0, 1, false));
	taskset_abort_all(ts, true);
	ck_assert(tasks[0].aborted);
	ck_assert_int_eq(done_calls[0], 0);	/* running: later */
	ck_assert_int_eq(done_calls[1], 1);
	ck_assert_int_eq(tasks[1].status, SAM_STAT_TASK_ABORTED);
	ck_assert_int_eq(done_calls[2], 1);
	ck_assert_int_eq(started[1], 0);
	ck_assert_uint_eq(taskset_count(ts), 1);
	finish(&tasks[0], SAM_STAT_GOOD);
	ck_assert_int_eq(done_calls[0], 1);
	all_done(ts);
}
END_TEST

/*
 * The task management primitives one by one (SAM-5 7): what each does to
 * running tasks (marked aborted, they complete later as they would),
 * to waiting ones (done now), with report (TAS=1 for another nexus:
 * TASK ABORTED status) and without (no status: the transport sends no
 * response), and to the tasks left.
 */
START_TEST(abort_all_silently_leaves_status_and_marks_aborted)
{
	struct taskset *ts = fresh_default();

	taskset_arrive(ts, mk(0, TASK_ATTR_SIMPLE));
	taskset_arrive(ts, mk(1, TASK_ATTR_ORDERED));
	taskset_arrive(ts, mk_write(2, TASK_ATTR_SIMPLE, 0, 1, false));
	ck_assert_int_eq(started[0], 1);
	taskset_abort_all(ts, false);
	for (int i = 0; i < 3; i++)
		ck_assert(tasks[i].aborted);
	/* The waiting ones are done, their status left as it was. */
	ck_assert_int_eq(done_calls[1], 1);
	ck_assert_int_eq(done_calls[2], 1);
	ck_assert_int_eq(tasks[1].status, SAM_STAT_GOOD);
	ck_assert_int_eq(tasks[2].status, SAM_STAT_GOOD);
	ck_assert_int_eq(started[1] + started[2], 0);
	/* The running one completes when its work does, still marked. */
	ck_assert_int_eq(done_calls[0], 0);
	ck_assert_uint_eq(taskset_count(ts), 1);
	finish(&tasks[0], SAM_STAT_GOOD);
	ck_assert_int_eq(done_calls[0], 1);
	ck_assert(tasks[0].aborted);
	ck_assert_uint_eq(taskset_count(ts), 0);
	/* The set works on afterwards. */
	taskset_arrive(ts, mk(3, TASK_ATTR_SIMPLE));
	ck_assert_int_eq(started[3], 1);
	ck_assert(!tasks[3].aborted);
	finish(&tasks[3], SAM_STAT_GOOD);
	taskset_free(ts);
}
END_TEST

START_TEST(abort_task_ends_one_and_enables_those_it_held)
{
	struct taskset *ts = fresh_default();

	taskset_arrive(ts, mk(0, TASK_ATTR_SIMPLE));
	taskset_arrive(ts, mk(1, TASK_ATTR_ORDERED));	/* waits for 0 */
	taskset_arrive(ts, mk(2, TASK_ATTR_SIMPLE));	/* waits for 1 */
	ck_assert_int_eq(started[1] + started[2], 0);
	taskset_abort_task(ts, &tasks[1], true);
	ck_assert(tasks[1].aborted);
	ck_assert_int_eq(done_calls[1], 1);
	ck_assert_int_eq(tasks[1].status, SAM_STAT_TASK_ABORTED);
	ck_assert_int_eq(started[1], 0);
	/* Only 1 was aborted; 2 no longer waits for it. */
	ck_assert(!tasks[0].aborted && !tasks[2].aborted);
	ck_assert_int_eq(started[2], 1);
	ck_assert_uint_eq(taskset_count(ts), 2);
	/* A running task: marked, completes later; silent abort keeps its
	 * status. */
	taskset_abort_task(ts, &tasks[0], false);
	ck_assert(tasks[0].aborted);
	ck_assert_int_eq(done_calls[0], 0);
	finish(&tasks[0], SAM_STAT_GOOD);
	ck_assert_int_eq(done_calls[0], 1);
	ck_assert_int_eq(tasks[0].status, SAM_STAT_GOOD);
	/* A task no longer in the set: nothing happens. */
	taskset_abort_task(ts, &tasks[1], true);
	ck_assert_int_eq(done_calls[1], 1);
	finish(&tasks[2], SAM_STAT_GOOD);
	all_done(ts);
}
END_TEST

START_TEST(clear_aca_enables_held_tasks_in_order)
{
	struct taskset *ts = fresh_default();
	struct tcq_task *t = mk(0, TASK_ATTR_SIMPLE);

	t->req.control = CDB_CONTROL_NACA;
	taskset_arrive(ts, t);
	taskset_arrive(ts, mk(1, TASK_ATTR_ORDERED));
	taskset_arrive(ts, mk(2, TASK_ATTR_SIMPLE));
	finish(t, SAM_STAT_CHECK_CONDITION);	/* ACA established */
	ck_assert(ts->aca);
	ck_assert_int_eq(started[1] + started[2], 0);
	taskset_clear_aca(ts);
	ck_assert(!ts->aca);
	/* The ORDERED task runs first, the SIMPLE one after it. */
	ck_assert_int_eq(started[1], 1);
	ck_assert_int_eq(started[2], 0);
	finish(&tasks[1], SAM_STAT_GOOD);
	ck_assert_int_eq(started[2], 1);
	finish(&tasks[2], SAM_STAT_GOOD);
	/* New tasks are no longer refused with ACA ACTIVE. */
	taskset_arrive(ts, mk(3, TASK_ATTR_SIMPLE));
	ck_assert_int_eq(started[3], 1);
	finish(&tasks[3], SAM_STAT_GOOD);
	ck_assert_int_eq(tasks[3].status, SAM_STAT_GOOD);
	/* CLEAR ACA without an ACA condition changes nothing. */
	taskset_clear_aca(ts);
	ck_assert(!ts->aca);
	all_done(ts);
}
END_TEST

START_TEST(sync_completion_inside_exec)
{
	struct taskset *ts = fresh_default();

	sync_mask = (1u << 1) | (1u << 2) | (1u << 4);
	taskset_arrive(ts, mk(0, TASK_ATTR_ORDERED));
	taskset_arrive(ts, mk(1, TASK_ATTR_SIMPLE));
	taskset_arrive(ts, mk(2, TASK_ATTR_ORDERED));
	taskset_arrive(ts, mk(3, TASK_ATTR_SIMPLE));
	taskset_arrive(ts, mk(4, TASK_ATTR_SIMPLE));
	ck_assert_int_eq(started[1] + started[2] + started[3], 0);
	finish(&tasks[0], SAM_STAT_GOOD);
	/* 1 runs and ends at once, then 2 (ORDERED) does, then 3 and 4. */
	for (int i = 1; i <= 4; i++)
		ck_assert_int_eq(started[i], 1);
	ck_assert_int_eq(done_calls[1], 1);
	ck_assert_int_eq(done_calls[2], 1);
	ck_assert_int_eq(done_calls[3], 0);
	ck_assert_int_eq(done_calls[4], 1);
	ck_assert_uint_eq(taskset_count(ts), 1);
	finish(&tasks[3], SAM_STAT_GOOD);
	all_done(ts);
}
END_TEST

/* ---- LOGICAL UNIT RESET on a real LUN ------------------------------------ */

static struct harness_lun H;

static void lun_setup(void)
{
	harness_lun_setup(&H, "ram", 1 << 20, 2);
}

static void lun_teardown(void)
{
	harness_lun_teardown(&H);
}

/* What lun_reset leaves once the task sets are aborted: every I_T nexus,
 * the one that asked included, has one unit attention, 29h/03h BUS
 * DEVICE RESET FUNCTION OCCURRED (SAM-5 6.3.3), reported once. */
START_TEST(lun_reset_reports_bus_device_reset_to_every_nexus)
{
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };

	lun_reset(H.lun);
	for (unsigned n = 0; n < 2; n++) {
		EXPECT_SENSE(run_cdb(&H, n, tur, 6, NULL, 0, 0),
			     SK_UNIT_ATTENTION, 0x29, 0x03);
		/* BUS DEVICE RESET FUNCTION OCCURRED */
		EXPECT_GOOD(run_cdb(&H, n, tur, 6, NULL, 0, 0));
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("taskset");
	TCase *tc = tcase_create("core");
	TCase *lun = tcase_create("lun");

	tcase_set_timeout(tc, 120);
	harness_add(tc, model_all_orders);
	harness_add(tc, ordered_write_waiting_for_data_holds_newer);
	harness_add(tc, newer_ordered_waits_for_write_receiving_data);
	harness_add(tc, barrier_ignore_and_flush);
	harness_add(tc, qam0_overlap);
	harness_add(tc, aca_established_by_naca_holds_tasks_until_clear_aca);
	harness_add(tc, abort_all_reporting_ends_waiting_tasks_task_aborted);
	harness_add(tc, abort_all_silently_leaves_status_and_marks_aborted);
	harness_add(tc, abort_task_ends_one_and_enables_those_it_held);
	harness_add(tc, clear_aca_enables_held_tasks_in_order);
	harness_add(tc, sync_completion_inside_exec);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(lun, lun_setup, lun_teardown);
	harness_add(lun, lun_reset_reports_bus_device_reset_to_every_nexus);
	suite_add_tcase(s, lun);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, suite);
}
