/* SPDX-License-Identifier: MIT */
/*
 * tests/test.h: the output protocol every test program follows (read by tests/run):
 *   ok NAME               one passed check
 *   not ok NAME: WHY      one failed check, WHY shows expected and actual
 *   skip NAME: WHY        a check that could not run here, and why
 * A program exits 0 when nothing failed, 1 otherwise.
 */
#ifndef STK_TEST_H
#define STK_TEST_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;

/* Run a printf-formatted shell command (tests building files with the binutils): its status. */
static inline int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

#define T_OK(name) printf("ok %s\n", (name))
/* An expression (comma operator), so T_CHECK can use it inside ?:. */
#define T_FAIL(name, ...)                                                                  \
	((void)printf("not ok %s: ", (name)), (void)printf(__VA_ARGS__),                   \
	 (void)printf(" (%s:%d)\n", __FILE__, __LINE__), (void)test_failures++)

/* Check one condition; returns whether it held, so callers can stop early. */
#define T_CHECK(name, cond, ...)                                                           \
	((cond) ? (T_OK(name), 1) : (T_FAIL(name, __VA_ARGS__), 0))

#define T_EQ_U64(name, expected, actual)                                                   \
	T_CHECK(name, (uint64_t)(expected) == (uint64_t)(actual),                          \
		"expected %" PRIu64 ", actual %" PRIu64, (uint64_t)(expected),             \
		(uint64_t)(actual))

#define T_EQ_INT(name, expected, actual)                                                   \
	T_CHECK(name, (long long)(expected) == (long long)(actual), "expected %lld, actual %lld", \
		(long long)(expected), (long long)(actual))

#define T_EQ_STR(name, expected, actual)                                                   \
	T_CHECK(name, (expected) && (actual) && !strcmp((expected), (actual)),             \
		"expected \"%s\", actual \"%s\"", (expected) ? (expected) : "(null)",          \
		(actual) ? (actual) : "(null)")

#define T_EXIT() return test_failures ? 1 : 0

#endif /* STK_TEST_H */
