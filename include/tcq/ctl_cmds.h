/*
 * tcqctl's commands: one table of what each command of tcqd's control
 * socket is called, how many words it takes, its forms as tcqctl --help
 * shows them (the usage tcqd answers a wrong count with) and which of
 * tcqctl's printers makes text of its JSON answer. Pure data: tcqd
 * attaches a handler to each row (target/ctl.c), tcqctl a printer to each
 * kind of answer (ctl/tcqctl_print.c); tests/unit/test_ctl_cmds.c checks
 * that both cover every row and that the counts agree with the forms.
 */
#ifndef TCQ_CTL_CMDS_H
#define TCQ_CTL_CMDS_H
#include <stddef.h>

/* The rows, in the order tcqctl --help (and tcqd's "unknown command")
 * lists them. */
enum ctl_cmd_id {
	CTL_CMD_STATS,
	CTL_CMD_LUNS,
	CTL_CMD_TARGETS,
	CTL_CMD_SESSIONS,
	CTL_CMD_CONFIG,
	CTL_CMD_METRICS,
	CTL_CMD_RESET,
	CTL_CMD_TARGET,
	CTL_CMD_LUN,
	CTL_CMD_SET,
	CTL_CMD_PORTAL,
	CTL_CMD_ACL,
	CTL_CMD_CHAP,
	CTL_CMD_SAVE,
	CTL_CMD_RELOAD,
	CTL_CMD_CRASH,
	CTL_CMD_RECORD,
	CTL_CMD_MARK,
	CTL_CMD_ISNS,
	CTL_NCMDS
};

/* Where tcqctl --help lists a command. */
enum ctl_cmd_group {
	CTL_GROUP_WATCH,	/* reads state (reset only zeroes counters) */
	CTL_GROUP_CHANGE,	/* changes the running daemon */
	CTL_NGROUPS
};

/* What tcqctl prints of a successful answer (without --json). */
enum ctl_print {
	CTL_PRINT_OK,		/* "ok" */
	CTL_PRINT_STATS,	/* per-LUN statistics */
	CTL_PRINT_LUNS,		/* one line per LUN */
	CTL_PRINT_TARGETS,	/* one line per target */
	CTL_PRINT_SESSIONS,	/* two lines per session */
	CTL_PRINT_TEXT,		/* the answer's "text", as it is */
	CTL_PRINT_CHANGED,	/* what a live change did, a part a line */
	CTL_PRINT_SET,		/* the LUN as it is now, then what changed */
	CTL_PRINT_SAVED,	/* the file written */
	CTL_PRINT_CRASHED,	/* the blocks dropped */
	CTL_NPRINTS
};

#define CTL_FORMS_MAX 3

/*
 * One way to call a command: the words after its name, with the
 * placeholders in capitals, [optional] words, and "..." for one or more
 * (what tests/unit/test_ctl_cmds.c counts against min_args and
 * max_args), and what it does as tcqctl --help prints it, its lines
 * split by '\n' ("" when the next form's text says it for both).
 */
struct ctl_cmd_form {
	const char *args;
	const char *help;
};

struct ctl_cmd_def {
	const char *name;
	enum ctl_cmd_group group;
	int min_args, max_args;	/* words after the name; max -1: no bound */
	enum ctl_print print;
	struct ctl_cmd_form forms[CTL_FORMS_MAX];	/* args NULL: no more */
};

extern const struct ctl_cmd_def ctl_cmd_defs[CTL_NCMDS];

/* The row of a command name, or NULL. */
const struct ctl_cmd_def *ctl_cmd_def_find(const char *name);

/* The forms a command's name starts, one after the other as in
 * "target add IQN [KEY=VALUE...] | target remove IQN [--force]", or just
 * the form whose first word is (or lists, as in "add|remove") form when
 * form is not NULL and one is; into buf (truncated to len), which it
 * returns. */
const char *ctl_cmd_def_usage(const struct ctl_cmd_def *c, const char *form,
			      char *buf, size_t len);
#endif
