// SPDX-License-Identifier: MIT
/*
 * debugdirs.c: where this host keeps debug files, for stkrec (include/stk/elfobj.h). A file of
 * its own: it asks for root's home directory (getpwuid), which the static stkreport must not
 * link (NSS; see the Makefile, make static), and which stkreport never needs.
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stk/elfobj.h"

static void set_dir(char *dst, const char *a, const char *b)
{
	int n = snprintf(dst, PATH_MAX, "%s%s", a, b ? b : "");

	if (n < 0 || n >= PATH_MAX)
		dst[0] = 0;	/* too long to be a directory anyone uses: none */
}

static void add_cache(struct elfobj_debug_dirs *d, const char *a, const char *b)
{
	char dir[PATH_MAX];

	if (!a || !*a)
		return;
	set_dir(dir, a, b);
	for (int i = 0; i < ELFOBJ_DEBUG_CACHES; i++) {
		if (!strcmp(d->cache[i], dir))
			return;
		if (!d->cache[i][0]) {
			memcpy(d->cache[i], dir, sizeof(dir));
			return;
		}
	}
}

void elfobj_debug_dirs_default(struct elfobj_debug_dirs *d)
{
	const char *env = getenv("DEBUGINFOD_CACHE_PATH");
	const struct passwd *pw = getpwuid(0);

	memset(d, 0, sizeof(*d));
	set_dir(d->root, ELFOBJ_DEBUG_ROOT, NULL);
	/* the cache libdebuginfod would use in this environment (its own order)... */
	if (env && *env)
		add_cache(d, env, NULL);
	else if ((env = getenv("XDG_CACHE_HOME")) && *env)
		add_cache(d, env, "/debuginfod_client");
	else
		add_cache(d, getenv("HOME"), "/.cache/debuginfod_client");
	/* ...and root's, where a `sudo debuginfod-find` put files */
	add_cache(d, pw && pw->pw_dir ? pw->pw_dir : "/root", "/.cache/debuginfod_client");
}
