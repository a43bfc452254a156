/*
 * tcqctl stats (ctl_priv.h): per LUN, commands by task attribute, what is
 * in flight, latency, the cost of ORDERED tasks and flushes; and reset,
 * which clears them. A statistics slot is only ever written by its own
 * reactor, so reset runs on each.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include "tcq/bufpool.h"
#include "tcq/reactor.h"
#include "scsi/lun.h"
#include "scsi/qos.h"
#include "scsi/stats.h"
#include "target/ctl.h"
#include "target/ctl_priv.h"
#include "target/metrics_prom.h"

static json_object *hist_json(const struct stats_hist *h, double scale)
{
	json_object *a = json_object_new_array();

	for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++) {
		json_object *b;

		if (!h->b[i])
			continue;
		b = json_object_new_object();
		if (scale == 1.0) {
			ctl_add_u64(b, "lo", stats_hist_lo(i));
			ctl_add_u64(b, "hi", stats_hist_hi(i));
		} else {
			json_object_object_add(b, "lo", json_object_new_double(
				(double)stats_hist_lo(i) * scale));
			json_object_object_add(b, "hi", json_object_new_double(
				(double)stats_hist_hi(i) * scale));
		}
		ctl_add_u64(b, "count", h->b[i]);
		json_object_array_add(a, b);
	}
	return a;
}

static void stats_add(struct lun *l, void *array)
{
	json_object *arr = array, *o = ctl_lun_json(l), *c, *x;
	struct stats_snapshot *s = malloc(sizeof(*s));
	uint64_t total = 0;

	if (!s) {
		json_object_put(o);
		return;
	}
	stats_snapshot(l, s);
	c = json_object_new_object();
	ctl_add_u64(c, "simple", s->c.cmds[0]);
	ctl_add_u64(c, "ordered", s->c.cmds[1]);
	ctl_add_u64(c, "head_of_queue", s->c.cmds[2]);
	ctl_add_u64(c, "aca", s->c.cmds[3]);
	for (int a = 0; a < STATS_NATTR; a++)
		total += s->c.cmds[a];
	ctl_add_u64(c, "total", total);
	ctl_add_u64(c, "completed", s->c.completed);
	json_object_object_add(o, "commands", c);

	x = json_object_new_object();
	for (unsigned k = 0; k < STATS_NCLASS; k++)
		ctl_add_u64(x, stats_class_name(k), s->c.cls[k]);
	json_object_object_add(o, "classes", x);

	x = json_object_new_object();
	ctl_add_u64(x, "read", s->c.read_bytes);
	ctl_add_u64(x, "written", s->c.write_bytes);
	json_object_object_add(o, "bytes", x);

	/* CHECK CONDITION by sense key: the keys that occurred. */
	x = json_object_new_object();
	for (unsigned k = 0; k < STATS_NSENSE; k++)
		if (s->c.sense[k])
			ctl_add_u64(x, stats_sense_key_name(k), s->c.sense[k]);
	json_object_object_add(o, "sense_keys", x);

	x = json_object_new_object();
	ctl_add_u64(x, "current", s->inflight);
	ctl_add_u64(x, "peak", s->peak_inflight);
	ctl_add_u64(x, "ios", s->c.ios);
	json_object_object_add(x, "occupancy_at_submit",
			       hist_json(&s->occ, 1.0));
	json_object_object_add(o, "inflight", x);

	x = json_object_new_object();
	ctl_add_u64(x, "count", stats_hist_count(&s->lat));
	ctl_add_us(x, "p50", stats_hist_quantile(&s->lat, 0.50));
	ctl_add_us(x, "p99", stats_hist_quantile(&s->lat, 0.99));
	ctl_add_us(x, "p99_9", stats_hist_quantile(&s->lat, 0.999));
	ctl_add_us(x, "total", s->c.lat_ns_total);
	json_object_object_add(o, "latency_us", x);

	/* Mean time per stage of the sampled commands (stats.h). */
	x = json_object_new_object();
	ctl_add_u64(x, "samples", s->c.path_samples);
	ctl_add_u64(x, "io_samples", s->c.path_io_samples);
	for (unsigned k = 0; k < STATS_NPATH; k++) {
		uint64_t n = k == STATS_PATH_TO_SUBMIT ||
			     k == STATS_PATH_BACKEND ? s->c.path_io_samples :
			     s->c.path_samples;

		ctl_add_us(x, stats_path_stage_name(k),
			   n ? s->c.path_ns[k] / n : 0);
	}
	json_object_object_add(o, "path_mean_us", x);

	x = json_object_new_object();
	ctl_add_u64(x, "count", s->c.ordered_enabled);
	ctl_add_us(x, "total", s->c.drain_ns_total);
	ctl_add_us(x, "mean", s->c.ordered_enabled ?
		   s->c.drain_ns_total / s->c.ordered_enabled : 0);
	ctl_add_us(x, "max", s->c.drain_ns_max);
	ctl_add_us(x, "p50", stats_hist_quantile(&s->drain, 0.50));
	ctl_add_us(x, "p99", stats_hist_quantile(&s->drain, 0.99));
	json_object_object_add(o, "ordered_drain_us", x);

	x = json_object_new_object();
	ctl_add_u64(x, "total", s->c.flushes);
	ctl_add_u64(x, "barrier", s->c.barrier_flushes);
	json_object_object_add(o, "flushes", x);
	ctl_record_stats(l, o);	/* the crash lab's: recording, unflushed */
	{	/* QoS: commands it delayed, and holds now (scsi/qos.h) */
		uint64_t delayed;
		unsigned held;

		qos_counts(l, &delayed, &held);
		x = json_object_new_object();
		ctl_add_u64(x, "delayed", delayed);
		ctl_add_u64(x, "held", held);
		json_object_object_add(o, "qos", x);
	}

	json_object_array_add(arr, o);
	free(s);
}

/* Resident set in bytes, from /proc/self/status (0 if unreadable). */
static uint64_t rss_bytes(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[128];
	unsigned long long kib = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return (uint64_t)kib * 1024;
}

/* Where the process' memory is: the resident set, what malloc has handed
 * out (over every arena) and holds free, and what the buffer pool caches
 * on purpose. A leak grows heap_in_use minus pool_cached; fragmentation
 * grows heap_free. */
static json_object *memory_json(void)
{
	json_object *m = json_object_new_object();

	ctl_add_u64(m, "rss_bytes", rss_bytes());
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
	{
		struct mallinfo2 mi = mallinfo2();

		ctl_add_u64(m, "heap_in_use_bytes", mi.uordblks + mi.hblkhd);
		ctl_add_u64(m, "heap_free_bytes", mi.fordblks);
	}
#endif
	ctl_add_u64(m, "pool_cached_bytes", bufpool_cached_bytes());
	return m;
}

json_object *ctl_cmd_stats(struct ctl_conn *cc, char **argv, int argc)
{
	json_object *r = ctl_reply_luns(argv, argc, stats_add);

	/* I/O buffers held now, daemon-wide: back to its idle value once
	 * every command is done (a leak shows as growth). */
	if (json_object_get_boolean(json_object_object_get(r, "ok"))) {
		ctl_add_u64(r, "buffers_in_use", (uint64_t)bufpool_in_use());
		json_object_object_add(r, "io_engine", json_object_new_string(
			reactor_engine_name(reactor_engine())));
		json_object_object_add(r, "memory", memory_json());
	}
	return r;
}

/* ---- metrics: the Prometheus text (target/metrics_prom.c) --------------- */

json_object *ctl_cmd_metrics(struct ctl_conn *cc, char **argv, int argc)
{
	size_t len;
	char *text = prom_text(&len);
	json_object *r;

	if (!text)
		return ctl_reply_err("out of memory");
	r = ctl_reply_ok();
	json_object_object_add(r, "text",
			       json_object_new_string_len(text, (int)len));
	free(text);
	return r;
}

/* ---- reset: on every reactor, each clearing its own slots --------------- */

static void reset_lun(struct lun *l, void *arg)
{
	stats_reset_local(l);
}

static void reset_here(void *only)
{
	ctl_for_each_lun(only, reset_lun, NULL);
}

json_object *ctl_cmd_reset(struct ctl_conn *cc, char **argv, int argc)
{
	struct lun *only = NULL;
	char err[300];

	if (argc == 1 && !(only = ctl_find_lun(argv[0], err, sizeof(err))))
		return ctl_reply_err("%s", err);
	return ctl_on_every_reactor(cc, reset_here, only);
}
