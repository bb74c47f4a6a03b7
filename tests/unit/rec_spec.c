// SPDX-License-Identifier: MIT
/*
 * Unit tests of record/probe/spec.c, match.c and elfsym.c pure parts: spec splitting, matching,
 * library names.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "../test.h"
#include "../../record/rec.h"

/* 1 or 0 for a match, -errno when the pattern does not compile. */
static int match(const char *pattern, const char *name, bool regexp)
{
	struct rec_matcher *m = rec_matcher__new(pattern, regexp);
	int r;

	if (!m)
		return -errno;
	r = rec_matcher__match(m, name);
	rec_matcher__free(m);
	return r;
}

static void check_split(const char *name, const char *text, char type, const char *lib,
			const char *pattern)
{
	struct rec_spec_parts p;
	const char *got;
	char n[128];
	int err = rec_spec_split(text, &p);

	snprintf(n, sizeof(n), "%s_rc", name);
	if (!T_EQ_INT(n, 0, err))
		return;
	snprintf(n, sizeof(n), "%s_type", name);
	(void)T_CHECK(n, p.type == type, "expected '%c', actual '%c'", type, p.type);
	snprintf(n, sizeof(n), "%s_lib", name);
	got = p.lib;
	(void)T_EQ_STR(n, lib, got);
	snprintf(n, sizeof(n), "%s_pattern", name);
	got = p.pattern;
	(void)T_EQ_STR(n, pattern, got);
}

static void test_split(void)
{
	struct rec_spec_parts p;

	check_split("test_rec_split_kfunc", "vfs_read", 'p', "", "vfs_read");
	check_split("test_rec_split_kfunc_p", "p::vfs_*", 'p', "", "vfs_*");
	check_split("test_rec_split_uprobe", "c:malloc", 'p', "c", "malloc");
	check_split("test_rec_split_uprobe_p", "p:c:malloc", 'p', "c", "malloc");
	check_split("test_rec_split_path", "/bin/bash:readline", 'p', "/bin/bash", "readline");
	check_split("test_rec_split_tracepoint", "t:syscalls:sys_enter_*", 't', "",
		    "syscalls:sys_enter_*");
	check_split("test_rec_split_usdt", "u:/usr/bin/python3:function__entry", 'u',
		    "/usr/bin/python3", "function__entry");
	(void)T_EQ_INT("test_rec_split_bad_type", -EINVAL, rec_spec_split("x:a:b", &p));
	(void)T_EQ_INT("test_rec_split_too_many", -EINVAL, rec_spec_split("p:a:b:c", &p));
	(void)T_EQ_INT("test_rec_split_empty", -EINVAL, rec_spec_split("", &p));
	(void)T_EQ_INT("test_rec_split_tp_no_event", -EINVAL, rec_spec_split("t:syscalls:", &p));
	(void)T_EQ_INT("test_rec_split_long_type", -EINVAL, rec_spec_split("pp:a:b", &p));
}

static void test_match(void)
{
	(void)T_EQ_INT("test_rec_match_glob", 1, match("sys_enter_*", "sys_enter_read", false));
	(void)T_EQ_INT("test_rec_match_glob_whole", 0, match("sys_enter", "sys_enter_read", false));
	(void)T_EQ_INT("test_rec_match_glob_exact", 1, match("getppid", "getppid", false));
	(void)T_EQ_INT("test_rec_match_glob_question", 1, match("get?pid", "getppid", false));
	/* -r is anchored at the start like bcc's re.match(), not at the end. */
	(void)T_EQ_INT("test_rec_match_regex_prefix", 1, match("sys_enter_re", "sys_enter_read", true));
	(void)T_EQ_INT("test_rec_match_regex_start_anchored", 0,
		       match("enter_re", "sys_enter_read", true));
	(void)T_EQ_INT("test_rec_match_regex_anchor", 0, match("^enter", "sys_enter_read", true));
	(void)T_EQ_INT("test_rec_match_regex_alt", 1, match("(read|write)$", "write", true));
	/* The anchor covers every alternative: "^read|write" would match "xwrite". */
	(void)T_EQ_INT("test_rec_match_regex_alt_anchored", 0, match("read|write", "xwrite", true));
	(void)T_EQ_INT("test_rec_match_regex_bad", -EINVAL, match("(", "x", true));
}

static void test_soname(void)
{
	(void)T_EQ_INT("test_rec_soname_c", 1, rec_soname_matches("c", "libc.so.6"));
	(void)T_EQ_INT("test_rec_soname_plain", 1, rec_soname_matches("c", "libc.so"));
	(void)T_EQ_INT("test_rec_soname_prefix", 0, rec_soname_matches("c", "libcrypt.so.1"));
	(void)T_EQ_INT("test_rec_soname_suffix", 0, rec_soname_matches("c", "libc.sox"));
	(void)T_EQ_INT("test_rec_soname_pthread", 1,
		 rec_soname_matches("pthread", "libpthread.so.0"));
}

static void test_ldconfig(void)
{
	char so[64], path[128];
	const char *pso = so, *ppath = path;
	int err = rec_ldconfig_line("\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6\n",
				    so, sizeof(so), path, sizeof(path));

	if (T_EQ_INT("test_rec_ldconfig_rc", 0, err)) {
		(void)T_EQ_STR("test_rec_ldconfig_soname", "libc.so.6", pso);
		(void)T_EQ_STR("test_rec_ldconfig_path", "/lib/x86_64-linux-gnu/libc.so.6", ppath);
	}
	(void)T_EQ_INT("test_rec_ldconfig_header", -EINVAL,
		 rec_ldconfig_line("1234 libs found in cache `/etc/ld.so.cache'\n", so, sizeof(so),
				   path, sizeof(path)));
}

static void test_resolve_path(void)
{
	char *p = rec_resolve_lib("/nonexistent/binary", -1);

	(void)T_CHECK("test_rec_resolve_missing_path", p == NULL, "expected NULL, got %s", p);
	free(p);
	p = rec_resolve_lib("sh", -1);	/* PATH search for an executable */
	(void)T_CHECK("test_rec_resolve_path_env", p && strstr(p, "/sh"), "got %s", p ? p : "(null)");
	free(p);
}

int main(void)
{
	test_split();
	test_match();
	test_soname();
	test_ldconfig();
	test_resolve_path();
	T_EXIT();
}
