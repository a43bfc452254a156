/*
 * The table of tcqctl's commands (tcq/ctl_cmds.h). A form's help is what
 * tcqctl --help prints beside it, as man/tcqctl.8 explains it at length.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "tcq/ctl_cmds.h"

#define CMD(id_, name_, group_, min_, max_, print_, ...)		\
	[id_] = { .name = name_, .group = CTL_GROUP_##group_,		\
		  .min_args = min_, .max_args = max_,			\
		  .print = CTL_PRINT_##print_, .forms = { __VA_ARGS__ } }

const struct ctl_cmd_def ctl_cmd_defs[CTL_NCMDS] = {
	CMD(CTL_CMD_STATS, "stats", WATCH, 0, 1, STATS,
	    { "[LUN]", "per-LUN statistics: commands by task attribute,\n"
		       "in-flight I/O (now, peak, occupancy at submit),\n"
		       "latency percentiles, ORDERED drain time, flushes" }),
	CMD(CTL_CMD_LUNS, "luns", WATCH, 0, 1, LUNS,
	    { "[LUN]", "LUNs and their live settings" }),
	CMD(CTL_CMD_TARGETS, "targets", WATCH, 0, 0, TARGETS,
	    { "", "targets, their LUNs and sessions" }),
	CMD(CTL_CMD_SESSIONS, "sessions", WATCH, 0, 0, SESSIONS,
	    { "", "sessions and their negotiated parameters" }),
	CMD(CTL_CMD_CONFIG, "config", WATCH, 0, 0, TEXT,
	    { "", "the running configuration, as tcqd.conf text" }),
	CMD(CTL_CMD_METRICS, "metrics", WATCH, 0, 0, TEXT,
	    { "", "the statistics as Prometheus text (also\n"
		  "stats --prometheus; tcqd --metrics serves it)" }),
	CMD(CTL_CMD_RESET, "reset", WATCH, 0, 1, OK,
	    { "[LUN]", "zero the statistics" }),

	CMD(CTL_CMD_TARGET, "target", CHANGE, 2, -1, CHANGED,
	    { "add IQN [KEY=VALUE...]", "a new target ([target] keys)" },
	    { "set IQN KEY=VALUE...", "change [target] keys: redirect=ADDR:PORT\n"
				      "[,permanent] (empty: none), alias,\n"
				      "CHAP, limits in place; others\n"
				      "re-create it" },
	    { "remove IQN [--force]", "refused while it has sessions;\n"
				      "--force asks them to log out" }),
	CMD(CTL_CMD_LUN, "lun", CHANGE, 2, -1, CHANGED,
	    { "add TARGET/N KEY=VALUE...",
	      "a new LUN: path=FILE or backend=SPEC,\n"
	      "size=SIZE, create=yes, any [lun] key" },
	    { "remove TARGET/N [--force]",
	      "refused with tasks in flight; --force\n"
	      "aborts them as a LUN reset would" },
	    { "resize TARGET/N SIZE [--shrink]",
	      "a file grows (or shrinks); a block\n"
	      "device or rbd image is re-read" }),
	CMD(CTL_CMD_SET, "set", CHANGE, 2, -1, SET,
	    { "LUN KEY=VALUE...", "change [lun] keys: queue_depth,\n"
				  "barrier, write_cache (a cdrom's path:\n"
				  "its disc) change in place; others\n"
				  "re-create the LUN" }),
	CMD(CTL_CMD_PORTAL, "portal", CHANGE, 2, 2, CHANGED,
	    { "add|remove ADDR:PORT", "listen on one more address, or stop" }),
	CMD(CTL_CMD_ACL, "acl", CHANGE, 3, -1, CHANGED,
	    { "add|remove TARGET NAME|NET", "who may log in (an initiator name\n"
					    "pattern, or ADDR[/BITS])" },
	    { "set TARGET INITIATOR-NAME KEY=VALUE...",
	      "an initiator's own [initiator] keys:\n"
	      "chap_user, chap_secret, luns=N[:M][:ro],..." },
	    { "clear TARGET INITIATOR-NAME",
	      "remove its [initiator] section: it sees\n"
	      "the target's LUNs and CHAP again" }),
	CMD(CTL_CMD_CHAP, "chap", CHANGE, 2, 6, CHANGED,
	    { "set TARGET user=U secret=S [mutual_user=U mutual_secret=S]",
	      "" },
	    { "clear TARGET", "CHAP of a target (TARGET 'discovery':\n"
			      "of discovery sessions)" }),
	CMD(CTL_CMD_SAVE, "save", CHANGE, 0, 1, SAVED,
	    { "[FILE]", "write the running configuration\n"
			"(default: tcqd's file), atomically, 0600" }),
	CMD(CTL_CMD_RELOAD, "reload", CHANGE, 0, 0, CHANGED,
	    { "", "read tcqd's file again and apply the\n"
		  "difference (as SIGHUP does)" }),
	CMD(CTL_CMD_CRASH, "crash", CHANGE, 1, 1, CRASHED,
	    { "LUN", "drop every unsaved write of a 'cache'\n"
		     "backend LUN, as a power cut would" }),
	CMD(CTL_CMD_RECORD, "record", CHANGE, 2, 4, TEXT,
	    { "start LUN FILE [max=SIZE]",
	      "record LUN's writes, flushes and ordered\n"
	      "tasks into FILE for tcq-crash (its content\n"
	      "now goes to FILE.base first)" },
	    { "stop LUN", "end LUN's recording" }),
	CMD(CTL_CMD_MARK, "mark", CHANGE, 2, -1, OK,
	    { "LUN TEXT...", "a named point in LUN's recording\n"
			     "(tcq-crash --upto TEXT)" }),
	CMD(CTL_CMD_ISNS, "isns", CHANGE, 1, 1, CHANGED,
	    { "HOST[:PORT]|off", "register targets and portals with this\n"
				 "iSNS server (port 3205), or stop" }),
};

const struct ctl_cmd_def *ctl_cmd_def_find(const char *name)
{
	for (unsigned i = 0; i < CTL_NCMDS; i++) {
		if (!strcmp(ctl_cmd_defs[i].name, name))
			return &ctl_cmd_defs[i];
	}
	return NULL;
}

/* Whether a form's first word is word, or lists it ("add|remove"). */
static bool form_starts_with(const char *args, const char *word)
{
	const char *p = args, *end = args + strcspn(args, " ");
	size_t wl = strlen(word);

	while (p < end) {
		size_t n = strcspn(p, "| ");

		if (n == wl && !strncmp(p, word, wl))
			return true;
		if (p[n] != '|')
			break;
		p += n + 1;
	}
	return false;
}

const char *ctl_cmd_def_usage(const struct ctl_cmd_def *c, const char *form,
			      char *buf, size_t len)
{
	const struct ctl_cmd_form *only = NULL;
	size_t n = 0;

	for (int i = 0; form && i < CTL_FORMS_MAX && c->forms[i].args; i++) {
		if (form_starts_with(c->forms[i].args, form)) {
			only = &c->forms[i];
			break;
		}
	}
	if (len)
		buf[0] = '\0';
	for (int i = 0; i < CTL_FORMS_MAX && c->forms[i].args; i++) {
		const struct ctl_cmd_form *f = &c->forms[i];
		int w;

		if (only && f != only)
			continue;
		w = snprintf(buf + n, len - n, "%s%s%s%s", n ? " | " : "",
			     c->name, f->args[0] ? " " : "", f->args);
		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
	}
	return buf;
}
