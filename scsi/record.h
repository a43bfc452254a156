/*
 * The crash lab's recorder (docs/crash-lab.md): a LUN can record, from a
 * point on, what its initiators asked to write, flush and order, in the
 * file format of tcq/rec_format.h, for tcq-crash and the crash backend.
 *
 * The data path records into a memory ring under the recorder's lock; a
 * thread of the recorder's own writes the ring to the file, and when it
 * falls a whole ring (4 MiB, grown to twice a larger record, up to 64 MiB)
 * behind the data path waits for it. When the
 * recording reaches record_max bytes, or the file cannot be written, the
 * recording ends (a REC_END record says
 * why, the log and the statistics too) and the LUN goes on serving: a
 * recording never costs an acknowledged write.
 *
 * Recording starts where the medium is known: at the LUN's creation
 * (`record = FILE`), or with the LUN held still (no task running, new
 * ones waiting: lun_hold) while its content is copied to FILE.base.
 */
#ifndef TCQ_RECORD_H
#define TCQ_RECORD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lun;
struct tcq_task;
struct bdev_io;

#define RECORD_MAX_DEFAULT (1ull << 30)	/* record_max when not given */

/* What tcqctl stats and the metrics show of a LUN's recorder. */
struct record_info {
	bool active;
	char path[4096];
	uint64_t bytes, records, max_bytes;
	uint64_t full;		/* recordings that ended full, ever */
	char ended[160];	/* why the last one ended ("": running or
				 * never ran) */
};

/* The LUN's recorder, idle (lun_create makes it); freed with the LUN. */
int record_lun_init(struct lun *l);
void record_lun_free(struct lun *l);

/*
 * Starts recording l into path, l being still (no task running, at its
 * creation or held): the base (l's content now) goes to path.base, or
 * none when l holds only zeros. max: bytes at most (0: the default).
 * Synchronous (the copy included); 0, or -1 with a message naming what
 * failed, nothing changed.
 */
int record_start(struct lun *l, const char *path, uint64_t max, char *err,
		 size_t errlen);
/* Ends the recording (REC_END stopped, why its text) and waits until the
 * file is written: 0, or -1 when l was not recording. */
int record_stop(struct lun *l, const char *why, char *err, size_t errlen);
/* A named mark (tcqctl mark): 0, or -1 when l is not recording. */
int record_mark(struct lun *l, const char *text, char *err, size_t errlen);
void record_info(struct lun *l, struct record_info *out);
/* Ends a recording that could not say what happens next (a SANITIZE):
 * REC_END with why. Nothing when l does not record. */
void record_interrupt(struct lun *l, const char *why);

/* ---- the data path's hooks (cheap when not recording) ------------------ */

/* t arrived (decoded): a write, a SYNCHRONIZE CACHE or an ORDERED task
 * is recorded. */
void record_arrive(struct tcq_task *t);
/* A piece of t goes to the medium of l (l may be another LUN than
 * t->lun: EXTENDED COPY): io as submitted. */
void record_write(struct lun *l, struct tcq_task *t, const struct bdev_io *io);
/* t ended (its status is final). */
void record_done(struct tcq_task *t);
#endif
