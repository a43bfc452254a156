/*
 * --initiator-cpu, --initiator-cpus: the initiator CPU model (see
 * bench_cpu.h): the options, the point's virtual CPUs and the gate a
 * slot passes before its command is chosen and sent (run_cpu_gate,
 * called by bench_run.c's run_next; the worker wakes at the time it
 * returns in s->cpu_wake).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include "initiator/bench_run_priv.h"

void bench_cpu_usage(FILE *f)
{
	fputs(
"Initiator CPU model (see tcq-bench(1)):\n"
"  --initiator-cpu CMD_US[,BYTE_NS]\n"
"                       each command costs the initiator CMD_US us of CPU\n"
"                       plus BYTE_NS ns per byte of its data; a command is\n"
"                       sent only once its CPU time has passed, so a point\n"
"                       does at most CPUS / cost commands a second\n"
"  --initiator-cpus N   the CPUs the sessions share (default 1, at most 64)\n"
"\n", f);
}

/* A number in [lo, hi] that is all of s. */
static int parse_num(const char *s, double lo, double hi, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return errno || end == s || *end || !(*v >= lo) || *v > hi ? -1 : 0;
}

int bench_cpu_opt(struct bench_cpu_opts *c, int opt, const char *arg)
{
	char buf[64], *comma;
	double n;

	switch (opt) {
	case OPT_INITIATOR_CPU:
		if (strlen(arg) >= sizeof(buf))
			return -1;
		strcpy(buf, arg);
		c->byte_ns = 0;
		comma = strchr(buf, ',');
		if (comma) {
			*comma++ = '\0';
			if (parse_num(comma, 0, 1e6, &c->byte_ns))
				return -1;
		}
		/* above 0 (no model is no option), at most a second */
		if (parse_num(buf, 0, 1e6, &c->cmd_us) || !(c->cmd_us > 0))
			return -1;
		return 0;
	case OPT_INITIATOR_CPUS:
		if (parse_num(arg, 1, BENCH_CPU_MAX, &n) || n != (unsigned)n)
			return -1;
		c->ncpu = (unsigned)n;
		return 0;
	}
	return 1;
}

int bench_cpu_check(const struct bench_opts *o)
{
	const struct bench_cpu_opts *c = &o->cpu;

	if (c->ncpu && !(c->cmd_us > 0)) {
		fprintf(stderr, "tcq-bench: --initiator-cpus needs --initiator-cpu (the cost of a command)\n");
		return -1;
	}
	if (!(c->cmd_us > 0))
		return 0;
	if (o->acc.replay.path) {
		fprintf(stderr, "tcq-bench: --initiator-cpu does not apply to --replay (its trace sets the times)\n");
		return -1;
	}
	for (unsigned i = 0; i < o->nrw; i++)
		if (o->rw[i] == BENCH_JOURNAL) {
			fprintf(stderr, "tcq-bench: --initiator-cpu does not apply to --rw journal\n");
			return -1;
		}
	return 0;
}

uint64_t bench_cpu_cost_ns(const struct bench_cpu_opts *c, uint64_t bytes)
{
	return (uint64_t)(c->cmd_us * 1e3 + c->byte_ns * (double)bytes + 0.5);
}

void vcpu_init(struct bench_vcpu *v, const struct bench_cpu_opts *c,
	       uint64_t bytes)
{
	memset(v, 0, sizeof(*v));
	pthread_mutex_init(&v->lock, NULL);
	if (!(c->cmd_us > 0))
		return;
	v->n = c->ncpu ? c->ncpu : 1;
	v->cost_ns = bench_cpu_cost_ns(c, bytes);
	/* the default 50 us of timer slack would lengthen every modelled
	 * wait (a command's cost is 100 us or so): 1 us */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
}

void vcpu_destroy(struct bench_vcpu *v)
{
	pthread_mutex_destroy(&v->lock);
}

uint64_t vcpu_reserve(struct bench_vcpu *v, uint64_t t)
{
	unsigned i, k = 0;
	uint64_t start;

	pthread_mutex_lock(&v->lock);
	for (i = 1; i < v->n; i++)
		if (v->free_ns[i] < v->free_ns[k])
			k = i;
	/* an idle CPU starts now: idle time is not banked */
	start = v->free_ns[k] > t ? v->free_ns[k] : t;
	v->free_ns[k] = start + v->cost_ns;
	pthread_mutex_unlock(&v->lock);
	return start + v->cost_ns;
}

bool run_cpu_gate(struct run_point *pt, struct run_sess *s, struct run_io *r,
		  uint64_t t)
{
	/* once the point is over nothing more is sent: no wait either */
	if (!pt->cpu.n || t >= pt->t_end ||
	    atomic_load_explicit(&pt->stop, memory_order_relaxed)) {
		r->cpu_due = 0;
		return true;
	}
	if (!r->cpu_due)
		r->cpu_due = vcpu_reserve(&pt->cpu, t);
	if (t >= r->cpu_due)
		return true;	/* run_next spends it once the command goes */
	if (!s->cpu_wake || r->cpu_due < s->cpu_wake)
		s->cpu_wake = r->cpu_due;
	return false;
}
