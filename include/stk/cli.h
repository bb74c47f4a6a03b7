/* SPDX-License-Identifier: MIT */
/*
 * cli.h: what both tools' command lines share: naming the option getopt_long() refused as the
 * user wrote it, and refusing an option given where it means nothing.
 */
#ifndef STK_CLI_H
#define STK_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/*
 * The option getopt_long() just refused ('?' or ':'), as the user wrote it, into buf (or lent
 * from argv). Short options may be bundled (-zf): getopt then stays on the word of the bundle,
 * so argv[optind - 1] is the word before it (argv[0] for the first), and only optopt names the
 * letter. A long option leaves optopt 0 when unknown, or its value when it is missing an
 * argument or has one it does not take: then the word before optind is that option.
 */
static inline const char *stk_refused_option(char *const *argv, const struct option *longopts,
					     char *buf, size_t len)
{
	const char *word = argv[optind - 1];

	if (!strncmp(word, "--", 2)) {
		size_t n = strcspn(word + 2, "=");

		if (!optopt)
			return word;
		for (const struct option *o = longopts; o->name; o++)
			/* getopt_long takes any unambiguous prefix: --tre=1 for --tree */
			if (o->val == optopt && n && !strncmp(o->name, word + 2, n))
				return word;
	}
	if (optopt > 0 && optopt < 256) {
		snprintf(buf, len, "-%c", optopt);
		return buf;
	}
	return word;
}

/* "-d", or "--tree-min" for an option without a letter: getopt_long value opt of longopts. */
static inline const char *stk_option_name(int opt, const struct option *longopts, char *buf,
					  size_t len)
{
	const struct option *l;

	if (opt < 256) {
		snprintf(buf, len, "-%c", opt);
		return buf;
	}
	for (l = longopts; l->name && l->val != opt; l++)
		;
	snprintf(buf, len, "--%s", l->name ? l->name : "?");
	return buf;
}

/* Where an option means something: a mask of the kinds of run a tool tells apart. */
struct stk_applies {
	int opt;		/* getopt_long's value */
	unsigned int where;	/* the kinds of run (bits) it applies to */
};

/*
 * The first option given (given[], indexed by getopt_long's values) of a[0..n) that does not
 * apply to the run, of kind `run` (one bit); -1 when every one does. Its kinds' names[] (one per
 * bit) go into buf, joined by ", ".
 */
static inline int stk_misplaced(const struct stk_applies *a, size_t n, const bool *given,
				unsigned int run, const char *const *names, char *buf, size_t len)
{
	for (size_t i = 0; i < n; i++) {
		size_t used = 0;

		if (!given[a[i].opt] || (a[i].where & run))
			continue;
		buf[0] = 0;
		for (unsigned int k = 0; k < 32 && used < len; k++)
			if (a[i].where & (1u << k))
				used += snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
						 names[k]);
		return (int)i;
	}
	return -1;
}

#endif /* STK_CLI_H */
