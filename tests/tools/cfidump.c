// SPDX-License-Identifier: MIT
/*
 * cfidump [-r] [-u] [-s] FILE...: the compact unwind tables record/unwind/cfi.c builds (abi.h,
 * struct stk_urow), for reading by eye and for surveys of a system's binaries.
 *   one line per FILE: rows per kind, FDEs, bytes, build time (or the error)
 *   -r  every row: address, kind, CFA offset, rbp rule
 *   -u  what the unsupported rows are, as libdw reads the CFI at each row's address, tallied
 *   -s  totals over all FILEs (the survey), errors by kind, unsupported shapes by count
 * FILE "vdso" is this process's vdso; FILE "-" reads file names from stdin, one a line. Files
 * that are not ELF are counted and skipped quietly with -s.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/auxv.h>

#include "../../record/rec.h"

#define MAX_ROWS (1u << 26)

static const char *const kind_names[STK_CFA__COUNT] = { "gap", "end", "rsp", "rbp", "plt", "signal",
					  "rbp_deref", "unsupported", "rsp8", "ra_rdi", "rbx", "rcx",
					  "ra_rcx" };
static const char *const why_names[] = { "ra", "cfa_reg", "cfa_off", "cfa_expr", "rbp" };

struct shape {
	char *text;
	uint64_t rows;
	uint64_t files;
	const char *example;	/* the first file it was seen in */
};

struct totals {
	uint64_t files, elf, ok, errors[5], rows, kinds[STK_CFA__COUNT], dwarf_rows, why[REC_CFI_WHY__COUNT];
	uint64_t code[STK_CFA__COUNT];	/* address bytes per kind: up to the next row, the last gap not counted */
	uint64_t fdes, bad, overlap, dropped, bytes, ns, notelf;
	void *shapes;		/* tsearch tree of struct shape */
};

static bool dump_rows, show_unsupported, survey;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

static int cmp_shape(const void *a, const void *b)
{
	return strcmp(((const struct shape *)a)->text, ((const struct shape *)b)->text);
}

/* libdw's ops as text: "breg7+160,deref". */
static void ops_text(char *buf, size_t sz, const Dwarf_Op *ops, size_t n)
{
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = 0; i < n && len < sz; i++) {
		const Dwarf_Op *o = &ops[i];
		const char *sep = i ? "," : "";
		int w;

		if (o->atom >= DW_OP_breg0 && o->atom <= DW_OP_breg31)
			w = snprintf(buf + len, sz - len, "%sbreg%u%+" PRId64, sep,
				     o->atom - DW_OP_breg0, (int64_t)o->number);
		else if (o->atom == DW_OP_bregx)
			w = snprintf(buf + len, sz - len, "%sbreg%" PRIu64 "%+" PRId64, sep, o->number,
				     (int64_t)o->number2);
		else if (o->atom == DW_OP_call_frame_cfa)
			w = snprintf(buf + len, sz - len, "%scfa", sep);
		else if (o->atom == DW_OP_plus_uconst)
			w = snprintf(buf + len, sz - len, "%s%+" PRId64, sep, (int64_t)o->number);
		else if (o->atom == DW_OP_regx)
			w = snprintf(buf + len, sz - len, "%sreg%" PRIu64, sep, o->number);
		else if (o->atom >= DW_OP_lit0 && o->atom <= DW_OP_lit31)
			w = snprintf(buf + len, sz - len, "%slit%u", sep, o->atom - DW_OP_lit0);
		else
			w = snprintf(buf + len, sz - len, "%sop0x%x(%" PRIu64 ")", sep, o->atom,
				     o->number);
		len += w > 0 ? (size_t)w : 0;
	}
}

static void reg_text(char *buf, size_t sz, Dwarf_Frame *fr, int reg)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	if (dwarf_frame_register(fr, reg, mem, &ops, &n))
		snprintf(buf, sz, "error");
	else if (!n)
		snprintf(buf, sz, ops ? "undefined" : "same");
	else
		ops_text(buf, sz, ops, n);
}

/* The rules libdw gives at vaddr, as one line; NULL when it has no FDE there. */
static char *frame_shape(Dwarf_CFI *cfi, uint64_t vaddr)
{
	char cfa[160] = "none", ra[96], rbp[96], *s = NULL;
	Dwarf_Frame *fr = NULL;
	Dwarf_Op *ops;
	size_t n;

	if (!cfi || dwarf_cfi_addrframe(cfi, vaddr, &fr))
		return NULL;
	if (!dwarf_frame_cfa(fr, &ops, &n) && n)
		ops_text(cfa, sizeof(cfa), ops, n);
	reg_text(ra, sizeof(ra), fr, 16);
	reg_text(rbp, sizeof(rbp), fr, 6);
	if (asprintf(&s, "cfa=%s ra=%s rbp=%s", cfa, ra, rbp) < 0)
		s = NULL;
	free(fr);
	return s;
}

static void tally_shape(struct totals *tot, char *text, const char *path, bool first_in_file)
{
	struct shape key = { .text = text }, *sh, **found;

	found = tfind(&key, &tot->shapes, cmp_shape);
	if (!found) {
		sh = calloc(1, sizeof(*sh));
		if (!sh)
			return;
		*sh = (struct shape){ .text = strdup(text), .example = strdup(path) };
		found = tsearch(sh, &tot->shapes, cmp_shape);
		if (!found)
			return;
	}
	(*found)->rows++;
	(*found)->files += first_in_file;
}

/* Every unsupported row, through libdw: .eh_frame's CFI first, then .debug_frame's. */
static void unsupported_shapes(Elf *e, const struct rec_cfi *t, const char *path,
			       struct totals *tot)
{
	Dwarf *dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
	Dwarf_CFI *eh = dwarf_getcfi_elf(e), *dbg = dw ? dwarf_getcfi(dw) : NULL;
	void *seen = NULL;

	for (uint32_t i = 0; i < t->nrows; i++) {
		uint64_t vaddr = t->base + t->rows[i].pc;
		bool first;
		char *s;

		if (STK_UROW_CFA(t->rows[i].kind) != STK_CFA_UNSUPPORTED)
			continue;
		s = frame_shape(eh, vaddr);
		if (!s)
			s = frame_shape(dbg, vaddr);
		if (!s)
			s = strdup("(libdw: no FDE)");
		if (!survey)
			printf("  unsupported %#" PRIx64 ": %s\n", vaddr, s);
		first = !tfind(s, &seen, cmp_str);
		tally_shape(tot, s, path, first);
		if (!first || !tsearch(s, &seen, cmp_str))
			free(s);	/* otherwise seen owns it */
	}
	tdestroy(seen, free);
	if (eh)
		dwarf_cfi_end(eh);
	if (dw)
		dwarf_end(dw);
}

static void print_rows(const struct rec_cfi *t)
{
	static const char *const rbp[] = { "same", "at_cfa", "at_rbp", "?" };
	static const char *const rbx[] = { "same", "at_cfa", "below_rbp", "lost" };

	for (uint32_t i = 0; i < t->nrows; i++) {
		const struct stk_urow *r = &t->rows[i];

		printf("  %#" PRIx64 " %-11s cfa_off %-5u rbp %s", t->base + r->pc,
		       kind_names[STK_UROW_CFA(r->kind) % STK_CFA__COUNT], r->cfa_off,
		       rbp[STK_UROW_RBP(r->kind) & 3]);
		if (STK_UROW_RBP(r->kind))
			printf("%+d", r->rbp_off * 8);
		printf(" rbx %s", rbx[STK_UROW_RBX(r->kind)]);
		if (STK_UROW_RBX(r->kind) == STK_RBX_AT_CFA)
			printf("%+d", r->rbp_off * 8);
		printf("\n");
	}
}

static void print_summary(const char *path, const struct rec_cfi *t, uint64_t ns)
{
	printf("%s: %u rows (", path, t->nrows);
	for (int k = 0; k < STK_CFA__COUNT; k++)
		printf("%s%s %u", k ? ", " : "", kind_names[k], t->kinds[k]);
	printf("), %u FDEs, %zu bytes, %.2f ms", t->nfdes, (size_t)t->nrows * sizeof(*t->rows),
	       ns / 1e6);
	if (t->nbad || t->nfdes_overlap || t->nfdes_dropped)
		printf(", bad %u, overlap %u, dropped %u", t->nbad, t->nfdes_overlap,
		       t->nfdes_dropped);
	printf("\n");
}

static int error_index(int err)
{
	switch (err) {
	case -ENOENT: return 0;
	case -EBADMSG: return 1;
	case -E2BIG: return 2;
	case -ENOTSUP: return 3;
	}
	return 4;
}

static void add_totals(struct totals *tot, const struct rec_cfi *t, int err, uint64_t ns)
{
	tot->elf++;
	tot->ns += ns;
	tot->bad += t->nbad;
	if (err) {
		tot->errors[error_index(err)]++;
		return;
	}
	tot->ok++;
	tot->rows += t->nrows;
	tot->bytes += (uint64_t)t->nrows * sizeof(*t->rows);
	tot->fdes += t->nfdes;
	tot->overlap += t->nfdes_overlap;
	tot->dropped += t->nfdes_dropped;
	tot->dwarf_rows += t->ndwarf_rows;
	for (int k = 0; k < STK_CFA__COUNT; k++)
		tot->kinds[k] += t->kinds[k];
	for (uint32_t i = 0; i + 1 < t->nrows; i++)
		tot->code[STK_UROW_CFA(t->rows[i].kind) % STK_CFA__COUNT] += t->rows[i + 1].pc - t->rows[i].pc;
	for (int w = 0; w < REC_CFI_WHY__COUNT; w++)
		tot->why[w] += t->why[w];
}

/* A copy of this process's vdso image, for elf_memory(). */
static Elf *open_vdso(char **image)
{
	uintptr_t base = getauxval(AT_SYSINFO_EHDR), lo, hi;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	*image = NULL;
	while (base && f && !*image && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || lo != base || !strstr(line, "[vdso]"))
			continue;
		*image = malloc(hi - lo);
		if (*image)
			memcpy(*image, (const void *)lo, hi - lo);
		base = hi - lo;
	}
	if (f)
		fclose(f);
	return *image ? elf_memory(*image, base) : NULL;
}

static void dump_one(const char *path, struct totals *tot)
{
	bool vdso = !strcmp(path, "vdso");
	int fd = vdso ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	struct rec_cfi t;
	char *image = NULL;
	uint64_t t0, ns;
	Elf *e = NULL;
	int err;

	tot->files++;
	e = vdso ? open_vdso(&image) : fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (!e || elf_kind(e) != ELF_K_ELF) {
		tot->notelf++;
		if (!survey)
			printf("%s: not an ELF file\n", path);
		goto out;
	}
	t0 = now_ns();
	err = rec_cfi__build(e, MAX_ROWS, &t);
	ns = now_ns() - t0;
	add_totals(tot, &t, err, ns);
	if (err && !survey)
		printf("%s: %s (bad entries %u)\n", path, strerror(-err), t.nbad);
	if (!err && !survey)
		print_summary(path, &t, ns);
	if (!err && dump_rows)
		print_rows(&t);
	if (!err && show_unsupported && t.kinds[STK_CFA_UNSUPPORTED])
		unsupported_shapes(e, &t, path, tot);
	rec_cfi__free(&t);
out:
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	free(image);
}

static struct shape **sorted;
static size_t nsorted;

static void collect(const void *node, VISIT v, int depth)
{
	struct shape **tmp;

	if (v != postorder && v != leaf)
		return;
	tmp = realloc(sorted, (nsorted + 1) * sizeof(*sorted));
	if (!tmp)
		return;
	sorted = tmp;
	sorted[nsorted++] = *(struct shape *const *)node;
}

static int by_rows(const void *a, const void *b)
{
	const struct shape *x = *(struct shape *const *)a, *y = *(struct shape *const *)b;

	return x->rows < y->rows ? 1 : x->rows > y->rows ? -1 : strcmp(x->text, y->text);
}

static void print_totals(const struct totals *tot)
{
	uint64_t code = 0;

	printf("files %" PRIu64 ", ELF %" PRIu64 ", tables %" PRIu64 "; no CFI %" PRIu64
	       ", malformed %" PRIu64 ", too big %" PRIu64 ", refused (.o, not x86-64) %" PRIu64
	       ", other errors %" PRIu64 "\n",
	       tot->files, tot->elf, tot->ok, tot->errors[0], tot->errors[1], tot->errors[2],
	       tot->errors[3], tot->errors[4]);
	printf("FDEs %" PRIu64 ", bad entries %" PRIu64 ", overlapping FDEs %" PRIu64
	       ", dropped FDEs %" PRIu64 ", build time %.1f ms\n",
	       tot->fdes, tot->bad, tot->overlap, tot->dropped, tot->ns / 1e6);
	printf("rows %" PRIu64 " (%" PRIu64 " bytes), DWARF rows %" PRIu64 "\n", tot->rows,
	       tot->bytes, tot->dwarf_rows);
	for (int k = 0; k < STK_CFA__COUNT; k++)
		code += tot->code[k];
	printf("  %-12s %10s %8s  %14s %8s\n", "kind", "rows", "", "address bytes", "");
	for (int k = 0; k < STK_CFA__COUNT; k++)
		printf("  %-12s %10" PRIu64 " %7.3f%%  %14" PRIu64 " %7.3f%%\n", kind_names[k],
		       tot->kinds[k], tot->rows ? 100.0 * tot->kinds[k] / tot->rows : 0, tot->code[k],
		       code ? 100.0 * tot->code[k] / code : 0);
	printf("unsupported DWARF rows by reason:");
	for (int w = 0; w < REC_CFI_WHY__COUNT; w++)
		printf(" %s %" PRIu64, why_names[w], tot->why[w]);
	printf("\n");
	twalk(tot->shapes, collect);
	if (nsorted)
		qsort(sorted, nsorted, sizeof(*sorted), by_rows);
	for (size_t i = 0; i < nsorted; i++)
		printf("  %8" PRIu64 " rows in %5" PRIu64 " files: %s  (e.g. %s)\n", sorted[i]->rows,
		       sorted[i]->files, sorted[i]->text, sorted[i]->example);
}

int main(int argc, char **argv)
{
	struct totals tot = { 0 };
	char line[PATH_MAX];
	int c;

	while ((c = getopt(argc, argv, "rus")) != -1) {
		if (c == 'r')
			dump_rows = true;
		else if (c == 'u')
			show_unsupported = true;
		else if (c == 's')
			survey = true;
		else
			return 2;
	}
	if (optind == argc) {
		fprintf(stderr, "usage: cfidump [-r] [-u] [-s] FILE...|vdso|-\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	for (int i = optind; i < argc; i++) {
		if (strcmp(argv[i], "-")) {
			dump_one(argv[i], &tot);
			continue;
		}
		while (fgets(line, sizeof(line), stdin)) {
			line[strcspn(line, "\n")] = 0;
			dump_one(line, &tot);
		}
	}
	if (survey)
		print_totals(&tot);
	return 0;
}
