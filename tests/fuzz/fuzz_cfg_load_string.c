/*
 * Fuzzer: the configuration parser (cfg_load_string and cfg_finish,
 * target/config_file.c and the key table; tcqd.conf(5)). Input: the file
 * text (to its first NUL). Checks: the result agrees with the messages
 * (refused exactly when an error was reported, each message non-empty);
 * an accepted file, written back (cfg_format, as `tcqctl save` does),
 * loads again without errors and writes the same text: nothing is lost
 * or changed on the way. Nothing is built, so no file is opened.
 */
#include <stdlib.h>
#include <string.h>
#include "target/config.h"
#include "tests/fuzz/fuzz.h"

static void check_msgs(const struct cfg *c, int rc)
{
	if ((rc == 0) != (c->nerrors == 0) || c->nerrors > c->nmsgs)
		abort();
	for (int i = 0; i < c->nmsgs; i++)
		if (!c->msgs[i] || !c->msgs[i][0])
			abort();
}

int FUZZ_ENTRY(cfg_load_string)(const uint8_t *data, size_t size)
{
	struct cfg c, c2;
	char *text, *out1, *out2;
	int rc;

	if (size > 65536)
		return 0;
	text = strndup((const char *)data, size);
	if (!text)
		return 0;
	cfg_init(&c);
	rc = cfg_load_string(&c, "fuzz.conf", text);
	check_msgs(&c, rc);
	if (rc == 0) {
		out1 = cfg_format(&c, NULL);
		if (!out1)
			abort();
		cfg_init(&c2);
		rc = cfg_load_string(&c2, "saved.conf", out1);
		check_msgs(&c2, rc);
		if (rc != 0)
			abort();	/* we wrote a file we refuse */
		out2 = cfg_format(&c2, NULL);
		if (!out2 || strcmp(out1, out2))
			abort();	/* something changed on the way */
		free(out2);
		free(out1);
		cfg_free(&c2);
	}
	cfg_free(&c);
	free(text);
	return 0;
}
