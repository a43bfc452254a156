/*
 * When a connection's send is sliced (target/conn_tx.c conn_tx_slices):
 * one slice per reactor pass only where the next command can reach a
 * device that takes time and lacks work, or where the initiator has so
 * few commands that each waits on the last one's status; never for a
 * device that answers at once, nor for a busy session whose reads the
 * read-ahead serves (no task I/O at the device).
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include "target/conn_priv.h"
#include "tests/unit/harness.h"

#define SLOW 200000	/* mean service time, ns: a disk */
#define FAST 0		/* null, ram: completed in the submitting pass */

START_TEST(a_device_that_answers_at_once_never_slices)
{
	ck_assert(!conn_tx_slices(1, 0, 0, FAST));
	ck_assert(!conn_tx_slices(1, 1, 1, FAST));
	ck_assert(!conn_tx_slices(8, 2, 1, 49999));
}
END_TEST

START_TEST(few_commands_slice)
{
	/* the initiator's next command waits on this one's status */
	ck_assert(conn_tx_slices(1, 0, 0, SLOW));
	ck_assert(conn_tx_slices(2, 4, 0, SLOW));
	ck_assert(conn_tx_slices(2, 64, 0, SLOW));
}
END_TEST

START_TEST(reads_from_read_ahead_send_whole)
{
	/* eight commands, the device busy only with read-ahead fills */
	ck_assert(!conn_tx_slices(8, 4, 0, SLOW));
	ck_assert(!conn_tx_slices(3, 0, 0, SLOW));
}
END_TEST

START_TEST(a_command_at_a_device_short_of_work_slices)
{
	ck_assert(conn_tx_slices(8, 3, 2, SLOW));
	ck_assert(conn_tx_slices(32, 7, 7, SLOW));
}
END_TEST

START_TEST(a_busy_device_sends_whole)
{
	ck_assert(!conn_tx_slices(8, 8, 8, SLOW));
	ck_assert(!conn_tx_slices(32, 16, 4, SLOW));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tx_slices");
	TCase *tc = tcase_create("rule");

	harness_add(tc, a_device_that_answers_at_once_never_slices);
	harness_add(tc, few_commands_slice);
	harness_add(tc, reads_from_read_ahead_send_whole);
	harness_add(tc, a_command_at_a_device_short_of_work_slices);
	harness_add(tc, a_busy_device_sends_whole);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, suite);
}
