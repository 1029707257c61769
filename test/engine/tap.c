/*-------------------------------------------------------------------------
 *
 * tap.c
 *	  Reporting for the engine's test programs, in TAP (see tap.h).
 *
 * test/engine/tap.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>

#include "tap.h"

static int	n_passed;
static int	n_failed;

void
check(bool ok, const char *name, const char *fmt,...)
{
	int			n = n_passed + n_failed + 1;

	if (ok)
	{
		printf("ok %d - %s\n", n, name);
		n_passed++;
	}
	else
	{
		char		detail[1200];
		va_list		ap;

		detail[0] = '\0';
		if (fmt != NULL)
		{
			va_start(ap, fmt);
			vsnprintf(detail, sizeof(detail), fmt, ap);
			va_end(ap);
		}
		/* a check is one line, whatever the detail holds */
		for (char *p = detail; *p; p++)
			if (*p == '\n')
				*p = ' ';
		printf("not ok %d - %s: %s\n", n, name, detail);
		n_failed++;
	}
	fflush(stdout);
}

int
tap_done(void)
{
	printf("1..%d\n", n_passed + n_failed);
	printf("# %d passed, %d failed\n", n_passed, n_failed);
	fflush(stdout);
	return n_failed > 0 ? 1 : 0;
}
