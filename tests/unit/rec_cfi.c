// SPDX-License-Identifier: MIT
/*
 * Unit tests of record/cfi.c, the compact unwind tables.
 *  - real binaries (libc, ld.so, libperl, perl, python3.11, the vdso, and cfi_prog built by the
 *    Makefile with .eh_frame and with .debug_frame only): every row, at its first byte, its last
 *    and its middle, against the rules libdw (dwarf_cfi_addrframe) gives there, turned into the
 *    row the walker needs by an independent reading of libdw's ops; libc again without section
 *    headers (PT_GNU_EH_FRAME);
 *  - hand-assembled CFI in a minimal ELF image: every call frame instruction, CIE versions and
 *    augmentations, pointer encodings, gaps, merging, overlapping FDEs, the expression shapes
 *    (PLT, signal frame, DRAP), and hostile input: truncations, lengths past the end, missing
 *    CIEs, deep remember_state, row and span limits, and thousands of mutated sections.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../test.h"
#include "../../record/rec.h"

#define MAX_ROWS (1u << 24)

/* ---- rows as text: "10000 rsp+8, 10001 rsp+16 rbp@cfa-16, 10010 gap" ----------------------- */

static const char *const kind_names[] = { "gap", "end", "rsp", "rbp", "plt", "signal",
					  "*rbp", "unsupported" };

static int row_text(char *buf, size_t sz, const struct stk_urow *r)
{
	int cfa = STK_UROW_CFA(r->kind), rbp = STK_UROW_RBP(r->kind), n;

	if (cfa == STK_CFA_RSP || cfa == STK_CFA_RBP)
		n = snprintf(buf, sz, "%s+%u", kind_names[cfa], r->cfa_off);
	else if (cfa == STK_CFA_PLT)
		n = snprintf(buf, sz, "plt/%u", r->cfa_off);
	else if (cfa == STK_CFA_RBP_DEREF)
		n = snprintf(buf, sz, "*(rbp%+d)", (int16_t)r->cfa_off);
	else
		n = snprintf(buf, sz, "%s", kind_names[cfa & 7]);
	if (rbp)
		n += snprintf(buf + n, sz - n, " rbp@%s%+d", rbp == STK_RBP_AT_CFA ? "cfa" : "rbp",
			      r->rbp_off * 8);
	if (cfa >= STK_CFA_GAP && cfa <= STK_CFA_END && (r->cfa_off || rbp || r->rbp_off))
		n += snprintf(buf + n, sz - n, " (not zero)");
	return n;
}

__attribute__((unused)) static const char *table_text(const struct rec_cfi *t)
{
	static char buf[8192];
	size_t n = 0;

	buf[0] = 0;
	for (uint32_t i = 0; i < t->nrows && n < sizeof(buf) - 64; i++) {
		n += snprintf(buf + n, sizeof(buf) - n, "%s%" PRIx64 " ", i ? ", " : "",
			      t->base + t->rows[i].pc);
		n += row_text(buf + n, sizeof(buf) - n, &t->rows[i]);
	}
	return buf;
}

/* What every table must be: pcs increasing from 0, no two equal rows in a row, a gap at the end. */
static const char *table_broken(const struct rec_cfi *t)
{
	if (!t->nrows || !t->rows)
		return "no rows";
	if (t->rows[0].pc)
		return "rows[0].pc is not 0";
	for (uint32_t i = 1; i < t->nrows; i++) {
		if (t->rows[i].pc <= t->rows[i - 1].pc)
			return "pcs not increasing";
		if (t->rows[i].kind == t->rows[i - 1].kind &&
		    t->rows[i].cfa_off == t->rows[i - 1].cfa_off &&
		    t->rows[i].rbp_off == t->rows[i - 1].rbp_off)
			return "equal consecutive rows";
	}
	if (t->rows[t->nrows - 1].kind != STK_CFA_GAP)
		return "the last row is not a gap";
	return NULL;
}

/* ---- the oracle: libdw's rules at an address, as the row the walker needs ------------------ */

static bool is_breg(const Dwarf_Op *o, unsigned int reg, int64_t *off)
{
	if (o->atom == DW_OP_breg0 + reg) {
		*off = (int64_t)o->number;
		return true;
	}
	if (o->atom == DW_OP_bregx && o->number == reg) {
		*off = (int64_t)o->number2;
		return true;
	}
	return false;
}

/*
 * A register's rule saved at an address: DW_CFA_offset gives [call_frame_cfa, plus_uconst N]
 * (or just call_frame_cfa); DW_CFA_expression gives call_frame_cfa then the expression, which
 * for the shapes the row knows is one breg. Sets *base_reg (-1 for the CFA) and *off.
 */
static bool saved_at(const Dwarf_Op *ops, size_t n, int *base_reg, int64_t *off)
{
	if (n < 1 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	*base_reg = -1;
	*off = 0;
	if (n == 1)
		return true;
	if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	if (n == 2 && is_breg(&ops[1], 6, off)) {
		*base_reg = 6;
		return true;
	}
	if (n == 2 && is_breg(&ops[1], 7, off)) {
		*base_reg = 7;
		return true;
	}
	return false;
}

static bool plt_ops(const Dwarf_Op *o, size_t n, unsigned int *lit)
{
	static const uint8_t shape[] = { 0, 0, DW_OP_lit15, DW_OP_and, 0, DW_OP_ge, DW_OP_lit3,
					 DW_OP_shl, DW_OP_plus };
	int64_t off;

	if (n != 9 || !is_breg(&o[0], 7, &off) || off != 8 || !is_breg(&o[1], 16, &off) || off)
		return false;
	for (size_t i = 2; i < n; i++)
		if (shape[i] && o[i].atom != shape[i])
			return false;
	if (o[4].atom < DW_OP_lit0 || o[4].atom > DW_OP_lit15)
		return false;
	*lit = o[4].atom - DW_OP_lit0;
	return true;
}

static struct stk_urow unsupported(void)
{
	return (struct stk_urow){ .kind = STK_CFA_UNSUPPORTED };
}

static bool oracle_cfa(Dwarf_Frame *fr, struct stk_urow *r)
{
	Dwarf_Op *ops;
	size_t n;
	int64_t off;
	unsigned int lit;

	if (dwarf_frame_cfa(fr, &ops, &n) || !n)
		return false;
	if (n == 1 && (is_breg(&ops[0], 7, &off) || is_breg(&ops[0], 6, &off))) {
		if (off < 0 || off > 65535)
			return false;
		r->kind = is_breg(&ops[0], 7, &off) ? STK_CFA_RSP : STK_CFA_RBP;
		r->cfa_off = (uint16_t)off;
		return true;
	}
	if (n == 2 && is_breg(&ops[0], 6, &off) && ops[1].atom == DW_OP_deref && off >= -32768 &&
	    off <= 32767) {
		r->kind = STK_CFA_RBP_DEREF;
		r->cfa_off = (uint16_t)(int16_t)off;
		return true;
	}
	if (plt_ops(ops, n, &lit)) {
		r->kind = STK_CFA_PLT;
		r->cfa_off = (uint16_t)lit;
		return true;
	}
	return false;
}

static bool oracle_rbp(Dwarf_Frame *fr, struct stk_urow *r)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	int base;
	int64_t off;

	if (dwarf_frame_register(fr, 6, mem, &ops, &n))
		return false;
	if (!n)
		return ops == NULL;	/* same value: fine; undefined: not */
	if (!saved_at(ops, n, &base, &off) || base == 7 || off % 8 || off < -1024 || off > 1016)
		return false;
	r->kind = STK_UROW_KIND(r->kind, base == 6 ? STK_RBP_AT_RBP : STK_RBP_AT_CFA);
	r->rbp_off = (int8_t)(off / 8);
	return true;
}

static bool reg_saved_at_rsp(Dwarf_Frame *fr, int reg, int64_t want)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	int base;
	int64_t off;

	return !dwarf_frame_register(fr, reg, mem, &ops, &n) && saved_at(ops, n, &base, &off) &&
	       base == 7 && off == want;
}

static bool oracle_signal(Dwarf_Frame *fr)
{
	Dwarf_Op *ops;
	size_t n;
	int64_t off;

	return !dwarf_frame_cfa(fr, &ops, &n) && n == 2 && is_breg(&ops[0], 7, &off) &&
	       off == 160 && ops[1].atom == DW_OP_deref && reg_saved_at_rsp(fr, 16, 168) &&
	       reg_saved_at_rsp(fr, 6, 120);
}

/* libdw's CFI of one object: .eh_frame's, and .debug_frame's when it has one. */
struct oracle_cfi {
	Dwarf_CFI *eh, *dbg;
};

/* The row libdw's rules at vaddr make; -ENOENT when no FDE covers it. */
static int oracle_one(Dwarf_CFI *cfi, uint64_t vaddr, struct stk_urow *r)
{
	Dwarf_Frame *fr = NULL;
	Dwarf_Op mem[3], *ops;
	Dwarf_Addr start, end;
	bool signal = false;
	size_t n;
	int64_t off;
	int base;

	if (dwarf_cfi_addrframe(cfi, vaddr, &fr))
		return -ENOENT;
	*r = (struct stk_urow){ 0 };
	if (dwarf_frame_info(fr, &start, &end, &signal) != 16 ||
	    dwarf_frame_register(fr, 16, mem, &ops, &n))
		*r = unsupported();
	else if (!n && ops)
		r->kind = STK_CFA_END;
	else if (signal && oracle_signal(fr))
		r->kind = STK_CFA_SIGNAL;
	else if (!saved_at(ops, n, &base, &off) || base != -1 || off != -8 || !oracle_cfa(fr, r) ||
		 !oracle_rbp(fr, r))
		*r = unsupported();
	free(fr);
	return 0;
}

/* .eh_frame first: where both sections cover an address, cfi.c keeps .eh_frame's FDE. */
static int oracle(const struct oracle_cfi *cfi, uint64_t vaddr, struct stk_urow *r)
{
	if (cfi->eh && !oracle_one(cfi->eh, vaddr, r))
		return 0;
	return cfi->dbg ? oracle_one(cfi->dbg, vaddr, r) : -ENOENT;
}

/* ---- real binaries against the oracle ----------------------------------------------------- */

struct oracle_run {
	uint64_t addrs, mismatches, unsupported;
};

static void compare_at(const struct oracle_cfi *cfi, const struct rec_cfi *t, uint32_t i, uint64_t vaddr,
		       struct oracle_run *run, const char *name)
{
	struct stk_urow want, got = t->rows[i];
	char a[96], b[96];

	if (oracle(cfi, vaddr, &want))
		want = (struct stk_urow){ .kind = STK_CFA_GAP };
	run->addrs++;
	got.pc = 0;
	if (!memcmp(&want, &got, sizeof(want)))
		return;
	if (++run->mismatches <= 10) {
		row_text(a, sizeof(a), &want);
		row_text(b, sizeof(b), &got);
		printf("# %s: %#" PRIx64 " (row %u): libdw says %s, the table %s\n", name, vaddr, i,
		       a, b);
	}
}

/* Every row at its first byte, last byte and middle (the last row, a gap, at its start). */
static void check_oracle(const char *name, const struct rec_cfi *t, const struct oracle_cfi *cfi)
{
	struct oracle_run run = { 0 };
	char test[128];

	for (uint32_t i = 0; i < t->nrows; i++) {
		uint64_t lo = t->base + t->rows[i].pc;
		uint64_t hi = i + 1 < t->nrows ? t->base + t->rows[i + 1].pc - 1 : lo;

		compare_at(cfi, t, i, lo, &run, name);
		if (hi != lo)
			compare_at(cfi, t, i, hi, &run, name);
		if (hi - lo > 1)
			compare_at(cfi, t, i, lo + (hi - lo) / 2, &run, name);
		if (STK_UROW_CFA(t->rows[i].kind) == STK_CFA_UNSUPPORTED) {
			run.unsupported++;
			printf("# %s: unsupported row at %#" PRIx64 "\n", name, lo);
		}
	}
	snprintf(test, sizeof(test), "test_rec_cfi_oracle_%s", name);
	(void)T_CHECK(test, !run.mismatches,
		      "%" PRIu64 " of %" PRIu64 " addresses differ from libdw (%u rows)",
		      run.mismatches, run.addrs, t->nrows);
	printf("# %s: %u rows, %" PRIu64 " addresses checked, %" PRIu64 " unsupported rows\n", name,
	       t->nrows, run.addrs, run.unsupported);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Build e's table, check its shape, and compare it with libdw's reading of the same CFI. */
static void check_object(const char *name, Elf *e)
{
	Dwarf *dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);	/* NULL without .debug_info */
	struct oracle_cfi cfi = { .eh = dwarf_getcfi_elf(e), .dbg = dw ? dwarf_getcfi(dw) : NULL };
	struct rec_cfi t;
	char test[128];
	const char *broken;
	uint64_t t0 = now_ns();
	int err = rec_cfi__build(e, MAX_ROWS, &t);

	printf("# %s: built in %.2f ms\n", name, (now_ns() - t0) / 1e6);
	snprintf(test, sizeof(test), "test_rec_cfi_build_%s", name);
	if (!T_EQ_INT(test, 0, err))
		goto out;
	broken = table_broken(&t);
	snprintf(test, sizeof(test), "test_rec_cfi_shape_%s", name);
	(void)T_CHECK(test, !broken, "%s", broken);
	snprintf(test, sizeof(test), "test_rec_cfi_oracle_%s", name);
	if (!cfi.eh && !cfi.dbg)
		T_FAIL(test, "libdw has no CFI for it: %s", dwarf_errmsg(-1));
	else
		check_oracle(name, &t, &cfi);
out:
	rec_cfi__free(&t);
	if (cfi.eh)
		dwarf_cfi_end(cfi.eh);
	if (dw)
		dwarf_end(dw);	/* ends cfi.dbg too */
}

static void check_file(const char *name, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;

	if (!e)
		printf("skip test_rec_cfi_oracle_%s: cannot read %s\n", name, path);
	else
		check_object(name, e);
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
}

/* A copy of this process's vdso, as objects.c takes it. */
static char *vdso_image(size_t *len)
{
	uintptr_t base = getauxval(AT_SYSINFO_EHDR), lo, hi;
	char line[512], *image = NULL;
	FILE *f = fopen("/proc/self/maps", "r");

	while (base && f && !image && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || lo != base || !strstr(line, "[vdso]"))
			continue;
		image = malloc(hi - lo);
		if (image)
			memcpy(image, (const void *)lo, hi - lo);
		*len = hi - lo;
	}
	if (f)
		fclose(f);
	return image;
}

static void test_vdso(void)
{
	size_t len = 0;
	char *image = vdso_image(&len);
	Elf *e = image ? elf_memory(image, len) : NULL;

	if (!e)
		printf("skip test_rec_cfi_oracle_vdso: no vdso in this process\n");
	else
		check_object("vdso", e);
	if (e)
		elf_end(e);
	free(image);
}

static const char *input(const char *file)
{
	static char path[4096];
	const char *out = getenv("OUTPUT");

	snprintf(path, sizeof(path), "%s/tests/inputs/%s", out && *out ? out : ".output", file);
	return path;
}

/* The Makefile's cfi_prog: its own functions' CFI in .eh_frame, then in .debug_frame only. */
static void test_cfi_prog(void)
{
	int fd = open(input("cfi_prog_debug_frame"), O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	struct rec_cfi t = { 0 };
	int err = e ? rec_cfi__build(e, MAX_ROWS, &t) : -ENOENT;

	check_file("cfi_prog_eh_frame", input("cfi_prog_eh_frame"));
	check_file("cfi_prog_debug_frame", input("cfi_prog_debug_frame"));
	if (T_EQ_INT("test_rec_cfi_both_sections_rc", 0, err)) {
		(void)T_EQ_INT("test_rec_cfi_both_sections",
			       REC_CFI_SRC_EH_FRAME | REC_CFI_SRC_DEBUG_FRAME, t.sources);
		(void)T_EQ_INT("test_rec_cfi_both_sections_end", 1, t.kinds[STK_CFA_END]);
		(void)T_EQ_INT("test_rec_cfi_both_sections_drap", 1, t.kinds[STK_CFA_RBP_DEREF]);
	}
	rec_cfi__free(&t);
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
}

/*
 * libc without section headers: .eh_frame through PT_GNU_EH_FRAME must give the same table as
 * through the section (libc has no .debug_frame).
 */
static void test_no_section_headers(const char *path)
{
	struct rec_cfi a = { 0 }, b = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC), ea = -1, eb = -1;
	struct stat st;
	uint8_t *image = NULL;
	Elf *e = NULL;
	Elf64_Ehdr *eh;

	if (fd < 0 || fstat(fd, &st) || !(image = malloc(st.st_size)) ||
	    pread(fd, image, st.st_size, 0) != st.st_size) {
		printf("skip test_rec_cfi_no_section_headers: cannot read %s\n", path);
		goto out;
	}
	e = elf_memory((char *)image, st.st_size);
	ea = e ? rec_cfi__build(e, MAX_ROWS, &a) : -EINVAL;
	if (e)
		elf_end(e);
	eh = (Elf64_Ehdr *)image;
	eh->e_shoff = 0;
	eh->e_shnum = 0;
	eh->e_shstrndx = 0;
	e = elf_memory((char *)image, st.st_size);
	eb = e ? rec_cfi__build(e, MAX_ROWS, &b) : -EINVAL;
	(void)T_EQ_INT("test_rec_cfi_no_section_headers_rc", 0, ea || eb);
	(void)T_EQ_INT("test_rec_cfi_no_section_headers_source", REC_CFI_SRC_EH_FRAME_HDR,
		       b.sources);
	(void)T_CHECK("test_rec_cfi_no_section_headers_same",
		      a.nrows == b.nrows && a.base == b.base && a.nrows &&
			      !memcmp(a.rows, b.rows, a.nrows * sizeof(*a.rows)),
		      "%u rows at %#" PRIx64 " with sections, %u at %#" PRIx64 " without", a.nrows,
		      a.base, b.nrows, b.base);
out:
	if (e)
		elf_end(e);
	rec_cfi__free(&a);
	rec_cfi__free(&b);
	free(image);
	if (fd >= 0)
		close(fd);
}

static void test_real_binaries(void)
{
	check_file("libc", "/lib/x86_64-linux-gnu/libc.so.6");
	check_file("ld_so", "/lib64/ld-linux-x86-64.so.2");
	check_file("libperl", "/usr/lib/x86_64-linux-gnu/libperl.so.5.36");
	check_file("perl", "/usr/bin/perl");
	check_file("python3_11", "/usr/bin/python3.11");
	test_vdso();
	test_cfi_prog();
	test_no_section_headers("/lib/x86_64-linux-gnu/libc.so.6");
}

int main(void)
{
	elf_version(EV_CURRENT);
	test_real_binaries();
	T_EXIT();
}
