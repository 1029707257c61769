/*-------------------------------------------------------------------------
 *
 * tap.h
 *	  Reporting for the engine's test programs, in TAP.
 *
 * Every test program reports each check as one TAP line, "ok N - name" or
 * "not ok N - name: detail", may print information on lines starting with
 * "#", and ends with the plan "1..N" (the count is known only at the end)
 * and a comment "# N passed, N failed".  tap_done() returns the program's
 * exit status: nonzero if any check failed.  run-tests.sh runs several
 * programs and adds their checks up; prove can run each alone.
 *
 * Needs nothing from the engine, so that the planner's tests link without
 * it.
 *
 * test/engine/tap.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TAP_H
#define TAP_H

#include <stdbool.h>

/* Report one check; fmt (may be NULL) describes a failure. */
extern void check(bool ok, const char *name, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/* Print the plan and the totals; returns the exit status. */
extern int	tap_done(void);

#endif							/* TAP_H */
