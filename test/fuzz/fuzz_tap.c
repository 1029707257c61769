/*-------------------------------------------------------------------------
 *
 * fuzz_tap.c
 *	  The engine tests' check() for fuzzers: a failed check is a finding.
 *
 * The engine fuzzer reuses the differential harness of test/engine
 * (compare.c runs a stream through the engine and the brute-force
 * reference and reports a check per property).  Linked instead of tap.c,
 * this check() is silent when a property holds and aborts when it does
 * not, so that libFuzzer saves the input that broke it.
 *
 * test/fuzz/fuzz_tap.c
 *
 *-------------------------------------------------------------------------
 */
#include "tap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void
check(bool ok, const char *name, const char *fmt,...)
{
	va_list		ap;

	if (ok)
		return;
	fprintf(stderr, "check failed: %s", name);
	if (fmt != NULL)
	{
		fprintf(stderr, ": ");
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	fprintf(stderr, "\n");
	abort();
}

int
tap_done(void)
{
	return 0;
}
