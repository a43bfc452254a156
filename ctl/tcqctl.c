/*
 * tcqctl: the control CLI of tcqd. Sends one request line over tcqd's unix
 * control socket (target/ctl.c) through the common client
 * (tcq/ctl_client.h), reads the JSON answer and prints it as text with
 * the printer the command table names (tcqctl_print.c), or as JSON with
 * --json. Exit status: 0 success, 1 an error from tcqd or the socket,
 * 2 bad usage.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "tcq/ctl_client.h"
#include "tcq/ctl_cmds.h"
#include "tcq/ctl_words.h"
#include "ctl/tcqctl.h"

#define TIMEOUT_S 30
#define MAX_WORDS 32

struct opts {
	const char *sock;
	bool json, prom;
	const char *words[MAX_WORDS];	/* the command and its arguments */
	int nwords;
};

static void die_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "tcqctl: ");
	fprintf(stderr, msg, arg);
	fprintf(stderr, "\nTry 'tcqctl --help'.\n");
	exit(2);
}

static void add_word(struct opts *o, const char *w)
{
	if (o->nwords == MAX_WORDS)
		die_usage("too many arguments%s", "");
	o->words[o->nwords++] = w;
}

/* The options, and the words of the request; exits on --help or bad
 * usage. */
static void parse_args(int argc, char **argv, struct opts *o)
{
	o->sock = getenv("TCQ_CTL");
	if (!o->sock || !*o->sock)
		o->sock = TCQCTL_DEFAULT_SOCKET;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-s") || !strcmp(a, "--socket") ||
		    !strcmp(a, "--ctl")) {	/* tcqd's own name for it */
			if (++i == argc)
				die_usage("%s needs a path", a);
			o->sock = argv[i];
		} else if (!strncmp(a, "--socket=", 9)) {
			o->sock = a + 9;
		} else if (!strncmp(a, "--ctl=", 6)) {
			o->sock = a + 6;
		} else if (!strcmp(a, "--force") || !strcmp(a, "--shrink")) {
			add_word(o, a);	/* options of a change: tcqd reads them */
		} else if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			o->json = true;
		} else if (!strcmp(a, "--prometheus")) {
			o->prom = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			tcqctl_usage(stdout);
			exit(0);
		} else if (a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9')) {
			die_usage("unknown option '%s'", a);
		} else {
			add_word(o, a);
		}
	}
	if (o->nwords == 0)
		die_usage("no command given%s", "");
	/* stats --prometheus is the metrics command (all LUNs, text). */
	if (o->prom && (strcmp(o->words[0], "stats") || o->nwords > 1))
		die_usage("--prometheus goes with stats (all LUNs)%s", "");
	if (o->prom)
		o->words[0] = ctl_cmd_defs[CTL_CMD_METRICS].name;
}

/* The request is one line of space-separated words, each
 * percent-encoded (tcq/ctl_words.h: a value may hold spaces). */
static void build_request(const struct opts *o, char *line, size_t size)
{
	size_t ll = 0;

	for (int i = 0; i < o->nwords; i++) {
		size_t n;

		if (!o->words[i][0])
			die_usage("an argument may not be empty%s", "");
		if (i && ll + 1 < size)
			line[ll++] = ' ';
		n = ctl_word_encode(o->words[i], line + ll, size - ll - 1);
		if (n == (size_t)-1 || ll + n + 2 > size)
			die_usage("request too long%s", "");
		ll += n;
	}
	line[ll++] = '\n';
	line[ll] = '\0';
}

static const char *answer_error(json_object *r)
{
	json_object *e = NULL;

	if (json_object_object_get_ex(r, "error", &e) && e)
		return json_object_get_string(e);
	return "request failed";
}

/* Prints tcqd's answer to the command named first; the exit status. */
static int print_answer(const struct opts *o, const char *txt)
{
	json_object *r = json_tokener_parse(txt), *ok = NULL;
	const struct ctl_cmd_def *c;

	if (!r || !json_object_is_type(r, json_type_object)) {
		fprintf(stderr, "tcqctl: malformed answer from tcqd: %.200s\n",
			txt);
		json_object_put(r);
		return 1;
	}
	if (!json_object_object_get_ex(r, "ok", &ok) ||
	    !json_object_get_boolean(ok)) {
		fprintf(stderr, "tcqctl: %s\n", answer_error(r));
		if (o->json)
			printf("%s\n", json_object_to_json_string_ext(
				       r, JSON_C_TO_STRING_PRETTY));
		json_object_put(r);
		return 1;
	}
	if (o->json) {
		printf("%s\n", json_object_to_json_string_ext(
			       r, JSON_C_TO_STRING_PRETTY |
			       JSON_C_TO_STRING_SPACED));
	} else {
		/* A command this tcqctl does not know: what changed, or ok. */
		c = ctl_cmd_def_find(o->words[0]);
		tcqctl_printer_for(c ? c->print : CTL_PRINT_CHANGED)(r);
	}
	json_object_put(r);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	char line[4096], err[512], *txt;
	int rc;

	parse_args(argc, argv, &o);
	build_request(&o, line, sizeof(line));
	txt = ctl_client_request(o.sock, line, TIMEOUT_S, err, sizeof(err));
	if (!txt) {
		fprintf(stderr, "tcqctl: %s%s\n", err, errno == ENOENT ?
			" (is tcqd running with --ctl? try -s PATH)" : "");
		return 1;
	}
	rc = print_answer(&o, txt);
	free(txt);
	return rc;
}
