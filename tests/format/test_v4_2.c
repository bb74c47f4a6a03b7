// SPDX-License-Identifier: MIT
/*
 * test_v4_2: what format 4.2 changed (docs/format.md 4.8 and 5): no record layout, but what an
 * OBJECTS table holds and how readers print it. A PLT stub's name, NAME@plt, is printed whole
 * (the "@plt" is no symbol version), where a versioned name still loses its version; the
 * file header says 4.2 or later, the committed sample 4.2.
 */
#include "helpers.h"
#include "samples_v4_2.h"

#define V4_2_PATH "tests/format/compat/v4.2.stk"

static char *dir;

static const char *path_in(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void test_names(void)
{
	static const struct {
		const char *name;
		size_t base;
		bool plt;
	} cases[] = {
		{ "memcmp@plt", 10, true },
		{ "_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE4dataEv@plt", 65, true },
		{ "memcmp@GLIBC_2.2.5", 6, false },
		{ "clock_nanosleep@@GLIBC_2.17", 15, false },
		{ "memcmp@@plt", 6, false },	/* a default version called plt */
		{ "@plt", 4, false },		/* no name before it */
		{ "plt", 3, false },
	};
	char test[96];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(test, sizeof(test), "name %s: base length", cases[i].name);
		T_EQ_U64(test, cases[i].base, cap_symbol_base_len(cases[i].name));
		snprintf(test, sizeof(test), "name %s: a PLT stub's", cases[i].name);
		T_CHECK(test, cap_symbol_is_plt(cases[i].name) == cases[i].plt, "want %d",
			cases[i].plt);
	}
}

/* format.md 2 and 5: files written now say 4.2 or later; the committed file 4.2. */
static void test_header(void)
{
	struct cap_record recs[SAMPLE42_NRECORDS];
	struct capture_image img;
	struct cap_reader *r;
	uint16_t major = 0, minor = 0;

	sample42_records(recs);
	if (T_CHECK("header: capture written", !capture_image__make(&img, path_in("hdr.stk"),
		    recs, SAMPLE42_NRECORDS, 1), "could not write or read back")) {
		T_CHECK("header: file says 4.2 or later", img.buf[8] == 4 && img.buf[9] == 0 &&
			img.buf[10] + (img.buf[11] << 8) >= 2, "%u %u %u %u", img.buf[8],
			img.buf[9], img.buf[10], img.buf[11]);
		capture_image__free(&img);
	}
	r = cap_reader__open(V4_2_PATH);
	if (r)
		cap_reader__version(r, &major, &minor);
	T_CHECK("header: v4.2.stk says 4.2", major == 4 && minor == 2, "%u.%u", major, minor);
	cap_reader__close(r);
}

int main(void)
{
	dir = tmp_dir();
	if (!dir) {
		T_FAIL("setup", "no temporary directory: %s", strerror(errno));
		T_EXIT();
	}
	test_names();
	test_header();
	rm_tree(dir);
	T_EXIT();
}
