/*
 * Prints the key table of tcqd.conf (target/config_keys.c), one key a
 * line, tab-separated: section, name, syntax, min, max (0 0: no range),
 * repeatable (0/1), live (live, recreate or restart) and the help line.
 * tests/man.sh compares it with man/tcqd.conf.5.
 *
 * With --disk: the keys of the disk backend (the device models,
 * backend/disk.c), one name and its help line a line.
 */
#include <stdio.h>
#include <string.h>
#include "backend/bdev_priv.h"
#include "target/config_keys.h"

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--disk")) {
		for (size_t i = 0; i < bdev_disk_opts.nopts; i++)
			printf("%s\t%s\n", bdev_disk_opts.opts[i].key,
			       bdev_disk_opts.opts[i].help);
		return 0;
	}
	static const char *const sections[] = { "global", "target", "lun",
						"initiator" };
	static const char *const live[] = {
		[CFG_LIVE] = "live", [CFG_RECREATE] = "recreate",
		[CFG_RESTART] = "restart",
	};

	for (size_t i = 0; i < cfg_nkeys; i++) {
		const struct cfg_key *k = &cfg_keys[i];

		printf("%s\t%s\t%s\t%llu\t%llu\t%d\t%s\t%s\n",
		       sections[k->section], k->name, k->type->syntax,
		       (unsigned long long)k->min, (unsigned long long)k->max,
		       k->type->repeatable, live[k->live], k->help);
	}
	return 0;
}
