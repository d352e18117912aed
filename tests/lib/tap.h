/* SPDX-License-Identifier: MIT */
/*
 * A small TAP producer for the project's C tests (host and guest).
 *
 *	TEST(name) { EXPECT_EQ(a, b); ASSERT_TRUE(p); }
 *	TAP_MAIN()
 *
 * Each TEST runs in order; EXPECT_* record a failure and go on, ASSERT_*
 * record it and leave the test.  SKIP(reason) ends the test as skipped.
 * The output is TAP 13 ("ok N - name", "not ok N - name", "# SKIP").
 * TAP_ONLY=name[,name...] in the environment runs only the tests named.
 */
#ifndef SPYRE_TAP_H
#define SPYRE_TAP_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tap_test {
	const char *name;
	void (*fn)(void);
	struct tap_test *next;
};

extern struct tap_test *tap_tests;
extern int tap_failed_checks;
extern const char *tap_skip_reason;

#define TAP_REGISTER_(name)						\
	static void test_##name(void);					\
	static struct tap_test tap_node_##name = { #name, test_##name, NULL }; \
	__attribute__((constructor)) static void tap_reg_##name(void)	\
	{								\
		struct tap_test **pp = &tap_tests;			\
		while (*pp)						\
			pp = &(*pp)->next;				\
		*pp = &tap_node_##name;					\
	}

#define TEST(name) TAP_REGISTER_(name) static void test_##name(void)

#define TAP_FAIL_(fmt, ...)						\
	do {								\
		tap_failed_checks++;					\
		printf("  # %s:%d: " fmt "\n", __FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

#define EXPECT_TRUE(c)							\
	do { if (!(c)) TAP_FAIL_("expected true: %s", #c); } while (0)
#define ASSERT_TRUE(c)							\
	do { if (!(c)) { TAP_FAIL_("required: %s", #c); return; } } while (0)
#define EXPECT_EQ(a, b)							\
	do {								\
		intmax_t a_ = (intmax_t)(a), b_ = (intmax_t)(b);	\
		if (a_ != b_)						\
			TAP_FAIL_("%s == %s: %jd != %jd", #a, #b, a_, b_); \
	} while (0)
#define ASSERT_EQ(a, b)							\
	do {								\
		intmax_t a_ = (intmax_t)(a), b_ = (intmax_t)(b);	\
		if (a_ != b_) {						\
			TAP_FAIL_("%s == %s: %jd != %jd", #a, #b, a_, b_); \
			return;						\
		}							\
	} while (0)
#define EXPECT_STREQ(a, b)						\
	do {								\
		const char *a_ = (a), *b_ = (b);			\
		if (!a_ || !b_ || strcmp(a_, b_))			\
			TAP_FAIL_("%s == %s: \"%s\" != \"%s\"", #a, #b,	\
				  a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
	} while (0)
/* Whether TAP_ONLY (a comma-separated list of names) leaves @name in. */
static inline int tap_selected(const char *name)
{
	const char *only = getenv("TAP_ONLY"), *p = only;
	size_t len = strlen(name);

	if (!only || !*only)
		return 1;
	while ((p = strstr(p, name))) {
		if ((p == only || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return 1;
		p += len;
	}
	return 0;
}

#define SKIP(reason)							\
	do { tap_skip_reason = (reason); return; } while (0)

#define TAP_MAIN()							\
	struct tap_test *tap_tests;					\
	int tap_failed_checks;						\
	const char *tap_skip_reason;					\
	int main(void)							\
	{								\
		struct tap_test *t;					\
		int n = 0, failed = 0;					\
		for (t = tap_tests; t; t = t->next)			\
			n += tap_selected(t->name);			\
		printf("TAP version 13\n1..%d\n", n);			\
		fflush(stdout);						\
		n = 0;							\
		for (t = tap_tests; t; t = t->next) {			\
			int before = tap_failed_checks;			\
			if (!tap_selected(t->name))			\
				continue;				\
			tap_skip_reason = NULL;				\
			t->fn();					\
			n++;						\
			if (tap_skip_reason)				\
				printf("ok %d - %s # SKIP %s\n", n, t->name, \
				       tap_skip_reason);		\
			else if (tap_failed_checks != before) {		\
				printf("not ok %d - %s\n", n, t->name);	\
				failed++;				\
			} else						\
				printf("ok %d - %s\n", n, t->name);	\
			fflush(stdout);					\
		}							\
		return failed ? 1 : 0;					\
	}

#endif /* SPYRE_TAP_H */
