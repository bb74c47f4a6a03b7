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

int main(void)
{
	test_lines();
	test_frames();
	test_files();
	T_EXIT();
}
