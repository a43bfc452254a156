/*
 * pttext: a Text Request and its whole answer over a pdutest session,
 * however many Text Responses the target splits it into (RFC 7143 11.10,
 * 11.11: C=1 and a Target Transfer Tag on each but the last, answered
 * by an empty request that echoes it). For sessions (continuation) and
 * sendtargets (the addresses a discovery session is given).
 */
#ifndef TCQ_TESTS_PTTEXT_H
#define TCQ_TESTS_PTTEXT_H
#include <stddef.h>
#include <stdint.h>

#include "tests/integration/pdutest.h"

struct pt_text {
	uint8_t *data;		/* the assembled key=value text, NUL-ended */
	size_t len;
	/* How it came: responses, with C=1, malformed (C or TTT wrong for
	 * their place), longer than max_len, with another ITT. */
	unsigned nrsp, ncont, bad_mid, too_long, bad_itt;
};

/* Sends req (with its NUL) and gathers the answer; responses longer than
 * max_len count as too_long. 0 when the last response came (t->data to
 * free), -1 otherwise (a FAIL check says why). */
int pt_text(struct pt_sess *s, const char *req, uint32_t max_len,
	    struct pt_text *t);
#endif
