// SPDX-License-Identifier: MIT
/*
 * match.c: a SPEC's pattern, compiled once: wildcards as fnmatch(3) reads them, or with -r an
 * extended regular expression anchored at the start as bcc's re.match(). spec.c, elfsym.c and
 * kfunc.c match names with it.
 */
#include <errno.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

struct rec_matcher {
	char *glob;		/* NULL with -r */
	regex_t re;
};

struct rec_matcher *rec_matcher__new(const char *pattern, bool regexp)
{
	struct rec_matcher *m = calloc(1, sizeof(*m));
	char *anchored = NULL;
	int err = ENOMEM;

	if (!m)
		goto out;
	if (!regexp) {
		m->glob = strdup(pattern);
		err = m->glob ? 0 : ENOMEM;
		goto out;
	}
	/* bcc matches with Python's re.match(): anchored at the start, not at the end. */
	if (asprintf(&anchored, "^(%s)", pattern) < 0) {
		anchored = NULL;
		goto out;
	}
	err = regcomp(&m->re, anchored, REG_EXTENDED | REG_NOSUB);
	if (err)
		err = err == REG_ESPACE ? ENOMEM : EINVAL;
out:
	free(anchored);
	if (err) {
		free(m);	/* m->re was not compiled: nothing else to release */
		errno = err;
		return NULL;
	}
	return m;
}

bool rec_matcher__match(const struct rec_matcher *m, const char *name)
{
	if (m->glob)
		return fnmatch(m->glob, name, 0) == 0;
	return regexec(&m->re, name, 0, NULL, 0) == 0;
}

void rec_matcher__free(struct rec_matcher *m)
{
	if (!m)
		return;
	if (m->glob)
		free(m->glob);
	else
		regfree(&m->re);
	free(m);
}
