/* tcq-crash check: the user's checkers on every state (tcq_crash.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "crash/cli.h"
#include "crash/image.h"
#include "crash/states.h"

struct failure {
	size_t index;
	char label[160];
	int cmd;
	uint8_t *drop;		/* as found, then shrunk */
	long tried;		/* states the shrinking ran */
};

struct point_report {
	uint64_t c;
	size_t states, skipped;
	bool exhaustive;
	double seconds;
	struct failure *fail;
	size_t nfail;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Every state of one point, failures kept (shrunk unless told not to). */
static int check_point(struct ch_history *h, struct crash_opts *o,
		       uint64_t c, const char *img_path, struct md_point *m,
		       struct point_report *r, char *err, size_t errlen)
{
	size_t ne = m->tfirst[m->ntasks];
	struct md_state s = { malloc((m->nblocks + 1) * sizeof(*s.pick)) };
	struct st_info info;
	struct st_gen g;
	struct img im;
	int rc = -1, which;
	double t0 = now_s();

	memset(r, 0, sizeof(*r));
	r->c = c;
	if (!s.pick || st_init(&g, m, o->max, o->seed) < 0) {
		free(s.pick);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (img_create(&im, m, img_path, err, errlen) < 0)
		goto out;
	o->ck.image_path = img_path;
	o->ck.mark = crash_mark_at(h, c);
	while (st_next(&g, &s, &info) > 0) {
		int f = check_state(&o->ck, &im, &s, info.index, &which, err,
				    errlen);
		struct failure *x;

		if (f < 0)
			goto out_img;
		if (!f)
			continue;
		x = realloc(r->fail, (r->nfail + 1) * sizeof(*x));
		if (!x || !(x[r->nfail].drop = malloc(ne + 1))) {
			if (x)
				r->fail = x;
			snprintf(err, errlen, "out of memory");
			goto out_img;
		}
		r->fail = x;
		x += r->nfail++;
		x->index = info.index;
		x->cmd = which;
		x->tried = 0;
		snprintf(x->label, sizeof(x->label), "%s", info.label);
		st_to_drops(m, &s, x->drop);
		if (o->minimize &&
		    (x->tried = check_minimize(&o->ck, &im, m, x->drop, err,
					       errlen)) < 0)
			goto out_img;
	}
	r->states = g.emitted;
	r->skipped = g.skipped_model;
	r->exhaustive = g.exhaustive;
	rc = 0;
out_img:
	img_close(&im);
	unlink(img_path);
out:
	r->seconds = now_s() - t0;
	st_free(&g);
	free(s.pick);
	return rc;
}

static void report_text(const struct crash_opts *o, const struct md_point *m,
			const struct point_report *r)
{
	crash_point_summary(m, stdout);
	printf("  %zu states checked (%s), %zu more not allowed by the model, "
	       "%zu failing; %.3f s, %.1f ms a state\n", r->states,
	       r->exhaustive ? "every one" : "targeted, then random",
	       r->skipped, r->nfail, r->seconds,
	       r->states ? 1e3 * r->seconds / (double)r->states : 0.0);
	for (size_t i = 0; i < r->nfail; i++) {
		const struct failure *f = &r->fail[i];

		printf("  FAIL state %zu (%s): %s\n", f->index, f->label,
		       o->ck.cmds[f->cmd]);
		printf("    %s writes it drops that make it fail%s:\n",
		       o->minimize ? "the fewest" : "the",
		       o->minimize ? " (delta debugging)" : "");
		st_describe(m, f->drop, stdout, false, "      ");
	}
}

static void report_json(const struct crash_opts *o, const struct md_point *m,
			const struct point_report *r, bool first)
{
	printf("%s  {\"point\": %" PRIu64 ", \"mark\": \"%s\", \"model\": "
	       "\"%s\", \"blocks_in_doubt\": %zu, \"writes_in_doubt\": %zu, "
	       "\"states\": %zu, \"exhaustive\": %s, \"skipped_by_model\": "
	       "%zu, \"seconds\": %.3f, \"failing\": [", first ? "" : ",\n",
	       r->c, crash_mark_at(m->h, r->c), crash_model_name(o->model),
	       m->nblocks, m->ntasks, r->states,
	       r->exhaustive ? "true" : "false", r->skipped, r->seconds);
	for (size_t i = 0; i < r->nfail; i++) {
		printf("%s{\"state\": %zu, \"label\": \"%s\", \"cmd\": %d, "
		       "\"tried\": %ld, \"dropped\": ", i ? ", " : "",
		       r->fail[i].index, r->fail[i].label, r->fail[i].cmd,
		       r->fail[i].tried);
		st_describe(m, r->fail[i].drop, stdout, true, "");
		putchar('}');
	}
	printf("]}");
}

int crash_check(struct ch_history *h, struct crash_opts *o, uint64_t c)
{
	char dir[4096], img[4200], err[512];
	size_t npoints = o->at_marks ? h->nmarks : 1, nfail = 0, nstates = 0;
	int rc = 0;

	if (!o->ck.ncmds)
		return crash_bad("check: %s", "--cmd 'CMD {image}' is needed");
	if (o->at_marks && !h->nmarks)
		return crash_bad("check --at-marks: %s", "the recording has "
				 "no mark");
	o->ck.verbose = o->verbose;
	snprintf(dir, sizeof(dir), "%s/tcq-crash.XXXXXX",
		 o->workdir ? o->workdir : getenv("TMPDIR") ? getenv("TMPDIR") :
		 "/tmp");
	if (!mkdtemp(dir))
		return crash_bad("cannot make a directory in %s", dir);
	snprintf(img, sizeof(img), "%s/state.img", dir);
	if (o->json)
		printf("{\"points\": [\n");
	for (size_t p = 0; p < npoints && rc == 0; p++) {
		uint64_t pc = o->at_marks ? h->marks[p].seq : c;
		struct point_report r;
		struct md_point m;

		if (model_point(&m, h, o->model, pc, err, sizeof(err)) < 0 ||
		    check_point(h, o, pc, img, &m, &r, err, sizeof(err)) < 0) {
			rc = crash_bad("%s", err);
			model_point_free(&m);
			break;
		}
		if (o->json)
			report_json(o, &m, &r, p == 0);
		else
			report_text(o, &m, &r);
		nfail += r.nfail;
		nstates += r.states;
		for (size_t i = 0; i < r.nfail; i++)
			free(r.fail[i].drop);
		free(r.fail);
		model_point_free(&m);
	}
	rmdir(dir);
	if (rc)
		return rc;
	if (o->json)
		printf("\n], \"states\": %zu, \"failing\": %zu, \"runs\": %u}\n",
		       nstates, nfail, o->ck.runs);
	else
		printf("%zu states checked at %zu point%s, %zu failing (%u "
		       "checker runs)\n", nstates, npoints,
		       npoints == 1 ? "" : "s", nfail, o->ck.runs);
	return nfail ? 1 : 0;
}
