/*
 * What tcqctl's files share: tcqctl.c (options, the request, the answer),
 * tcqctl_help.c (--help, from the command table of tcq/ctl_cmds.h) and
 * tcqctl_print.c (the text of each kind of answer).
 */
#ifndef TCQCTL_H
#define TCQCTL_H
#include <stdio.h>
#include <json-c/json.h>
#include "tcq/ctl_cmds.h"

#define TCQCTL_DEFAULT_SOCKET "/run/tcqd.sock"

/* tcqctl --help: the commands of the table by group, then the options. */
void tcqctl_usage(FILE *f);

/* Prints a successful answer of tcqd as text, on stdout. */
typedef void tcqctl_printer(json_object *answer);

/* The printer of a kind of answer (every one has one). */
tcqctl_printer *tcqctl_printer_for(enum ctl_print kind);
#endif
