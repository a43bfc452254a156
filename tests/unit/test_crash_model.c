/*
 * The crash lab's model (crash/model.c) against hand-built histories: for
 * each, the blocks in doubt, their candidates and the number of crash
 * states follow from the rules of SBC-4 and SAM-5 as crash/model.c
 * states them (D1 FUA / WCE=0, D2 SYNCHRONIZE CACHE covers what completed
 * before it was received, D3 nothing else; B1 any version since the last
 * durable one; B2 block by block, WRITE ATOMIC whole; O1 an ORDERED task
 * as a barrier), worked out here by hand, not by running the model. And
 * the recording reader: a truncated, corrupt or reordered file, or a base
 * of another size, is refused with the record and the reason.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tcq/rec_format.h"
#include "crash/history.h"
#include "crash/model.h"
#include "crash/states.h"
#include "tests/unit/harness.h"

#define BS 512
#define NBLOCKS 64

static char path[64];
static FILE *f;
static uint64_t seq;
static uint8_t buf[1 << 16];

static void begin(void)
{
	struct rec_header h = { .block_size = BS, .nblocks = NBLOCKS,
				.flags = REC_HDR_BASE_ZERO };
	struct rec r = { .type = REC_NEXUS, .seq = 1 };
	size_t n;

	snprintf(path, sizeof(path), "/tmp/tcq-crash-unit.XXXXXX");
	ck_assert_int_ge(mkstemp(path), 0);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	strcpy(h.target, "iqn.2026-11.org.tcq:unit");
	n = rec_put_header(buf, sizeof(buf), &h);
	ck_assert_uint_gt(n, 0);
	fwrite(buf, 1, n, f);
	seq = 0;
	r.u.nexus.nexus = 0;
	strcpy(r.u.nexus.name, "iqn.2026-11.org.tcq:i0,i,0x1");
	r.seq = ++seq;
	fwrite(buf, 1, rec_put(buf, sizeof(buf), &r), f);
	r.u.nexus.nexus = 1;
	strcpy(r.u.nexus.name, "iqn.2026-11.org.tcq:i1,i,0x2");
	r.seq = ++seq;
	fwrite(buf, 1, rec_put(buf, sizeof(buf), &r), f);
}

static void teardown(void)
{
	if (f)
		fclose(f);
	f = NULL;
	unlink(path);
}

/* ARRIVE of task id: a write (lba, blocks) or a sync (flags). */
static uint64_t arrive(uint64_t id, uint32_t nexus, uint8_t attr,
		       uint16_t flags, uint64_t lba, uint32_t blocks)
{
	struct rec r = { .type = REC_ARRIVE, .seq = ++seq };

	r.u.arrive = (struct rec_arrive){ id, nexus, attr,
					  flags & REC_A_SYNC ? 0x35 : 0x2a,
					  flags, lba, blocks };
	fwrite(buf, 1, rec_put(buf, sizeof(buf), &r), f);
	return seq;
}

static uint64_t wr(uint64_t id, uint64_t lba, uint32_t blocks, bool fua,
		   uint8_t fill)
{
	struct rec_write w = { .task = id, .lba = lba, .blocks = blocks,
			       .kind = REC_W_DATA, .data_len = blocks * BS };
	static uint8_t data[NBLOCKS * BS];

	memset(data, fill, w.data_len);
	fwrite(buf, 1, rec_put_write(buf, sizeof(buf), ++seq,
				     fua ? REC_W_FUA : 0, &w, data), f);
	return seq;
}

static uint64_t done(uint64_t id, uint8_t status)
{
	struct rec r = { .type = REC_DONE, .seq = ++seq };

	r.u.done.task = id;
	r.u.done.status = status;
	fwrite(buf, 1, rec_put(buf, sizeof(buf), &r), f);
	return seq;
}

static uint64_t mark(const char *text)
{
	struct rec r = { .type = REC_MARK, .seq = ++seq };

	snprintf(r.u.mark.text, sizeof(r.u.mark.text), "%s", text);
	fwrite(buf, 1, rec_put(buf, sizeof(buf), &r), f);
	return seq;
}

/* A whole write task: arrive, data, done GOOD. */
static void write_task(uint64_t id, uint32_t nexus, uint8_t attr,
		       uint64_t lba, uint32_t blocks, bool fua, uint8_t fill)
{
	arrive(id, nexus, attr, REC_A_WRITE | REC_A_WCE |
	       (fua ? REC_A_FUA : 0), lba, blocks);
	wr(id, lba, blocks, fua, fill);
	done(id, 0);
}

static void sync_task(uint64_t id, uint16_t flags, uint64_t lba,
		      uint32_t blocks)
{
	arrive(id, 0, 1, REC_A_SYNC | flags, lba, blocks);
	done(id, 0);
}

static struct ch_history HIST;
static struct md_point PT;

/* Loads the file and the point c (0: the end) under model k. */
static void load(enum model_kind k, uint64_t c)
{
	char err[512];

	fflush(f);
	ck_assert_msg(ch_load(&HIST, path, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(model_point(&PT, &HIST, k, c ? c : HIST.last_seq, err,
				     sizeof(err)), 0);
}

static void unload(void)
{
	model_point_free(&PT);
	ch_free(&HIST);
}

/* Every state the model lists when asked for all (exhaustively). */
static size_t count_states(void)
{
	struct md_state s = { calloc(PT.nblocks + 1, sizeof(uint32_t)) };
	struct st_gen g;
	struct st_info info;
	size_t n = 0;

	ck_assert_int_eq(st_init(&g, &PT, 1u << 20, 1), 0);
	ck_assert(g.exhaustive);
	while (st_next(&g, &s, &info) > 0)
		n++;
	st_free(&g);
	free(s.pick);
	return n;
}

#define EXPECT_DOUBT(nb_, ncand_each) do { \
	ck_assert_uint_eq(PT.nblocks, (nb_)); \
	for (size_t i_ = 0; i_ < PT.nblocks; i_++) \
		ck_assert_uint_eq(PT.blocks[i_].n, (ncand_each)); \
} while (0)

/* D3, B1: a write with the cache on and no flush is in doubt: the base
 * (zeros) or its data; two blocks, each on its own (B2): 4 states. */
START_TEST(unflushed_write_is_in_doubt)
{
	begin();
	write_task(1, 0, 1, 10, 2, false, 0xaa);
	load(MODEL_SBC, 0);
	EXPECT_DOUBT(2, 2);
	ck_assert_uint_eq(PT.cand[PT.blocks[0].first], CH_NONE);
	ck_assert_uint_eq(count_states(), 4);
	unload();
}
END_TEST

/* D2: a SYNCHRONIZE CACHE received after the write completed makes it
 * durable once it ends GOOD; at a mark before it ends, it does not. */
START_TEST(sync_after_completion_makes_durable)
{
	uint64_t before;

	begin();
	write_task(1, 0, 1, 10, 1, false, 0xaa);
	arrive(2, 0, 1, REC_A_SYNC, 0, 0);
	before = mark("sync running");
	done(2, 0);
	load(MODEL_SBC, 0);
	EXPECT_DOUBT(0, 0);
	ck_assert_uint_eq(PT.durable_blocks, 1);
	unload();
	load(MODEL_SBC, before);
	EXPECT_DOUBT(1, 2);
	unload();
}
END_TEST

/* D2: a write still running when the SYNCHRONIZE CACHE arrived is not
 * covered by it, even though both ended GOOD. */
START_TEST(sync_does_not_cover_a_write_running_at_its_arrival)
{
	begin();
	arrive(1, 0, 1, REC_A_WRITE | REC_A_WCE, 10, 1);
	wr(1, 10, 1, false, 0xaa);
	arrive(2, 0, 1, REC_A_SYNC, 0, 0);
	done(1, 0);
	done(2, 0);
	load(MODEL_SBC, 0);
	EXPECT_DOUBT(1, 2);
	unload();
}
END_TEST

/* D1: FUA is durable at completion, not before. */
START_TEST(fua_durable_at_completion)
{
	uint64_t running;

	begin();
	arrive(1, 0, 1, REC_A_WRITE | REC_A_WCE | REC_A_FUA, 10, 1);
	wr(1, 10, 1, true, 0xaa);
	running = mark("fua running");
	done(1, 0);
	load(MODEL_SBC, 0);
	EXPECT_DOUBT(0, 0);
	unload();
	load(MODEL_SBC, running);
	EXPECT_DOUBT(1, 2);
	unload();
}
END_TEST

/* D2: IMMED=1 promises nothing; nor does a sync flush = ignore
 * swallowed; a write that ended in error is never durable. */
START_TEST(immed_ignored_sync_and_failed_writes_promise_nothing)
{
	begin();
	write_task(1, 0, 1, 10, 1, false, 0xaa);
	sync_task(2, REC_A_IMMED, 0, 0);
	write_task(3, 0, 1, 11, 1, false, 0xbb);
	sync_task(4, REC_A_IGNORED, 0, 0);
	arrive(5, 0, 1, REC_A_WRITE | REC_A_WCE, 12, 1);
	wr(5, 12, 1, false, 0xcc);
	done(5, 2);		/* CHECK CONDITION */
	sync_task(6, 0, 12, 1);	/* covers block 12 only: 5 failed */
	load(MODEL_SBC, 0);
	EXPECT_DOUBT(3, 2);
	unload();
}
END_TEST

/* D2 range: a sync of blocks 10-11 makes those durable, not 12-13. */
START_TEST(sync_range_covers_its_blocks_only)
{
	begin();
	write_task(1, 0, 1, 10, 4, false, 0xaa);
	sync_task(2, 0, 10, 2);
	load(MODEL_SBC, 0);
	EXPECT_DOUBT(2, 2);
	ck_assert_uint_eq(PT.blocks[0].lba, 12);
	ck_assert_uint_eq(PT.blocks[1].lba, 13);
	unload();
}
END_TEST

/* B1: after a durable version, only newer versions are candidates: the
 * durable one and the two written since (not the base). */
START_TEST(candidates_start_at_the_durable_version)
{
	begin();
	write_task(1, 0, 1, 10, 1, false, 0x11);
	sync_task(2, 0, 0, 0);
	write_task(3, 0, 1, 10, 1, false, 0x22);
	write_task(4, 0, 1, 10, 1, false, 0x33);
	load(MODEL_SBC, 0);
	EXPECT_DOUBT(1, 3);
	ck_assert_uint_ne(PT.cand[PT.blocks[0].first], CH_NONE);
	ck_assert_uint_eq(HIST.tasks[HIST.pieces[PT.cand[PT.blocks[0].first]].task].id,
			  1);
	ck_assert_uint_eq(count_states(), 3);
	unload();
}
END_TEST

/* B2: WRITE ATOMIC of two blocks: all or nothing (2 of 4 states). */
START_TEST(atomic_write_does_not_tear)
{
	begin();
	arrive(1, 0, 1, REC_A_WRITE | REC_A_WCE | REC_A_ATOMIC, 10, 2);
	wr(1, 10, 2, false, 0xaa);
	done(1, 0);
	load(MODEL_SBC, 0);
	EXPECT_DOUBT(2, 2);
	ck_assert_uint_eq(count_states(), 2);
	unload();
}
END_TEST

/*
 * O1: two log blocks (SIMPLE) and a commit (ORDERED) of one nexus, cache
 * on, no flush: 3 blocks in doubt, 8 states under SBC. "ordered" allows
 * the commit only with both log blocks: 4 states without the commit + 1
 * with everything = 5. A write of another nexus after it is not bound.
 */
START_TEST(ordered_model_is_a_barrier_for_its_nexus)
{
	begin();
	write_task(1, 0, 1, 1, 1, false, 0x11);
	write_task(2, 0, 1, 2, 1, false, 0x22);
	write_task(3, 0, 2, 3, 1, false, 0x33);	/* ORDERED commit */
	load(MODEL_SBC, 0);
	ck_assert_uint_eq(count_states(), 8);
	unload();
	load(MODEL_ORDERED, 0);
	ck_assert_uint_eq(count_states(), 5);
	unload();
	teardown();
	begin();
	write_task(1, 0, 1, 1, 1, false, 0x11);
	write_task(2, 0, 2, 2, 1, false, 0x22);	/* ORDERED */
	write_task(3, 1, 1, 3, 1, false, 0x33);	/* another nexus */
	load(MODEL_ORDERED, 0);
	/* 2 (block 3, free) x (2 without task 2 + 1 with both) = 6 */
	ck_assert_uint_eq(count_states(), 6);
	unload();
}
END_TEST

/* A COMPARE AND WRITE that ended in MISCOMPARE wrote nothing: no block
 * in doubt (SBC-4 5.3). One that succeeded is a write like any other. */
START_TEST(miscompare_writes_nothing)
{
	struct rec r = { .type = REC_DONE };

	begin();
	arrive(1, 0, 1, REC_A_WRITE | REC_A_WCE, 10, 1);
	wr(1, 10, 1, false, 0xaa);
	r.seq = ++seq;
	r.u.done.task = 1;
	r.u.done.status = 2;
	r.u.done.key = 0x0e;	/* MISCOMPARE */
	r.u.done.asc = 0x1d00;
	fwrite(buf, 1, rec_put(buf, sizeof(buf), &r), f);
	write_task(2, 0, 1, 11, 1, false, 0xbb);
	load(MODEL_SBC, 0);
	EXPECT_DOUBT(1, 2);
	ck_assert_uint_eq(PT.blocks[0].lba, 11);
	unload();
}
END_TEST

/* A named state: drop task 2 at block 2 of a three-write history. */
START_TEST(state_by_name)
{
	struct md_state s;
	char err[256];

	begin();
	write_task(1, 0, 1, 1, 2, false, 0x11);
	write_task(2, 0, 1, 2, 1, false, 0x22);
	load(MODEL_SBC, 0);
	s.pick = calloc(PT.nblocks, sizeof(uint32_t));
	ck_assert_int_eq(st_parse(&PT, "drop:2:2", &s, err, sizeof(err)), 0);
	/* block 2 shows task 1's version (candidate 1 of base, 1, 2) */
	ck_assert_uint_eq(s.pick[model_block(&PT, 2)], 1);
	ck_assert_uint_eq(s.pick[model_block(&PT, 1)], 1);
	ck_assert_int_eq(st_parse(&PT, "drop:9", &s, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "task 9"));
	ck_assert_int_eq(st_parse(&PT, "drop:2:x", &s, err, sizeof(err)), -1);
	free(s.pick);
	unload();
}
END_TEST

/* ---- the reader refuses what it cannot trust ---- */

static int load_err(char *err, size_t len)
{
	struct ch_history h;
	int rc;

	fflush(f);
	rc = ch_load(&h, path, err, len);
	if (!rc)
		ch_free(&h);
	return rc;
}

static void flip_byte(long off)
{
	FILE *g = fopen(path, "r+");
	int c;

	ck_assert_ptr_nonnull(g);
	fseek(g, off, SEEK_SET);
	c = fgetc(g);
	fseek(g, off, SEEK_SET);
	fputc(c ^ 0x40, g);
	fclose(g);
}

START_TEST(corrupt_truncated_and_reordered_recordings_refused)
{
	char err[512];
	long size;

	begin();
	write_task(1, 0, 1, 10, 1, false, 0xaa);
	fflush(f);
	size = ftell(f);
	ck_assert_int_eq(load_err(err, sizeof(err)), 0);
	ck_assert_int_eq(truncate(path, size - 3), 0);
	ck_assert_int_eq(load_err(err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "truncated") || strstr(err, "corrupt"),
		      "%s", err);
	ck_assert_int_eq(truncate(path, size), 0);
	flip_byte(size - 40);	/* inside the last records */
	ck_assert_int_eq(load_err(err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "record"), "%s", err);
	teardown();
	begin();
	arrive(1, 0, 1, REC_A_WRITE, 10, 1);
	seq++;			/* a record missing */
	done(1, 0);
	ck_assert_int_eq(load_err(err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "sequence"), "%s", err);
	teardown();
	begin();
	done(7, 0);		/* the end of a task that never arrived */
	ck_assert_int_eq(load_err(err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "never arrived"), "%s", err);
}
END_TEST

START_TEST(base_of_another_size_refused)
{
	struct rec_header h = { .block_size = BS, .nblocks = NBLOCKS };
	char base[80], err[512];
	size_t n;

	snprintf(path, sizeof(path), "/tmp/tcq-crash-unit.XXXXXX");
	ck_assert_int_ge(mkstemp(path), 0);
	snprintf(base, sizeof(base), "%s.base", path);
	f = fopen(path, "w");
	strcpy(h.base, strrchr(base, '/') + 1);
	n = rec_put_header(buf, sizeof(buf), &h);
	fwrite(buf, 1, n, f);
	ck_assert_int_eq(truncate(base, 0), -1);	/* no base yet */
	ck_assert_int_eq(load_err(err, sizeof(err)), -1);
	FILE *b = fopen(base, "w");
	fclose(b);
	ck_assert_int_eq(truncate(base, NBLOCKS * BS / 2), 0);
	ck_assert_int_eq(load_err(err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "another LUN"), "%s", err);
	ck_assert_int_eq(truncate(base, NBLOCKS * BS), 0);
	ck_assert_int_eq(load_err(err, sizeof(err)), 0);
	unlink(base);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("crash_model");
	TCase *tc = tcase_create("model");

	tcase_add_checked_fixture(tc, NULL, teardown);
	harness_add(tc, unflushed_write_is_in_doubt);
	harness_add(tc, sync_after_completion_makes_durable);
	harness_add(tc, sync_does_not_cover_a_write_running_at_its_arrival);
	harness_add(tc, fua_durable_at_completion);
	harness_add(tc, immed_ignored_sync_and_failed_writes_promise_nothing);
	harness_add(tc, sync_range_covers_its_blocks_only);
	harness_add(tc, candidates_start_at_the_durable_version);
	harness_add(tc, atomic_write_does_not_tear);
	harness_add(tc, ordered_model_is_a_barrier_for_its_nexus);
	harness_add(tc, miscompare_writes_nothing);
	harness_add(tc, state_by_name);
	harness_add(tc, corrupt_truncated_and_reordered_recordings_refused);
	harness_add(tc, base_of_another_size_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, suite);
}
