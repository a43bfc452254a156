/*
 * tcq-crash: the crash states a recording allows (tcq-crash(1),
 * docs/crash-lab.md).
 *
 *   tcq-crash info FILE
 *   tcq-crash states FILE [options] [--json]
 *   tcq-crash image FILE STATE OUT [options]
 *   tcq-crash check FILE --cmd 'CMD {image}' [--cmd ...] [options]
 *                  [--at-marks] [--json] [--no-minimize] [--workdir DIR]
 *   options: --model sbc|ordered  --upto MARK  --max N  --seed S
 *
 * Exit status: 0 (check: every state passed), 1 (check: a state failed),
 * 2 on bad input (which says what and changes nothing).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "crash/check.h"
#include "crash/cli.h"
#include "crash/history.h"
#include "crash/image.h"
#include "crash/model.h"
#include "crash/states.h"

static void usage(FILE *f)
{
	fputs("usage: tcq-crash info FILE\n"
	      "       tcq-crash states FILE [OPTIONS] [--json]\n"
	      "       tcq-crash image FILE STATE OUT [OPTIONS]\n"
	      "       tcq-crash check FILE --cmd 'CMD {image}' [--cmd ...] "
	      "[OPTIONS]\n"
	      "                 [--at-marks] [--json] [--no-minimize] "
	      "[--workdir DIR] [--verbose]\n"
	      "OPTIONS: --model sbc|ordered (sbc)  --upto MARK|end|RECORD "
	      "(end)\n"
	      "         --max N (10000)  --seed S (1)\n"
	      "STATE: an index of tcq-crash states, all, durable, or "
	      "drop:TASK[:FIRST-LAST],...\n"
	      "{image}, {mark}, {point} and {state} in a --cmd become the "
	      "state's image,\n"
	      "the crash point's mark, its record number and the state's "
	      "index.\n", f);
}

int crash_bad(const char *fmt, const char *arg)
{
	fprintf(stderr, "tcq-crash: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return 2;
}

/* Options after the command word; argv[optind..] are its operands. */
static int parse(int argc, char **argv, struct crash_opts *o)
{
	static const struct option lo[] = {
		{ "model", 1, 0, 'm' }, { "upto", 1, 0, 'u' },
		{ "max", 1, 0, 'n' }, { "seed", 1, 0, 's' },
		{ "json", 0, 0, 'j' }, { "cmd", 1, 0, 'c' },
		{ "at-marks", 0, 0, 'a' }, { "no-minimize", 0, 0, 'N' },
		{ "workdir", 1, 0, 'w' }, { "verbose", 0, 0, 'v' },
		{ "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->max = 10000;
	o->seed = 1;
	o->minimize = true;
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!strcmp(optarg, "sbc"))
				o->model = MODEL_SBC;
			else if (!strcmp(optarg, "ordered"))
				o->model = MODEL_ORDERED;
			else
				return crash_bad("--model %s: sbc or ordered", optarg);
			break;
		case 'u':
			o->upto = optarg;
			break;
		case 'n':
			o->max = strtoull(optarg, &end, 10);
			if (*end || !o->max || o->max > 100000000)
				return crash_bad("--max %s: a number 1..100000000",
					   optarg);
			break;
		case 's':
			o->seed = strtoull(optarg, &end, 10);
			if (*end || !*optarg)
				return crash_bad("--seed %s: a number", optarg);
			break;
		case 'j':
			o->json = true;
			break;
		case 'c':
			if (o->ck.ncmds == CHECK_MAX_CMDS)
				return crash_bad("at most 8 --cmd%s", "");
			o->ck.cmds[o->ck.ncmds++] = optarg;
			break;
		case 'a':
			o->at_marks = true;
			break;
		case 'N':
			o->minimize = false;
			break;
		case 'w':
			o->workdir = optarg;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	return 0;
}

const char *crash_model_name(enum model_kind k)
{
	return k == MODEL_ORDERED ? "ordered" : "sbc";
}

const char *crash_mark_at(const struct ch_history *h, uint64_t c)
{
	for (size_t i = 0; i < h->nmarks; i++)
		if (h->marks[i].seq == c)
			return h->marks[i].text;
	return "";
}

/* "opcodes: 0x2a x12, 0x35 x2, ..." of the recorded tasks. */
static void print_opcodes(const struct ch_history *h)
{
	size_t count[256] = { 0 };
	const char *sep = "";

	for (size_t i = 0; i < h->ntasks; i++)
		count[h->tasks[i].opcode]++;
	printf("opcodes:");
	for (int op = 0; op < 256; op++)
		if (count[op]) {
			printf("%s 0x%02x x%zu", sep, op, count[op]);
			sep = ",";
		}
	putchar('\n');
}

static int cmd_info(struct ch_history *h)
{
	size_t writes = 0, syncs = 0, ordered = 0, done = 0;

	for (size_t i = 0; i < h->ntasks; i++) {
		writes += !!(h->tasks[i].flags & REC_A_WRITE);
		syncs += !!(h->tasks[i].flags & REC_A_SYNC);
		ordered += h->tasks[i].attr == 2;
		done += h->tasks[i].done != 0;
	}
	printf("target %s LUN %" PRIu64 ": %" PRIu64 " blocks of %u bytes\n",
	       h->rd.hdr.target, h->rd.hdr.lun_id, h->rd.hdr.nblocks,
	       h->rd.hdr.block_size);
	printf("base: %s\n", h->base_path[0] ? h->base_path : "zeros");
	printf("%" PRIu64 " records: %zu tasks (%zu writes, %zu SYNCHRONIZE "
	       "CACHE, %zu ORDERED; %zu ended), %zu pieces written, %u "
	       "nexuses, %zu marks\n", h->last_seq, h->ntasks, writes, syncs,
	       ordered, done, h->npieces, h->nnexus, h->nmarks);
	print_opcodes(h);
	for (uint32_t i = 0; i < h->nnexus; i++)
		printf("nexus %u: %s\n", i, h->nexus_names[i]);
	for (size_t i = 0; i < h->nmarks; i++)
		printf("mark at record %" PRIu64 ": %s\n", h->marks[i].seq,
		       h->marks[i].text);
	if (h->end_reason < 0)
		printf("end: none recorded (tcqd still recording, or it "
		       "died)\n");
	else
		printf("end: %s%s%s\n", h->end_reason == REC_END_FULL ?
		       "full (record_max)" : h->end_reason == REC_END_ERROR ?
		       "write error" : "stopped", h->end_text[0] ? ": " : "",
		       h->end_text);
	return 0;
}

void crash_point_summary(const struct md_point *m, FILE *f)
{
	fprintf(f, "crash point: record %" PRIu64 "%s%s (model %s): %" PRIu64
		" pieces, %" PRIu64 " blocks written, %" PRIu64 " of them "
		"durable, %zu blocks in doubt from %zu writes, 2^%.1f states\n",
		m->c, crash_mark_at(m->h, m->c)[0] ? ", mark " : "",
		crash_mark_at(m->h, m->c), crash_model_name(m->kind), m->pieces,
		m->written_blocks, m->durable_blocks, m->nblocks, m->ntasks,
		m->log2_states);
}

static int cmd_states(struct ch_history *h, const struct crash_opts *o,
		      uint64_t c)
{
	struct md_point m;
	struct st_gen g;
	struct st_info info;
	struct md_state s;
	char err[512];
	uint8_t *drop;
	int n = 0;

	if (model_point(&m, h, o->model, c, err, sizeof(err)) < 0)
		return crash_bad("%s", err);
	s.pick = malloc((m.nblocks + 1) * sizeof(*s.pick));
	drop = malloc(m.tfirst[m.ntasks] + 1);
	if (!s.pick || !drop || st_init(&g, &m, o->max, o->seed) < 0)
		return crash_bad("%s", "out of memory");
	if (o->json)
		printf("{\"point\": %" PRIu64 ", \"model\": \"%s\", "
		       "\"blocks_in_doubt\": %zu, \"writes_in_doubt\": %zu, "
		       "\"states\": [\n", c, crash_model_name(o->model), m.nblocks,
		       m.ntasks);
	else
		crash_point_summary(&m, stdout);
	while (st_next(&g, &s, &info) > 0) {
		st_to_drops(&m, &s, drop);
		if (o->json) {
			printf("%s  {\"index\": %zu, \"label\": \"%s\", "
			       "\"dropped\": ", n++ ? ",\n" : "", info.index,
			       info.label);
			st_describe(&m, drop, stdout, true, "");
			putchar('}');
		} else {
			printf("state %zu: %s\n", info.index, info.label);
			st_describe(&m, drop, stdout, false, "    ");
		}
	}
	if (o->json)
		printf("\n], \"count\": %zu, \"exhaustive\": %s, "
		       "\"skipped_by_model\": %zu}\n", g.emitted,
		       g.exhaustive ? "true" : "false", g.skipped_model);
	else
		printf("%zu states (%s), %zu more the %s model does not "
		       "allow\n", g.emitted, g.exhaustive ? "every one" :
		       "targeted, then random", g.skipped_model,
		       crash_model_name(o->model));
	st_free(&g);
	free(drop);
	free(s.pick);
	model_point_free(&m);
	return 0;
}

/* STATE as an index of the list, or a name st_parse reads. */
static int find_state(const struct md_point *m, const struct crash_opts *o,
		      const char *spec, struct md_state *s)
{
	char *end, err[512];
	unsigned long long k = strtoull(spec, &end, 10);
	struct st_gen g;
	struct st_info info;

	if (*spec && !*end) {
		if (st_init(&g, m, o->max, o->seed) < 0)
			return crash_bad("%s", "out of memory");
		size_t n;

		while (st_next(&g, s, &info) > 0)
			if (info.index == k) {
				st_free(&g);
				return 0;
			}
		n = g.emitted;
		st_free(&g);
		fprintf(stderr, "tcq-crash: state %llu: there are %zu states "
			"at this point (model %s, --max %zu)\n", k, n,
			crash_model_name(o->model), o->max);
		return 2;
	}
	if (st_parse(m, spec, s, err, sizeof(err)) < 0)
		return crash_bad("%s", err);
	if (!model_allows(m, s))
		return crash_bad("state %s: the model does not allow it", spec);
	return 0;
}

static int cmd_image(struct ch_history *h, const struct crash_opts *o, uint64_t c,
		     const char *spec, const char *out)
{
	struct md_point m;
	struct md_state s;
	struct img im;
	char err[512];
	int rc;

	if (model_point(&m, h, o->model, c, err, sizeof(err)) < 0)
		return crash_bad("%s", err);
	s.pick = malloc((m.nblocks + 1) * sizeof(*s.pick));
	if (!s.pick)
		return crash_bad("%s", "out of memory");
	rc = find_state(&m, o, spec, &s);
	if (!rc && (img_create(&im, &m, out, err, sizeof(err)) < 0 ||
		    img_show(&im, &s, err, sizeof(err)) < 0)) {
		rc = crash_bad("%s", err);
		unlink(out);
	} else if (!rc) {
		img_close(&im);
		printf("%s: state %s at record %" PRIu64 "\n", out, spec, c);
	}
	free(s.pick);
	model_point_free(&m);
	return rc;
}

int main(int argc, char **argv)
{
	struct ch_history h;
	struct crash_opts o;
	char err[512];
	uint64_t c;
	int rc;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "info") && strcmp(argv[1], "states") &&
	    strcmp(argv[1], "image") && strcmp(argv[1], "check"))
		return crash_bad("unknown command \"%s\" (info, states, image, "
			   "check)", argv[1]);
	if ((rc = parse(argc, argv, &o)))
		return rc;
	if (optind >= argc)
		return crash_bad("%s: which recording?", argv[1]);
	if (ch_load(&h, argv[optind], err, sizeof(err)) < 0)
		return crash_bad("%s", err);
	c = ch_point(&h, o.upto, err, sizeof(err));
	if (!c && h.last_seq)
		rc = crash_bad("--upto: %s", err);
	else if (!strcmp(argv[1], "info"))
		rc = cmd_info(&h);
	else if (!strcmp(argv[1], "states"))
		rc = cmd_states(&h, &o, c);
	else if (!strcmp(argv[1], "image"))
		rc = argc - optind != 3 ?
		     crash_bad("image FILE STATE OUT: %s", "three operands") :
		     cmd_image(&h, &o, c, argv[optind + 1], argv[optind + 2]);
	else
		rc = crash_check(&h, &o, c);
	ch_free(&h);
	return rc;
}
