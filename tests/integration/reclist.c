/*
 * reclist FILE: the tasks of a crash-lab recording (tcqctl record start,
 * include/tcq/rec_format.h), one line per record a test needs, for
 * bench-mix.sh to count what the target saw:
 *   arrive TASK OPCODE ATTR FLAGS   (opcode, attribute, REC_A_* in hex)
 *   write TASK KIND LBA BLOCKS      (enum rec_wkind)
 *   done TASK STATUS KEY ASC        (SAM status, sense key, ASC/ASCQ hex)
 * Exit 0, or 1 when the file cannot be read to its end.
 */
#include <inttypes.h>
#include <stdio.h>
#include "tcq/rec_format.h"

int main(int argc, char **argv)
{
	struct rec_reader r;
	struct rec x;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: reclist FILE\n");
		return 2;
	}
	if (rec_open(&r, argv[1])) {
		fprintf(stderr, "reclist: %s\n", r.err);
		return 1;
	}
	while ((rc = rec_next(&r, &x)) > 0) {
		switch (x.type) {
		case REC_ARRIVE:
			printf("arrive %" PRIu64 " %02x %u %02x\n", x.u.arrive.task,
			       x.u.arrive.opcode, x.u.arrive.attr,
			       x.u.arrive.flags);
			break;
		case REC_WRITE:
			printf("write %" PRIu64 " %u %" PRIu64 " %u\n",
			       x.u.write.task, x.u.write.kind, x.u.write.lba,
			       x.u.write.blocks);
			break;
		case REC_DONE:
			printf("done %" PRIu64 " %u %x %04x\n", x.u.done.task,
			       x.u.done.status, x.u.done.key, x.u.done.asc);
			break;
		}
	}
	if (rc < 0)
		fprintf(stderr, "reclist: %s\n", r.err);
	rec_close(&r);
	return rc < 0 ? 1 : 0;
}
