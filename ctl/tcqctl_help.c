/*
 * tcqctl --help (tcqctl.h): the commands and their forms come from the
 * command table (tcq/ctl_cmds.h), a group at a time, each form's help in
 * the group's column; the words around them are tcqctl's own.
 */
#include <stdio.h>
#include <string.h>
#include "ctl/tcqctl.h"

static const struct {
	const char *heading;
	int column;	/* where the help of a form starts */
} groups[CTL_NGROUPS] = {
	[CTL_GROUP_WATCH] = { "watching:\n", 27 },
	[CTL_GROUP_CHANGE] = {
		"live changes (sessions stay up; each is whole or not at all; "
		"the keys\nare those of tcqd.conf, see tcqd.conf(5)):\n", 37 },
};

/* "  NAME ARGS", then the help's lines in the column (the first one on
 * the same line, at least a space away). */
static void print_form(FILE *f, const char *name,
		       const struct ctl_cmd_form *form, int column)
{
	const char *h = form->help;
	int n = fprintf(f, "  %s%s%s", name, form->args[0] ? " " : "",
			form->args);

	if (!*h) {
		fputc('\n', f);
		return;
	}
	fprintf(f, "%*s", n < column ? column - n : 1, "");
	for (;;) {
		size_t len = strcspn(h, "\n");

		fprintf(f, "%.*s\n", (int)len, h);
		if (!h[len])
			break;
		h += len + 1;
		fprintf(f, "%*s", column, "");
	}
}

static void print_group(FILE *f, enum ctl_cmd_group g)
{
	fputs(groups[g].heading, f);
	for (unsigned i = 0; i < CTL_NCMDS; i++) {
		const struct ctl_cmd_def *c = &ctl_cmd_defs[i];

		if (c->group != g)
			continue;
		for (int j = 0; j < CTL_FORMS_MAX && c->forms[j].args; j++)
			print_form(f, c->name, &c->forms[j], groups[g].column);
	}
}

void tcqctl_usage(FILE *f)
{
	fputs("usage: tcqctl [-s SOCKET] [--json] COMMAND [ARGS]\n\n", f);
	print_group(f, CTL_GROUP_WATCH);
	fputc('\n', f);
	print_group(f, CTL_GROUP_CHANGE);
	fputs(
"\n"
"LUN is TARGET/N, or just N when tcqd serves one target. Adding or\n"
"removing a LUN gives the target's initiators REPORTED LUNS DATA HAS\n"
"CHANGED; a resize gives CAPACITY DATA HAS CHANGED.\n"
"\n"
"options:\n"
"  -s, --socket PATH, --ctl PATH\n"
"                           tcqd's control socket (default $TCQ_CTL, else\n"
"                           " TCQCTL_DEFAULT_SOCKET "; tcqd --ctl or ctl in [global])\n"
"  -j, --json               print tcqd's JSON answer\n"
"      --prometheus         with stats: Prometheus text, as metrics\n"
"  -h, --help               show this help\n", f);
}
