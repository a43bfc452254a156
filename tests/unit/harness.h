/*
 * The unit tests' shared harness (libtcq_unit.a, tests/unit/harness*.c):
 * a main that runs every check of a suite or only the ones named, a
 * reactor driver with a watchdog, a LUN fixture that runs CDBs to
 * completion, and assertions on status and sense data written as SPC-4
 * gives them.
 *
 * Running checks one by one:
 *   tests/unit/test_sbc                        every check of the suite
 *   tests/unit/test_sbc caw_limits write_same  only these checks; a name
 *                                              that matches none fails
 *   CK_RUN_SUITE=sbc CK_RUN_CASE=commands tests/unit/test_sbc
 *                                              libcheck's own selection
 *   CK_FORK=no gdb --args tests/unit/test_sbc caw_limits
 *                                              one check under a debugger
 * From the build directory, `make check TESTS=tests/unit/test_sbc` runs
 * one suite through automake (names then go on the binary's command line
 * as above).
 *
 * Assertions are macros so that a failure names the test's own line:
 *   EXPECT_GOOD(c);
 *   EXPECT_STATUS(c, SAM_STAT_RESERVATION_CONFLICT);
 *   EXPECT_SENSE(c, SK_ILLEGAL_REQUEST, 0x24, 0x00);  INVALID FIELD IN CDB
 *   EXPECT_SENSE_FIELD(c, true, 13, -1);  SKSV=1, C/D=1, byte 13, no bit
 *   EXPECT_SENSE_INFO(c, 0x1fe5);         VALID=1, INFORMATION
 * Sense data is parsed by its response code, fixed (70h/71h) or
 * descriptor (72h/73h) format alike.
 */
#ifndef TCQ_TESTS_UNIT_HARNESS_H
#define TCQ_TESTS_UNIT_HARNESS_H
#include <check.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "tcq/list.h"
#include "tcq/reactor.h"
#include "scsi/lun.h"
#include "scsi/sdev.h"
#include "scsi/tmf.h"

/* ---- running checks --------------------------------------------------- */

/* Runs the suite build() makes: all of it, or the checks named in argv
 * (build adds its tests with harness_add). Returns main's exit code. */
int harness_main(int argc, char **argv, Suite *(*build)(void));
/* Adds t to tc unless the command line names other checks. */
void harness_add(TCase *tc, const TTest *t);

/* ---- the reactor ------------------------------------------------------ */

#define HARNESS_WATCHDOG_MS 10000

/* Runs r until *done (the callback that sets it stops r), failing the
 * check when ms pass first. */
void harness_run_until(struct reactor *r, const bool *done, unsigned ms);
/* Runs r until a callback stops it; fails when the watchdog does. */
void harness_run_guarded(struct reactor *r, unsigned ms);

/* A reactor on a thread of its own (the daemon's shape). */
struct harness_thread {
	struct reactor *r;
	pthread_t th;
};
void harness_thread_start(struct harness_thread *h, struct reactor *r);
/* Runs fn(arg) on r's thread and waits until it has returned. */
void harness_call_on(struct reactor *r, void (*fn)(void *), void *arg);
/* Runs last(arg) on the thread (if not NULL), stops r, joins. */
void harness_thread_stop(struct harness_thread *h, void (*last)(void *),
			 void *arg);

/* ---- a LUN and its nexuses -------------------------------------------- */

#define HARNESS_NEXUSES 4

struct harness_lun {
	struct reactor r;		/* the test thread's reactor */
	struct bdev *bd;
	struct sdev dev;		/* the target device: LUN 0 is lun */
	struct lun *lun;
	unsigned nnexus;
	struct taskset *ts[HARNESS_NEXUSES];
	int nexus[HARNESS_NEXUSES];	/* their identities: the addresses */
	struct list_node cmds;		/* every command run, until teardown */
};

/* A LUN with the defaults of a [lun] (lun_params_default), whole, or the
 * check fails. */
static inline struct lun *harness_lun_create(struct sdev *dev, uint64_t id,
					     struct bdev *b)
{
	struct lun_params p;
	char err[256];
	struct lun *l;

	lun_params_default(&p, dev, id, b);
	l = lun_create(&p, err, sizeof(err));
	ck_assert_msg(l != NULL, "lun_create: %s", err);
	return l;
}

/* LUN 0 of a device over backend spec ("ram", "null:size=1M", ...) of
 * size bytes (0: the spec's own), or over an opened bd. */
void harness_lun_open(struct harness_lun *h, const char *spec, uint64_t size);
void harness_lun_open_bdev(struct harness_lun *h, struct bdev *bd);
/* n nexuses join the LUN; each one's first command, a TEST UNIT READY,
 * must report POWER ON, RESET, OR BUS DEVICE RESET OCCURRED (29h/00h). */
void harness_nexus_join(struct harness_lun *h, unsigned n);
void harness_lun_setup(struct harness_lun *h, const char *spec,
		       uint64_t size, unsigned nexuses);
/* Frees every command run, the nexuses, the LUN and the backend. */
void harness_lun_teardown(struct harness_lun *h);
static inline void *harness_nexus(struct harness_lun *h, unsigned i)
{
	return &h->nexus[i];
}

/*
 * A memory backend of size bytes (512-byte blocks) that offers COMPARE AND
 * WRITE of up to caw_blocks blocks (0: not at all) and silently drops the
 * writes to block lost_lba (UINT64_MAX: none), as a failing medium.
 */
struct bdev *harness_mem_bdev(uint64_t size, uint32_t caw_blocks,
			      uint64_t lost_lba);
/* What the SCSI core sent such a backend, for the fields only a layer
 * below reads (who sent it, which command it is a piece of): the first
 * HARNESS_MEM_SEEN I/Os since it opened; *n counts all of them. */
#define HARNESS_MEM_SEEN 32
struct harness_io_seen {
	int op;			/* enum bdev_op */
	uint64_t offset, len;
	const void *submitter, *command;
};
const struct harness_io_seen *harness_mem_seen(struct bdev *b, unsigned *n);

/* A command and its answer (c->t.status, c->t.sense, c->t.buf). */
struct cmd {
	struct tcq_task t;
	bool done;
	unsigned ndone;			/* times done() came: once, always */
	unsigned done_seq;		/* harness_seq when it ended */
	struct taskset *ts;
	struct list_node node;		/* on the fixture's list */
};

/* Counts the ends of commands (and whatever a test stamps with it). */
extern unsigned harness_seq;

/*
 * Runs one command to completion on nexus n of LUN 0 (SIMPLE). With out,
 * out_len bytes of Data-Out are sent (and expected); otherwise in_len is
 * the expected Data-In length (0: no data). The fixture frees it.
 */
struct cmd *run_cdb(struct harness_lun *h, unsigned n, const uint8_t *cdb,
		    uint16_t cdb_len, const void *out, uint32_t out_len,
		    uint32_t in_len);
/* The same addressed to LUN lun_nr of the device: a LUN not present is
 * answered by the device server without a task set. */
struct cmd *run_cdb_at(struct harness_lun *h, unsigned n, uint64_t lun_nr,
		       const uint8_t *cdb, uint16_t cdb_len, const void *out,
		       uint32_t out_len, uint32_t in_len);
/* Starts one command with task attribute attr on nexus n of LUN 0 and
 * returns at once: it reaches the task set in the reactor's next pass, in
 * the order started; c->done tells when it ended, wait_cmd runs the
 * reactor until then. */
struct cmd *start_cdb(struct harness_lun *h, unsigned n, uint8_t attr,
		      const uint8_t *cdb, uint16_t cdb_len, const void *out,
		      uint32_t out_len, uint32_t in_len);
void wait_cmd(struct harness_lun *h, struct cmd *c);
/* A task management function run by the device server (scsi/tmf.c). */
struct harness_tmf {
	struct tmf m;
	bool done;
	unsigned seq;		/* harness_seq when it was answered */
};
/* Runs fn from nexus n (on LUN 0, or task t) after what was started
 * reached the task sets, and waits for its answer. */
enum tmf_response harness_run_tmf(struct harness_lun *h,
				  struct harness_tmf *c, enum tmf_function fn,
				  unsigned n, struct tcq_task *t);
/* Data-In of c (its valid length is c->t.data_in_len). */
static inline const uint8_t *cmd_data(const struct cmd *c)
{
	return c->t.buf;
}

/* ---- sense data ------------------------------------------------------- */

struct harness_sense {
	bool desc;		/* descriptor format */
	uint8_t key, asc, ascq;
	bool info_valid;
	uint64_t info;
	bool sksv;
	uint8_t sks[3];		/* the sense-key specific bytes */
};

/* Parses sense data by its response code; false when it is none of
 * 70h..73h or too short for the key and ASC/ASCQ. */
bool harness_sense_parse(const uint8_t *b, unsigned len,
			 struct harness_sense *s);
/* Each checks c's answer and on a mismatch writes why into msg. */
bool harness_sense_is(const struct cmd *c, uint8_t key, uint8_t asc,
		      uint8_t ascq, char *msg, size_t len);
bool harness_field_is(const struct cmd *c, bool cd, uint16_t byte, int bit,
		      char *msg, size_t len);
bool harness_info_is(const struct cmd *c, uint64_t info, char *msg,
		     size_t len);
/* " (sense KEY/ASC/ASCQ)" of c, or "" (for messages). */
const char *harness_sense_text(const struct cmd *c);

#define EXPECT_STATUS(c, st) \
	ck_assert_msg((c)->t.status == (st), "status %#x, expected %#x%s", \
		      (c)->t.status, (unsigned)(st), harness_sense_text(c))
#define EXPECT_GOOD(c) EXPECT_STATUS(c, SAM_STAT_GOOD)
#define HARNESS_EXPECT_(pred, ...) do { \
	char why_[256]; \
	ck_assert_msg(pred(__VA_ARGS__, why_, sizeof(why_)), "%s", why_); \
} while (0)
/* CHECK CONDITION with this sense key and ASC/ASCQ. */
#define EXPECT_SENSE(c, key, asc, ascq) \
	HARNESS_EXPECT_(harness_sense_is, (c), (key), (asc), (ascq))
/* The field pointer (SPC-4 4.5.2.4.2): SKSV=1, C/D, BPV and BIT POINTER
 * (bit < 0: BPV=0), FIELD POINTER. */
#define EXPECT_SENSE_FIELD(c, cd, byte, bit) \
	HARNESS_EXPECT_(harness_field_is, (c), (cd), (byte), (bit))
/* ILLEGAL REQUEST, 24h/00h INVALID FIELD IN CDB, pointing at byte (and
 * bit, or -1) of the CDB. */
#define EXPECT_INVALID_FIELD_IN_CDB(c, byte, bit) do { \
	EXPECT_SENSE(c, SK_ILLEGAL_REQUEST, 0x24, 0x00); \
	EXPECT_SENSE_FIELD(c, true, byte, bit); \
} while (0)
/* VALID (fixed) or the Information descriptor, and its INFORMATION. */
#define EXPECT_SENSE_INFO(c, info) \
	HARNESS_EXPECT_(harness_info_is, (c), (info))
#endif
