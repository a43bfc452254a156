/*
 * `tcq-bench order-check`: drives one session with a random mix of
 * SIMPLE, ORDERED and HEAD OF QUEUE reads and writes over a few
 * overlapping blocks, records the trace (submission index, attribute,
 * range, stamp written or read, completion seq) and hands it to the pure
 * verifier in ordercheck.c.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "initiator/bench.h"
#include "initiator/ordercheck.h"
#include "tcq/bufpool.h"

#define OC_MAGIC 0x5443514f52444552ull	/* "TCQORDER" */
#define OC_PRINT_MAX 50

struct oc_slot {
	struct bench_io io;
	uint32_t cmd;			/* trace index */
	bool busy;
};

struct oc_run {
	const struct engine_ops *ops;
	struct engine *e;
	uint32_t bsz;
	uint64_t base;			/* the first block used */
	struct oc_slot *slots;		/* depth of them */
	struct oc_cmd *trace;
	unsigned inflight, printed;
	bool lost;
};

/* The command line. */
struct oc_args {
	struct engine_opts eo;
	uint64_t nblk, depth, count, ordered, hoq, writes, offset, seed;
	const char *url;
};

static void oc_usage(FILE *f)
{
	fputs(
"usage: tcq-bench order-check [OPTIONS] URL\n"
"\n"
"Sends a mix of SIMPLE, ORDERED and HEAD OF QUEUE writes and reads to a few\n"
"overlapping blocks over one session and checks the completions against\n"
"SAM-5: (1) an ORDERED task completes after all older tasks and before all\n"
"newer ones except HEAD OF QUEUE tasks; (2) a read newer than an ORDERED\n"
"write to its block never returns data older than that write; (3) a HEAD OF\n"
"QUEUE task sent while an ORDERED task is outstanding is not completed after\n"
"a newer task that was dormant behind the ORDERED one (how often HoQ tasks\n"
"overtook the ORDERED task is reported). Completion order is the StatSN.\n"
"Each violation is printed with the commands involved. Exit status: 0 clean,\n"
"1 violations, 2 usage or connection errors. Needs an engine that can send\n"
"task attributes (native). The blocks used are overwritten.\n"
"\n"
"  --engine NAME      default native\n"
"  --blocks N         blocks used (default 8)\n"
"  --depth N          commands in flight (default 32)\n"
"  --count N          commands in total (default 4000)\n"
"  --ordered PCT      ORDERED share (default 25)\n"
"  --hoq PCT          HEAD OF QUEUE share (default 15)\n"
"  --writes PCT       write share (default 50)\n"
"  --offset BYTES     where the blocks start (default 0)\n"
"  --seed N           random seed (default 1)\n"
"  --initiator-name IQN, --chap-user U, --chap-secret S, --mutual-user U,\n"
"  --mutual-secret S, --header-digest, --data-digest   as for tcq-bench\n"
"\n"
"Example:\n"
"  tcq-bench order-check iscsi://127.0.0.1:3260/iqn.2026-11.org.tcq:export/0\n",
	f);
}

static uint64_t oc_rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void oc_done(struct bench_io *io)
{
	struct oc_slot *s = (struct oc_slot *)io;
	struct oc_run *run = io->ctx;
	struct oc_cmd *c;
	uint64_t hdr[2];

	run->inflight--;
	s->busy = false;
	if (s->cmd == UINT32_MAX)
		return;		/* initialisation write */
	c = &run->trace[s->cmd];
	c->status = io->status;
	c->seq = io->seq;
	c->t_submit_ns = io->t_submit_ns;
	c->t_done_ns = io->t_done_ns;
	if (!c->write) {
		memcpy(hdr, io->buf, sizeof(hdr));
		c->stamp = hdr[0] == OC_MAGIC ? hdr[1] : OC_STAMP_NONE;
	}
}

/* Waits until fewer than `below` commands are in flight. */
static int oc_wait(struct oc_run *run, unsigned below)
{
	struct pollfd p;

	while (run->inflight >= below && run->inflight) {
		p.fd = run->ops->get_fd(run->e);
		p.events = run->ops->events(run->e);
		p.revents = 0;
		if (poll(&p, 1, 1000) < 0 && errno != EINTR)
			return -1;
		if (p.revents && run->ops->service(run->e, p.revents) < 0) {
			run->lost = true;
			return -1;
		}
	}
	return 0;
}

static void oc_print(void *ctx, const struct oc_violation *v)
{
	struct oc_run *run = ctx;
	char a[128], b[128], c[128];

	if (run->printed++ >= OC_PRINT_MAX)
		return;
	ordercheck_format_cmd(a, sizeof(a), &run->trace[v->a]);
	ordercheck_format_cmd(b, sizeof(b), &run->trace[v->b]);
	c[0] = 0;
	if (v->c >= 0)
		ordercheck_format_cmd(c, sizeof(c), &run->trace[v->c]);
	printf("VIOLATION: %s\n    %s\n    %s\n%s%s%s",
	       ordercheck_rule_text(v->rule), a, b, c[0] ? "    " : "", c,
	       c[0] ? "\n" : "");
}

static int oc_num(const char *s, uint64_t *v, uint64_t max)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end || *v > max ? -1 : 0;
}

/* Reads the command line into a and *ops; returns -1 to go on, else the
 * exit status (0 after --help). */
static int oc_parse(int argc, char **argv, struct oc_args *a,
		    const struct engine_ops **ops)
{
	static const struct option lo[] = {
		{ "engine", required_argument, NULL, 'e' },
		{ "blocks", required_argument, NULL, 'b' },
		{ "depth", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'n' },
		{ "ordered", required_argument, NULL, 'O' },
		{ "hoq", required_argument, NULL, 'H' },
		{ "writes", required_argument, NULL, 'w' },
		{ "offset", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 's' },
		{ "initiator-name", required_argument, NULL, 'I' },
		{ "chap-user", required_argument, NULL, 'u' },
		{ "chap-secret", required_argument, NULL, 'p' },
		{ "mutual-user", required_argument, NULL, 'U' },
		{ "mutual-secret", required_argument, NULL, 'P' },
		{ "header-digest", no_argument, NULL, 'D' },
		{ "data-digest", no_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t *vp, max;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		vp = NULL;
		max = 100;
		switch (c) {
		case 'e':
			*ops = engine_find(optarg);
			if (!*ops) {
				fprintf(stderr, "order-check: unknown engine %s\n", optarg);
				return 2;
			}
			continue;
		case 'b': vp = &a->nblk; max = 1024; break;
		case 'd': vp = &a->depth; max = 1024; break;
		case 'n': vp = &a->count; max = 10000000; break;
		case 'O': vp = &a->ordered; break;
		case 'H': vp = &a->hoq; break;
		case 'w': vp = &a->writes; break;
		case 'o': vp = &a->offset; max = UINT64_MAX; break;
		case 's': vp = &a->seed; max = UINT64_MAX; break;
		case 'I': a->eo.initiator_name = optarg; continue;
		case 'u': a->eo.chap_user = optarg; continue;
		case 'p': a->eo.chap_secret = optarg; continue;
		case 'U': a->eo.mutual_user = optarg; continue;
		case 'P': a->eo.mutual_secret = optarg; continue;
		case 'D': a->eo.header_digest = true; continue;
		case 'E': a->eo.data_digest = true; continue;
		case 'h': oc_usage(stdout); return 0;
		default: oc_usage(stderr); return 2;
		}
		if (oc_num(optarg, vp, max) ||
		    (vp != &a->offset && vp != &a->seed && vp != &a->ordered &&
		     vp != &a->hoq && vp != &a->writes && !*vp)) {
			fprintf(stderr, "order-check: bad value '%s'\n", optarg);
			return 2;
		}
	}
	if (optind != argc - 1) {
		oc_usage(stderr);
		return 2;
	}
	if (a->ordered + a->hoq > 100) {
		fprintf(stderr, "order-check: --ordered + --hoq exceed 100%%\n");
		return 2;
	}
	a->url = argv[optind];
	return -1;
}

/* The session can run the check: its engine sends task attributes, and
 * the blocks are inside the device. */
static int oc_check_device(struct oc_run *run, struct oc_args *a)
{
	if (!run->ops->supports_attr(run->e)) {
		fprintf(stderr, "order-check: the %s engine cannot send task attributes; use --engine native\n",
			run->ops->name);
		return -1;
	}
	run->bsz = run->ops->block_size(run->e);
	a->eo.max_io_bytes = run->bsz;
	if (a->offset % run->bsz ||
	    a->offset / run->bsz + a->nblk > run->ops->nblocks(run->e)) {
		fprintf(stderr, "order-check: --offset/--blocks outside the device\n");
		return -1;
	}
	run->base = a->offset / run->bsz;
	return 0;
}

/* The trace and the depth of command slots, each with a block's buffer. */
static int oc_alloc(struct oc_run *run, uint64_t depth, uint64_t count)
{
	unsigned k;

	run->trace = calloc(count, sizeof(*run->trace));
	run->slots = calloc(depth, sizeof(*run->slots));
	if (!run->trace || !run->slots)
		return -1;
	for (k = 0; k < depth; k++) {
		run->slots[k].io.buf = bufpool_alloc(run->bsz);
		if (!run->slots[k].io.buf)
			return -1;
		run->slots[k].io.ctx = run;
		run->slots[k].io.done = oc_done;
	}
	return 0;
}

/* Known start: every block carries the initial stamp. */
static int oc_init_blocks(struct oc_run *run, uint64_t nblk)
{
	unsigned i;

	for (i = 0; i < nblk; i++) {
		struct oc_slot *s = &run->slots[0];
		uint64_t hdr[2] = { OC_MAGIC, OC_STAMP_INITIAL };

		memset(s->io.buf, 0, run->bsz);
		memcpy(s->io.buf, hdr, sizeof(hdr));
		s->io.lba = run->base + i;
		s->io.blocks = 1;
		s->io.write = true;
		s->io.attr = BENCH_ATTR_SIMPLE;
		s->cmd = UINT32_MAX;
		s->busy = true;
		if (run->ops->submit(run->e, &s->io)) {
			fprintf(stderr, "order-check: submit failed\n");
			return -1;
		}
		run->inflight++;
		if (oc_wait(run, 1) || s->io.status) {
			fprintf(stderr, "order-check: initial write failed\n");
			return -1;
		}
	}
	return 0;
}

/* Sends the count commands of the mix, depth in flight, each recorded in
 * the trace; stops early when the session fails. */
static void oc_send(struct oc_run *run, struct oc_args *a)
{
	uint64_t x;
	unsigned i, k;

	for (i = 0; i < a->count; i++) {
		struct oc_cmd *cmd = &run->trace[i];
		struct oc_slot *s = NULL;

		if (oc_wait(run, (unsigned)a->depth))
			break;
		for (k = 0; k < a->depth && run->slots[k].busy; k++)
			;
		s = &run->slots[k];
		x = oc_rng(&a->seed);
		cmd->idx = i;
		cmd->lba = run->base + (x >> 8) % a->nblk;
		cmd->blocks = 1;
		cmd->write = x % 100 < a->writes;
		x = oc_rng(&a->seed) % 100;
		cmd->attr = x < a->ordered ? BENCH_ATTR_ORDERED :
			    x < a->ordered + a->hoq ? BENCH_ATTR_HOQ :
			    BENCH_ATTR_SIMPLE;
		if (cmd->write) {
			uint64_t hdr[2] = { OC_MAGIC, (uint64_t)i + 1 };

			cmd->stamp = i + 1;
			memcpy(s->io.buf, hdr, sizeof(hdr));
		}
		s->io.lba = cmd->lba;
		s->io.blocks = 1;
		s->io.write = cmd->write;
		s->io.attr = cmd->attr;
		s->io.t_done_ns = 0;
		s->cmd = i;
		s->busy = true;
		if (run->ops->submit(run->e, &s->io)) {
			s->busy = false;
			fprintf(stderr, "order-check: submit failed\n");
			run->lost = true;
			break;
		}
		run->inflight++;
	}
}

/* Waits for the last completions, verifies the trace and prints the
 * verdict; returns the exit status. */
static int oc_report(struct oc_run *run, uint64_t count)
{
	struct oc_stats st;

	if (run->lost || oc_wait(run, 1) || run->lost) {
		fprintf(stderr, "order-check: connection lost\n");
		return 2;
	}
	ordercheck_verify(run->trace, count, &st, oc_print, run);
	printf("order-check: %" PRIu64 " commands (%" PRIu64 " reads, %" PRIu64 " writes; %" PRIu64 " SIMPLE, %" PRIu64 " ORDERED, %" PRIu64 " HEAD OF QUEUE), %" PRIu64 " failed\n",
	       st.cmds, st.reads, st.writes, st.simple, st.ordered, st.hoq,
	       st.failed);
	printf("order-check: %" PRIu64 " HEAD OF QUEUE tasks sent while an ORDERED task was outstanding, %" PRIu64 " overtook it\n",
	       st.hoq_while_ordered, st.hoq_overtook);
	printf("order-check: %" PRIu64 " violations%s\n", st.violations,
	       st.violations > OC_PRINT_MAX ? " (first 50 printed)" : "");
	if (st.failed)
		printf("order-check: commands failed, see above\n");
	return st.violations || st.failed ? 1 : 0;
}

int ordercheck_main(int argc, char **argv)
{
	struct oc_args a = {
		.eo = { .direct = true }, .nblk = 8, .depth = 32,
		.count = 4000, .ordered = 25, .hoq = 15, .writes = 50,
		.seed = 1,
	};
	struct oc_run run = { .ops = engine_find(NULL) };
	char err[256];
	unsigned k;
	int rc = oc_parse(argc, argv, &a, &run.ops);

	if (rc >= 0)
		return rc;
	rc = 2;
	a.eo.queue_depth = (uint32_t)a.depth;
	run.e = run.ops->open(a.url, &a.eo, err, sizeof(err));
	if (!run.e) {
		fprintf(stderr, "order-check: %s\n", err);
		return 2;
	}
	if (!oc_check_device(&run, &a) && !oc_alloc(&run, a.depth, a.count) &&
	    !oc_init_blocks(&run, a.nblk)) {
		oc_send(&run, &a);
		rc = oc_report(&run, a.count);
	}
	run.ops->close(run.e);
	if (run.slots)
		for (k = 0; k < a.depth; k++)
			if (run.slots[k].io.buf)
				bufpool_free(run.slots[k].io.buf, run.bsz);
	free(run.slots);
	free(run.trace);
	return rc;
}
