/*
 * --initiator-cpu CMD_US[,BYTE_NS] and --initiator-cpus N: a model of
 * the initiator's CPU, which every command costs CMD_US microseconds
 * plus BYTE_NS nanoseconds per byte it moves. The point's sessions share
 * N virtual CPUs (one by default); a slot that has a command to send
 * queues for the CPU that is free first, and the command is issued only
 * once its CPU time has passed. So a point can issue at most N / cost
 * commands a second, whatever the target does: the ceiling an old
 * initiator's CPU set on a fast link (bolkhovitin-2010's 4K..32K rows,
 * a 1.7 GHz Xeon). The time is modelled, not burnt: tcq-bench's own CPU
 * stays free for the run.
 */
#ifndef TCQ_BENCH_CPU_H
#define TCQ_BENCH_CPU_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_CPU_MAX 64	/* --initiator-cpus */

enum { OPT_INITIATOR_CPU = 0x1600, OPT_INITIATOR_CPUS };
/* bench_main.c's long options table takes these. */
#define BENCH_CPU_OPTIONS \
	{ "initiator-cpu", required_argument, NULL, OPT_INITIATOR_CPU }, \
	{ "initiator-cpus", required_argument, NULL, OPT_INITIATOR_CPUS }

struct bench_cpu_opts {
	double cmd_us;		/* per command; 0: no model */
	double byte_ns;		/* per byte of the command's data */
	unsigned ncpu;		/* 0: not given (one) */
};

/* The point's virtual CPUs: when each is next free (CLOCK_MONOTONIC). */
struct bench_vcpu {
	pthread_mutex_t lock;
	unsigned n;		/* 0: no model */
	uint64_t cost_ns;	/* of one command of the point's size */
	uint64_t free_ns[BENCH_CPU_MAX];
};

struct bench_opts;
/* The option c: 0 taken, -1 bad value, 1 not one of these. */
int bench_cpu_opt(struct bench_cpu_opts *c, int opt, const char *arg);
/* After the options: -1 (said, naming the option) if they conflict. */
int bench_cpu_check(const struct bench_opts *o);
void bench_cpu_usage(FILE *f);

/* The cost of one command moving `bytes` bytes, in nanoseconds. */
uint64_t bench_cpu_cost_ns(const struct bench_cpu_opts *c, uint64_t bytes);
/* A point's CPUs, all free, for commands of `bytes` bytes. */
void vcpu_init(struct bench_vcpu *v, const struct bench_cpu_opts *c,
	       uint64_t bytes);
void vcpu_destroy(struct bench_vcpu *v);
/* Queues one command at t for the CPU free first: the time its CPU time
 * has passed (when it may be issued). */
uint64_t vcpu_reserve(struct bench_vcpu *v, uint64_t t);
#endif
