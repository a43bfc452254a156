/*
 * --thinktime: fio's think time (HOWTO, thinktime). A session issues a
 * burst of --thinktime-blocks I/Os (fio's thinktime_blocks, default 1),
 * counted as they complete (fio's default thinktime_blocks_type
 * complete) or as they are issued (issue); then it lets every I/O under
 * way finish (fio's io_u_quiesce), spins for --thinktime-spin (burns CPU,
 * as fio's usec_spin), and sleeps for the rest of --thinktime before the
 * next burst. The pauses are a property of the I/O sequence: each one
 * follows an empty queue, and with issue counting a pause comes after
 * every thinktime-blocks I/Os, whatever the target's speed.
 *
 * --depth-low (fio's iodepth_low): once a session's queue is full it
 * drains to that many before it is filled again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "initiator/bench_access.h"

bool think_hold(const struct bench_think *k, struct think_state *st,
		uint32_t inflight, uint64_t t)
{
	if (!k->think_ns)
		return false;
	switch (st->phase) {
	case THINK_RUN:
		if ((k->on_issue ? st->issued : st->completed) < k->blocks)
			return false;
		st->phase = THINK_DRAIN;
		/* fall through */
	case THINK_DRAIN:
		if (inflight)
			return true;
		st->gaps++;
		st->spin_end = t + (k->spin_ns < k->think_ns ? k->spin_ns :
				    k->think_ns);
		st->end = t + k->think_ns;
		st->phase = THINK_PAUSE;
		/* fall through */
	case THINK_PAUSE:
		if (t < st->end)
			return true;
		break;
	}
	/* the next burst counts afresh (what completed meanwhile too) */
	st->phase = THINK_RUN;
	st->issued = st->completed = 0;
	return false;
}

void think_issued(struct think_state *st)
{
	st->issued++;
	st->total++;
}

void think_completed(struct think_state *st)
{
	st->completed++;
}

bool think_low_hold(const struct bench_think *k, struct think_state *st,
		    uint32_t inflight, uint32_t depth)
{
	if (!k->low_set || k->depth_low >= depth)
		return false;
	if (st->low_wait && inflight > k->depth_low)
		return true;		/* full before: still draining */
	/* drained (or filling): this I/O goes; if it fills the queue, the
	 * queue drains before the next */
	st->low_wait = inflight + 1 >= depth;
	return false;
}

int think_poll_ms(const struct bench_think *k, const struct think_state *st,
		  uint64_t t)
{
	uint64_t left;

	if (!k->think_ns || st->phase != THINK_PAUSE)
		return 1;
	if (t < st->spin_end || t >= st->end)
		return 0;
	left = (st->end - t) / 1000000;	/* whole ms: the rest polls */
	return left > 99 ? 99 : (int)left;	/* under the idle 100 */
}

int think_parse_time(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "", 1e3 }, { "us", 1e3 }, { "usec", 1e3 }, { "ms", 1e6 },
		{ "msec", 1e6 }, { "s", 1e9 }, { "sec", 1e9 }, { "m", 60e9 },
		{ "min", 60e9 },
	};
	char *end;
	double v;
	unsigned i;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			v *= units[i].ns;
			if (v > 86400e9)
				return -1;
			*ns = (uint64_t)v;
			return 0;
		}
	return -1;
}
