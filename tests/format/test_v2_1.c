/* SPDX-License-Identifier: MIT */
/*
 * test_v2_1: what format 2.1 added (docs/format.md 4.8 and 5). An OBJECTS record whose symbols
 * are the union of .dynsym and a debug file's .symtab (flags SYMTAB, DYNSYM and DEBUGFILE)
 * round-trips, names with symbol versions kept as written; the file header says 2.1 or later;
 * and the naming rule both tools share: a symbol version is not part of the name, and of aliases
 * at one address the sized, global, shortest name names it.
 */
#include <elf.h>

#include "helpers.h"
#include "samples_v2_1.h"

static char *dir;

static const char *path_in(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void test_round_trips(void)
{
	struct cap_record recs[SAMPLE21_NRECORDS];
	struct cap_record *got;

	sample21_records(recs);
	check_round_trip(path_in("rt.stk"), "round trip OBJECTS (DEBUGFILE, a versioned name)",
			 &recs[3]);
	got = round_trip(path_in("rt.stk"), &recs[3]);
	T_CHECK("round trip OBJECTS keeps DEBUGFILE and the version",
		got && got->objects.objs[0].flags ==
			(CAP_OBJ_F_SYMTAB | CAP_OBJ_F_DYNSYM | CAP_OBJ_F_DEBUGFILE) &&
		!strcmp(got->objects.objs[0].syms[3].name, "clock_nanosleep@GLIBC_2.2.5"),
		"flags or name differ");
	cap_record__free(got);
}

/* format.md 2 and 5: files written now say 2.1 or later (this version: test_v3_0). */
static void test_header(void)
{
	struct cap_record recs[SAMPLE21_NRECORDS];
	struct capture_image img;

	sample21_records(recs);
	if (!T_CHECK("header: capture written", !capture_image__make(&img, path_in("hdr.stk"),
		     recs, SAMPLE21_NRECORDS, 1), "could not write or read back"))
		return;
	T_CHECK("header: file says 2.1 or later", img.buf[9] == 0 && (img.buf[8] > 2 ||
		(img.buf[8] == 2 && img.buf[10] + (img.buf[11] << 8) >= 1)), "%u %u %u %u",
		img.buf[8], img.buf[9], img.buf[10], img.buf[11]);
	capture_image__free(&img);
}

static void test_base_len(void)
{
	static const struct {
		const char *name;
		size_t len;
	} cases[] = {
		{ "clock_nanosleep@GLIBC_2.2.5", 15 },
		{ "clock_nanosleep@@GLIBC_2.17", 15 },
		{ "_ZSt4cout@@GLIBCXX_3.4", 9 },
		{ "plain", 5 },
		{ "", 0 },
		{ "@GLIBC_2.2.5", 12 },		/* no name before the version: all of it */
		{ "name@", 5 },			/* no version after the '@' */
		{ "name@@", 6 },
		{ "a@b@c", 5 },			/* two versions: not a version */
		{ "a@@@b", 5 },
	};
	char name[96];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(name, sizeof(name), "base length of \"%s\"", cases[i].name);
		T_EQ_U64(name, cases[i].len, cap_symbol_base_len(cases[i].name));
	}
}

/* a names the address rather than b, and the order is the same seen from b */
static void prefer(const char *name, struct cap_symbol_cand a, struct cap_symbol_cand b)
{
	int ab = cap_symbol_prefer(&a, &b), ba = cap_symbol_prefer(&b, &a);

	T_CHECK(name, ab < 0 && ba > 0, "a-b %d, b-a %d", ab, ba);
}

static void test_prefer(void)
{
	struct cap_symbol_cand a = { 0x86, STB_GLOBAL, "clock_nanosleep@GLIBC_2.2.5" };
	struct cap_symbol_cand b = { 0x86, STB_GLOBAL, "clock_nanosleep@@GLIBC_2.17" };
	struct cap_symbol_cand c = { 0x86, STB_GLOBAL, "clock_nanosleep" };

	prefer("prefer sized", (struct cap_symbol_cand){ 1, STB_LOCAL, "zz" },
	       (struct cap_symbol_cand){ 0, STB_GLOBAL, "a" });
	prefer("prefer global to weak", (struct cap_symbol_cand){ 0x31, STB_GLOBAL, "__nanosleep" },
	       (struct cap_symbol_cand){ 0x31, STB_WEAK, "nanosleep" });
	prefer("prefer weak to local", (struct cap_symbol_cand){ 8, STB_WEAK, "__zzz" },
	       (struct cap_symbol_cand){ 8, STB_LOCAL, "a" });
	prefer("prefer the shorter name", (struct cap_symbol_cand){ 71, STB_LOCAL, "clone3" },
	       (struct cap_symbol_cand){ 71, STB_LOCAL, "__clone3" });
	prefer("prefer by bytes at one length", (struct cap_symbol_cand){ 8, STB_LOCAL, "_b" },
	       (struct cap_symbol_cand){ 8, STB_LOCAL, "a_" });
	prefer("versions do not count for length", (struct cap_symbol_cand){ 8, 0, "abc@@V_1" },
	       (struct cap_symbol_cand){ 8, 0, "abcd" });
	prefer("same name: the larger size", (struct cap_symbol_cand){ 9, 0, "f@V" },
	       (struct cap_symbol_cand){ 8, 0, "f" });
	/* the same name, only versions differ: a total order on the raw names */
	prefer("same name and size: raw bytes (plain first)", c, b);
	prefer("same name and size: raw bytes", b, a);
	T_EQ_INT("a symbol against itself", 0, cap_symbol_prefer(&a, &a));
}

int main(void)
{
	dir = tmp_dir();
	if (!dir) {
		T_FAIL("setup", "no temporary directory: %s", strerror(errno));
		T_EXIT();
	}
	test_round_trips();
	test_header();
	test_base_len();
	test_prefer();
	rm_tree(dir);
	T_EXIT();
}
