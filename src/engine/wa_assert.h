/*-------------------------------------------------------------------------
 *
 * wa_assert.h
 *	  WA_ASSERT: the engine's checks of its own invariants.
 *
 * WA_ASSERT(cond) reports the condition, file and line on stderr and
 * aborts when cond is false, in builds that define WA_ENGINE_ASSERTIONS:
 * the engine tests (test/engine/Makefile, every target) and the extension
 * when PostgreSQL itself is built with --enable-cassert (the Makefile then
 * passes the flag).  Elsewhere, the production extension and the
 * benchmarks, it compiles to nothing: cond is not evaluated, only
 * type-checked (sizeof), so that a variable read only by assertions does
 * not warn.  cond must have no side effects.
 *
 * It is for invariants whose failure means the engine's own state is
 * wrong (a watermark that went back, accounting below zero, memory still
 * held that should not be), never for the caller's input: wa_config_check
 * and the planner's messages report that.  A handful of cheap checks at
 * the points where such state changes, not one on every line.
 *
 * src/engine/wa_assert.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_ASSERT_H
#define WA_ASSERT_H

/* Report and abort (wa_assert.c); declared in every build */
extern _Noreturn void wa_assert_failed(const char *cond, const char *file,
									   int line);

#ifdef WA_ENGINE_ASSERTIONS
#define WA_ASSERT(cond) \
	((cond) ? (void) 0 : wa_assert_failed(#cond, __FILE__, __LINE__))
#else
#define WA_ASSERT(cond) ((void) sizeof(cond))
#endif

#endif							/* WA_ASSERT_H */
