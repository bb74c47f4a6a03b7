// SPDX-License-Identifier: MIT
/*
 * rep_escape.c: the escaping every text output applies to names (include/stk/escape.h): each byte
 * 0x01-0x1f and 0x7f and the backslash escaped, C style; ';' only when asked (folded paths);
 * bytes >= 0x80 untouched; a cut never splits an escape; the three entry points agree.
 */
#include <stdlib.h>

#include "stk/escape.h"
#include "../test.h"

/* rep_fputs_escaped() into a string (a memstream), so the three functions can be compared. */
static char *via_file(const char *s, unsigned int flags)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	rep_fputs_escaped(f, s, flags);
	fclose(f);
	return buf;
}

/* s escapes to want (with flags) through every entry point. */
static void check(const char *name, const char *s, unsigned int flags, const char *want)
{
	char buf[512], t[128];
	char *file = via_file(s, flags), *dup = rep_escape_dup(s, flags);
	size_t n = rep_escape(buf, sizeof(buf), s, flags);
	const char *got = buf;	/* T_EQ_STR tests its arguments for NULL */

	snprintf(t, sizeof(t), "test_rep_escape_%s_file", name);
	T_EQ_STR(t, want, file);
	snprintf(t, sizeof(t), "test_rep_escape_%s_buf", name);
	T_EQ_STR(t, want, got);
	snprintf(t, sizeof(t), "test_rep_escape_%s_len", name);
	T_EQ_U64(t, strlen(want), n);
	snprintf(t, sizeof(t), "test_rep_escape_%s_dup", name);
	T_EQ_STR(t, want, dup);
	snprintf(t, sizeof(t), "test_rep_escape_%s_needs", name);
	T_CHECK(t, rep_needs_escape(s, flags) == !!strcmp(s, want), "rep_needs_escape() says %d",
		rep_needs_escape(s, flags));
	free(file);
	free(dup);
}

/* Every byte 0x01..0xff alone: which ones are escaped, and how. */
static void test_every_byte(void)
{
	char s[2] = { 0 }, want[8], got[8];
	int bad = 0, first = 0;

	for (int c = 1; c < 256; c++) {
		s[0] = (char)c;
		if (c == '\a' || c == '\b' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
		    c == '\r')
			snprintf(want, sizeof(want), "\\%c", "abtnvfr"[c - '\a']);
		else if (c == '\\')
			snprintf(want, sizeof(want), "\\\\");
		else if (c < 0x20 || c == 0x7f)
			snprintf(want, sizeof(want), "\\x%02x", c);
		else
			snprintf(want, sizeof(want), "%c", c);
		rep_escape(got, sizeof(got), s, 0);
		if (strcmp(want, got) && !bad++)
			first = c;
	}
	T_CHECK("test_rep_escape_every_byte", !bad, "%d bytes escape wrongly, the first 0x%02x",
		bad, first);
}

/* A cut buffer keeps whole escapes and reports the full length, as snprintf. */
static void test_cut(void)
{
	const char *s = "\x1b[31mred\a";	/* \x1b[31mred\a: 13 characters */
	char buf[13];
	const char *got = buf;
	size_t n = rep_escape(buf, sizeof(buf), s, 0);

	T_EQ_STR("test_rep_escape_cut_whole_escapes", "\\x1b[31mred", got);
	T_EQ_U64("test_rep_escape_cut_full_length", 13, n);
	rep_escape(buf, 4, s, 0);
	T_EQ_STR("test_rep_escape_cut_before_first", "", got);
	n = rep_escape(buf, 1, "", 0);
	T_CHECK("test_rep_escape_cut_empty", n == 0 && !buf[0], "n %zu", n);
}

int main(void)
{
	check("clean", "stk_leaf+0x4 (a.c:12)", 0, "stk_leaf+0x4 (a.c:12)");
	check("empty", "", 0, "");
	check("newline", "x\nfake 99999999", 0, "x\\nfake 99999999");
	check("escape_seq", "\x1b]0;title\a", 0, "\\x1b]0;title\\a");
	check("backslash", "a\\nb", 0, "a\\\\nb");
	check("del", "\x7f", 0, "\\x7f");
	check("semicolon_kept", "Lfoo;.call", 0, "Lfoo;.call");
	check("semicolon_folded", "Lfoo;.call\n", REP_ESC_SEMICOLON, "Lfoo\\x3b.call\\n");
	check("utf8", "caf\xc3\xa9 \xe2\x82\xac", 0, "caf\xc3\xa9 \xe2\x82\xac");
	check("not_utf8", "\x80\xff", 0, "\x80\xff");
	test_every_byte();
	test_cut();
	T_EXIT();
}
