/*
 * ptcase: named cases for the raw-PDU drivers (see ptcase.h).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/pdutest.h"
#include "tests/integration/ptcase.h"

unsigned pt_case_alarm = 30;
static char skip_why[256];

void pt_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(skip_why, sizeof(skip_why), fmt, ap);
	va_end(ap);
	pt_note("SKIP: %s", skip_why);
}

static const struct pt_case *find(const struct pt_case *cases, size_t n,
				  const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(cases[i].name, name))
			return &cases[i];
	return NULL;
}

/* Runs one case; 0 passed, 1 failed, 77 skipped. */
static int run_one(const struct pt_case *c)
{
	int failures = pt_failures, checks = pt_checks;

	skip_why[0] = 0;
	pt_note("===== case %s", c->name);
	alarm(pt_case_alarm);
	c->run();
	alarm(0);
	failures = pt_failures - failures;
	if (failures) {
		pt_note("case %s: FAILED (%d failure%s)", c->name, failures,
			failures == 1 ? "" : "s");
		return 1;
	}
	if (skip_why[0]) {
		pt_note("case %s: SKIPPED: %s", c->name, skip_why);
		return 77;
	}
	if (pt_checks == checks) {
		pt_failures++;
		pt_note("case %s: FAILED (it checked nothing)", c->name);
		return 1;
	}
	pt_note("case %s: passed", c->name);
	return 0;
}

int pt_run_cases(int argc, char **argv, const struct pt_case *cases,
		 size_t ncases, const char *usage)
{
	bool failed = false, skipped = false;
	int i, rc;

	if (argc == 1 && !strcmp(argv[0], "--list")) {
		for (size_t k = 0; k < ncases; k++)
			printf("%s\n", cases[k].name);
		return 0;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: %s\n", usage);
		return 2;
	}
	for (i = 3; i < argc; i++) {
		if (!find(cases, ncases, argv[i])) {
			fprintf(stderr, "%s: no case '%s' (--list shows them)\n",
				pt_prog, argv[i]);
			return 2;
		}
	}
	pt_host = argv[0];
	pt_port = argv[1];
	pt_target_iqn = argv[2];
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t k = 0; k < (argc > 3 ? (size_t)(argc - 3) : ncases); k++) {
		rc = run_one(argc > 3 ? find(cases, ncases, argv[3 + k]) :
					&cases[k]);
		failed |= rc == 1;
		skipped |= rc == 77;
	}
	return failed ? 1 : skipped ? 77 : 0;
}

int pt_main(const struct pt_driver *d, int argc, char **argv)
{
	char usage[128];

	pt_prog = d->prog;
	pt_initiator = d->initiator;
	snprintf(usage, sizeof(usage),
		 "%s HOST PORT TARGET-IQN [CASE...] | --list", d->prog);
	return pt_run_cases(argc - 1, argv + 1, d->cases, d->ncases, usage);
}
