/*
 * The Prometheus text of tcqd's statistics (metrics_prom.h): collect a
 * view of the live daemon, then render it. Every metric family is written
 * once, HELP and TYPE first, then all its samples (the format wants a
 * family's samples together), so rendering walks the view once per
 * family.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <config.h>	/* autoconf's: PACKAGE_VERSION */
#include "backend/bdev.h"
#include "scsi/lun.h"
#include "scsi/qos.h"
#include "scsi/record.h"
#include "scsi/sdev.h"
#include "target/ctl_priv.h"
#include "target/isns.h"
#include "target/metrics_prom.h"
#include "target/session.h"

/* ---- the text buffer ------------------------------------------------------ */

void prom_buf_free(struct prom_buf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

static bool prom_reserve(struct prom_buf *b, size_t more)
{
	size_t cap;
	char *s;

	if (b->oom)
		return false;
	if (b->len + more + 1 <= b->cap)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + more + 1)
		cap *= 2;
	s = realloc(b->s, cap);
	if (!s) {
		b->oom = true;
		return false;
	}
	b->s = s;
	b->cap = cap;
	return true;
}

void prom_puts(struct prom_buf *b, const char *s)
{
	size_t n = strlen(s);

	if (!prom_reserve(b, n))
		return;
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

void prom_printf(struct prom_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !prom_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void prom_label_value(struct prom_buf *b, const char *v)
{
	for (; *v; v++) {
		char c[3] = { *v, 0, 0 };

		if (*v == '\\' || *v == '"') {
			c[0] = '\\';
			c[1] = *v;
		} else if (*v == '\n') {
			c[0] = '\\';
			c[1] = 'n';
		}
		prom_puts(b, c);
	}
}

/* ---- families and samples ------------------------------------------------- */

static void family(struct prom_buf *b, const char *name, const char *type,
		   const char *help)
{
	/* Our help texts are plain: no backslash or newline to escape. */
	prom_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{target="T",lun="N"  (the caller closes the braces) */
static void lun_labels(struct prom_buf *b, const char *name,
		       const struct prom_lun *l)
{
	prom_printf(b, "%s{target=\"", name);
	prom_label_value(b, l->target);
	prom_printf(b, "\",lun=\"%llu\"", (unsigned long long)l->lun);
}

static void target_labels(struct prom_buf *b, const char *name,
			  const char *target)
{
	prom_printf(b, "%s{target=\"", name);
	prom_label_value(b, target);
	prom_puts(b, "\"");
}

/* Seconds from ns, to the ns. */
static void put_seconds(struct prom_buf *b, uint64_t ns)
{
	prom_printf(b, "%llu.%09llu", (unsigned long long)(ns / 1000000000u),
		    (unsigned long long)(ns % 1000000000u));
}

/* One number per LUN, without further labels. */
typedef uint64_t lun_value(const struct prom_lun *l);

static void lun_family(struct prom_buf *b, const struct prom_view *v,
		       const char *name, const char *type, const char *help,
		       lun_value *get)
{
	family(b, name, type, help);
	for (int i = 0; i < v->nluns; i++) {
		lun_labels(b, name, &v->luns[i]);
		prom_printf(b, "} %llu\n", (unsigned long long)get(&v->luns[i]));
	}
}

static uint64_t v_completed(const struct prom_lun *l) { return l->s.c.completed; }
static uint64_t v_read_bytes(const struct prom_lun *l) { return l->s.c.read_bytes; }
static uint64_t v_write_bytes(const struct prom_lun *l) { return l->s.c.write_bytes; }
static uint64_t v_inflight(const struct prom_lun *l) { return l->s.inflight; }
static uint64_t v_peak(const struct prom_lun *l) { return l->s.peak_inflight; }
static uint64_t v_qd(const struct prom_lun *l) { return l->queue_depth; }
static uint64_t v_ios(const struct prom_lun *l) { return l->s.c.ios; }
static uint64_t v_flushes(const struct prom_lun *l) { return l->s.c.flushes; }
static uint64_t v_barrier_flushes(const struct prom_lun *l)
{
	return l->s.c.barrier_flushes;
}
static uint64_t v_qos_delayed(const struct prom_lun *l) { return l->qos_delayed; }
static uint64_t v_qos_held(const struct prom_lun *l) { return l->qos_held; }
static uint64_t v_pf_hits(const struct prom_lun *l) { return l->pf_hits; }
static uint64_t v_pf_misses(const struct prom_lun *l) { return l->pf_misses; }
static uint64_t v_pf_bytes(const struct prom_lun *l) { return l->pf_prefetched; }
static uint64_t v_pf_dropped(const struct prom_lun *l) { return l->pf_dropped; }

static uint64_t v_path_samples(const struct prom_lun *l)
{
	return l->s.c.path_samples;
}

static uint64_t v_path_io_samples(const struct prom_lun *l)
{
	return l->s.c.path_io_samples;
}

/* The le bounds: 10 us to 10 s, 1-2.5-5 per decade. */
const uint64_t prom_bounds_ns[PROM_NBOUNDS] = {
	10000, 25000, 50000, 100000, 250000, 500000,
	1000000, 2500000, 5000000, 10000000, 25000000, 50000000,
	100000000, 250000000, 500000000,
	1000000000, 2500000000u, 5000000000u, 10000000000u,
};
static const char *const bounds_text[PROM_NBOUNDS] = {
	"1e-05", "2.5e-05", "5e-05", "0.0001", "0.00025", "0.0005",
	"0.001", "0.0025", "0.005", "0.01", "0.025", "0.05",
	"0.1", "0.25", "0.5", "1", "2.5", "5", "10",
};

/* A histogram of one LUN: its buckets and the sum of its samples (ns). */
typedef const struct stats_hist *lun_hist(const struct prom_lun *l,
					  uint64_t *sum_ns);

static const struct stats_hist *h_latency(const struct prom_lun *l,
					  uint64_t *sum_ns)
{
	*sum_ns = l->s.c.lat_ns_total;
	return &l->s.lat;
}

static const struct stats_hist *h_drain(const struct prom_lun *l,
					uint64_t *sum_ns)
{
	*sum_ns = l->s.c.drain_ns_total;
	return &l->s.drain;
}

/*
 * A histogram of the statistics (log-linear, ns) as Prometheus buckets:
 * a sample counts in le=B when its whole stats bucket lies at or below B.
 * A stats bucket spans at most 6 % of its value, so a sample within 6 %
 * under a bound may count in the next bucket up: le counts never exceed
 * the truth, and the last one (+Inf) and _count are exact.
 */
static void histogram(struct prom_buf *b, const struct prom_view *v,
		      const char *name, const char *help, lun_hist *get)
{
	char n[128];

	family(b, name, "histogram", help);
	for (int i = 0; i < v->nluns; i++) {
		const struct prom_lun *l = &v->luns[i];
		uint64_t run = 0, sum;
		const struct stats_hist *h = get(l, &sum);
		unsigned k = 0;

		snprintf(n, sizeof(n), "%s_bucket", name);
		for (unsigned j = 0; j < PROM_NBOUNDS; j++) {
			while (k < STATS_HIST_BUCKETS &&
			       stats_hist_hi(k) <= prom_bounds_ns[j])
				run += h->b[k++];
			lun_labels(b, n, l);
			prom_printf(b, ",le=\"%s\"} %llu\n", bounds_text[j],
				    (unsigned long long)run);
		}
		while (k < STATS_HIST_BUCKETS)
			run += h->b[k++];
		lun_labels(b, n, l);
		prom_printf(b, ",le=\"+Inf\"} %llu\n", (unsigned long long)run);
		snprintf(n, sizeof(n), "%s_sum", name);
		lun_labels(b, n, l);
		prom_puts(b, "} ");
		put_seconds(b, sum);
		prom_puts(b, "\n");
		snprintf(n, sizeof(n), "%s_count", name);
		lun_labels(b, n, l);
		prom_printf(b, "} %llu\n", (unsigned long long)run);
	}
}

static void render_global(struct prom_buf *b, const struct prom_view *v)
{
	family(b, "tcq_build_info", "gauge",
	       "tcqd's version, as a label; the value is 1.");
	prom_puts(b, "tcq_build_info{version=\"");
	prom_label_value(b, v->version);
	prom_puts(b, "\"} 1\n");
	family(b, "tcq_start_time_seconds", "gauge",
	       "When tcqd started, in seconds since the Unix epoch.");
	prom_printf(b, "tcq_start_time_seconds %.3f\n", v->start_time);
	family(b, "tcq_uptime_seconds", "gauge",
	       "Seconds since tcqd started.");
	prom_printf(b, "tcq_uptime_seconds %.3f\n",
		    v->now > v->start_time ? v->now - v->start_time : 0.0);
	family(b, "tcq_sessions", "gauge",
	       "iSCSI sessions now, discovery sessions included.");
	prom_printf(b, "tcq_sessions %u\n", v->sessions);
	family(b, "tcq_logins_refused_total", "counter",
	       "Logins tcqd refused, by reason, whatever the target.");
	for (int r = 0; r < LOGIN_REFUSED_N; r++)
		prom_printf(b, "tcq_logins_refused_total{reason=\"%s\"} %llu\n",
			    login_refusal_names[r],
			    (unsigned long long)v->refused[r]);
	family(b, "tcq_io_engine", "gauge",
	       "The io engine tcqd runs (io_engine, auto resolved at start), "
	       "as a label; the value is 1.");
	prom_printf(b, "tcq_io_engine{engine=\"%s\"} 1\n",
		    v->io_engine ? v->io_engine : "aio");
	if (!v->isns_server[0])
		return;
	family(b, "tcq_isns_registered", "gauge",
	       "1 when the iSNS server has tcqd's targets and portals, else 0 "
	       "(retrying in the background).");
	prom_puts(b, "tcq_isns_registered{server=\"");
	prom_label_value(b, v->isns_server);
	prom_printf(b, "\"} %d\n", v->isns_registered ? 1 : 0);
	family(b, "tcq_isns_failures_total", "counter",
	       "iSNS messages the server did not answer or refused.");
	prom_puts(b, "tcq_isns_failures_total{server=\"");
	prom_label_value(b, v->isns_server);
	prom_printf(b, "\"} %llu\n", (unsigned long long)v->isns_failures);
}

static void render_targets(struct prom_buf *b, const struct prom_view *v)
{
	family(b, "tcq_target_sessions", "gauge",
	       "Normal sessions to the target now.");
	for (int i = 0; i < v->ntargets; i++) {
		target_labels(b, "tcq_target_sessions", v->targets[i].name);
		prom_printf(b, "} %u\n", v->targets[i].sessions);
	}
	family(b, "tcq_target_logins_refused_total", "counter",
	       "Logins to the target tcqd refused, by reason.");
	for (int i = 0; i < v->ntargets; i++)
		for (int r = 0; r < LOGIN_REFUSED_N; r++) {
			target_labels(b, "tcq_target_logins_refused_total",
				      v->targets[i].name);
			prom_printf(b, ",reason=\"%s\"} %llu\n",
				    login_refusal_names[r],
				    (unsigned long long)v->targets[i].refused[r]);
		}
}

/* The path breakdown of sampled commands: a stage's mean is its
 * seconds over the samples (with backend I/O for to_submit and backend). */
static void render_path(struct prom_buf *b, const struct prom_view *v)
{
	lun_family(b, v, "tcq_lun_path_samples_total", "counter",
		   "Commands sampled for the path breakdown (one in 16).",
		   v_path_samples);
	lun_family(b, v, "tcq_lun_path_io_samples_total", "counter",
		   "Of those, commands with backend I/O.", v_path_io_samples);
	family(b, "tcq_lun_path_seconds_total", "counter",
	       "Time the sampled commands spent in each stage of the path.");
	for (int i = 0; i < v->nluns; i++)
		for (unsigned k = 0; k < STATS_NPATH; k++) {
			lun_labels(b, "tcq_lun_path_seconds_total",
				   &v->luns[i]);
			prom_printf(b, ",stage=\"%s\"} ",
				    stats_path_stage_name(k));
			put_seconds(b, v->luns[i].s.c.path_ns[k]);
			prom_puts(b, "\n");
		}
}

static void render_luns(struct prom_buf *b, const struct prom_view *v)
{
	family(b, "tcq_lun_commands_total", "counter",
	       "SCSI commands that arrived, by task attribute.");
	for (int i = 0; i < v->nluns; i++)
		for (unsigned a = 0; a < STATS_NATTR; a++) {
			lun_labels(b, "tcq_lun_commands_total", &v->luns[i]);
			prom_printf(b, ",attribute=\"%s\"} %llu\n",
				    stats_attr_name(a),
				    (unsigned long long)v->luns[i].s.c.cmds[a]);
		}
	family(b, "tcq_lun_commands_by_class_total", "counter",
	       "SCSI commands that arrived, by what they do to the medium.");
	for (int i = 0; i < v->nluns; i++)
		for (unsigned k = 0; k < STATS_NCLASS; k++) {
			lun_labels(b, "tcq_lun_commands_by_class_total",
				   &v->luns[i]);
			prom_printf(b, ",class=\"%s\"} %llu\n",
				    stats_class_name(k),
				    (unsigned long long)v->luns[i].s.c.cls[k]);
		}
	lun_family(b, v, "tcq_lun_commands_completed_total", "counter",
		   "SCSI commands the device server completed.", v_completed);
	lun_family(b, v, "tcq_lun_read_bytes_total", "counter",
		   "Data-In bytes of medium reads that completed GOOD.",
		   v_read_bytes);
	lun_family(b, v, "tcq_lun_write_bytes_total", "counter",
		   "Data-Out bytes of medium writes that completed GOOD.",
		   v_write_bytes);
	family(b, "tcq_lun_errors_total", "counter",
	       "Commands that ended in CHECK CONDITION, by sense key.");
	for (int i = 0; i < v->nluns; i++)
		for (unsigned k = 0; k < STATS_NSENSE; k++) {
			lun_labels(b, "tcq_lun_errors_total", &v->luns[i]);
			prom_printf(b, ",sense_key=\"%s\"} %llu\n",
				    stats_sense_key_name(k),
				    (unsigned long long)v->luns[i].s.c.sense[k]);
		}
	histogram(b, v, "tcq_lun_latency_seconds",
		  "Command latency, arrival to completion.", h_latency);
	lun_family(b, v, "tcq_lun_inflight", "gauge",
		   "Backend I/Os in flight now, over every reactor.",
		   v_inflight);
	lun_family(b, v, "tcq_lun_inflight_peak", "gauge",
		   "Most backend I/Os in flight at once since reset.",
		   v_peak);
	lun_family(b, v, "tcq_lun_queue_depth", "gauge",
		   "Backend I/Os allowed in flight, over every reactor (queue_depth).",
		   v_qd);
	lun_family(b, v, "tcq_lun_backend_ios_total", "counter",
		   "Backend I/Os submitted.", v_ios);
	histogram(b, v, "tcq_lun_ordered_drain_seconds",
		  "Time ORDERED tasks waited for older tasks, arrival to enabled.",
		  h_drain);
	lun_family(b, v, "tcq_lun_flushes_total", "counter",
		   "Cache flushes submitted to the backend.", v_flushes);
	lun_family(b, v, "tcq_lun_barrier_flushes_total", "counter",
		   "Of those, flushes before ORDERED writes (barrier=flush).",
		   v_barrier_flushes);
	lun_family(b, v, "tcq_lun_qos_delayed_total", "counter",
		   "Commands QoS held before their task set (qos_iops, qos_mbps).",
		   v_qos_delayed);
	lun_family(b, v, "tcq_lun_qos_held", "gauge",
		   "Commands QoS holds now.", v_qos_held);
	lun_family(b, v, "tcq_lun_prefetch_hits_total", "counter",
		   "Reads served from the read-ahead buffer, no disk I/O.",
		   v_pf_hits);
	lun_family(b, v, "tcq_lun_prefetch_misses_total", "counter",
		   "Reads sent to the disk while prefetch was on.", v_pf_misses);
	lun_family(b, v, "tcq_lun_prefetch_bytes_total", "counter",
		   "Bytes read ahead into the buffer.", v_pf_bytes);
	lun_family(b, v, "tcq_lun_prefetch_dropped_bytes_total", "counter",
		   "Bytes read ahead and dropped by writes to their range.",
		   v_pf_dropped);
	render_path(b, v);
}

static uint64_t v_recording(const struct prom_lun *l) { return l->recording; }
static uint64_t v_rec_bytes(const struct prom_lun *l) { return l->rec_bytes; }
static uint64_t v_rec_records(const struct prom_lun *l) { return l->rec_records; }
static uint64_t v_rec_full(const struct prom_lun *l) { return l->rec_full; }
static uint64_t v_unflushed(const struct prom_lun *l) { return l->unfl.bytes; }

/* The crash lab's: the recording, and what is not yet durable. */
static void render_crash_lab(struct prom_buf *b, const struct prom_view *v)
{
	static const char *port_names[2] = {
		"tcq_lun_initiator_unflushed_bytes",
		"tcq_lun_initiator_unflushed_oldest_seconds" };

	lun_family(b, v, "tcq_lun_recording", "gauge",
		   "1 while the LUN records for tcq-crash.", v_recording);
	lun_family(b, v, "tcq_lun_recording_bytes", "gauge",
		   "Bytes of the current (or last) recording.", v_rec_bytes);
	lun_family(b, v, "tcq_lun_recording_records", "gauge",
		   "Records of the current (or last) recording.",
		   v_rec_records);
	lun_family(b, v, "tcq_lun_recording_full_total", "counter",
		   "Recordings that ended because record_max was reached.",
		   v_rec_full);
	lun_family(b, v, "tcq_lun_unflushed_bytes", "gauge",
		   "Bytes acknowledged but not yet durable (SBC-4 rules).",
		   v_unflushed);
	family(b, "tcq_lun_unflushed_oldest_seconds", "gauge",
	       "Age of the oldest acknowledged write not yet durable.");
	for (int i = 0; i < v->nluns; i++) {
		lun_labels(b, "tcq_lun_unflushed_oldest_seconds", &v->luns[i]);
		prom_printf(b, "} %.6f\n", v->luns[i].unfl.oldest_s);
	}
	for (int k = 0; k < 2; k++) {
		family(b, port_names[k], "gauge", k ?
		       "Per initiator port: age of its oldest write not yet durable." :
		       "Per initiator port: bytes acknowledged, not yet durable.");
		for (int i = 0; i < v->nluns; i++)
			for (unsigned j = 0; j < v->luns[i].unfl.nports; j++) {
				const struct durab_port *p =
					&v->luns[i].unfl.ports[j];

				lun_labels(b, port_names[k], &v->luns[i]);
				prom_puts(b, ",initiator=\"");
				prom_label_value(b, p->port);
				if (k)
					prom_printf(b, "\"} %.6f\n", p->oldest_s);
				else
					prom_printf(b, "\"} %llu\n",
						    (unsigned long long)p->bytes);
			}
	}
}

int prom_render(const struct prom_view *v, struct prom_buf *out)
{
	render_global(out, v);
	render_targets(out, v);
	render_luns(out, v);
	render_crash_lab(out, v);
	return out->oom ? -1 : 0;
}

/* ---- collecting ------------------------------------------------------------ */

static double start_time;

static double unix_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void prom_set_start_time(void)
{
	start_time = unix_now();
}

struct collect {
	struct prom_view *v;
	int cap;
	bool oom;
};

static void collect_lun(struct lun *l, void *arg)
{
	struct collect *c = arg;
	struct prom_lun *pl;

	if (c->oom)
		return;
	if (c->v->nluns == c->cap) {
		int cap = c->cap ? c->cap * 2 : 8;
		struct prom_lun *n = realloc(c->v->luns, sizeof(*n) * (size_t)cap);

		if (!n) {
			c->oom = true;
			return;
		}
		c->v->luns = n;
		c->cap = cap;
	}
	pl = &c->v->luns[c->v->nluns++];
	snprintf(pl->target, sizeof(pl->target), "%s", l->dev ? l->dev->name : "");
	pl->lun = l->id;
	pl->queue_depth = l->bdev ? atomic_load_explicit(&l->bdev->queue_depth,
							  memory_order_relaxed) : 0;
	stats_snapshot(l, &pl->s);
	qos_counts(l, &pl->qos_delayed, &pl->qos_held);
	{
		struct bdev_prefetch_stats pf;

		if (l->bdev && bdev_prefetch_stats(l->bdev, &pf) == 0) {
			pl->pf_hits = pf.hits;
			pl->pf_misses = pf.misses;
			pl->pf_prefetched = pf.prefetched;
			pl->pf_dropped = pf.dropped;
		}
	}
	{
		struct record_info *ri = malloc(sizeof(*ri));

		if (ri) {
			record_info(l, ri);
			pl->recording = ri->active;
			pl->rec_bytes = ri->bytes;
			pl->rec_records = ri->records;
			pl->rec_full = ri->full;
			free(ri);
		}
	}
	durab_info(l, &pl->unfl);
}

static void collect_isns(struct prom_view *v)
{
	struct isnsr_status st;

	isnsr_status(&st);
	if (st.state == ISNSR_OFF)
		return;
	snprintf(v->isns_server, sizeof(v->isns_server), "%s", st.server);
	v->isns_registered = st.state == ISNSR_REGISTERED;
	v->isns_failures = st.failures;
}

int prom_collect(struct prom_view *v)
{
	struct collect c = { .v = v };

	memset(v, 0, sizeof(*v));
	if (start_time == 0)
		prom_set_start_time();
	v->version = PACKAGE_VERSION;
	v->io_engine = reactor_engine_name(reactor_engine());
	v->start_time = start_time;
	v->now = unix_now();
	v->sessions = sess_count();
	tcqd_refusals(v->refused);
	collect_isns(v);
	/* Targets and LUNs may be added and removed while we walk: the lock
	 * holds the lists still (target/target.h), and a LUN in the map
	 * stays allocated while it is there. */
	tcqd_read_lock();
	if (tcqd && tcqd->ntargets > 0) {
		v->targets = calloc((size_t)tcqd->ntargets, sizeof(*v->targets));
		if (!v->targets) {
			c.oom = true;
		} else {
			v->ntargets = tcqd->ntargets;
			for (int i = 0; i < tcqd->ntargets; i++) {
				struct target *t = tcqd->targets[i];
				struct prom_target *pt = &v->targets[i];

				snprintf(pt->name, sizeof(pt->name), "%s",
					 t->dev.name);
				pt->sessions = sess_logged_in(t);
				for (int r = 0; r < LOGIN_REFUSED_N; r++)
					pt->refused[r] = __atomic_load_n(
						&t->logins_refused[r],
						__ATOMIC_RELAXED);
			}
		}
	}
	if (!c.oom)
		ctl_for_each_lun(NULL, collect_lun, &c);
	tcqd_read_unlock();
	if (c.oom) {
		prom_view_free(v);
		return -1;
	}
	return 0;
}

void prom_view_free(struct prom_view *v)
{
	free(v->targets);
	free(v->luns);
	memset(v, 0, sizeof(*v));
}

char *prom_text(size_t *len)
{
	struct prom_view v;
	struct prom_buf b = { 0 };

	if (prom_collect(&v) < 0)
		return NULL;
	if (prom_render(&v, &b) < 0) {
		prom_view_free(&v);
		prom_buf_free(&b);
		return NULL;
	}
	prom_view_free(&v);
	if (len)
		*len = b.len;
	return b.s;
}
