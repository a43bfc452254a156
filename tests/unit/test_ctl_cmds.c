/*
 * tcqctl's command table (tcq/ctl_cmds.h) against its two readers, so
 * that a command cannot be added in one place only: every row has its
 * handler in tcqd (ctl_handlers, target/ctl.c) and its kind of answer a
 * printer in tcqctl (ctl/tcqctl_print.c); the words of each form agree
 * with the row's argument counts; tcqctl --help shows every form; the
 * usage tcqd answers is made of the forms.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/ctl_cmds.h"
#include "tcq/ctl_words.h"
#include "ctl/tcqctl.h"
#include "target/ctl_priv.h"
#include "tests/unit/harness.h"

#define FOR_EACH_FORM(c, f)						\
	for (const struct ctl_cmd_form *f = (c)->forms;			\
	     f < (c)->forms + CTL_FORMS_MAX && f->args; f++)

static int nforms(const struct ctl_cmd_def *c)
{
	int n = 0;

	FOR_EACH_FORM(c, f)
		n++;
	return n;
}

START_TEST(rows_are_whole)
{
	for (unsigned i = 0; i < CTL_NCMDS; i++) {
		const struct ctl_cmd_def *c = &ctl_cmd_defs[i];

		ck_assert_msg(c->name && c->name[0], "row %u has no name", i);
		ck_assert_msg(strspn(c->name, "abcdefghijklmnopqrstuvwxyz") ==
			      strlen(c->name), "'%s': not a lowercase word",
			      c->name);
		for (unsigned j = 0; j < i; j++)
			ck_assert_msg(strcmp(ctl_cmd_defs[j].name, c->name),
				      "'%s' twice", c->name);
		ck_assert_ptr_eq(ctl_cmd_def_find(c->name), c);
		ck_assert_msg((unsigned)c->group < CTL_NGROUPS,
			      "%s: no group", c->name);
		ck_assert_msg((unsigned)c->print < CTL_NPRINTS,
			      "%s: no kind of answer", c->name);
		ck_assert_msg(nforms(c) > 0, "%s: no form", c->name);
		FOR_EACH_FORM(c, f) {
			ck_assert_msg(f->help, "%s %s: no help", c->name,
				      f->args);
			/* An empty help leans on the next form's. */
			ck_assert_msg(f->help[0] || (f + 1 < c->forms +
				      CTL_FORMS_MAX && f[1].args && f[1].help &&
				      f[1].help[0]), "%s %s: no help", c->name,
				      f->args);
		}
	}
	ck_assert_ptr_null(ctl_cmd_def_find("frobnicate"));
	ck_assert_ptr_null(ctl_cmd_def_find(""));
}
END_TEST

/* Each row once, and no handler standing in for two commands. */
START_TEST(every_row_has_a_handler_in_tcqd)
{
	for (unsigned i = 0; i < CTL_NCMDS; i++) {
		ck_assert_msg(ctl_handlers[i], "tcqd has no handler for '%s'",
			      ctl_cmd_defs[i].name);
		for (unsigned j = 0; j < i; j++)
			ck_assert_msg(ctl_handlers[j] != ctl_handlers[i],
				      "'%s' and '%s' share a handler",
				      ctl_cmd_defs[j].name,
				      ctl_cmd_defs[i].name);
	}
}
END_TEST

START_TEST(every_answer_has_a_printer_in_tcqctl)
{
	for (unsigned i = 0; i < CTL_NCMDS; i++)
		ck_assert_msg(tcqctl_printer_for(ctl_cmd_defs[i].print),
			      "tcqctl has no printer for '%s'",
			      ctl_cmd_defs[i].name);
	for (unsigned k = 0; k < CTL_NPRINTS; k++)
		ck_assert_msg(tcqctl_printer_for((enum ctl_print)k),
			      "kind of answer %u has no printer", k);
	ck_assert_ptr_null(tcqctl_printer_for(CTL_NPRINTS));
}
END_TEST

/* The words a form takes: each word outside brackets is needed, each one
 * inside may come, and "..." means any number more. */
static void form_counts(const char *cmd, const char *args, int *min,
			int *max)
{
	bool unbounded = false;
	int depth = 0;

	*min = *max = 0;
	for (const char *p = args; *p;) {
		size_t n = strcspn(p, " "), end = n;
		bool optional = depth > 0 || p[0] == '[';

		ck_assert_msg(n > 0, "%s %s: two spaces", cmd, args);
		for (size_t i = 0; i < n; i++)
			depth += p[i] == '[' ? 1 : p[i] == ']' ? -1 : 0;
		ck_assert_msg(depth >= 0, "%s %s: ] before [", cmd, args);
		while (end > 0 && p[end - 1] == ']')
			end--;
		if (end >= 3 && !strncmp(p + end - 3, "...", 3))
			unbounded = true;
		*min += !optional;
		*max += 1;
		p += n;
		p += *p == ' ';
	}
	ck_assert_msg(depth == 0, "%s %s: unclosed [", cmd, args);
	if (unbounded)
		*max = -1;
}

START_TEST(form_counting_known_answers)
{
	int min, max;

	form_counts("x", "", &min, &max);
	ck_assert(min == 0 && max == 0);
	form_counts("x", "LUN KEY=VALUE...", &min, &max);
	ck_assert(min == 2 && max == -1);
	form_counts("x", "add IQN [KEY=VALUE...]", &min, &max);
	ck_assert(min == 2 && max == -1);
	form_counts("x", "set T u=U [a=A b=B] [--force]", &min, &max);
	ck_assert(min == 3 && max == 6);
	form_counts("x", "add|remove T NAME|ADDR[/BITS]", &min, &max);
	ck_assert(min == 3 && max == 3);
}
END_TEST

START_TEST(argument_counts_agree_with_the_forms)
{
	for (unsigned i = 0; i < CTL_NCMDS; i++) {
		const struct ctl_cmd_def *c = &ctl_cmd_defs[i];
		int min = -1, max = 0, fmin, fmax;

		FOR_EACH_FORM(c, f) {
			form_counts(c->name, f->args, &fmin, &fmax);
			if (min < 0 || fmin < min)
				min = fmin;
			if (max >= 0 && (fmax < 0 || fmax > max))
				max = fmax;
		}
		ck_assert_msg(c->min_args == min, "%s: min_args %d, its forms "
			      "need %d words", c->name, c->min_args, min);
		ck_assert_msg(c->max_args == max, "%s: max_args %d, its forms "
			      "take %d words (-1: any number)", c->name,
			      c->max_args, max);
	}
}
END_TEST

/* A command of several forms names the form in its first word, so tcqd
 * can answer the usage of that form alone. */
START_TEST(forms_of_one_command_start_with_their_own_word)
{
	for (unsigned i = 0; i < CTL_NCMDS; i++) {
		const struct ctl_cmd_def *c = &ctl_cmd_defs[i];
		char buf[512], first[64], want[512];

		if (nforms(c) < 2)
			continue;
		FOR_EACH_FORM(c, f) {
			size_t n = strcspn(f->args, " |");

			ck_assert_msg(n > 0 && n < sizeof(first) &&
				      strspn(f->args, "abcdefghijklmnopqrstuvwxyz")
				      == n, "%s %s: no subcommand first",
				      c->name, f->args);
			memcpy(first, f->args, n);
			first[n] = '\0';
			snprintf(want, sizeof(want), "%s %s", c->name, f->args);
			ctl_cmd_def_usage(c, first, buf, sizeof(buf));
			ck_assert_str_eq(buf, want);
		}
	}
}
END_TEST

START_TEST(usage_known_answers)
{
	char buf[512];

	ck_assert_str_eq(ctl_cmd_def_usage(&ctl_cmd_defs[CTL_CMD_TARGET], NULL,
					   buf, sizeof(buf)),
			 "target add IQN [KEY=VALUE...] | "
			 "target set IQN KEY=VALUE... | "
			 "target remove IQN [--force]");
	ck_assert_str_eq(ctl_cmd_def_usage(&ctl_cmd_defs[CTL_CMD_LUN], "resize",
					   buf, sizeof(buf)),
			 "lun resize TARGET/N SIZE [--shrink]");
	/* "remove" is listed in add|remove; an unknown form is all forms. */
	ck_assert_str_eq(ctl_cmd_def_usage(&ctl_cmd_defs[CTL_CMD_PORTAL],
					   "remove", buf, sizeof(buf)),
			 "portal add|remove ADDR:PORT");
	ck_assert_str_eq(ctl_cmd_def_usage(&ctl_cmd_defs[CTL_CMD_TARGET],
					   "rem", buf, sizeof(buf)),
			 "target add IQN [KEY=VALUE...] | "
			 "target set IQN KEY=VALUE... | "
			 "target remove IQN [--force]");
	ck_assert_str_eq(ctl_cmd_def_usage(&ctl_cmd_defs[CTL_CMD_SESSIONS],
					   NULL, buf, sizeof(buf)), "sessions");
	/* What tcqd answers a wrong count with. */
	ck_assert_str_eq(ctl_usage(CTL_CMD_SET, NULL, buf, sizeof(buf)),
			 "usage: set LUN KEY=VALUE...");
	/* A short buffer ends the text, never overruns. */
	memset(buf, 'x', sizeof(buf));
	ctl_cmd_def_usage(&ctl_cmd_defs[CTL_CMD_LUN], NULL, buf, 20);
	ck_assert_uint_lt(strlen(buf), 20);
	ck_assert_int_eq(buf[21], 'x');
}
END_TEST

/* tcqctl --help has a line "  NAME ARGS" for every form, then its help
 * (or nothing) after at least one space. */
START_TEST(help_shows_every_form)
{
	char *text = NULL, line[256];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	tcqctl_usage(f);
	fclose(f);
	for (unsigned i = 0; i < CTL_NCMDS; i++) {
		const struct ctl_cmd_def *c = &ctl_cmd_defs[i];

		FOR_EACH_FORM(c, fm) {
			size_t hl = strcspn(fm->help, "\n");
			const char *at;

			snprintf(line, sizeof(line), "\n  %s%s%s", c->name,
				 fm->args[0] ? " " : "", fm->args);
			at = strstr(text, line);
			ck_assert_msg(at, "--help lacks '%s'", line + 1);
			at += strlen(line);
			if (!hl) {
				ck_assert_int_eq(*at, '\n');
				continue;
			}
			ck_assert_int_eq(*at, ' ');
			at += strspn(at, " ");
			ck_assert_msg(!strncmp(at, fm->help, hl) && at[hl] == '\n',
				      "'%s': help not beside it", line + 1);
		}
	}
	free(text);
}
END_TEST

/* A request's words (tcq/ctl_words.h): a value with spaces travels as
 * RFC 3986 percent-encoding, and what tcqd decodes is what was typed. */
START_TEST(words_percent_encoding_known_answers)
{
	char out[64], w[64];

	ck_assert_uint_eq(ctl_word_encode("product=Other Disk", out,
					  sizeof(out)), 20);
	ck_assert_str_eq(out, "product=Other%20Disk");
	ctl_word_encode("a%b\tc\r\n", out, sizeof(out));
	ck_assert_str_eq(out, "a%25b%09c%0D%0A");
	ctl_word_encode("plain=word", out, sizeof(out));
	ck_assert_str_eq(out, "plain=word");
	/* too small: refused, not cut */
	ck_assert_uint_eq(ctl_word_encode("a b", out, 4), (size_t)-1);
	ck_assert_uint_eq(ctl_word_encode("abc", out, 4), 3);

	strcpy(w, "product=Other%20Disk");
	ctl_word_decode(w);
	ck_assert_str_eq(w, "product=Other Disk");
	strcpy(w, "%41%2a%2A");
	ctl_word_decode(w);
	ck_assert_str_eq(w, "A**");
	/* a '%' without two hex digits is itself */
	strcpy(w, "100% %zz %4");
	ctl_word_decode(w);
	ck_assert_str_eq(w, "100% %zz %4");
	/* nor is %00: decoded, it would cut "path=/x%00.img" to
	 * "path=/x" (tests/fuzz/regress/ctl_request/percent-00-cuts-word) */
	strcpy(w, "path=/x%00.img");
	ctl_word_decode(w);
	ck_assert_str_eq(w, "path=/x%00.img");
}
END_TEST

START_TEST(words_round_trip_every_byte)
{
	char w[256], enc[3 * 256 + 1];

	for (int i = 1; i < 256; i++)
		w[i - 1] = (char)i;
	w[255] = 0;
	ck_assert_uint_ne(ctl_word_encode(w, enc, sizeof(enc)), (size_t)-1);
	ck_assert_ptr_null(strpbrk(enc, " \t\r\n"));
	ctl_word_decode(enc);
	ck_assert_mem_eq(enc, w, 256);
}
END_TEST

static Suite *ctl_cmds_suite(void)
{
	Suite *s = suite_create("ctl_cmds");
	TCase *tc = tcase_create("table");

	harness_add(tc, rows_are_whole);
	harness_add(tc, every_row_has_a_handler_in_tcqd);
	harness_add(tc, every_answer_has_a_printer_in_tcqctl);
	harness_add(tc, form_counting_known_answers);
	harness_add(tc, argument_counts_agree_with_the_forms);
	harness_add(tc, forms_of_one_command_start_with_their_own_word);
	harness_add(tc, usage_known_answers);
	harness_add(tc, help_shows_every_form);
	harness_add(tc, words_percent_encoding_known_answers);
	harness_add(tc, words_round_trip_every_byte);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, ctl_cmds_suite);
}
