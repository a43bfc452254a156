/*
 * The options of tcq-bench's access patterns (--dist, --thinktime*,
 * --replay*) and their usage text: bench_main.c's parser hands them
 * here, so what they mean stays beside the code that does it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "initiator/bench_access.h"

void access_defaults(struct bench_access *a)
{
	memset(a, 0, sizeof(*a));
	a->dist.kind = DIST_UNIFORM;
	a->dist.center = -1;
	a->think.blocks = 1;
}

int access_opt(struct bench_access *a, int c, const char *arg)
{
	char err[256];
	char *end;
	unsigned long v;

	switch (c) {
	case OPT_ACCESS_DIST:
		if (dist_parse(arg, &a->dist, err, sizeof(err)) == 0)
			return 0;
		fprintf(stderr, "tcq-bench: --dist %s: %s\n", arg, err);
		return -1;
	case OPT_ACCESS_THINK:
		return think_parse_time(arg, &a->think.think_ns);
	case OPT_ACCESS_THINK_SPIN:
		return think_parse_time(arg, &a->think.spin_ns);
	case OPT_ACCESS_THINK_BLOCKS:
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || !v || v > UINT32_MAX ||
		    arg[0] == '-')
			return -1;
		a->think.blocks = (uint32_t)v;
		return 0;
	case OPT_ACCESS_DEPTH_LOW:
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || v > UINT32_MAX ||
		    arg[0] == '-')
			return -1;
		a->think.depth_low = (uint32_t)v;
		a->think.low_set = true;
		return 0;
	case OPT_ACCESS_THINK_TYPE:
		if (strcmp(arg, "complete") && strcmp(arg, "issue"))
			return -1;
		a->think.on_issue = !strcmp(arg, "issue");
		return 0;
	case OPT_ACCESS_REPLAY:
		a->replay.path = arg;
		return 0;
	case OPT_ACCESS_NO_STALL:
		a->replay.no_stall = true;
		return 0;
	case OPT_ACCESS_JOB:
		/* bench_job_expand took it before the parser ran: here it is
		 * the value of another option, or a second --job */
		fprintf(stderr, "tcq-bench: one --job, given as its own argument\n");
		return -1;
	}
	return 1;
}

int access_finish(const struct bench_access *a)
{
	if (!a->think.think_ns && (a->think.spin_ns || a->think.blocks != 1 ||
				   a->think.on_issue)) {
		fprintf(stderr, "tcq-bench: --thinktime-spin, --thinktime-blocks and --thinktime-blocks-type need --thinktime\n");
		return -1;
	}
	if (a->think.spin_ns > a->think.think_ns) {
		fprintf(stderr, "tcq-bench: --thinktime-spin is longer than --thinktime\n");
		return -1;
	}
	if (a->replay.no_stall && !a->replay.path) {
		fprintf(stderr, "tcq-bench: --replay-no-stall needs --replay\n");
		return -1;
	}
	if (a->replay.path && (a->think.think_ns || a->think.low_set ||
			       a->dist.kind != DIST_UNIFORM)) {
		fprintf(stderr, "tcq-bench: --replay sends the trace's I/O: no --dist, --thinktime or --depth-low with it\n");
		return -1;
	}
	return 0;
}

void access_usage(FILE *f)
{
	fputs(
"Access patterns (fio's random_distribution, thinktime, read_iolog):\n"
"  --dist D             where random I/O goes: random (default), zipf:THETA,\n"
"                       pareto:H, normal:SD (SD in % of the region),\n"
"                       zoned:A/S:... (A% of the I/O to the next S%),\n"
"                       zoned_abs:A/SIZE:...; zipf, pareto, normal take\n"
"                       :CENTER (0..1) to put the hottest block there\n"
"  --thinktime T        pause T (us; or 5ms, 1s) after each burst, once the\n"
"                       burst's I/O completed\n"
"  --thinktime-blocks N I/Os of a burst (default 1)\n"
"  --thinktime-blocks-type complete|issue   count the burst as it completes\n"
"                       (default) or as it is issued\n"
"  --thinktime-spin T   of the pause, burn CPU for T, sleep the rest\n"
"  --depth-low N        once a session's queue is full, let it drain to N\n"
"                       before filling it again (fio's iodepth_low)\n"
"  --replay FILE        replay a fio iolog (v2, v3) or a blkparse text trace\n"
"                       on one session at --depth, in its order and timing;\n"
"                       flushes become SYNCHRONIZE CACHE\n"
"  --replay-no-stall    ignore the trace's timing (order kept)\n"
"  --job FILE           a fio job file (see tcq-bench(1)); options after it\n"
"                       on the command line win\n",
	      f);
}
