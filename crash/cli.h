/* What tcq-crash's commands share (tcq_crash.c, cli_check.c). */
#ifndef TCQ_CRASH_CLI_H
#define TCQ_CRASH_CLI_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "crash/check.h"
#include "crash/model.h"

struct crash_opts {
	enum model_kind model;
	const char *upto;
	size_t max;
	uint64_t seed;
	bool json, at_marks, minimize, verbose;
	const char *workdir;
	struct checker ck;
};

/* "tcq-crash: " and the message on stderr; returns 2. */
int crash_bad(const char *fmt, const char *arg);
const char *crash_model_name(enum model_kind k);
/* The text of the mark at record c, or "". */
const char *crash_mark_at(const struct ch_history *h, uint64_t c);
void crash_point_summary(const struct md_point *m, FILE *f);
/* tcq-crash check: 0 every state passed, 1 one failed, 2 bad input. */
int crash_check(struct ch_history *h, struct crash_opts *o, uint64_t c);
#endif
