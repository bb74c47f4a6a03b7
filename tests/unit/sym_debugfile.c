// SPDX-License-Identifier: MIT
/*
 * sym_debugfile.c: the one list of debug-file candidates both tools walk
 * (elfobj_debug_search(), symbolize/debugfile.c): exact order and kinds, stopping, and what
 * is never offered. Names only: no file is opened.
 */
#include <stdio.h>
#include <string.h>

#include <stk/elfobj.h>

#include "../test.h"

struct seen {
	char text[4096];
	int n, stop_at;
};

static int record(void *arg, const char *file, unsigned int kind)
{
	struct seen *s = arg;
	size_t len = strlen(s->text);

	snprintf(s->text + len, sizeof(s->text) - len, "%s%s%s\n", file,
		 kind & ELFOBJ_CAND_LINK ? " link" : "", kind & ELFOBJ_CAND_ROOT ? " root" : "");
	return ++s->n == s->stop_at ? 7 : 0;
}

static const uint8_t id[] = { 0xab, 0xcd, 0xef };

static void test_order(void)
{
	const char *const dirs[] = { "/D1", "/D2/" };
	struct elfobj_debug_dirs d = { .symfs = "/S", .dirs = dirs, .ndirs = 2 };
	struct elfobj_debug_want w = { "/usr/bin/foo", id, sizeof(id), "foo.debug", 0 };
	struct seen s = { .stop_at = -1 };

	strcpy(d.root, "/R");
	strcpy(d.cache[1], "/C");
	T_EQ_INT("test_sym_debug_search_none_taken", 0, elfobj_debug_search(&d, &w, record, &s));
	T_EQ_STR("test_sym_debug_search_order",
		 "/S/R/.build-id/ab/cdef.debug\n"
		 "/D1/.build-id/ab/cdef.debug\n"
		 "/D1/usr/bin/foo\n"
		 "/D2//.build-id/ab/cdef.debug\n"
		 "/D2//usr/bin/foo\n"
		 "/R/.build-id/ab/cdef.debug root\n"
		 "/S/usr/bin/foo.debug link\n"
		 "/S/usr/bin/.debug/foo.debug link\n"
		 "/usr/bin/foo.debug link\n"
		 "/usr/bin/.debug/foo.debug link\n"
		 "/D1/usr/bin/foo.debug link\n"
		 "/D2//usr/bin/foo.debug link\n"
		 "/S/R/usr/bin/foo.debug link\n"
		 "/R/usr/bin/foo.debug link root\n"
		 "/C/abcdef/debuginfo\n", s.text);
}

/* stkrec's places: no symfs, no more dirs; a debuglink that is no file name is not followed */
static void test_stkrec_places(void)
{
	struct elfobj_debug_dirs d = { 0 };
	struct elfobj_debug_want w = { "/lib/libx.so", id, sizeof(id), "../etc/x", 0 };
	struct seen s = { .stop_at = -1 };

	strcpy(d.root, "/R");
	strcpy(d.cache[0], "/C");
	elfobj_debug_search(&d, &w, record, &s);
	T_EQ_STR("test_sym_debug_search_bad_link",
		 "/R/.build-id/ab/cdef.debug root\n/C/abcdef/debuginfo\n", s.text);
	/* no build-id, no path (another mount namespace): nothing to look for */
	memset(&s, 0, sizeof(s));
	s.stop_at = -1;
	w = (struct elfobj_debug_want){ NULL, NULL, 0, "libx.so.debug", 0 };
	elfobj_debug_search(&d, &w, record, &s);
	T_EQ_STR("test_sym_debug_search_nothing", "", s.text);
}

static void test_stop(void)
{
	struct elfobj_debug_dirs d = { 0 };
	struct elfobj_debug_want w = { "/lib/libx.so", id, sizeof(id), "libx.so.debug", 0 };
	struct seen s = { .stop_at = 2 };

	strcpy(d.root, "/R");
	T_EQ_INT("test_sym_debug_search_stop_returns", 7, elfobj_debug_search(&d, &w, record, &s));
	T_EQ_STR("test_sym_debug_search_stop",
		 "/R/.build-id/ab/cdef.debug root\n/lib/libx.so.debug link\n", s.text);
}

int main(void)
{
	test_order();
	test_stkrec_places();
	test_stop();
	T_EXIT();
}
