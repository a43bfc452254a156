/*
 * tcq-bench: command line, the sweep over (rw x sessions x bs x depth),
 * and the outputs. `tcq-bench order-check` is dispatched to
 * ordercheck_run.c.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "config.h"
#include "initiator/bench.h"
#include "initiator/bench_journal.h"
#include "initiator/bench_log.h"
#include "initiator/bench_rate.h"
#include "tcq/log.h"

static void usage(FILE *f)
{
	fputs(
"usage: tcq-bench [OPTIONS] URL...\n"
"       tcq-bench order-check [OPTIONS] URL   (see tcq-bench order-check --help)\n"
"       tcq-bench --check-journal IMAGE|URL   (a journal of --rw journal)\n"
"\n"
"Sweeps block size x queue depth against an iSCSI target (or a local file or\n"
"block device) and prints one table per workload: rows block size, columns\n"
"queue depth.\n"
"\n"
"URL: iscsi://[user%secret@]host[:port]/target-iqn/lun, or a file or block\n"
"device path with --engine local. Several URLs (or --url given again): the\n"
"sessions of a point go round-robin over them (session i to URL i mod n), e.g.\n"
"one per gateway of a multipath target; they must show the same capacity.\n"
"A session whose connection is lost counts its I/Os in flight as errors and\n"
"stops (unless --reconnect); the others run to the end of the point. Later\n"
"points run with the sessions that can still log in (all of a point's\n"
"sessions must log in on the first point).\n"
"\n"
"Engine:\n"
"  --engine NAME        native (default), libiscsi, or local (libaio+O_DIRECT)\n"
"  --initiator-name IQN initiator name (default iqn.2026-11.org.tcq:bench)\n"
"  --chap-user U, --chap-secret S        CHAP credentials (or user%secret@ in URL)\n"
"  --mutual-user U, --mutual-secret S    mutual CHAP: the target's credentials\n"
"  --chap-algs LIST     native: CHAP_A preference (SHA3-256,SHA-256,SHA-1,MD5)\n"
"  --header-digest, --data-digest        ask for CRC32C digests\n"
"  --buffered           local: no O_DIRECT\n"
"\n"
"Workload (lists are comma separated; every combination is one point):\n"
"  --rw LIST            read, write, randread, randwrite, randrw, journal\n"
"                       (default read)\n"
"  --mix PCT            randrw: percentage of reads (default 50)\n"
"  --bs LIST            block sizes, k/m suffixes (default 4k)\n"
"  --depth LIST         queue depths, PER SESSION (default 1,2,4,8,16,32)\n"
"  --sessions LIST      sessions (engine instances), like thread counts of other\n"
"                       tools; the depth applies to each session, so a point keeps\n"
"                       sessions x depth I/Os in flight (default 1)\n"
"  --threads N          worker threads (default: number of CPUs); sessions are\n"
"                       spread over min(N, sessions) threads round-robin\n"
"  --runtime SECS       measured time per point (default 5)\n"
"  --ramp SECS          unmeasured warm-up per point (default 0)\n"
"  --ios N              end a point after N I/Os (submitted after the ramp)\n"
"  --offset BYTES, --span BYTES   region used (default: the whole device)\n"
"  --seed N             random seed (default 1)\n"
"  --ordered PCT, --hoq PCT       share of commands sent ORDERED / HEAD OF\n"
"                       QUEUE (needs an engine that can: native)\n"
"  --url URL            add a URL (as a positional one)\n"
"  --journal-blocks K   journal: log blocks of a transaction (default 4)\n"
"  --commit MODE        journal: flush (default), fua, ordered or none\n"
"  --check-journal IMAGE|URL   judge the journal an image or LUN holds\n"
"  --verify             stamp written blocks and check reads (below)\n"
"  --verify-journal FILE  --verify, with the generation of every block kept\n"
"                       in FILE across runs (below)\n"
"  --reconnect SECS     after a lost connection, log in again for up to SECS\n"
"                       and send again every command that had no status\n"
"                       (below; default 0: the session stops)\n"
"  --repeat N           run every point N times; cells show mean ± sd\n"
"\n",
	      f);
	access_usage(f);
	fputs(
"\n"
"Output:\n"
"  --metric M           table cell: iops, mbps (default), lat-p50, lat-p99,\n"
"                       lat-p999 (microseconds), cpu (% of one CPU)\n"
"  --detail             also print every metric of every point\n"
"  --compare BASE.json  add the difference in % to a previous --json run\n"
"  --json FILE, --csv FILE        write all points\n"
"  --ctl SOCKET         tcqd's control socket: add the device model's\n"
"                       statistics of the LUN (disk backend: mean drive and\n"
"                       host queue, read-ahead hits, cached writes,\n"
"                       destages, busy dies) to each point of --json, and\n"
"                       drive q, host q and hit % columns to --detail\n"
"  --plot FILE.svg      MB/s vs depth, one line per block size (needs gnuplot)\n"
"  --quiet              no live progress line (shown only on a terminal)\n"
"  --help, --version\n"
"\n"
"Errors (CHECK CONDITION, lost connections, verify mismatches) are counted per\n"
"point and listed under the tables; the exit status is 1 if there was any,\n"
"2 on usage or connection errors, 0 otherwise. MB/s is 10^6 bytes per second.\n"
"\n",
	f);
}

/* The second half of --help: the workloads and options that need more
 * than a line. */
static void usage_notes(FILE *f)
{
	fputs(
"--verify: every block a write carries gets a stamp (LBA, generation, run id,\n"
"CRC32C of the block); I/Os in flight never overlap. A read checks each block:\n"
"a block written earlier in this run must carry exactly its last generation;\n"
"any other block that carries a stamp must be intact (checksum, LBA), so a\n"
"read-only run finds blocks corrupted since an earlier --verify write run.\n"
"Workloads run writes first (write, randwrite, randrw, then read, randread),\n"
"so one run with --rw write,read --verify writes the region then reads it\n"
"back. Mismatches are printed with their LBA and counted as errors. A write\n"
"that failed or was in flight on a lost session was never acknowledged: each\n"
"of its blocks may read back with its old or its new generation (the first\n"
"read settles which), nothing else; every acknowledged write must read back.\n"
"--verify-journal FILE keeps each block's generation in FILE (mapped, in the\n"
"kernel before the next I/O to the block; synced at the end), so a later run\n"
"on the same region (after tcqd crashed or restarted, or tcq-bench was\n"
"killed) expects exactly what was acknowledged: a stale block, a lost\n"
"acknowledged write, fails it. FILE is created, or continued when it is of\n"
"the same region and block size (else refused).\n"
"\n"
"--rw journal: transactions of K log blocks (--journal-blocks) then one commit\n"
"block, all of --bs bytes, --depth of them at once on one session, each in a\n"
"slot of its own of the region; an I/O of the tables is a transaction. The\n"
"commit follows its log by --commit: flush (log completed, SYNCHRONIZE\n"
"CACHE completed, then the commit), fua (log completed, then the commit with\n"
"FUA, no flush), ordered (the log SIMPLE and at once the commit ORDERED),\n"
"none (all SIMPLE at once). flush and fua need FUA and SYNCHRONIZE CACHE\n"
"(native, libiscsi), ordered ORDERED tasks (native). Every block says whose it\n"
"is (run, transaction, index, CRC32C), so --check-journal IMAGE|URL needs\n"
"only the image: it prints the committed transactions, how many are\n"
"complete or superseded (their slot reused), and each one whose log blocks\n"
"are not all there (missing, torn, stale); exit 0 when none, 1 when some,\n"
"2 when the image holds no journal. E.g. tcq-crash check REC --cmd\n"
"'tcq-bench --check-journal {image}'.\n"
"\n"
"--reconnect SECS: when a session's connection is lost (the target was\n"
"restarted or killed, the network failed), the native engine logs in again\n"
"with the same ISID and TSIH 0 (session reinstatement: the target ends what\n"
"is left of the old session), trying every 0.1 s for up to SECS after the\n"
"loss, then sends every command that had no status again,\n"
"unchanged, and carries on; only when no login succeeds within SECS does\n"
"the session stop as without the option. A write in flight at the loss is\n"
"unacknowledged until its resend completes GOOD (--verify: old or new until\n"
"then). The point counts reconnects and the seconds without service (loss\n"
"to new login, summed: outage_s in --json, a note under the tables).\n"
"libiscsi engine: libiscsi's own automatic reconnect is turned on (off\n"
"without the option), retrying about SECS times; it reports no event, so\n"
"its reconnects are seen as the session ceasing to be logged in and being\n"
"logged in again: counted in reconnects, the time between in outage_s.\n"
"\n"
"Examples:\n"
"  tcq-bench --rw read --bs 4k,16k,64k,128k --depth 1,2,4,8,32 \\\n"
"      iscsi://127.0.0.1:3260/iqn.2026-11.org.tcq:export/0\n"
"  which prints, e.g.:\n"
"      read, 1 session: MB/s (rows: block size, columns: queue depth)\n"
"        bs |   1    2    4    8   32\n"
"        4K |  16   25   32   34   34\n"
"       ...\n"
"  tcq-bench --engine libiscsi --rw randwrite --bs 4k --depth 1,32 \\\n"
"      --sessions 1,4 --metric iops --json new.json --compare old.json URL\n"
"  tcq-bench --engine local --rw write,read --verify --span 64m /dev/sdX\n",
	f);
}

static int parse_u64(const char *s, uint64_t *v, bool size)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -1;
	if (size && *end) {
		unsigned shift = 0;

		switch (*end) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		case 't': case 'T': shift = 40; break;
		default: return -1;
		}
		end++;
		if (*end == 'b' || *end == 'B')
			end++;
		if (x > (UINT64_MAX >> shift))
			return -1;
		x <<= shift;
	}
	if (*end)
		return -1;
	*v = x;
	return 0;
}

/* Comma separated list of positive 32-bit values. */
static int parse_list(const char *s, uint32_t *out, unsigned *n, bool size)
{
	char buf[512], *tok, *save;
	uint64_t v;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n >= BENCH_MAXLIST || parse_u64(tok, &v, size) ||
		    v == 0 || v > UINT32_MAX)
			return -1;
		out[(*n)++] = (uint32_t)v;
	}
	return *n ? 0 : -1;
}

static int parse_pct(const char *s, unsigned *v)
{
	uint64_t x;

	if (parse_u64(s, &x, false) || x > 100)
		return -1;
	*v = (unsigned)x;
	return 0;
}

static int parse_secs(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return errno || end == s || *end || *v < 0 || *v > 86400 ? -1 : 0;
}

enum {
	OPT_ENGINE = 256, OPT_RW, OPT_MIX, OPT_BS, OPT_DEPTH, OPT_SESSIONS,
	OPT_THREADS, OPT_RUNTIME, OPT_RAMP, OPT_IOS, OPT_OFFSET, OPT_SPAN,
	OPT_SEED, OPT_ORDERED, OPT_HOQ, OPT_VERIFY, OPT_VERIFY_JOURNAL, OPT_RECONNECT,
	OPT_REPEAT, OPT_METRIC, OPT_CTL, OPT_DETAIL, OPT_COMPARE, OPT_JSON, OPT_CSV,
	OPT_PLOT, OPT_QUIET,
	OPT_INAME, OPT_CHAP_USER, OPT_CHAP_SECRET, OPT_MUTUAL_USER,
	OPT_MUTUAL_SECRET, OPT_CHAP_ALGS, OPT_HDIGEST, OPT_DDIGEST,
	OPT_BUFFERED, OPT_HELP, OPT_VERSION, OPT_URL,
	OPT_JOURNAL_BLOCKS, OPT_COMMIT, OPT_CHECK_JOURNAL,
};

static const struct option long_opts[] = {
	{ "engine", required_argument, NULL, OPT_ENGINE },
	{ "rw", required_argument, NULL, OPT_RW },
	{ "mix", required_argument, NULL, OPT_MIX },
	{ "bs", required_argument, NULL, OPT_BS },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "sessions", required_argument, NULL, OPT_SESSIONS },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "runtime", required_argument, NULL, OPT_RUNTIME },
	{ "ramp", required_argument, NULL, OPT_RAMP },
	{ "ios", required_argument, NULL, OPT_IOS },
	{ "offset", required_argument, NULL, OPT_OFFSET },
	{ "span", required_argument, NULL, OPT_SPAN },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "ordered", required_argument, NULL, OPT_ORDERED },
	{ "hoq", required_argument, NULL, OPT_HOQ },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "verify-journal", required_argument, NULL, OPT_VERIFY_JOURNAL },
	{ "reconnect", required_argument, NULL, OPT_RECONNECT },
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "metric", required_argument, NULL, OPT_METRIC },
	{ "detail", no_argument, NULL, OPT_DETAIL },
	{ "compare", required_argument, NULL, OPT_COMPARE },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "ctl", required_argument, NULL, OPT_CTL },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "plot", required_argument, NULL, OPT_PLOT },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "initiator-name", required_argument, NULL, OPT_INAME },
	{ "chap-user", required_argument, NULL, OPT_CHAP_USER },
	{ "chap-secret", required_argument, NULL, OPT_CHAP_SECRET },
	{ "mutual-user", required_argument, NULL, OPT_MUTUAL_USER },
	{ "mutual-secret", required_argument, NULL, OPT_MUTUAL_SECRET },
	{ "chap-algs", required_argument, NULL, OPT_CHAP_ALGS },
	{ "header-digest", no_argument, NULL, OPT_HDIGEST },
	{ "data-digest", no_argument, NULL, OPT_DDIGEST },
	{ "buffered", no_argument, NULL, OPT_BUFFERED },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "url", required_argument, NULL, OPT_URL },
	{ "journal-blocks", required_argument, NULL, OPT_JOURNAL_BLOCKS },
	{ "commit", required_argument, NULL, OPT_COMMIT },
	{ "check-journal", required_argument, NULL, OPT_CHECK_JOURNAL },
	BENCH_LOG_OPTIONS,
	BENCH_RATE_OPTIONS,
	BENCH_CPU_OPTIONS,
	BENCH_ACCESS_LONGOPTS,
	BENCH_MIX_LONG_OPTS,
	{ NULL, 0, NULL, 0 },
};

static int bad(const char *opt, const char *val)
{
	fprintf(stderr, "tcq-bench: bad value for --%s: '%s' (see --help)\n",
		opt, val);
	return -1;
}

/* What no option sets. */
static void set_defaults(struct bench_opts *o)
{
	long ncpu;
	int c;

	memset(o, 0, sizeof(*o));
	o->engine = engine_find(NULL);
	o->rw[0] = BENCH_READ;
	o->nrw = 1;
	o->bs[0] = 4096;
	o->nbs = 1;
	for (c = 0; c < 6; c++)
		o->depth[c] = 1u << c;
	o->ndepth = 6;
	o->sessions[0] = 1;
	o->nsessions = 1;
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	o->threads = ncpu > 0 ? (unsigned)ncpu : 1;
	o->runtime = 5;
	o->seed = 1;
	o->mix = 50;
	o->repeat = 1;
	o->metric = METRIC_MBPS;
	o->eo.direct = true;
	o->journal_blocks = 4;
	o->commit = COMMIT_FLUSH;
	access_defaults(&o->acc);
}

/* --rw: a comma-separated list of workloads. */
static int parse_rw(const char *arg, struct bench_opts *o)
{
	char buf[256], *tok, *save;
	int rw;

	snprintf(buf, sizeof(buf), "%s", arg);
	o->nrw = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		rw = bench_rw_parse(tok);
		if (rw < 0 || o->nrw >= BENCH_NRW)
			return -1;
		o->rw[o->nrw++] = rw;
	}
	return o->nrw ? 0 : -1;
}

/* An option of the workload and the sweep (what is sent, how much, for
 * how long): 0 once taken, -1 for a bad value, 1 if c is none of them. */
static int workload_opt(struct bench_opts *o, int c, const char *arg)
{
	uint64_t v;
	int m;

	switch (c) {
	case OPT_RW:
		return parse_rw(arg, o);
	case OPT_MIX:
		return parse_pct(arg, &o->mix);
	case OPT_BS:
		return parse_list(arg, o->bs, &o->nbs, true);
	case OPT_DEPTH:
		return parse_list(arg, o->depth, &o->ndepth, false);
	case OPT_SESSIONS:
		return parse_list(arg, o->sessions, &o->nsessions, false);
	case OPT_THREADS:
		if (parse_u64(arg, &v, false) || !v || v > 1024)
			return -1;
		o->threads = (unsigned)v;
		return 0;
	case OPT_RUNTIME:
		return parse_secs(arg, &o->runtime) || o->runtime <= 0 ? -1 : 0;
	case OPT_RAMP:
		return parse_secs(arg, &o->ramp);
	case OPT_IOS:
		return parse_u64(arg, &o->ios, false) || !o->ios ||
		       o->ios > INT64_MAX ? -1 : 0;
	case OPT_OFFSET:
		return parse_u64(arg, &o->offset, true);
	case OPT_SPAN:
		return parse_u64(arg, &o->span, true) || !o->span ? -1 : 0;
	case OPT_SEED:
		return parse_u64(arg, &o->seed, false);
	case OPT_ORDERED:
		return parse_pct(arg, &o->ordered_pct);
	case OPT_HOQ:
		return parse_pct(arg, &o->hoq_pct);
	case OPT_VERIFY:
		o->verify = true;
		return 0;
	case OPT_VERIFY_JOURNAL:
		o->verify = true;
		o->verify_journal = arg;
		return 0;
	case OPT_REPEAT:
		if (parse_u64(arg, &v, false) || !v || v > 64)
			return -1;
		o->repeat = (unsigned)v;
		return 0;
	case OPT_JOURNAL_BLOCKS:
		if (parse_u64(arg, &v, false) || !v || v > JOURNAL_MAX_K)
			return -1;
		o->journal_blocks = (uint32_t)v;
		return 0;
	case OPT_COMMIT:
		m = bench_commit_parse(arg);
		if (m < 0)
			return -1;
		o->commit = (enum bench_commit)m;
		return 0;
	case OPT_CHECK_JOURNAL:
		o->check_journal = arg;
		return 0;
	}
	return 1;
}

/* An option of the engine and its sessions (the targets, login, digests,
 * --reconnect), or of the output: as workload_opt. */
static int session_output_opt(struct bench_opts *o, int c, const char *arg)
{
	int m;

	switch (c) {
	case OPT_ENGINE:
		o->engine = engine_find(arg);
		return o->engine ? 0 : -1;
	case OPT_RECONNECT:
		return parse_secs(arg, &o->eo.reconnect);
	case OPT_URL:
		if (o->ntargets >= BENCH_MAXLIST)
			return -1;
		o->targets[o->ntargets++] = arg;
		return 0;
	case OPT_METRIC:
		m = bench_metric_parse(arg);
		if (m < 0)
			return -1;
		o->metric = (enum bench_metric)m;
		return 0;
	case OPT_DETAIL: o->detail = true; return 0;
	case OPT_COMPARE: o->compare = arg; return 0;
	case OPT_JSON: o->json = arg; return 0;
	case OPT_CTL: o->ctl = arg; return 0;
	case OPT_CSV: o->csv = arg; return 0;
	case OPT_PLOT: o->plot = arg; return 0;
	case OPT_QUIET: o->quiet = true; return 0;
	case OPT_INAME: o->eo.initiator_name = arg; return 0;
	case OPT_CHAP_USER: o->eo.chap_user = arg; return 0;
	case OPT_CHAP_SECRET: o->eo.chap_secret = arg; return 0;
	case OPT_MUTUAL_USER: o->eo.mutual_user = arg; return 0;
	case OPT_MUTUAL_SECRET: o->eo.mutual_secret = arg; return 0;
	case OPT_CHAP_ALGS: o->eo.chap_algs = arg; return 0;
	case OPT_HDIGEST: o->eo.header_digest = true; return 0;
	case OPT_DDIGEST: o->eo.data_digest = true; return 0;
	case OPT_BUFFERED: o->eo.direct = false; return 0;
	}
	return 1;
}

/* After the options: the URLs, and what options ask of each other. */
static int parse_finish(int argc, char **argv, struct bench_opts *o)
{
	for (; optind < argc; optind++) {
		if (o->ntargets >= BENCH_MAXLIST) {
			fprintf(stderr, "tcq-bench: at most %u URLs\n",
				BENCH_MAXLIST);
			return -1;
		}
		o->targets[o->ntargets++] = argv[optind];
	}
	if (o->check_journal)
		return 0;
	if (!o->ntargets) {
		fprintf(stderr, "tcq-bench: a URL expected (see --help)\n");
		return -1;
	}
	o->target = o->targets[0];
	for (unsigned i = 0; i < o->nrw; i++)
		if (o->rw[i] == BENCH_JOURNAL &&
		    (o->verify || o->nsessions > 1 || o->sessions[0] != 1)) {
			fprintf(stderr, "tcq-bench: --rw journal runs one session, without --verify (--check-journal checks it)\n");
			return -1;
		}
	if (access_finish(&o->acc) || bench_mix_check(o))
		return -1;
	if (o->ordered_pct + o->hoq_pct > 100) {
		fprintf(stderr, "tcq-bench: --ordered + --hoq exceed 100%%\n");
		return -1;
	}
	if (o->plot && !bench_have_gnuplot()) {
		fprintf(stderr, "tcq-bench: --plot needs gnuplot: install the Debian package gnuplot-nox (apt-get install -y gnuplot-nox)\n");
		return -1;
	}
	return bench_log_check(o) || bench_rate_check(o) ||
	       bench_cpu_check(o) ? -1 : 0;
}

static int parse_args(int argc, char **argv, struct bench_opts *o)
{
	int c, rc;

	set_defaults(o);
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		const char *name = "?";

		for (const struct option *lo = long_opts; lo->name; lo++)
			if (lo->val == c)
				name = lo->name;

		switch (c) {
		case 'h':
		case OPT_HELP:
			usage(stdout);
			bench_log_usage(stdout);
			bench_rate_usage(stdout);
			bench_cpu_usage(stdout);
			bench_mix_usage(stdout);
			usage_notes(stdout);
			exit(0);
		case OPT_VERSION:
			printf("tcq-bench %s\n", PACKAGE_VERSION);
			exit(0);
		}
		rc = workload_opt(o, c, optarg);
		if (rc > 0)
			rc = session_output_opt(o, c, optarg);
		if (rc > 0)
			rc = bench_log_opt(o, c, optarg);
		if (rc > 0)
			rc = bench_rate_opt(o, c, optarg);
		if (rc > 0)
			rc = bench_cpu_opt(&o->cpu, c, optarg);
		if (rc > 0)
			rc = access_opt(&o->acc, c, optarg);
		if (rc > 0)
			rc = bench_mix_opt(o, c, optarg);
		if (rc < 0)
			return bad(name, optarg);
		if (rc > 0) {
			usage(stderr);
			return -1;
		}
	}
	return parse_finish(argc, argv, o);
}

/* With --verify, writes run before reads so the reads check them. */
static void order_workloads(struct bench_opts *o)
{
	static const int rank[BENCH_NRW] = {
		[BENCH_WRITE] = 0, [BENCH_RANDWRITE] = 1, [BENCH_RANDRW] = 2,
		[BENCH_READ] = 3, [BENCH_RANDREAD] = 4, [BENCH_JOURNAL] = 5,
	};
	unsigned i, j;

	if (!o->verify)
		return;
	for (i = 1; i < o->nrw; i++)
		for (j = i; j > 0 && rank[o->rw[j]] < rank[o->rw[j - 1]]; j--) {
			int t = o->rw[j];

			o->rw[j] = o->rw[j - 1];
			o->rw[j - 1] = t;
		}
}

static void on_interrupt(int sig)
{
	bench_interrupted = 1;
	signal(sig, SIG_DFL);	/* a second one ends tcq-bench at once */
}

/* SIGINT and SIGTERM end the run early, as fio does: the point running
 * stops and what was measured is printed. */
static void bench_catch_interrupt(void)
{
	struct sigaction sa = { .sa_handler = on_interrupt };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Runs the points in order, each o->repeat times; an interrupt ends the
 * run after the point running (*npts: the points measured). Returns
 * whether a point could not run; *any_err: whether an I/O failed. */
static bool run_points(const struct bench_opts *o, struct bench_point *pts,
		       unsigned *npts, bool *any_err)
{
	struct bench_sample samples[64];
	struct bench_progress prog;
	struct bench_model_snap snap0 = { 0 };
	char err[512];
	unsigned i, r, n = *npts;
	bool failed = false;
	int rc;

	prog.npoints = n;
	for (i = 0; i < n && !failed; i++) {
		struct bench_point *p = &pts[i];

		prog.point = i + 1;
		if (o->ctl && bench_model_snap(o->ctl, o->target, &snap0) < 0)
			snap0.ok = false;
		for (r = 0; r < o->repeat; r++) {
			prog.secs_left = ((double)(n - i - 1) * o->repeat +
					  (o->repeat - r - 1)) *
					 (o->runtime + o->ramp);
			rc = bench_run_point(o, p->rw, p->bs, p->depth,
					     p->sessions, r, &prog,
					     &samples[r], err, sizeof(err));
			if (rc) {
				fprintf(stderr, "tcq-bench: %s\n", err);
				failed = true;
				break;
			}
			if (bench_interrupted) {
				r++;	/* this sample, cut short, counts */
				break;
			}
		}
		if (!failed && bench_interrupted) {
			/* what was measured is reported; the rest is not */
			fprintf(stderr, "tcq-bench: interrupted: %u of %u "
				"points measured, the last cut short\n", i + 1,
				n);
			bench_point_fold(p, samples, r);
			*npts = i + 1;
			if (bench_errors_total(&p->mean.err))
				*any_err = true;
			break;
		}
		if (!failed)
			bench_point_fold(p, samples, o->repeat);
		if (!failed && o->ctl) {
			struct bench_model_snap snap1;

			if (bench_model_snap(o->ctl, o->target, &snap1) == 0)
				bench_model_delta(&snap0, &snap1, &p->model);
		}
		if (bench_errors_total(&p->mean.err))
			*any_err = true;
	}
	return failed;
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	struct bench_point *pts;
	struct bench_meta meta;
	char err[512], started[64];
	unsigned npts, i, a, b, c, d;
	time_t now = time(NULL);
	bool failed = false, any_err = false;

	/* A target that closes a connection under a write must give an
	 * error to handle (a lost session, --reconnect), not SIGPIPE:
	 * libiscsi writes without MSG_NOSIGNAL. */
	signal(SIGPIPE, SIG_IGN);
	bench_catch_interrupt();
	if (argc > 1 && strcmp(argv[1], "order-check") == 0)
		return ordercheck_main(argc - 1, argv + 1);
	if (bench_job_expand(&argc, &argv))
		return 2;
	if (parse_args(argc, argv, &o))
		return 2;
	if (o.check_journal)
		return journal_check_main(&o, o.check_journal);
	if (o.acc.replay.path)
		return bench_replay_main(&o);
	order_workloads(&o);
	npts = o.nrw * o.nsessions * o.nbs * o.ndepth;
	pts = calloc(npts, sizeof(*pts));
	if (!pts)
		return 2;
	strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	i = 0;
	for (a = 0; a < o.nrw; a++)
		for (b = 0; b < o.nsessions; b++)
			for (c = 0; c < o.nbs; c++)
				for (d = 0; d < o.ndepth; d++, i++) {
					pts[i].rw = o.rw[a];
					pts[i].sessions = o.sessions[b];
					pts[i].bs = o.bs[c];
					pts[i].depth = o.depth[d];
				}
	if (o.compare && bench_load_compare(o.compare, pts, npts, err,
					    sizeof(err)) < 0) {
		fprintf(stderr, "tcq-bench: %s\n", err);
		free(pts);
		return 2;
	}
	if (o.rate.curve) {
		int rc = bench_curve_main(&o, pts, npts, started);

		free(pts);
		return rc;
	}
	failed = run_points(&o, pts, &npts, &any_err);
	bench_run_cleanup();
	for (a = 0; a < o.nrw; a++)
		for (b = 0; b < o.nsessions; b++) {
			bench_print_table(stdout, pts, npts, o.rw[a],
					  o.sessions[b], o.metric);
			fputc('\n', stdout);
		}
	if (o.compare)
		printf("(%%: difference to %s)\n", o.compare);
	if (o.detail) {
		bench_print_detail(stdout, pts, npts);
		fputc('\n', stdout);
	}
	bench_mix_print(stdout, pts, npts);
	bench_print_errors(stdout, pts, npts);
	bench_rate_print(stdout, pts, npts);
	bench_log_print(stdout, &o, pts, npts);
	fflush(stdout);
	meta.version = PACKAGE_VERSION;
	meta.engine = o.engine->name;
	meta.target = o.target;
	meta.started = started;
	if (o.json && bench_write_json(o.json, &meta, pts, npts)) {
		fprintf(stderr, "tcq-bench: cannot write %s\n", o.json);
		failed = true;
	}
	if (o.csv && bench_write_csv(o.csv, pts, npts)) {
		fprintf(stderr, "tcq-bench: cannot write %s: %s\n", o.csv,
			strerror(errno));
		failed = true;
	}
	if ((o.plot && bench_plot(o.plot, pts, npts, err, sizeof(err))) ||
	    bench_log_plot(&o, err, sizeof(err))) {
		fprintf(stderr, "tcq-bench: %s\n", err);
		failed = true;
	}
	free(pts);
	if (failed)
		return 2;
	return any_err ? 1 : 0;
}
