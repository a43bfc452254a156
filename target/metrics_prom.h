/*
 * tcqd's statistics in the Prometheus text exposition format 0.0.4: one
 * generator for both the control socket's "metrics" command
 * (target/ctl_stats.c) and the HTTP endpoint /metrics
 * (target/metrics_http.c). docs/metrics.md lists the metrics.
 *
 * Two steps, so that the text can be checked against a fixture:
 * prom_collect copies what is live into a struct prom_view (any thread:
 * it takes tcqd_read_lock around the walk of targets and LUNs, and reads
 * the per-reactor statistics with stats_snapshot's relaxed loads);
 * prom_render writes a view as text and touches nothing else.
 */
#ifndef TCQ_METRICS_PROM_H
#define TCQ_METRICS_PROM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "scsi/durability.h"
#include "scsi/stats.h"
#include "target/target.h"

/* The Content-Type of the text (format 0.0.4). */
#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* A text that grows; oom set once an allocation failed (text then
 * incomplete: prom_render returns -1). */
struct prom_buf {
	char *s;
	size_t len, cap;
	bool oom;
};

void prom_buf_free(struct prom_buf *b);
void prom_puts(struct prom_buf *b, const char *s);
void prom_printf(struct prom_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A label value as the format wants it: \ " and newline escaped. */
void prom_label_value(struct prom_buf *b, const char *v);

struct prom_lun {
	char target[TCQ_NAME_MAX];
	uint64_t lun;
	uint32_t queue_depth;
	struct stats_snapshot s;
	uint64_t qos_delayed;	/* scsi/qos.h: commands held, ever */
	unsigned qos_held;	/* held now */
	/* the crash lab's: the recorder (scsi/record.h) and the audit of
	 * what is acknowledged but not yet durable (scsi/durability.h) */
	bool recording;
	uint64_t rec_bytes, rec_records, rec_full;
	struct durab_info unfl;
	/* sequential prefetch (backend/prefetch.h), zero where unset */
	uint64_t pf_hits, pf_misses, pf_prefetched, pf_dropped;
};

struct prom_target {
	char name[TCQ_NAME_MAX];
	unsigned sessions;
	uint64_t refused[LOGIN_REFUSED_N];
};

struct prom_view {
	const char *version;		/* tcq_build_info */
	const char *io_engine;		/* tcq_io_engine: uring or aio */
	double start_time;		/* Unix time, seconds */
	double now;
	unsigned sessions;		/* every session, discovery too */
	uint64_t refused[LOGIN_REFUSED_N];
	char isns_server[TCQ_NAME_MAX];	/* "": no iSNS (no family) */
	bool isns_registered;
	uint64_t isns_failures;
	struct prom_target *targets;
	int ntargets;
	struct prom_lun *luns;
	int nluns;
};

/* The le bounds of the latency and drain histograms, in ns. */
#define PROM_NBOUNDS 19
extern const uint64_t prom_bounds_ns[PROM_NBOUNDS];

/* When tcqd started (main calls it once; else the first collect). */
void prom_set_start_time(void);
/* Fills v from the live daemon; 0, or -1 out of memory. */
int prom_collect(struct prom_view *v);
void prom_view_free(struct prom_view *v);
/* Appends the text of v to out; 0, or -1 out of memory. */
int prom_render(const struct prom_view *v, struct prom_buf *out);
/* Collect and render: a malloc'd NUL-terminated text, or NULL. */
char *prom_text(size_t *len);
#endif
