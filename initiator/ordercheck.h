/*
 * The order-check verifier: pure functions over a trace of commands that
 * were sent to one I_T nexus (one session, so submission order is CmdSN
 * order) with SIMPLE, ORDERED and HEAD OF QUEUE attributes. No I/O here;
 * ordercheck_run.c produces the trace.
 *
 * Rules (SAM-5 task attributes):
 *  1. An ORDERED task completes after every older task, and before every
 *     newer task except HEAD OF QUEUE tasks (a HoQ task newer than an
 *     ORDERED one may complete before it).
 *  2. A read R newer than an ORDERED write W to R's block (R not HoQ) must
 *     not return the stamp of a write older than W (nor the initial
 *     content, nor an unknown stamp).
 *  3. A HoQ task H sent while an older ORDERED task O was outstanding
 *     must not complete after a newer non-HoQ task T (T was dormant behind
 *     O). How often such an H overtook O is reported as a statistic.
 * Completion order is by seq (StatSN), compared with serial arithmetic.
 * Commands that failed (status != 0) take no part in the checks.
 */
#ifndef TCQ_ORDERCHECK_H
#define TCQ_ORDERCHECK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Stamp of the content before the first write (older than every write). */
#define OC_STAMP_INITIAL 0
/* A read that found no stamp at all. */
#define OC_STAMP_NONE UINT64_MAX

struct oc_cmd {
	uint32_t idx;		/* submission order; trace[i].idx == i */
	uint8_t attr;		/* enum bench_attr */
	bool write;
	uint64_t lba;
	uint32_t blocks;
	uint64_t stamp;		/* write: stamp written (unique, not 0);
				 * read: stamp found in block lba */
	uint32_t seq;		/* completion order (StatSN) */
	int status;		/* 0 GOOD */
	uint64_t t_submit_ns, t_done_ns;
};

enum oc_rule {
	OC_ORDERED_BEFORE_OLDER = 1,	/* a: ORDERED, b: older task */
	OC_NEWER_BEFORE_ORDERED,	/* a: ORDERED, b: newer task */
	OC_STALE_READ,			/* a: read, b: ORDERED write, c: the
					 * write whose stamp was read or -1 */
	OC_HOQ_HELD,			/* a: HoQ, b: newer dormant task,
					 * c: the ORDERED task */
};

struct oc_violation {
	enum oc_rule rule;
	int64_t a, b, c;		/* trace indices, -1 when none */
};

struct oc_stats {
	uint64_t cmds, reads, writes, simple, ordered, hoq, failed;
	uint64_t hoq_while_ordered;	/* HoQ sent with an ORDERED outstanding */
	uint64_t hoq_overtook;		/* ... that completed before it */
	uint64_t violations;
};

typedef void (*oc_report_fn)(void *ctx, const struct oc_violation *v);

/* Checks the trace; calls report (may be NULL) per violation; returns the
 * number of violations (also in st->violations). */
uint64_t ordercheck_verify(const struct oc_cmd *t, size_t n,
			   struct oc_stats *st, oc_report_fn report,
			   void *ctx);
const char *ordercheck_rule_text(enum oc_rule r);
/* "#12 ORDERED write lba 3+1 seq 40 stamp 13" */
void ordercheck_format_cmd(char *buf, size_t len, const struct oc_cmd *c);
#endif
