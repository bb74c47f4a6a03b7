// SPDX-License-Identifier: MIT
/*
 * Unit tests of record/python/: CPython 3.11's location tables turned into line runs, and
 * stacks' Python frames turned into capture ids (names table bound, unnamed entries counted),
 * their CODES entries written once per file.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "../test.h"
#include "../../record/rec.h"

/*
 * The co_linetable of this function, compiled by Debian's python3.11 (3.11.2), and the runs its
 * co_lines() gives (start in code units, the line; equal neighbours merged):
 *
 *   def f(a):
 *       x = 1
 *       if a:
 *           return [i for i in range(3)]
 *       y = (a +
 *            2)
 *       return y
 */
static const uint8_t f_linetable[] = {
	0x80, 0x00, 0xd8, 0x08, 0x09, 0x80, 0x41, 0xd8, 0x07, 0x08, 0xf0, 0x00, 0x01, 0x05, 0x25,
	0xd8, 0x0f, 0x24, 0xd0, 0x0f, 0x24, 0x9d, 0x35, 0xa0, 0x11, 0x99, 0x38, 0x9c, 0x38, 0xd0,
	0x0f, 0x24, 0xd1, 0x0f, 0x24, 0xd4, 0x0f, 0x24, 0xd0, 0x08, 0x24, 0xd8, 0x09, 0x0a, 0xd8,
	0x09, 0x0a, 0xf1, 0x03, 0x01, 0x0a, 0x0b, 0x80, 0x41, 0xe0, 0x0b, 0x0c, 0x80, 0x48,
};
static const struct cap_code_line f_runs[] = {
	{ 0, 1 }, { 1, 2 }, { 3, 3 }, { 5, 4 }, { 30, 5 }, { 31, 6 }, { 32, 5 }, { 35, 7 },
};

static void test_lines(void)
{
	const size_t nruns = sizeof(f_runs) / sizeof(f_runs[0]);
	struct cap_code_line *runs = NULL;
	uint32_t n = 0;
	int err;

	err = rec_python_lines(f_linetable, sizeof(f_linetable), 1, &runs, &n);
	T_EQ_INT("test_rec_python_lines_ok", 0, err);
	if (T_EQ_INT("test_rec_python_lines_count", (int)nruns, (int)n))
		T_CHECK("test_rec_python_lines_runs", !memcmp(runs, f_runs, sizeof(f_runs)),
			"runs differ from co_lines()'s");
	free(runs);
	/* an entry must start with bit 7 set; one cut inside its varint is no table either */
	T_EQ_INT("test_rec_python_lines_no_entry_byte", -EBADMSG,
		 rec_python_lines(f_linetable + 1, 4, 1, &runs, &n));
	T_EQ_INT("test_rec_python_lines_cut_varint", -EBADMSG,
		 rec_python_lines((const uint8_t[]){ 0xf0, 0x41 }, 2, 1, &runs, &n));
	T_EQ_INT("test_rec_python_lines_empty", 0, rec_python_lines(f_linetable, 0, 1, &runs, &n));
	T_EQ_INT("test_rec_python_lines_empty_count", 0, (int)n);
}

/*
 * A stack's Python frames (two words each) become one capture id each; beyond the names
 * table's bound they share one entry, counted; a process stkrec does not know names none.
 */
static void test_frames(void)
{
	struct rec_python *py = rec_python__new(2);
	uint64_t losses[CAP_LOSS__COUNT] = { 0 };
	const uint64_t ips[] = {
		0x401000, STK_PYWORD(7, 3), 0x7f0000001000ull, STK_PYWORD(8, 5), 0x7f0000002000ull,
		STK_PYWORD(9, STK_PY_LASTI_NONE), 0x7f0000003000ull, 0x402000,
	};
	uint64_t out[8];
	uint32_t n;

	if (!T_CHECK("test_rec_python_new", py, "no memory"))
		return;
	n = rec_python__frames(py, 4242, ips, 8, out);
	T_EQ_INT("test_rec_python_frames_words", 5, (int)n);
	T_EQ_U64("test_rec_python_frames_native_kept", 0x401000, out[0]);
	T_EQ_U64("test_rec_python_frames_first", CAP_CODE_FRAME(1, 3), out[1]);
	T_EQ_U64("test_rec_python_frames_second", CAP_CODE_FRAME(2, 5), out[2]);
	/* the third code object is past --python-names 2: the shared entry, no offset lost */
	T_EQ_U64("test_rec_python_frames_past_bound", CAP_CODE_FRAME(3, CAP_CODE_OFF_NONE), out[3]);
	T_EQ_U64("test_rec_python_frames_root", 0x402000, out[4]);
	/* the same frames again: the same ids */
	n = rec_python__frames(py, 4242, ips, 8, out);
	T_EQ_U64("test_rec_python_frames_same_id", CAP_CODE_FRAME(2, 5), n > 2 ? out[2] : 0);
	/* the same code object in another process would be another entry: past the bound too */
	n = rec_python__frames(py, 4243, ips, 3, out);
	T_EQ_U64("test_rec_python_frames_other_process", CAP_CODE_FRAME(3, 3), n > 1 ? out[1] : 0);
	rec_python__losses(py, losses);
	/* process 4242 was never given: its two entries unnamed; three frames past the bound */
	T_EQ_U64("test_rec_python_losses_unnamed", 2, losses[CAP_LOSS_PY_UNNAMED]);
	T_EQ_U64("test_rec_python_losses_full", 3, losses[CAP_LOSS_PY_NAMES_FULL]);
	/* a stack cut between a frame's two words drops the half frame, not a native one */
	n = rec_python__frames(NULL, 4242, ips, 2, out);
	T_EQ_INT("test_rec_python_frames_half", 1, (int)n);
	rec_python__free(py);
}

/* The code ids of the CODES records of capture path, in order, into ids (at most max). */
static uint32_t codes_in(const char *path, uint32_t *ids, uint32_t max)
{
	struct cap_reader *r = cap_reader__open(path);
	struct cap_record *rec;
	struct cap_chunk ch;
	uint32_t n = 0;

	while (r && cap_reader__next(r, &ch) == 1 && !cap_record__decode(&ch, &rec)) {
		for (uint32_t i = 0; rec->type == CAP_CHUNK_CODES && i < rec->codes.count; i++)
			if (n < max)
				ids[n++] = rec->codes.codes[i].id;
		cap_record__free(rec);
	}
	cap_reader__close(r);
	return n;
}

/*
 * Each capture file holds the CODES entries its stacks name (format.md 4.11): once in a file,
 * again in the next one (--rotate, --flight), with the same ids.
 */
static void test_files(void)
{
	char dir[] = "/tmp/rec_python.XXXXXX", a[64], b[64];
	const uint64_t ips[] = { 0x401000, STK_PYWORD(7, 3), 0x7f0000001000ull, STK_PYWORD(8, 5),
				 0x7f0000002000ull, 0x402000 };
	struct rec_python *py = rec_python__new(8);
	struct rec_python_stats st;
	struct cap_writer *w;
	uint32_t ids[8], n;
	uint64_t out[6];

	if (!T_CHECK("test_rec_python_files_setup", py && mkdtemp(dir), "no memory or no dir"))
		return;
	snprintf(a, sizeof(a), "%s/a.stk", dir);
	snprintf(b, sizeof(b), "%s/b.stk", dir);
	w = cap_writer__open(a);
	rec_python__frames(py, 4242, ips, 6, out);
	T_EQ_INT("test_rec_python_files_put", 0, rec_python__put(py, w));
	/* the next interval names them again: nothing more for this file */
	rec_python__frames(py, 4242, ips, 6, out);
	T_EQ_INT("test_rec_python_files_put_again", 0, rec_python__put(py, w));
	cap_writer__close(w);
	n = codes_in(a, ids, 8);
	T_CHECK("test_rec_python_files_first", n == 2 && ids[0] == 1 && ids[1] == 2,
		"%u entries", n);
	rec_python__new_file(py);
	w = cap_writer__open(b);
	rec_python__frames(py, 4242, ips, 6, out);
	T_EQ_INT("test_rec_python_files_put_next", 0, rec_python__put(py, w));
	cap_writer__close(w);
	n = codes_in(b, ids, 8);
	T_CHECK("test_rec_python_files_next_file_again", n == 2 && ids[0] == 1 && ids[1] == 2,
		"%u entries", n);
	T_EQ_U64("test_rec_python_files_same_ids", CAP_CODE_FRAME(2, 5), out[2]);
	rec_python__stats(py, &st);
	T_EQ_U64("test_rec_python_files_written", 4, st.written);
	rec_python__free(py);
	unlink(a);
	unlink(b);
	rmdir(dir);
}

/* A process id no process has (above the kernel's pid_max limit): its memory cannot be read. */
#define GONE_PID 0x7ffffff0u

/* An ASCII str object of 3.11 (PyASCIIObject, 48 bytes, then the characters) into obj. */
static uint16_t ascii_str(uint8_t *obj, const char *text)
{
	uint64_t len = strlen(text);
	uint32_t state = 1u << 2 | 1u << 5 | 1u << 6;	/* kind 1, compact, ascii */

	memset(obj, 0, 48);
	memcpy(obj + 16, &len, 8);
	memcpy(obj + 32, &state, 4);
	memcpy(obj + 48, text, len);
	return (uint16_t)(48 + len);
}

/* BPF's copy of f's code object (python3.11), its line table cut to lines bytes. */
static void copy_of_f(struct stk_pycode *r, uint64_t addr, uint32_t check, uint16_t lines)
{
	uint64_t len = sizeof(f_linetable);

	memset(r, 0, sizeof(*r));
	r->n = (struct stk_notify){ .tgid = GONE_PID, .kind = STK_NOTIFY_PYCODE, .addr = addr,
				    .check = check };
	r->version = 0x030b;
	r->firstline = 1;
	r->name_at = 0x7f0000010000ull;
	r->file_at = 0x7f0000020000ull;
	r->lines_at = 0x7f0000030000ull;
	r->name_len = ascii_str(r->name, "Worker.f");
	r->file_len = ascii_str(r->file, "/srv/app.py");
	memcpy(r->lines + 16, &len, 8);
	memcpy(r->lines + 32, f_linetable, sizeof(f_linetable));
	r->lines_len = lines;
}

/* The CODES entry of id in capture path into *out (names freed by the caller); false: none. */
static bool code_in(const char *path, uint32_t id, struct cap_code *out)
{
	struct cap_reader *r = cap_reader__open(path);
	struct cap_record *rec;
	struct cap_chunk ch;
	bool found = false;

	while (r && !found && cap_reader__next(r, &ch) == 1 && !cap_record__decode(&ch, &rec)) {
		for (uint32_t i = 0; rec->type == CAP_CHUNK_CODES && i < rec->codes.count; i++) {
			struct cap_code *c = &rec->codes.codes[i];

			if (c->id != id || found)
				continue;
			*out = *c;
			out->name = c->name ? strdup(c->name) : NULL;
			out->file = c->file ? strdup(c->file) : NULL;
			out->lines = malloc(c->nlines * sizeof(*c->lines) + 1);
			if (out->lines)
				memcpy(out->lines, c->lines, c->nlines * sizeof(*c->lines));
			found = true;
		}
		cap_record__free(rec);
	}
	cap_reader__close(r);
	return found;
}

/*
 * BPF's copy of a code object (struct stk_pycode) names it though its process is gone: names
 * and line runs as a read of the process gives them. A line table BPF cut, which the gone
 * process cannot complete, leaves the first line for every instruction, counted; a name BPF
 * cut leaves the object unnamed. A copy that comes after a stack named the object (the drain
 * before the thread) still names it in the file.
 */
static void test_copy(void)
{
	char dir[] = "/tmp/rec_python.XXXXXX", path[64];
	struct rec_python *py = rec_python__new(8);
	static struct stk_pycode r;
	const uint64_t ips[] = {
		STK_PYWORD(11, 3), 0x7f0000001000ull, STK_PYWORD(12, 3), 0x7f0000002000ull,
		STK_PYWORD(13, 3), 0x7f0000003000ull, STK_PYWORD(14, 3), 0x7f0000004000ull,
	};
	struct cap_code c = { 0 };
	struct rec_python_stats st;
	struct cap_writer *w;
	uint64_t out[8];

	if (!T_CHECK("test_rec_python_copy_setup", py && mkdtemp(dir), "no memory or no dir"))
		return;
	snprintf(path, sizeof(path), "%s/c.stk", dir);
	copy_of_f(&r, 0x7f0000001000ull, 11, 32 + sizeof(f_linetable));
	rec_python__seen(py, &r);
	copy_of_f(&r, 0x7f0000002000ull, 12, 40);	/* the table cut */
	rec_python__seen(py, &r);
	copy_of_f(&r, 0x7f0000003000ull, 13, 32 + sizeof(f_linetable));
	r.name_len = 50;	/* the name cut */
	rec_python__seen(py, &r);
	/* a stack names the fourth before its copy comes */
	T_EQ_INT("test_rec_python_copy_frames", 4, (int)rec_python__frames(py, GONE_PID, ips, 8,
									    out));
	copy_of_f(&r, 0x7f0000004000ull, 14, 32 + sizeof(f_linetable));
	rec_python__seen(py, &r);
	w = cap_writer__open(path);
	T_EQ_INT("test_rec_python_copy_put", 0, rec_python__put(py, w));
	cap_writer__close(w);
	for (uint32_t id = 1; id <= 4; id++) {
		bool whole = id == 1 || id == 4;
		char name[64];

		memset(&c, 0, sizeof(c));
		snprintf(name, sizeof(name), "test_rec_python_copy_%u_entry", id);
		if (!T_CHECK(name, code_in(path, id, &c), "no CODES entry %u", id))
			continue;
		snprintf(name, sizeof(name), "test_rec_python_copy_%u_reason", id);
		T_EQ_INT(name, id == 3 ? CAP_CODE_GONE : CAP_CODE_NAMED, (int)c.reason);
		if (id != 3) {
			snprintf(name, sizeof(name), "test_rec_python_copy_%u_names", id);
			T_CHECK(name, c.name && c.file && !strcmp(c.name, "Worker.f") &&
				!strcmp(c.file, "/srv/app.py") && c.firstline == 1,
				"%s %s %u", c.name, c.file, c.firstline);
			snprintf(name, sizeof(name), "test_rec_python_copy_%u_lines", id);
			if (whole)
				T_CHECK(name, c.nlines == sizeof(f_runs) / sizeof(f_runs[0]) &&
					!memcmp(c.lines, f_runs, sizeof(f_runs)), "%u runs", c.nlines);
			else
				T_CHECK(name, c.nlines == 1 && c.lines[0].start == 0 &&
					c.lines[0].line == 1, "%u runs", c.nlines);
		}
		free(c.name);
		free(c.file);
		free(c.lines);
	}
	rec_python__stats(py, &st);
	T_EQ_U64("test_rec_python_copy_unnamed", 1, st.unnamed);
	T_EQ_U64("test_rec_python_copy_lines_cut", 1, st.lines_cut);
	rec_python__free(py);
	unlink(path);
	rmdir(dir);
}

/*
 * A name of 4-byte characters (a compact, non-ASCII str of 3.11: its characters after
 * PyCompactUnicodeObject, 72 bytes) as UTF-8: 1 to 4 bytes a character, U+FFFD for a lone
 * surrogate and for a value past U+10FFFF, '?' for a NUL.
 */
static void test_wide_name(void)
{
	static const uint32_t cps[] = { 'A', 0xe9, 0x20ac, 0x1f600, 0xd800, 0x110000, 0 };
	static const char want[] = "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbd"
				   "\xef\xbf\xbd?";
	const uint64_t ips[] = { STK_PYWORD(15, 3), 0x7f0000005000ull };
	char dir[] = "/tmp/rec_python.XXXXXX", path[64];
	struct rec_python *py = rec_python__new(8);
	uint32_t state = 4u << 2 | 1u << 5;	/* kind 4, compact */
	uint64_t len = sizeof(cps) / sizeof(cps[0]), out[2];
	static struct stk_pycode r;
	struct cap_code c = { 0 };
	struct cap_writer *w;

	if (!T_CHECK("test_rec_python_wide_setup", py && mkdtemp(dir), "no memory or no dir"))
		return;
	snprintf(path, sizeof(path), "%s/w.stk", dir);
	copy_of_f(&r, 0x7f0000005000ull, 15, 32 + sizeof(f_linetable));
	memset(r.name, 0, 72);
	memcpy(r.name + 16, &len, 8);
	memcpy(r.name + 32, &state, 4);
	memcpy(r.name + 72, cps, sizeof(cps));
	r.name_len = (uint16_t)(72 + sizeof(cps));
	rec_python__seen(py, &r);
	rec_python__frames(py, GONE_PID, ips, 2, out);
	w = cap_writer__open(path);
	T_EQ_INT("test_rec_python_wide_put", 0, rec_python__put(py, w));
	cap_writer__close(w);
	if (T_CHECK("test_rec_python_wide_entry", code_in(path, 1, &c), "no CODES entry"))
		T_CHECK("test_rec_python_wide_utf8", c.reason == CAP_CODE_NAMED && c.name &&
			!strcmp(c.name, want), "reason %u name %s", c.reason, c.name);
	free(c.name);
	free(c.file);
	free(c.lines);
	rec_python__free(py);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	test_lines();
	test_frames();
	test_files();
	test_copy();
	test_wide_name();
	T_EXIT();
}
