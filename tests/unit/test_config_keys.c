/* Unit tests for the configuration key table (target/config_keys.c):
 * its rows are whole, and conf/tcqd.conf documents each of them. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "target/config.h"
#include "target/config_keys.h"
#include "tests/unit/harness.h"


static const char *section_name(enum cfg_section sec)
{
	return sec == CFG_GLOBAL ? "global" : sec == CFG_TARGET ? "target"
		: sec == CFG_LUN ? "lun" : "initiator";
}

/* Every row is a whole key: a name, a type that can set it, a range that
 * is one, a line of help; no two rows share section and name, and
 * cfg_key_find finds each, in any case. */
START_TEST(key_table_rows_are_whole_and_unique)
{
	ck_assert_uint_gt(cfg_nkeys, 40);
	for (size_t i = 0; i < cfg_nkeys; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		char upper[64];

		ck_assert_msg(k->name && *k->name, "row %zu has no name", i);
		ck_assert_msg(k->type && k->type->set && k->type->syntax,
			      "%s: no type, setter or syntax", k->name);
		ck_assert_msg(k->help && strlen(k->help) > 10,
			      "%s: no line of help", k->name);
		ck_assert_msg(k->min <= k->max, "%s: range %llu..%llu",
			      k->name, (unsigned long long)k->min,
			      (unsigned long long)k->max);
		for (size_t j = 0; j < i; j++)
			ck_assert_msg(cfg_keys[j].section != k->section ||
				      strcmp(cfg_keys[j].name, k->name),
				      "%s listed twice in [%s]", k->name,
				      section_name(k->section));
		ck_assert_ptr_eq(cfg_key_find(k->section, k->name), k);
		size_t n = strlen(k->name);
		ck_assert_uint_lt(n, sizeof(upper));
		for (size_t c = 0; c <= n; c++)
			upper[c] = (char)(k->name[c] >= 'a' && k->name[c] <= 'z'
					  ? k->name[c] - 32 : k->name[c]);
		ck_assert_ptr_eq(cfg_key_find(k->section, upper), k);
	}
	ck_assert_ptr_null(cfg_key_find(CFG_LUN, "no_such_key"));
	ck_assert_ptr_null(cfg_key_find(CFG_GLOBAL, "queue_depth"));
}
END_TEST

/* conf/tcqd.conf documents every key: each key the table has appears in
 * its section there ("key = value", or commented out ";key = value"),
 * and each key shown there is one the table has. */
START_TEST(key_table_matches_documented_conf)
{
	const char *top = getenv("top_srcdir");
	char path[4096], line[1024];
	bool seen[256] = { false };
	enum cfg_section sec = CFG_GLOBAL;
	unsigned lineno = 0;

	ck_assert_uint_le(cfg_nkeys, 256);
	snprintf(path, sizeof(path), "%s/conf/tcqd.conf", top ? top : "..");
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		char *p = line, key[64];
		size_t n = 0;

		lineno++;
		if (!strncmp(p, "[global]", 8))
			sec = CFG_GLOBAL;
		else if (!strncmp(p, "[target ", 8))
			sec = CFG_TARGET;
		else if (!strncmp(p, "[lun ", 5))
			sec = CFG_LUN;
		else if (!strncmp(p, ";[initiator ", 12))
			sec = CFG_INITIATOR;	/* an example, commented */
		if (*p == ';')
			p++;
		while ((p[n] >= 'a' && p[n] <= 'z') || p[n] == '_' ||
		       (n && p[n] >= '0' && p[n] <= '9'))
			n++;
		if (!n || n >= sizeof(key) || strncmp(p + n, " = ", 3))
			continue;	/* prose, not a key line */
		memcpy(key, p, n);
		key[n] = 0;
		const struct cfg_key *k = cfg_key_find(sec, key);
		ck_assert_msg(k != NULL, "%s:%u: %s is not a key of [%s]", path,
			      lineno, key, section_name(sec));
		seen[k - cfg_keys] = true;
	}
	fclose(f);
	for (size_t i = 0; i < cfg_nkeys; i++)
		ck_assert_msg(seen[i], "[%s] %s is not in conf/tcqd.conf",
			      section_name(cfg_keys[i].section),
			      cfg_keys[i].name);
}
END_TEST

static Suite *config_keys_suite(void)
{
	Suite *s = suite_create("config_keys");
	TCase *tc = tcase_create("table");

	harness_add(tc, key_table_rows_are_whole_and_unique);
	harness_add(tc, key_table_matches_documented_conf);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, config_keys_suite);
}
