/*
 * Fuzzer: backend option strings (bdev_opts_parse and the value parsers,
 * backend/bdev_opts.c and bdev_opt_value.c), for every backend's option
 * table. Input: byte 0 picks the backend, the rest is the spec after
 * "NAME:" (to its first NUL). An accepted spec, written back
 * (bdev_opts_format), parses to the same values and the same text again:
 * the contract `tcqctl lun set` and config saving rely on. A refused one
 * has a message and leaves the values untouched.
 */
#include <stdlib.h>
#include <string.h>
#include "backend/bdev.h"
#include "backend/bdev_opts.h"
#include "tests/fuzz/fuzz.h"

static const char *const backends[] = { "aio", "null", "ram", "delay",
	"fault", "cache", "rbd", "disk", "crash" };

#define NBACKENDS (sizeof(backends) / sizeof(backends[0]))

int FUZZ_ENTRY(bdev_opts_parse)(const uint8_t *data, size_t size)
{
	const struct bdev_opts_def *def;
	char err[512], out1[8192], out2[8192], *spec;
	const char *base = NULL, *base2 = NULL;
	void *vals, *vals2;
	int n1, n2;

	if (size < 1 || size > 4096)
		return 0;
	def = bdev_backend_opts(backends[data[0] % NBACKENDS]);
	if (!def)
		abort();
	spec = strndup((const char *)data + 1, size - 1);
	vals = malloc(def->size);
	vals2 = malloc(def->size);
	if (!spec || !vals || !vals2)
		abort();
	memcpy(vals, def->defaults, def->size);
	err[0] = 0;
	if (bdev_opts_parse(def, spec, vals, &base, err, sizeof(err)) < 0) {
		if (!err[0] || memcmp(vals, def->defaults, def->size))
			abort();	/* no message, or half applied */
		goto out;
	}
	n1 = bdev_opts_format(def, vals, base ? base : "", out1, sizeof(out1));
	if (n1 < 0 || (size_t)n1 >= sizeof(out1))
		goto out;	/* a value with no text: nothing to compare */
	memcpy(vals2, def->defaults, def->size);
	if (bdev_opts_parse(def, out1, vals2, &base2, err, sizeof(err)) < 0)
		abort();	/* we wrote a spec we refuse */
	n2 = bdev_opts_format(def, vals2, base2 ? base2 : "", out2,
			      sizeof(out2));
	if (n2 != n1 || strcmp(out1, out2))
		abort();	/* the values changed on the way */
out:
	free(spec);
	free(vals);
	free(vals2);
	return 0;
}
