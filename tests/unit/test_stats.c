/*
 * Unit tests for scsi/stats (log-linear histograms, per-reactor slots) and
 * target/ctl (the control socket, driven over a real unix socket against
 * a reactor thread and a LUN on the null backend).
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <json-c/json.h>
#include "backend/bdev.h"
#include "scsi/lun.h"
#include "scsi/opcodes.h"
#include "scsi/stats.h"
#include "target/config.h"
#include "target/ctl.h"
#include "target/portal.h"
#include "tcq/reactor.h"
#include "target/target.h"
#include "tests/unit/harness.h"

/* ---- histograms ---- */

START_TEST(hist_buckets_tile)
{
	/* Buckets are contiguous, ordered, and cover all of uint64_t. */
	ck_assert_uint_eq(stats_hist_lo(0), 0);
	for (unsigned i = 0; i + 1 < STATS_HIST_BUCKETS; i++) {
		ck_assert_uint_le(stats_hist_lo(i), stats_hist_hi(i));
		ck_assert_uint_eq(stats_hist_hi(i) + 1, stats_hist_lo(i + 1));
	}
	ck_assert_uint_eq(stats_hist_hi(STATS_HIST_BUCKETS - 1), UINT64_MAX);
	ck_assert_uint_eq(stats_hist_bucket(UINT64_MAX), STATS_HIST_BUCKETS - 1);
	/* Exact below 32, and every value lands inside its bucket. */
	for (uint64_t v = 0; v < 32; v++)
		ck_assert_uint_eq(stats_hist_lo(stats_hist_bucket(v)), v);
	for (uint64_t v = 1; v < (1ull << 62); v = v * 3 + 1) {
		unsigned b = stats_hist_bucket(v);

		ck_assert_uint_le(stats_hist_lo(b), v);
		ck_assert_uint_ge(stats_hist_hi(b), v);
		/* width at most 1/16 of the value: 6 % resolution */
		ck_assert_uint_le(stats_hist_hi(b) - stats_hist_lo(b),
				  v / 16 + 1);
	}
}
END_TEST

START_TEST(hist_quantiles)
{
	static struct stats_hist h;

	memset(&h, 0, sizeof(h));
	ck_assert_uint_eq(stats_hist_quantile(&h, 0.5), 0);
	for (uint64_t v = 1; v <= 10000; v++)
		h.b[stats_hist_bucket(v * 1000)]++;	/* 1 us .. 10 ms */
	ck_assert_uint_eq(stats_hist_count(&h), 10000);
	uint64_t p50 = stats_hist_quantile(&h, 0.5);
	uint64_t p99 = stats_hist_quantile(&h, 0.99);
	uint64_t p999 = stats_hist_quantile(&h, 0.999);
	ck_assert_uint_ge(p50, 5000000 * 94 / 100);
	ck_assert_uint_le(p50, 5000000 * 106 / 100);
	ck_assert_uint_ge(p99, 9900000 * 94 / 100);
	ck_assert_uint_le(p99, 9900000 * 106 / 100);
	ck_assert_uint_ge(p999, p99);
	ck_assert_uint_le(p999, 10000000 * 106 / 100);
}
END_TEST

/* ---- a reactor thread with one target and one LUN ---- */

#define IQN "iqn.2026-11.org.tcq:unit"

static struct reactor R;
static struct harness_thread rthread;
static struct reactor *rlist[1];
static struct target *tgt;
static struct lun *lun;
static struct bdev *bd;
static char sock_path[108];

static void setup(void)
{
	struct bdev_params bp = { .queue_depth = 32 };
	char err[256];

	ck_assert_int_eq(reactor_init(&R, 0), 0);
	rlist[0] = &R;
	bd = bdev_open("null:size=1M", &bp, err, sizeof(err));
	ck_assert_msg(bd != NULL, "%s", err);
	tgt = calloc(1, sizeof(*tgt));
	snprintf(tgt->dev.name, sizeof(tgt->dev.name), IQN);
	lun = harness_lun_create(&tgt->dev, 0, bd);
	ck_assert_ptr_nonnull(lun);
	ck_assert_ptr_nonnull(lun->stats);
	tgt->dev.luns[0] = lun;
	tgt->dev.nluns = 1;
	tcqd = calloc(1, sizeof(*tcqd));
	tcqd->targets = calloc(1, sizeof(*tcqd->targets));
	tcqd->targets[0] = tgt;
	tcqd->ntargets = 1;
	/* The running configuration live changes (set) start from, and
	 * the portal it names (never listening here). */
	tcqd->portals = calloc(1, sizeof(*tcqd->portals));
	tcqd->portals[0] = portal_new("127.0.0.1:0", 1, err, sizeof(err));
	ck_assert_ptr_nonnull(tcqd->portals[0]);
	tcqd->nportals = 1;
	tcqd->cfg = malloc(sizeof(*tcqd->cfg));
	cfg_init(tcqd->cfg);
	ck_assert_int_eq(cfg_load_string(tcqd->cfg, "test", "[global]\n"
					 "listen = 127.0.0.1:0\n[target " IQN "]\n"
					 "[lun " IQN " 0]\nbackend = null\n"
					 "size = 1M\nqueue_depth = 32\n"), 0);
	snprintf(sock_path, sizeof(sock_path), "/tmp/tcq-test-stats.%d.sock",
		 (int)getpid());
	ck_assert_int_eq(ctl_start(sock_path, rlist, 1, err, sizeof(err)), 0);
	harness_thread_start(&rthread, &R);
}

static void stop_ctl(void *arg)
{
	ctl_stop();
}

static void teardown(void)
{
	struct stat st;

	harness_thread_stop(&rthread, stop_ctl, NULL);
	ck_assert_int_ne(stat(sock_path, &st), 0);	/* unlinked */
	lun_destroy(lun);
	bdev_close(bd);
	free(tgt);
	free(tcqd->targets);
	cfg_free(tcqd->cfg);
	free(tcqd->cfg);
	portal_free(tcqd->portals[0]);
	free(tcqd->portals);
	free(tcqd);
	tcqd = NULL;
	reactor_fini(&R);
}

/* Sends one request line, returns the parsed answer. */
static json_object *ask(const char *line)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[65536];
	size_t len = 0;
	ssize_t n;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(send(fd, line, strlen(line), MSG_NOSIGNAL),
			 (ssize_t)strlen(line));
	shutdown(fd, SHUT_WR);	/* as tcqctl does: EOF ends a request */
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	json_object *o = json_tokener_parse(buf);
	ck_assert_msg(o != NULL, "not JSON: '%s'", buf);
	return o;
}

static json_object *path(json_object *o, const char *a, const char *b)
{
	json_object *v = NULL;

	ck_assert_msg(json_object_object_get_ex(o, a, &v), "no %s", a);
	if (b)
		ck_assert_msg(json_object_object_get_ex(v, b, &v), "no %s", b);
	return v;
}

static bool ok(json_object *o)
{
	return json_object_get_boolean(path(o, "ok", NULL));
}

static json_object *lun0(json_object *o)
{
	json_object *arr = path(o, "luns", NULL);

	ck_assert_uint_eq(json_object_array_length(arr), 1);
	return json_object_array_get_idx(arr, 0);
}

/* What the backend counts (backend/bdev_depth.c), set by hand: n I/Os in
 * flight over the LUN, and the peak raised to it. */
static void fake_inflight(uint32_t n)
{
	atomic_store(&lun->bdev->budget.inflight, n);
	if (atomic_load(&lun->bdev->budget.peak) < n)
		atomic_store(&lun->bdev->budget.peak, n);
}

/* Drives the data-path hooks on the reactor thread, as a session would. */
static void hooks_on_reactor(void *arg)
{
	struct tcq_task t;

	memset(&t, 0, sizeof(t));
	for (int i = 0; i < 10; i++) {
		t.attr = i < 7 ? TASK_ATTR_SIMPLE : i < 9 ? TASK_ATTR_ORDERED
							  : TASK_ATTR_HEAD_OF_QUEUE;
		stats_task_arrive(lun, &t);
		ck_assert_uint_ne(t.t_arrive_ns, 0);
		t.t_arrive_ns -= 2000000;	/* pretend it took 2 ms */
		if (t.attr == TASK_ATTR_ORDERED)
			stats_ordered_enabled(lun, &t);
		fake_inflight((uint32_t)i);
		stats_io_submit(lun, i == 9 ? BDEV_FLUSH : BDEV_READ, false);
		fake_inflight((uint32_t)i + 1);
		stats_task_done(lun, &t);
	}
	fake_inflight(0);	/* all completed; the peak stays */
}

static void run_hooks(void)
{
	harness_call_on(&R, hooks_on_reactor, NULL);
}

START_TEST(ctl_stats_and_reset)
{
	json_object *r, *l;

	/* Off a reactor the hooks do nothing (and do not crash). */
	struct tcq_task t;
	memset(&t, 0, sizeof(t));
	stats_task_arrive(lun, &t);
	ck_assert_uint_eq(t.t_arrive_ns, 0);

	run_hooks();
	r = ask("stats\n");
	ck_assert(ok(r));
	l = lun0(r);
	ck_assert_str_eq(json_object_get_string(path(l, "target", NULL)), IQN);
	ck_assert_int_eq(json_object_get_int(path(l, "commands", "simple")), 7);
	ck_assert_int_eq(json_object_get_int(path(l, "commands", "ordered")), 2);
	ck_assert_int_eq(json_object_get_int(path(l, "commands", "head_of_queue")), 1);
	ck_assert_int_eq(json_object_get_int(path(l, "commands", "total")), 10);
	ck_assert_int_eq(json_object_get_int(path(l, "commands", "completed")), 10);
	ck_assert_int_eq(json_object_get_int(path(l, "inflight", "peak")), 10);
	ck_assert_int_eq(json_object_get_int(path(l, "inflight", "ios")), 10);
	ck_assert_int_eq(json_object_get_int(path(l, "flushes", "total")), 1);
	ck_assert_int_eq(json_object_get_int(path(l, "ordered_drain_us", "count")), 2);
	double p50 = json_object_get_double(path(l, "latency_us", "p50"));
	ck_assert_msg(p50 >= 1900 && p50 <= 2300, "p50 %f", p50);
	ck_assert_double_ge(json_object_get_double(path(l, "ordered_drain_us", "max")), 1900);
	/* occupancy: one sample at each of 0..9 */
	json_object *occ = path(l, "inflight", "occupancy_at_submit");
	ck_assert_uint_eq(json_object_array_length(occ), 10);
	ck_assert_int_eq(json_object_get_int(path(json_object_array_get_idx(occ, 9), "lo", NULL)), 9);
	json_object_put(r);

	r = ask("reset");	/* EOF ends the request too */
	ck_assert(ok(r));
	json_object_put(r);
	r = ask("stats 0\n");
	ck_assert(ok(r));
	l = lun0(r);
	ck_assert_int_eq(json_object_get_int(path(l, "commands", "total")), 0);
	ck_assert_int_eq(json_object_get_int(path(l, "inflight", "peak")), 0);
	ck_assert_uint_eq(json_object_array_length(path(l, "inflight", "occupancy_at_submit")), 0);
	json_object_put(r);
}
END_TEST

/* Class, bytes and sense keys: a READ(10) and a WRITE(10) that end GOOD,
 * a READ(10) with fixed-format sense (key in byte 2, SPC-4 4.5.3) and a
 * TEST UNIT READY with descriptor-format sense (key in byte 1, 4.5.2). */
static void classes_on_reactor(void *arg)
{
	struct tcq_task t;

	memset(&t, 0, sizeof(t));
	t.req.cmd = opc_find(0x28, 0, 0);		/* READ(10) */
	ck_assert_ptr_nonnull(t.req.cmd);
	stats_task_arrive(lun, &t);
	t.status = SAM_STAT_GOOD;
	t.data_in_len = 8192;
	stats_task_done(lun, &t);

	memset(&t, 0, sizeof(t));
	t.req.cmd = opc_find(0x2a, 0, 0);		/* WRITE(10) */
	ck_assert_ptr_nonnull(t.req.cmd);
	stats_task_arrive(lun, &t);
	t.status = SAM_STAT_GOOD;
	t.req.data_out_len = 4096;
	stats_task_done(lun, &t);

	memset(&t, 0, sizeof(t));
	t.req.cmd = opc_find(0x28, 0, 0);
	stats_task_arrive(lun, &t);
	t.status = SAM_STAT_CHECK_CONDITION;
	t.data_in_len = 512;		/* not GOOD: no bytes counted */
	t.sense[0] = 0x70;
	t.sense[2] = 0x03;		/* MEDIUM ERROR */
	t.sense_len = 18;
	stats_task_done(lun, &t);

	memset(&t, 0, sizeof(t));
	t.req.cmd = opc_find(0x00, 0, 0);		/* TEST UNIT READY */
	ck_assert_ptr_nonnull(t.req.cmd);
	stats_task_arrive(lun, &t);
	t.status = SAM_STAT_CHECK_CONDITION;
	t.sense[0] = 0x72;
	t.sense[1] = 0x06;		/* UNIT ATTENTION */
	t.sense_len = 8;
	stats_task_done(lun, &t);
}

START_TEST(ctl_stats_classes_bytes_sense)
{
	json_object *r, *l, *text;

	harness_call_on(&R, classes_on_reactor, NULL);
	r = ask("stats\n");
	ck_assert(ok(r));
	l = lun0(r);
	ck_assert_int_eq(json_object_get_int(path(l, "classes", "read")), 2);
	ck_assert_int_eq(json_object_get_int(path(l, "classes", "write")), 1);
	ck_assert_int_eq(json_object_get_int(path(l, "classes", "other")), 1);
	ck_assert_int_eq(json_object_get_int(path(l, "bytes", "read")), 8192);
	ck_assert_int_eq(json_object_get_int(path(l, "bytes", "written")), 4096);
	ck_assert_int_eq(json_object_get_int(path(l, "sense_keys", "medium_error")), 1);
	ck_assert_int_eq(json_object_get_int(path(l, "sense_keys", "unit_attention")), 1);
	ck_assert_int_eq(json_object_object_length(path(l, "sense_keys", NULL)), 2);
	json_object_put(r);

	/* The same through the Prometheus text of the metrics command. */
	r = ask("metrics\n");
	ck_assert(ok(r));
	text = path(r, "text", NULL);
	const char *s = json_object_get_string(text);
	ck_assert_ptr_nonnull(strstr(s, "\ntcq_lun_read_bytes_total{target=\"" IQN
				     "\",lun=\"0\"} 8192\n"));
	ck_assert_ptr_nonnull(strstr(s, "\ntcq_lun_errors_total{target=\"" IQN
				     "\",lun=\"0\",sense_key=\"medium_error\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(s, "\ntcq_lun_commands_by_class_total{target=\""
				     IQN "\",lun=\"0\",class=\"write\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(s, "\ntcq_target_sessions{target=\"" IQN
				     "\"} 0\n"));
	json_object_put(r);
}
END_TEST

START_TEST(ctl_set_live)
{
	json_object *r;

	r = ask("set 0 queue_depth=4 barrier=flush write_cache=off\n");
	ck_assert(ok(r));
	ck_assert_int_eq(json_object_get_int(path(r, "lun", "queue_depth")), 4);
	json_object_put(r);
	ck_assert_uint_eq(atomic_load(&bd->queue_depth), 4);
	ck_assert_int_eq(lun_get_barrier(lun), BARRIER_FLUSH);
	ck_assert(!lun_get_write_cache(lun));

	r = ask("set " IQN "/0 barrier=ignore write_cache=on\n");
	ck_assert(ok(r));
	json_object_put(r);
	ck_assert_int_eq(lun_get_barrier(lun), BARRIER_IGNORE);
	ck_assert(lun_get_write_cache(lun));

	/* A bad value changes nothing, not even the good keys before it. */
	r = ask("set 0 barrier=drain queue_depth=0\n");
	ck_assert(!ok(r));
	ck_assert_ptr_nonnull(strstr(json_object_get_string(path(r, "error", NULL)),
				     "queue_depth"));
	json_object_put(r);
	ck_assert_int_eq(lun_get_barrier(lun), BARRIER_IGNORE);
	ck_assert_uint_eq(atomic_load(&bd->queue_depth), 4);

	r = ask("luns\n");
	ck_assert(ok(r));
	ck_assert_str_eq(json_object_get_string(path(lun0(r), "barrier", NULL)),
			 "ignore");
	json_object_put(r);
}
END_TEST

START_TEST(ctl_errors)
{
	static const char *bad[] = {
		"frob\n", "\n", "set\n", "set 0\n", "set 5 queue_depth=1\n",
		"set x queue_depth=1\n", "set 0 queue_depth=1025\n",
		"set 0 queue_depth=4x\n", "set 0 barrier=maybe\n",
		"set 0 write_cache=perhaps\n", "set 0 colour=blue\n",
		"set 0 queue_depth\n", "set iqn.2026-11.org.tcq:nope/0 barrier=drain\n",
		"stats 1 2\n", "sessions all\n", "crash\n", "crash 0\n",
		"reset 9\n",
	};
	json_object *r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = ask(bad[i]);
		ck_assert_msg(!ok(r), "'%s' accepted", bad[i]);
		ck_assert_msg(strlen(json_object_get_string(path(r, "error", NULL))) > 5,
			      "no message for '%s'", bad[i]);
		json_object_put(r);
	}
	/* An over-long request is refused, not truncated into a command. */
	char *big = malloc(10000);
	memset(big, 'a', 9998);
	big[9998] = '\n';
	big[9999] = '\0';
	r = ask(big);
	free(big);
	ck_assert(!ok(r));
	json_object_put(r);

	r = ask("sessions\n");
	ck_assert(ok(r));
	ck_assert_int_eq(json_object_get_int(path(r, "count", NULL)), 0);
	json_object_put(r);
}
END_TEST

START_TEST(ctl_refuses_live_socket)
{
	char err[256];
	struct reactor r2;

	/* Our own socket is live: a second daemon must not steal it. */
	ck_assert_int_eq(reactor_init(&r2, 1), 0);
	struct reactor *l2[1] = { &r2 };
	ck_assert_int_eq(ctl_start(sock_path, l2, 1, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "in use"));
	reactor_fini(&r2);
}
END_TEST

START_TEST(ctl_find_lun_forms)
{
	char err[256];

	ck_assert_ptr_eq(ctl_find_lun("0", err, sizeof(err)), lun);
	ck_assert_ptr_eq(ctl_find_lun(IQN "/0", err, sizeof(err)), lun);
	ck_assert_ptr_null(ctl_find_lun("1", err, sizeof(err)));
	ck_assert_ptr_null(ctl_find_lun("/0", err, sizeof(err)));
	ck_assert_ptr_null(ctl_find_lun("-1", err, sizeof(err)));
	ck_assert_ptr_null(ctl_find_lun("256", err, sizeof(err)));
	ck_assert_ptr_null(ctl_find_lun(IQN "/", err, sizeof(err)));
}
END_TEST

static Suite *stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *h = tcase_create("hist"), *c = tcase_create("ctl");

	harness_add(h, hist_buckets_tile);
	harness_add(h, hist_quantiles);
	tcase_add_checked_fixture(c, setup, teardown);
	harness_add(c, ctl_stats_and_reset);
	harness_add(c, ctl_stats_classes_bytes_sense);
	harness_add(c, ctl_set_live);
	harness_add(c, ctl_errors);
	harness_add(c, ctl_refuses_live_socket);
	harness_add(c, ctl_find_lun_forms);
	suite_add_tcase(s, h);
	suite_add_tcase(s, c);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, stats_suite);
}
