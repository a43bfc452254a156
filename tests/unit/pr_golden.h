/*
 * What the golden-encoding tests of reservations share: one known state
 * (every test writes its own literal bytes for it, by hand, from the
 * format it checks), a byte comparison that names the first byte that
 * differs, which a plain memcmp would not, and the suite runner.
 */
#ifndef TCQ_TEST_PR_GOLDEN_H
#define TCQ_TEST_PR_GOLDEN_H
#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "scsi/pr.h"
#include "scsi/pr_priv.h"

#define KNOWN_PORT_A "iqn.2026-11.org.tcq:a,i,0x230000000001" /* 38 bytes */
#define KNOWN_PORT_B "iqn.2026-11.org.tcq:b"		      /* 21 bytes */
#define KNOWN_GENERATION 0x01020304u
#define KNOWN_KEY_A 0x0123456789abcdefull
#define KNOWN_KEY_B 0xfedcba9876543210ull

/* A registered with ALL_TG_PT, B registered and holding a Write
 * Exclusive - Registrants Only reservation, APTPL on; no RESERVE(6/10). */
static inline void known_state(struct pr_state *s)
{
	memset(s, 0, sizeof(*s));
	s->generation = KNOWN_GENERATION;
	s->nregs = 2;
	s->regs[0].key = KNOWN_KEY_A;
	strcpy(s->regs[0].port, KNOWN_PORT_A);
	s->regs[0].all_tg_pt = true;
	s->regs[1].key = KNOWN_KEY_B;
	strcpy(s->regs[1].port, KNOWN_PORT_B);
	s->regs[1].holder = true;
	s->resv = true;
	s->type = PR_TYPE_WE_RO;
	s->aptpl = true;
}

/* Every field of the known state but the RESERVE(6/10) ones. */
static inline void expect_known_state(const struct pr_state *s)
{
	ck_assert_uint_eq(s->generation, KNOWN_GENERATION);
	ck_assert_uint_eq(s->nregs, 2);
	ck_assert_uint_eq(s->regs[0].key, KNOWN_KEY_A);
	ck_assert_str_eq(s->regs[0].port, KNOWN_PORT_A);
	ck_assert(s->regs[0].all_tg_pt);
	ck_assert(!s->regs[0].holder);
	ck_assert_uint_eq(s->regs[1].key, KNOWN_KEY_B);
	ck_assert_str_eq(s->regs[1].port, KNOWN_PORT_B);
	ck_assert(!s->regs[1].all_tg_pt);
	ck_assert(s->regs[1].holder);
	ck_assert(s->resv);
	ck_assert_uint_eq(s->type, PR_TYPE_WE_RO);
	ck_assert(s->aptpl);
}

/* lit is a string literal: its length is sizeof(lit) - 1 (no NUL). */
#define EXPECT_BYTES(got, got_len, lit) \
	expect_bytes((got), (got_len), (lit), sizeof(lit) - 1)

static inline void expect_bytes(const uint8_t *got, size_t got_len,
				const char *want, size_t want_len)
{
	for (size_t i = 0; i < got_len && i < want_len; i++)
		ck_assert_msg(got[i] == (uint8_t)want[i],
			      "byte %zu is 0x%02x, expected 0x%02x", i, got[i],
			      (uint8_t)want[i]);
	ck_assert_msg(got_len == want_len, "%zu bytes, expected %zu", got_len,
		      want_len);
}

#endif
