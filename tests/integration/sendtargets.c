/*
 * sendtargets: a raw discovery session (pdutest.c) to HOST PORT that asks
 * SendTargets=All and prints the answer, one key=value a line, so that a
 * test sees exactly what the target sent (portals.sh: the TargetAddress
 * of each portal), whatever an initiator would make of it.
 *
 *   sendtargets HOST PORT [INITIATOR]
 *
 * Exit status: 0 when the whole answer came, 1 when the login or the
 * exchange failed (said on stderr), 2 on usage errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/pdutest.h"
#include "tests/integration/pttext.h"

int main(int argc, char **argv)
{
	struct pt_login_opts o = { .discovery = true };
	struct pt_text t;
	struct pt_sess s;
	size_t off;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: sendtargets HOST PORT [INITIATOR]\n");
		return 2;
	}
	pt_prog = "sendtargets";
	pt_host = argv[1];
	pt_port = argv[2];
	if (argc == 4)
		o.initiator = argv[3];
	/* Diagnostics on stderr: stdout is the answer. */
	if (pt_login(&s, &o) < 0) {
		fprintf(stderr, "sendtargets: discovery login failed (status 0x%04x)\n",
			(unsigned)s.login_status);
		return 1;
	}
	if (pt_text(&s, "SendTargets=All", PT_MAX_RX_SEGMENT, &t) < 0) {
		fprintf(stderr, "sendtargets: no complete SendTargets answer\n");
		pt_close(&s);
		return 1;
	}
	for (off = 0; off < t.len; off += strlen((char *)t.data + off) + 1)
		if (t.data[off])
			printf("%s\n", (char *)t.data + off);
	free(t.data);
	pt_logout(&s);
	return pt_failures ? 1 : 0;
}
