/*
 * ptcase: the named cases of a raw-PDU driver (badpdu, sessions, tasks,
 * tmf, logout, digests). Each case is one behaviour: it logs in on its
 * own, makes its PT_CHECKs and passes when they all hold. The shell
 * scripts run one case per check, by name.
 */
#ifndef TCQ_TESTS_PTCASE_H
#define TCQ_TESTS_PTCASE_H
#include <stddef.h>

struct pt_case {
	const char *name;
	void (*run)(void);
};

/* Seconds one case may take before SIGALRM ends the driver (every
 * receive has its own deadline; this is the last resort). */
extern unsigned pt_case_alarm;

/* The running case cannot exercise its behaviour here: it ends as
 * skipped, with the reason (the shell decides whether a skip fails). */
void pt_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A driver's main after its own options: argv is HOST PORT TARGET-IQN
 * [CASE...], or --list alone. Runs the named cases (all, in table order,
 * when none is named), each ended by one line "PROG: case NAME: passed",
 * "... FAILED (N failures)" or "... SKIPPED: why". A case that checked
 * nothing fails. Returns the exit status: 0 every case passed, 1 one
 * failed, 77 none failed but one skipped, 2 usage (unknown case).
 */
int pt_run_cases(int argc, char **argv, const struct pt_case *cases,
		 size_t ncases, const char *usage);

/* A driver whose only arguments are HOST PORT TARGET-IQN [CASE...]. */
struct pt_driver {
	const char *prog;		/* pt_prog */
	const char *initiator;		/* pt_initiator */
	const struct pt_case *cases;
	size_t ncases;
};

/* Its main: pt_run_cases with a usage line made of the name. */
int pt_main(const struct pt_driver *d, int argc, char **argv);

/* A table entry named after its function. */
#define PT_CASE(f) { #f, f }
#define PT_NCASES(t) (sizeof(t) / sizeof((t)[0]))
#endif
