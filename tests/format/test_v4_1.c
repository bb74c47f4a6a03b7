/* SPDX-License-Identifier: MIT */
/*
 * test_v4_1: what format 4.1 added (docs/format.md 4.11): a CODES record of interpreter code
 * objects round-trips field by field (line runs going back and forth, an unnamed entry), its
 * chunk is MANDATORY, and the decoder refuses an id 0 and a line past 32 bits.
 */
#include "helpers.h"

static char *dir;

static const char *path_in(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static struct cap_code_line lines[] = { { 0, 0 }, { 2, 40 }, { 9, 38 }, { 30, 1000000 } };

static void codes(struct cap_code *c)
{
	c[0] = (struct cap_code){ .id = 1, .lang = CAP_LANG_PYTHON, .addr = 0x7f0012345670,
				  .name = "Worker.handle.<locals>.<lambda>", .file = "/srv/app.py",
				  .firstline = 39, .nlines = 4, .lines = lines };
	c[1] = (struct cap_code){ .id = 7, .lang = CAP_LANG_PYTHON, .reason = CAP_CODE_CHANGED,
				  .addr = 0x55aa00 };
}

static void test_round_trip(void)
{
	struct cap_code c[2];
	struct cap_record rec = { .type = CAP_CHUNK_CODES }, *got;
	const struct cap_code *g;

	codes(c);
	rec.codes = (struct cap_codes){ 2, c };
	got = round_trip(path_in("rt.stk"), &rec);
	if (!T_CHECK("round trip CODES", got && got->codes.count == 2, "no record"))
		return;
	g = got->codes.codes;
	(void)T_CHECK("code 1", g[0].id == 1 && g[0].lang == CAP_LANG_PYTHON && !g[0].reason &&
		g[0].addr == 0x7f0012345670 && !strcmp(g[0].name, c[0].name) &&
		!strcmp(g[0].file, "/srv/app.py") && g[0].firstline == 39 && g[0].nlines == 4,
		"fields differ");
	(void)T_CHECK("code 1 lines", g[0].nlines == 4 && !memcmp(g[0].lines, lines, sizeof(lines)),
		"runs differ");
	(void)T_CHECK("code 7 unnamed", g[1].id == 7 && g[1].reason == CAP_CODE_CHANGED &&
		g[1].addr == 0x55aa00 && !g[1].nlines && !strcmp(g[1].name, ""), "fields differ");
	cap_record__free(got);
	(void)T_CHECK("frame word", CAP_CODE_FRAME_IS(CAP_CODE_FRAME(7, 12)) &&
		CAP_CODE_FRAME_ID(CAP_CODE_FRAME(7, 12)) == 7 &&
		CAP_CODE_FRAME_OFF(CAP_CODE_FRAME(7, 12)) == 12 &&
		CAP_CODE_FRAME_OFF(CAP_CODE_FRAME(7, 1u << 30)) == CAP_CODE_OFF_NONE &&
		!CAP_CODE_FRAME_IS(0x7fffffffffffull), "encoding differs");
}

/* A raw CODES payload: one entry, as written by hand. */
static int decode_raw(const uint8_t *p, size_t n)
{
	struct cap_chunk ch = { .type = CAP_CHUNK_CODES, .len = (uint32_t)n, .data = p };
	struct cap_record *rec;
	int err = cap_record__decode(&ch, &rec);

	if (!err)
		cap_record__free(rec);
	return err;
}

static void test_malformed(void)
{
	/* count 1; id, lang, reason, addr, name "", file "", firstline, nlines */
	static const uint8_t ok[] = { 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 5, 0 };
	static const uint8_t id0[] = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 5, 0 };
	/* one run: start 0, line + 2^32 (zigzag) from firstline 5 */
	static const uint8_t far[] = { 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 5, 1, 0,
				       0x80, 0x80, 0x80, 0x80, 0x20 };
	static const uint8_t cut[] = { 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 5, 3, 0 };

	T_EQ_INT("CODES minimal entry", 0, decode_raw(ok, sizeof(ok)));
	T_EQ_INT("CODES id 0", -EBADMSG, decode_raw(id0, sizeof(id0)));
	T_EQ_INT("CODES line past 32 bits", -EBADMSG, decode_raw(far, sizeof(far)));
	T_EQ_INT("CODES runs past the payload", -EBADMSG, decode_raw(cut, sizeof(cut)));
}

int main(void)
{
	dir = tmp_dir();
	if (!dir) {
		T_FAIL("tmpdir", "mkdtemp: %s", strerror(errno));
		T_EXIT();
	}
	test_round_trip();
	test_malformed();
	rm_tree(dir);
	T_EXIT();
}
