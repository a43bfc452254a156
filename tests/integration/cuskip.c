/*
 * cuskip.so: LD_PRELOAD shim for libiscsi's iscsi-test-cu that records
 * every CU_PASS() of a test. In iscsi-test-cu a CU_PASS only ever marks
 * a test (or a part of it) that did not run: most say so with a
 * "[SKIPPED]" line, but some pass silently ("LUN is too big for ...").
 * cu.sh builds this with the system compiler (no sanitizers:
 * it is loaded into an uninstrumented program) and reads the lines it
 * appends to $CUSKIP_LOG:
 *     SUITE.TEST <tab> FILE:LINE <tab> the CU_PASS argument as written
 *     <tab> how many other asserts the test made before (0: it did not
 *     run at all; more: it skipped only its remaining part)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CUnit 2.1's test and suite records begin with their name. */
struct cu_named {
	char *name;
};

typedef int (*assert_fn)(int value, unsigned int line, const char *cond,
			 const char *file, const char *func, int fatal);

extern struct cu_named *CU_get_current_test(void);
extern struct cu_named *CU_get_current_suite(void);

int CU_assertImplementation(int value, unsigned int line, const char *cond,
			    const char *file, const char *func, int fatal)
{
	static assert_fn real;
	static struct cu_named *last;	/* test of the asserts counted */
	static unsigned long asserts;	/* real asserts of that test */
	const char *path = getenv("CUSKIP_LOG");
	struct cu_named *t = CU_get_current_test();

	if (!real)
		real = (assert_fn)dlsym(RTLD_NEXT, "CU_assertImplementation");
	if (t != last) {
		last = t;
		asserts = 0;
	}
	if (value && cond && strncmp(cond, "CU_PASS(", 8) == 0 && path) {
		struct cu_named *s = CU_get_current_suite();
		FILE *f = fopen(path, "a");

		if (f) {
			fprintf(f, "%s.%s\t%s:%u\t%s\t%lu\n",
				s && s->name ? s->name : "?",
				t && t->name ? t->name : "?",
				file ? file : "?", line, cond, asserts);
			fclose(f);
		}
	} else {
		asserts++;
	}
	return real ? real(value, line, cond, file, func, fatal) : value;
}
