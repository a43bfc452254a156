/*
 * Unit tests for target/metrics_prom.c (the Prometheus text of tcqd's
 * statistics) and the /metrics address forms (target/portal_addr.c).
 * The expected text is written from the text exposition format 0.0.4
 * (HELP and TYPE before a family's samples, label values with \ " and
 * newline escaped, cumulative histogram buckets ending in +Inf, _sum and
 * _count) for a hand-made view, not taken from tcqd's output.
 */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scsi/stats.h"
#include "target/metrics_prom.h"
#include "target/portal.h"
#include "tests/unit/harness.h"

static char *escaped(const char *v)
{
	struct prom_buf b = { 0 };

	prom_label_value(&b, v);
	ck_assert(!b.oom);
	return b.s ? b.s : strdup("");
}

START_TEST(label_values_escaped)
{
	char *s;

	s = escaped("plain:iqn.2026-11");
	ck_assert_str_eq(s, "plain:iqn.2026-11");
	free(s);
	/* backslash, double quote and line feed, nothing else */
	s = escaped("a\\b\"c\nd'e\tf");
	ck_assert_str_eq(s, "a\\\\b\\\"c\\nd'e\tf");
	free(s);
	s = escaped("");
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

static void hist_put(struct stats_hist *h, uint64_t ns, uint64_t n)
{
	h->b[stats_hist_bucket(ns)] += n;
}

/* The fixture: one target whose name needs escaping, one LUN. */
static void fixture_view(struct prom_view *v, struct prom_target *t,
			 struct prom_lun *l)
{
	static const char name[] = "iqn.2026-11.org.tcq:a\"b\\c\nd";

	memset(v, 0, sizeof(*v));
	memset(t, 0, sizeof(*t));
	memset(l, 0, sizeof(*l));
	v->version = "1.2.3";
	v->io_engine = "uring";
	v->start_time = 1000.5;
	v->now = 1010.75;
	v->sessions = 2;
	v->refused[LOGIN_REFUSED_CHAP] = 1;
	v->refused[LOGIN_REFUSED_ACL] = 2;
	v->refused[LOGIN_REFUSED_UNKNOWN_TARGET] = 4;
	v->refused[LOGIN_REFUSED_OTHER] = 3;
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->sessions = 1;
	t->refused[LOGIN_REFUSED_CHAP] = 1;
	t->refused[LOGIN_REFUSED_ACL] = 2;
	v->targets = t;
	v->ntargets = 1;

	snprintf(l->target, sizeof(l->target), "%s", name);
	l->lun = 7;
	l->queue_depth = 32;
	l->s.c.cmds[0] = 5;
	l->s.c.cmds[1] = 1;
	l->s.c.cls[0] = 1;
	l->s.c.cls[1] = 4;
	l->s.c.cls[2] = 1;
	l->s.c.completed = 6;
	l->s.c.read_bytes = 16384;
	l->s.c.write_bytes = 4096;
	l->s.c.sense[5] = 1;	/* ILLEGAL REQUEST */
	l->s.c.sense[6] = 2;	/* UNIT ATTENTION */
	/* latency: 3 x 20 us, 2 x 1.5 ms, 1 x 20 s (beyond the last bound) */
	hist_put(&l->s.lat, 20000, 3);
	hist_put(&l->s.lat, 1500000, 2);
	hist_put(&l->s.lat, 20000000000ull, 1);
	l->s.c.lat_ns_total = 3 * 20000ull + 2 * 1500000ull + 20000000000ull;
	l->s.inflight = 2;
	l->s.peak_inflight = 4;
	l->s.c.ios = 5;
	/* one ORDERED task drained for 30 us */
	hist_put(&l->s.drain, 30000, 1);
	l->s.c.ordered_enabled = 1;
	l->s.c.drain_ns_total = 30000;
	l->s.c.flushes = 2;
	l->s.c.barrier_flushes = 1;
	l->qos_delayed = 9;	/* QoS: 9 commands held, 3 of them now */
	l->qos_held = 3;
	/* prefetch: 40 reads from its buffers, 3 to the disk, 1 MiB read
	 * ahead, 256 KiB of it dropped by a write */
	l->pf_hits = 40;
	l->pf_misses = 3;
	l->pf_prefetched = 1048576;
	l->pf_dropped = 262144;
	/* three sampled commands, two with backend I/O */
	l->s.c.path_samples = 3;
	l->s.c.path_io_samples = 2;
	l->s.c.path_ns[0] = 6000;
	l->s.c.path_ns[1] = 1500;
	l->s.c.path_ns[2] = 70000;
	l->s.c.path_ns[3] = 2500;
	l->s.c.path_ns[4] = 1030000000;
	/* recording; 4 KiB of one initiator not yet durable, 250 ms old */
	l->recording = true;
	l->rec_bytes = 8192;
	l->rec_records = 12;
	l->rec_full = 1;
	l->unfl.bytes = 4096;
	l->unfl.oldest_s = 0.25;
	l->unfl.nports = 1;
	snprintf(l->unfl.ports[0].port, sizeof(l->unfl.ports[0].port),
		 "iqn.1993-08.org.debian:01:ab");
	l->unfl.ports[0].bytes = 4096;
	l->unfl.ports[0].oldest_s = 0.25;
	v->luns = l;
	v->nluns = 1;
}

static const char expected[] =
	"# HELP tcq_build_info tcqd's version, as a label; the value is 1.\n"
	"# TYPE tcq_build_info gauge\n"
	"tcq_build_info{version=\"1.2.3\"} 1\n"
	"# HELP tcq_start_time_seconds When tcqd started, in seconds since the Unix epoch.\n"
	"# TYPE tcq_start_time_seconds gauge\n"
	"tcq_start_time_seconds 1000.500\n"
	"# HELP tcq_uptime_seconds Seconds since tcqd started.\n"
	"# TYPE tcq_uptime_seconds gauge\n"
	"tcq_uptime_seconds 10.250\n"
	"# HELP tcq_sessions iSCSI sessions now, discovery sessions included.\n"
	"# TYPE tcq_sessions gauge\n"
	"tcq_sessions 2\n"
	"# HELP tcq_logins_refused_total Logins tcqd refused, by reason, whatever the target.\n"
	"# TYPE tcq_logins_refused_total counter\n"
	"tcq_logins_refused_total{reason=\"chap\"} 1\n"
	"tcq_logins_refused_total{reason=\"acl\"} 2\n"
	"tcq_logins_refused_total{reason=\"limit\"} 0\n"
	"tcq_logins_refused_total{reason=\"unknown_target\"} 4\n"
	"tcq_logins_refused_total{reason=\"other\"} 3\n"
	"# HELP tcq_io_engine The io engine tcqd runs (io_engine, auto resolved at start), as a label; the value is 1.\n"
	"# TYPE tcq_io_engine gauge\n"
	"tcq_io_engine{engine=\"uring\"} 1\n"
	"# HELP tcq_target_sessions Normal sessions to the target now.\n"
	"# TYPE tcq_target_sessions gauge\n"
	"tcq_target_sessions{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\"} 1\n"
	"# HELP tcq_target_logins_refused_total Logins to the target tcqd refused, by reason.\n"
	"# TYPE tcq_target_logins_refused_total counter\n"
	"tcq_target_logins_refused_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",reason=\"chap\"} 1\n"
	"tcq_target_logins_refused_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",reason=\"acl\"} 2\n"
	"tcq_target_logins_refused_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",reason=\"limit\"} 0\n"
	"tcq_target_logins_refused_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",reason=\"unknown_target\"} 0\n"
	"tcq_target_logins_refused_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",reason=\"other\"} 0\n"
	"# HELP tcq_lun_commands_total SCSI commands that arrived, by task attribute.\n"
	"# TYPE tcq_lun_commands_total counter\n"
	"tcq_lun_commands_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",attribute=\"simple\"} 5\n"
	"tcq_lun_commands_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",attribute=\"ordered\"} 1\n"
	"tcq_lun_commands_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",attribute=\"head_of_queue\"} 0\n"
	"tcq_lun_commands_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",attribute=\"aca\"} 0\n"
	"# HELP tcq_lun_commands_by_class_total SCSI commands that arrived, by what they do to the medium.\n"
	"# TYPE tcq_lun_commands_by_class_total counter\n"
	"tcq_lun_commands_by_class_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",class=\"other\"} 1\n"
	"tcq_lun_commands_by_class_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",class=\"read\"} 4\n"
	"tcq_lun_commands_by_class_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",class=\"write\"} 1\n"
	"# HELP tcq_lun_commands_completed_total SCSI commands the device server completed.\n"
	"# TYPE tcq_lun_commands_completed_total counter\n"
	"tcq_lun_commands_completed_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 6\n"
	"# HELP tcq_lun_read_bytes_total Data-In bytes of medium reads that completed GOOD.\n"
	"# TYPE tcq_lun_read_bytes_total counter\n"
	"tcq_lun_read_bytes_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 16384\n"
	"# HELP tcq_lun_write_bytes_total Data-Out bytes of medium writes that completed GOOD.\n"
	"# TYPE tcq_lun_write_bytes_total counter\n"
	"tcq_lun_write_bytes_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 4096\n"
	"# HELP tcq_lun_errors_total Commands that ended in CHECK CONDITION, by sense key.\n"
	"# TYPE tcq_lun_errors_total counter\n"
	"tcq_lun_errors_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",sense_key=\"no_sense\"} 0\n"
	"tcq_lun_errors_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",sense_key=\"recovered_error\"} 0\n"
	"tcq_lun_errors_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",sense_key=\"not_ready\"} 0\n"
	"tcq_lun_errors_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",sense_key=\"medium_error\"} 0\n"
	"tcq_lun_errors_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",sense_key=\"hardware_error\"} 0\n"
	"tcq_lun_errors_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",sense_key=\"illegal_request\"} 1\n"
	"tcq_lun_errors_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",sense_key=\"unit_attention\"} 2\n"
	"tcq_lun_errors_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",sense_key=\"data_protect\"} 0\n"
	"tcq_lun_errors_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",sense_key=\"blank_check\"} 0\n"
	"tcq_lun_errors_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",sense_key=\"vendor_specific\"} 0\n"
	"tcq_lun_errors_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",sense_key=\"copy_aborted\"} 0\n"
	"tcq_lun_errors_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",sense_key=\"aborted_command\"} 0\n"
	"tcq_lun_errors_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",sense_key=\"obsolete_0c\"} 0\n"
	"tcq_lun_errors_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",sense_key=\"volume_overflow\"} 0\n"
	"tcq_lun_errors_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",sense_key=\"miscompare\"} 0\n"
	"tcq_lun_errors_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",sense_key=\"completed\"} 0\n"
	"# HELP tcq_lun_latency_seconds Command latency, arrival to completion.\n"
	"# TYPE tcq_lun_latency_seconds histogram\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"1e-05\"} 0\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"2.5e-05\"} 3\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"5e-05\"} 3\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.0001\"} 3\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.00025\"} 3\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.0005\"} 3\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.001\"} 3\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.0025\"} 5\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.005\"} 5\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.01\"} 5\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.025\"} 5\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.05\"} 5\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.1\"} 5\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.25\"} 5\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.5\"} 5\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"1\"} 5\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"2.5\"} 5\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"5\"} 5\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"10\"} 5\n"
	"tcq_lun_latency_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"+Inf\"} 6\n"
	"tcq_lun_latency_seconds_sum{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 20.003060000\n"
	"tcq_lun_latency_seconds_count{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 6\n"
	"# HELP tcq_lun_inflight Backend I/Os in flight now, over every reactor.\n"
	"# TYPE tcq_lun_inflight gauge\n"
	"tcq_lun_inflight{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 2\n"
	"# HELP tcq_lun_inflight_peak Most backend I/Os in flight at once since reset.\n"
	"# TYPE tcq_lun_inflight_peak gauge\n"
	"tcq_lun_inflight_peak{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 4\n"
	"# HELP tcq_lun_queue_depth Backend I/Os allowed in flight, over every reactor (queue_depth).\n"
	"# TYPE tcq_lun_queue_depth gauge\n"
	"tcq_lun_queue_depth{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 32\n"
	"# HELP tcq_lun_backend_ios_total Backend I/Os submitted.\n"
	"# TYPE tcq_lun_backend_ios_total counter\n"
	"tcq_lun_backend_ios_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 5\n"
	"# HELP tcq_lun_ordered_drain_seconds Time ORDERED tasks waited for older tasks, arrival to enabled.\n"
	"# TYPE tcq_lun_ordered_drain_seconds histogram\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"1e-05\"} 0\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"2.5e-05\"} 0\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"5e-05\"} 1\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.0001\"} 1\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.00025\"} 1\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.0005\"} 1\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.001\"} 1\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.0025\"} 1\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.005\"} 1\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.01\"} 1\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.025\"} 1\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.05\"} 1\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.1\"} 1\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.25\"} 1\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"0.5\"} 1\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"1\"} 1\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"2.5\"} 1\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"5\"} 1\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"10\"} 1\n"
	"tcq_lun_ordered_drain_seconds_bucket{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",le=\"+Inf\"} 1\n"
	"tcq_lun_ordered_drain_seconds_sum{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 0.000030000\n"
	"tcq_lun_ordered_drain_seconds_count{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 1\n"
	"# HELP tcq_lun_flushes_total Cache flushes submitted to the backend.\n"
	"# TYPE tcq_lun_flushes_total counter\n"
	"tcq_lun_flushes_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 2\n"
	"# HELP tcq_lun_barrier_flushes_total Of those, flushes before ORDERED writes (barrier=flush).\n"
	"# TYPE tcq_lun_barrier_flushes_total counter\n"
	"tcq_lun_barrier_flushes_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 1\n"
	"# HELP tcq_lun_qos_delayed_total Commands QoS held before their task set (qos_iops, qos_mbps).\n"
	"# TYPE tcq_lun_qos_delayed_total counter\n"
	"tcq_lun_qos_delayed_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 9\n"
	"# HELP tcq_lun_qos_held Commands QoS holds now.\n"
	"# TYPE tcq_lun_qos_held gauge\n"
	"tcq_lun_qos_held{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 3\n"
	"# HELP tcq_lun_prefetch_hits_total Reads served from the read-ahead buffer, no disk I/O.\n"
	"# TYPE tcq_lun_prefetch_hits_total counter\n"
	"tcq_lun_prefetch_hits_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 40\n"
	"# HELP tcq_lun_prefetch_misses_total Reads sent to the disk while prefetch was on.\n"
	"# TYPE tcq_lun_prefetch_misses_total counter\n"
	"tcq_lun_prefetch_misses_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 3\n"
	"# HELP tcq_lun_prefetch_bytes_total Bytes read ahead into the buffer.\n"
	"# TYPE tcq_lun_prefetch_bytes_total counter\n"
	"tcq_lun_prefetch_bytes_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 1048576\n"
	"# HELP tcq_lun_prefetch_dropped_bytes_total Bytes read ahead and dropped by writes to their range.\n"
	"# TYPE tcq_lun_prefetch_dropped_bytes_total counter\n"
	"tcq_lun_prefetch_dropped_bytes_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 262144\n"
	"# HELP tcq_lun_path_samples_total Commands sampled for the path breakdown (one in 16).\n"
	"# TYPE tcq_lun_path_samples_total counter\n"
	"tcq_lun_path_samples_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 3\n"
	"# HELP tcq_lun_path_io_samples_total Of those, commands with backend I/O.\n"
	"# TYPE tcq_lun_path_io_samples_total counter\n"
	"tcq_lun_path_io_samples_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 2\n"
	"# HELP tcq_lun_path_seconds_total Time the sampled commands spent in each stage of the path.\n"
	"# TYPE tcq_lun_path_seconds_total counter\n"
	"tcq_lun_path_seconds_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",stage=\"transport_in\"} 0.000006000\n"
	"tcq_lun_path_seconds_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",stage=\"to_submit\"} 0.000001500\n"
	"tcq_lun_path_seconds_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",stage=\"backend\"} 0.000070000\n"
	"tcq_lun_path_seconds_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",stage=\"to_status\"} 0.000002500\n"
	"tcq_lun_path_seconds_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",stage=\"transport_out\"} 1.030000000\n"
	"# HELP tcq_lun_recording 1 while the LUN records for tcq-crash.\n"
	"# TYPE tcq_lun_recording gauge\n"
	"tcq_lun_recording{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 1\n"
	"# HELP tcq_lun_recording_bytes Bytes of the current (or last) recording.\n"
	"# TYPE tcq_lun_recording_bytes gauge\n"
	"tcq_lun_recording_bytes{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 8192\n"
	"# HELP tcq_lun_recording_records Records of the current (or last) recording.\n"
	"# TYPE tcq_lun_recording_records gauge\n"
	"tcq_lun_recording_records{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 12\n"
	"# HELP tcq_lun_recording_full_total Recordings that ended because record_max was reached.\n"
	"# TYPE tcq_lun_recording_full_total counter\n"
	"tcq_lun_recording_full_total{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 1\n"
	"# HELP tcq_lun_unflushed_bytes Bytes acknowledged but not yet durable (SBC-4 rules).\n"
	"# TYPE tcq_lun_unflushed_bytes gauge\n"
	"tcq_lun_unflushed_bytes{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 4096\n"
	"# HELP tcq_lun_unflushed_oldest_seconds Age of the oldest acknowledged write not yet durable.\n"
	"# TYPE tcq_lun_unflushed_oldest_seconds gauge\n"
	"tcq_lun_unflushed_oldest_seconds{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\"} 0.250000\n"
	"# HELP tcq_lun_initiator_unflushed_bytes Per initiator port: bytes acknowledged, not yet durable.\n"
	"# TYPE tcq_lun_initiator_unflushed_bytes gauge\n"
	"tcq_lun_initiator_unflushed_bytes{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",initiator=\"iqn.1993-08.org.debian:01:ab\"} 4096\n"
	"# HELP tcq_lun_initiator_unflushed_oldest_seconds Per initiator port: age of its oldest write not yet durable.\n"
	"# TYPE tcq_lun_initiator_unflushed_oldest_seconds gauge\n"
	"tcq_lun_initiator_unflushed_oldest_seconds{target=\"iqn.2026-11.org.tcq:a\\\"b\\\\c\\nd\",lun=\"7\",initiator=\"iqn.1993-08.org.debian:01:ab\"} 0.250000\n"
	;

/* Compares line by line, so that a failure names the first line off. */
static void expect_text(const char *got, const char *want)
{
	unsigned line = 1;

	for (;;) {
		const char *ge = strchr(got, '\n'), *we = strchr(want, '\n');
		size_t gl = ge ? (size_t)(ge - got) : strlen(got),
		       wl = we ? (size_t)(we - want) : strlen(want);

		ck_assert_msg(gl == wl && !memcmp(got, want, gl),
			      "line %u: got '%.*s', want '%.*s'", line,
			      (int)gl, got, (int)wl, want);
		if (!ge || !we) {
			ck_assert_msg(!ge && !we, "line %u: %s ends first",
				      line, ge ? "the expected text" : "the text");
			return;
		}
		got = ge + 1;
		want = we + 1;
		line++;
	}
}

START_TEST(fixture_known_text)
{
	struct prom_view v;
	struct prom_target t;
	struct prom_lun *l = calloc(1, sizeof(*l));
	struct prom_buf b = { 0 };

	ck_assert_ptr_nonnull(l);
	fixture_view(&v, &t, l);
	ck_assert_int_eq(prom_render(&v, &b), 0);
	ck_assert_ptr_nonnull(b.s);
	expect_text(b.s, expected);
	ck_assert_uint_eq(b.len, strlen(expected));
	prom_buf_free(&b);
	free(l);
}
END_TEST

/* No targets, no LUNs: the daemon-wide families alone, each with its
 * HELP and TYPE (a family without samples is still announced). */
START_TEST(empty_view_has_every_family)
{
	struct prom_view v = { .version = "x", .start_time = 5, .now = 4 };
	struct prom_buf b = { 0 };

	ck_assert_int_eq(prom_render(&v, &b), 0);
	ck_assert_ptr_nonnull(strstr(b.s, "tcq_uptime_seconds 0.000\n"));
	ck_assert_ptr_nonnull(strstr(b.s,
		"# TYPE tcq_lun_latency_seconds histogram\n"
		"# HELP tcq_lun_inflight "));
	ck_assert_ptr_null(strstr(b.s, "{target="));
	prom_buf_free(&b);
}
END_TEST

/* ---- [ADDR:]PORT of --metrics / metrics = ---- */

static void addr_is(const char *text, const char *want)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char err[200], got[80];

	ck_assert_msg(metrics_parse_addr(text, &ss, &len, err, sizeof(err)) == 0,
		      "'%s': %s", text, err);
	portal_format_addr((struct sockaddr *)&ss, got, sizeof(got));
	ck_assert_str_eq(got, want);
}

static void addr_bad(const char *text, const char *msg)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char err[200] = "";

	ck_assert_msg(metrics_parse_addr(text, &ss, &len, err, sizeof(err)) < 0,
		      "'%s' was taken", text);
	ck_assert_msg(strstr(err, msg), "'%s': '%s' does not say '%s'", text,
		      err, msg);
}

START_TEST(metrics_addr_forms)
{
	addr_is("9470", "127.0.0.1:9470");
	addr_is(":9470", "127.0.0.1:9470");
	addr_is("0", "127.0.0.1:0");
	addr_is("10.1.2.3:80", "10.1.2.3:80");
	addr_is("*:9470", "0.0.0.0:9470");
	addr_is("[::1]:9470", "[::1]:9470");
	addr_bad("abc", "expected [ADDR:]PORT");
	addr_bad("70000", "expected [ADDR:]PORT");
	addr_bad(":", "expected [ADDR:]PORT");
	addr_bad("", "bad address");
	addr_bad("[::1]", "expected [IPV6]:PORT");
	addr_bad("::1:9470", "brackets");
	addr_bad("1.2.3:80", "bad IPv4 address");
}
END_TEST

static Suite *metrics_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *c = tcase_create("prom");

	harness_add(c, label_values_escaped);
	harness_add(c, fixture_known_text);
	harness_add(c, empty_view_has_every_family);
	harness_add(c, metrics_addr_forms);
	suite_add_tcase(s, c);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, metrics_suite);
}
