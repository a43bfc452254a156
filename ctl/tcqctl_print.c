/*
 * The text tcqctl prints of tcqd's answers (tcqctl.h): one printer per
 * kind of answer, which the command table names for each command
 * (tcq/ctl_cmds.h); --json prints the answer itself instead.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "ctl/tcqctl.h"

/* ---- JSON helpers -------------------------------------------------------- */

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;

	if (o && json_object_object_get_ex(o, k, &v))
		return v;
	return NULL;
}

static int64_t geti(json_object *o, const char *k)
{
	return json_object_get_int64(get(o, k));
}

static double getd(json_object *o, const char *k)
{
	return json_object_get_double(get(o, k));
}

static const char *gets_(json_object *o, const char *k)
{
	const char *s = json_object_get_string(get(o, k));

	return s ? s : "";
}

/* ---- text output --------------------------------------------------------- */

/* A LUN's settings; with counters (tcqctl stats), what prefetch did too:
 * a listing (luns, set) shows its settings only, so that two tcqd with
 * the same configuration list the same text. */
static void print_lun_head(json_object *l, bool counters)
{
	printf("LUN %s/%" PRId64 "  %s  %" PRId64 " x %" PRId64 " B  "
	       "queue_depth %" PRId64 "  barrier %s  write_cache %s\n",
	       gets_(l, "target"), geti(l, "lun"), gets_(l, "backend"),
	       geti(l, "blocks"), geti(l, "block_size"),
	       geti(l, "queue_depth"), gets_(l, "barrier"),
	       json_object_get_boolean(get(l, "write_cache")) ? "on" : "off");
	if (get(l, "vendor"))	/* INQUIRY's identity, as the initiator reads it */
		printf("  inquiry  vendor \"%s\"  product \"%s\"  revision "
		       "\"%s\"\n", gets_(l, "vendor"), gets_(l, "product"),
		       gets_(l, "revision"));
	if (get(l, "cut_through"))	/* READs in pieces (tcqd.conf(5)) */
		printf("  reads    cut_through %s\n", gets_(l, "cut_through"));
	if (get(l, "qos_iops"))	/* 0: no limit */
		printf("  qos      iops %" PRId64 "  MB/s %" PRId64 "%s\n",
		       geti(l, "qos_iops"), geti(l, "qos_mbps"),
		       geti(l, "qos_iops") || geti(l, "qos_mbps") ? "" :
		       "  (no limit)");
	if (get(l, "medium"))	/* a cdrom: its disc */
		printf("  cdrom  medium %s  profile %s\n", gets_(l, "medium"),
		       gets_(l, "profile"));
	if (get(l, "prefetch")) {	/* read-ahead: since the LUN opened */
		json_object *m = get(l, "prefetch");

		printf("  prefetch %s  max %" PRId64,
		       json_object_get_boolean(get(m, "on")) ? "on" : "off",
		       geti(m, "max"));
		if (counters)
			printf("  held %" PRId64 "  hits %" PRId64 "  misses %"
			       PRId64 "  prefetched %" PRId64 " B  dropped by "
			       "writes %" PRId64 " B", geti(m, "held"),
			       geti(m, "hits"), geti(m, "misses"),
			       geti(m, "bytes_prefetched"),
			       geti(m, "bytes_dropped"));
		printf("\n");
	}
	if (get(l, "model")) {
		json_object *m = get(l, "model");

		printf("  model %s: %" PRId64 " commands, mean drive queue "
		       "%.2f, host queue %.2f, read hits %" PRId64 ", cached "
		       "writes %" PRId64 ", destages %" PRId64 ", busy dies "
		       "%.1f\n", gets_(m, "model"), geti(m, "commands"),
		       json_object_get_double(get(m, "mean_drive_queue")),
		       json_object_get_double(get(m, "mean_host_queue")),
		       geti(m, "read_hits"), geti(m, "cached_writes"),
		       geti(m, "destages"),
		       json_object_get_double(get(m, "mean_busy_dies")));
	}
}

static void print_occupancy(json_object *arr)
{
	size_t n = json_object_array_length(arr);
	int64_t max = 0;

	for (size_t i = 0; i < n; i++) {
		int64_t c = geti(json_object_array_get_idx(arr, i), "count");

		if (c > max)
			max = c;
	}
	if (!n)
		return;
	printf("  queue occupancy at submit (I/Os already in flight):\n");
	for (size_t i = 0; i < n; i++) {
		json_object *b = json_object_array_get_idx(arr, i);
		int64_t lo = geti(b, "lo"), hi = geti(b, "hi"),
			c = geti(b, "count");
		int bar = max ? (int)((c * 40 + max - 1) / max) : 0;
		char label[48];

		if (lo == hi)
			snprintf(label, sizeof(label), "%" PRId64, lo);
		else
			snprintf(label, sizeof(label), "%" PRId64 "-%" PRId64,
				 lo, hi);
		printf("    %9s %12" PRId64 "  %.*s\n", label, c, bar,
		       "########################################");
	}
}

/* The durability audit, and the recording when there is or was one. */
static void print_crash_lab(json_object *l)
{
	json_object *u = get(l, "unflushed"), *r = get(l, "recording"),
		    *ports = get(u, "initiators");
	size_t n = ports ? json_object_array_length(ports) : 0;

	printf("  unflushed  %" PRId64 " bytes acknowledged, not yet durable; "
	       "oldest %.3f s\n", geti(u, "bytes"), getd(u, "oldest_s"));
	for (size_t i = 0; i < n; i++) {
		json_object *p = json_object_array_get_idx(ports, i);
		const char *name = gets_(p, "initiator");

		printf("             %s: %" PRId64 " bytes, oldest %.3f s\n",
		       *name ? name : "(other initiators)",
		       geti(p, "bytes"), getd(p, "oldest_s"));
	}
	if (json_object_get_boolean(get(r, "active")))
		printf("  recording  into %s: %" PRId64 " records, %" PRId64
		       " of at most %" PRId64 " bytes\n", gets_(r, "path"),
		       geti(r, "records"), geti(r, "bytes"),
		       geti(r, "max_bytes"));
	else if (*gets_(r, "ended"))
		printf("  recording  %s ended: %s (%" PRId64 " records, %"
		       PRId64 " bytes)\n", gets_(r, "path"), gets_(r, "ended"),
		       geti(r, "records"), geti(r, "bytes"));
	if (geti(r, "full"))
		printf("  recording  %" PRId64 " ended full\n", geti(r, "full"));
}

static void print_stats(json_object *r)
{
	json_object *luns = get(r, "luns");
	size_t n = json_object_array_length(luns);

	if (get(r, "io_engine"))	/* the one tcqd runs, auto resolved */
		printf("io engine: %s\n", gets_(r, "io_engine"));
	if (get(r, "buffers_in_use"))
		printf("I/O buffers in use: %" PRId64 "\n",
		       geti(r, "buffers_in_use"));
	if (get(r, "memory")) {
		json_object *m = get(r, "memory");

		printf("memory: rss %" PRId64 " KiB, heap in use %" PRId64
		       " KiB, heap free %" PRId64 " KiB, pool cached %" PRId64
		       " KiB\n", geti(m, "rss_bytes") / 1024,
		       geti(m, "heap_in_use_bytes") / 1024,
		       geti(m, "heap_free_bytes") / 1024,
		       geti(m, "pool_cached_bytes") / 1024);
	}
	printf("\n");

	for (size_t i = 0; i < n; i++) {
		json_object *l = json_object_array_get_idx(luns, i);
		json_object *c = get(l, "commands"), *f = get(l, "inflight"),
			    *lat = get(l, "latency_us"),
			    *d = get(l, "ordered_drain_us"),
			    *fl = get(l, "flushes"),
			    *pa = get(l, "path_mean_us");

		if (i)
			printf("\n");
		print_lun_head(l, true);
		printf("  commands   total %" PRId64 ": simple %" PRId64
		       ", ordered %" PRId64 ", head of queue %" PRId64
		       ", aca %" PRId64 "; completed %" PRId64 "\n",
		       geti(c, "total"), geti(c, "simple"), geti(c, "ordered"),
		       geti(c, "head_of_queue"), geti(c, "aca"),
		       geti(c, "completed"));
		printf("  in flight  now %" PRId64 ", peak %" PRId64
		       " (backend I/Os %" PRId64 ")\n", geti(f, "current"),
		       geti(f, "peak"), geti(f, "ios"));
		printf("  latency    p50 %.1f us, p99 %.1f us, p99.9 %.1f us"
		       " (%" PRId64 " commands, arrival to completion)\n",
		       getd(lat, "p50"), getd(lat, "p99"), getd(lat, "p99_9"),
		       geti(lat, "count"));
		if (geti(pa, "samples"))
			printf("  path       in %.1f, to submit %.1f, backend "
			       "%.1f, to status %.1f, out %.1f us (mean of %"
			       PRId64 " sampled)\n", getd(pa, "transport_in"),
			       getd(pa, "to_submit"), getd(pa, "backend"),
			       getd(pa, "to_status"), getd(pa, "transport_out"),
			       geti(pa, "samples"));
		printf("  ordered    %" PRId64 " drained: total %.1f us, mean "
		       "%.1f us, p99 %.1f us, max %.1f us\n", geti(d, "count"),
		       getd(d, "total"), getd(d, "mean"), getd(d, "p99"),
		       getd(d, "max"));
		printf("  flushes    %" PRId64 " (%" PRId64 " for barriers)\n",
		       geti(fl, "total"), geti(fl, "barrier"));
		if (get(l, "qos"))
			printf("  qos        %" PRId64 " delayed, %" PRId64
			       " held now\n", geti(get(l, "qos"), "delayed"),
			       geti(get(l, "qos"), "held"));
		print_crash_lab(l);
		print_occupancy(get(f, "occupancy_at_submit"));
	}
}

static void print_luns(json_object *r)
{
	json_object *luns = get(r, "luns");
	size_t n = json_object_array_length(luns);

	for (size_t i = 0; i < n; i++)
		print_lun_head(json_object_array_get_idx(luns, i), false);
}

static void print_sessions(json_object *r)
{
	json_object *ss = get(r, "sessions");
	size_t n = json_object_array_length(ss);

	if (n == 0)
		printf("no sessions\n");
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(ss, i);
		json_object *p = get(s, "params");

		printf("TSIH %" PRId64 "  %s  %s  ISID %s  target %s  peer %s"
		       "  reactor %" PRId64 "\n", geti(s, "tsih"),
		       gets_(s, "type"), gets_(s, "initiator"),
		       gets_(s, "isid"),
		       *gets_(s, "target") ? gets_(s, "target") : "-",
		       gets_(s, "peer"), geti(s, "reactor"));
		printf("   ");
		json_object_object_foreach(p, k, v)
			printf(" %s=%s", k, json_object_get_string(v));
		printf("\n");
	}
}

/* What a live change did, one part per line. */
static void print_changed(json_object *r)
{
	const char *m = gets_(r, "changed");

	while (*m) {
		const char *e = strstr(m, "; ");
		int n = e ? (int)(e - m) : (int)strlen(m);

		printf("%.*s\n", n, m);
		m += n;
		if (e)
			m += 2;
	}
}

/* One line: where the iSNS registration stands. */
static void print_isns(json_object *i)
{
	const char *state = i ? gets_(i, "state") : "off";

	if (!strcmp(state, "off")) {
		printf("isns off\n");
		return;
	}
	printf("isns %s %s", gets_(i, "server"), state);
	if (!strcmp(state, "registered"))
		printf("  targets %" PRId64 "  portals %" PRId64
		       "  period %" PRId64 "s", geti(i, "targets"),
		       geti(i, "portals"), geti(i, "period"));
	if (*gets_(i, "error"))
		printf("  error: %s", gets_(i, "error"));
	printf("\n");
}

static void print_targets(json_object *r)
{
	json_object *ts = get(r, "targets");
	size_t n = json_object_array_length(ts);

	if (n == 0)
		printf("no targets\n");
	for (size_t i = 0; i < n; i++) {
		json_object *t = json_object_array_get_idx(ts, i);
		json_object *luns = get(t, "luns");
		size_t nl = json_object_array_length(luns);

		printf("%s  tpgt %" PRId64 "  sessions %" PRId64 "  chap %s  luns",
		       gets_(t, "name"), geti(t, "tpgt"), geti(t, "sessions"),
		       json_object_get_boolean(get(t, "chap")) ? "on" : "off");
		for (size_t j = 0; j < nl; j++)
			printf("%s%d", j ? "," : " ",
			       json_object_get_int(json_object_array_get_idx(luns, j)));
		printf("%s\n", nl ? "" : " none");
		if (get(t, "redirect"))	/* its normal logins go there */
			printf("  redirect %s (target moved %s)\n",
			       gets_(t, "redirect"),
			       json_object_get_boolean(get(t, "redirect_permanent"))
			       ? "permanently" : "temporarily");
	}
	print_isns(get(r, "isns"));
}

static void print_ok(json_object *r)
{
	printf("ok\n");
}

/* metrics as /metrics serves it, config as tcqd.conf text */
static void print_text(json_object *r)
{
	fputs(gets_(r, "text"), stdout);
}

/* A change tcqd describes, else just ok. */
static void print_change(json_object *r)
{
	if (get(r, "changed"))
		print_changed(r);
	else
		print_ok(r);
}

static void print_set(json_object *r)
{
	print_lun_head(get(r, "lun"), false);
	print_changed(r);
}

static void print_saved(json_object *r)
{
	printf("saved to %s\n", gets_(r, "file"));
}

static void print_crashed(json_object *r)
{
	printf("crashed: %" PRId64 " unsaved block%s dropped\n",
	       geti(r, "dropped_blocks"),
	       geti(r, "dropped_blocks") == 1 ? "" : "s");
}

static tcqctl_printer *const printers[CTL_NPRINTS] = {
	[CTL_PRINT_OK] = print_ok,
	[CTL_PRINT_STATS] = print_stats,
	[CTL_PRINT_LUNS] = print_luns,
	[CTL_PRINT_TARGETS] = print_targets,
	[CTL_PRINT_SESSIONS] = print_sessions,
	[CTL_PRINT_TEXT] = print_text,
	[CTL_PRINT_CHANGED] = print_change,
	[CTL_PRINT_SET] = print_set,
	[CTL_PRINT_SAVED] = print_saved,
	[CTL_PRINT_CRASHED] = print_crashed,
};

tcqctl_printer *tcqctl_printer_for(enum ctl_print kind)
{
	return (unsigned)kind < CTL_NPRINTS ? printers[kind] : NULL;
}
