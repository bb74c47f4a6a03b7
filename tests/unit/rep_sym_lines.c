// SPDX-License-Identifier: MIT
/*
 * rep_sym_lines.c: source lines and inlined functions (libdw) through sym_user__lookup, on the
 * -O2 -g workload tests/workloads/wl_inline (built into $OUTPUT by `make workloads`), whose hot
 * loop inl_mix() is always inlined into inl_outer(), inlined into inl_work(). Expected lines are
 * read from the markers in tests/workloads/wl_inline.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "stk/symbolize.h"
#include "../test.h"

#define SRC "tests/workloads/wl_inline.c"
#define BASE 0x555555554000ull

static void absolute(char path[PATH_MAX])
{
	char real[PATH_MAX];

	if (realpath(path, real))
		strcpy(path, real);
}

static uint32_t marker_line(const char *marker)
{
	char buf[512];
	uint32_t n = 0;
	FILE *f = fopen(SRC, "r");

	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f)) {
		n++;
		if (strstr(buf, marker)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return 0;
}

static const struct sym_symbol *find_sym(const struct sym_elf *e, const char *name)
{
	uint32_t i;

	for (i = 0; i < e->nsyms; i++)
		if (!strcmp(e->syms[i].name, name))
			return &e->syms[i];
	return NULL;
}

static struct cap_mapping whole_map(const struct sym_elf *e, const char *path)
{
	struct cap_mapping m = { .kind = CAP_MAP_FILE, .path = (char *)path };

	m.start = BASE;
	m.end = BASE + 0x100000;
	m.build_id_len = e->build_id_len;
	memcpy(m.build_id, e->build_id, e->build_id_len);
	return m;
}

int main(void)
{
	const char *out = getenv("OUTPUT") ? getenv("OUTPUT") : ".output";
	char bin[PATH_MAX], srcbuf[PATH_MAX + 64], cwd[PATH_MAX];
	const char *src = srcbuf;
	uint32_t hot = marker_line("LINE_HOT"), call_mix = marker_line("LINE_CALL_MIX");
	uint32_t call_outer = marker_line("LINE_CALL_OUTER");
	struct sym_elf *e;
	struct sym_user *u = NULL, *plain = NULL;
	const struct sym_symbol *work;
	struct cap_mapping m;
	struct cap_process proc = { .pid = 1, .nmaps = 1, .maps = &m };
	struct sym_result r;
	uint64_t a, found = 0;

	snprintf(bin, sizeof(bin), "%s/tests/workloads/wl_inline", out);
	absolute(bin);	/* stkrec records absolute paths; stkreport opens no other */
	if (!getcwd(cwd, sizeof(cwd)))
		return 1;
	snprintf(srcbuf, sizeof(srcbuf), "%s/" SRC, cwd);
	e = sym_elf__open(bin);
	if (!e) {
		printf("skip test_rep_lines: %s not built (make workloads)\n", bin);
		return 0;
	}
	T_CHECK("test_rep_lines_markers", hot && call_mix && call_outer, "markers missing");
	work = find_sym(e, "inl_work");
	if (!T_CHECK("test_rep_lines_inl_work", work && work->size, "no inl_work in %s", bin))
		goto out;
	T_CHECK("test_rep_lines_inlined_away", !find_sym(e, "inl_mix") && !find_sym(e, "inl_outer"),
		"inl_mix or inl_outer has a symbol: not inlined");
	m = whole_map(e, bin);
	u = sym_user__new(&(struct sym_user_opts){ .open_files = true, .lines = true,
						   .inlines = true, .demangle = true });
	/* the first address of inl_work whose line is the hot loop's */
	for (a = work->addr; a < work->addr + work->size; a++) {
		sym_user__lookup(u, &proc, BASE + a, false, &r);
		if (r.reason == SYM_OK && r.ninl && r.inl[0].line == hot) {
			found = a;
			break;
		}
	}
	if (!T_CHECK("test_rep_lines_hot_address", found, "no address of inl_work on line %u",
		     hot))
		goto out;
	T_EQ_STR("test_rep_lines_function", "inl_work", r.name);
	T_EQ_INT("test_rep_lines_ninl", 2, r.ninl);
	T_EQ_STR("test_rep_lines_inl0_name", "inl_mix", r.inl[0].name);
	T_EQ_STR("test_rep_lines_inl0_file", src, r.inl[0].file);
	T_EQ_INT("test_rep_lines_inl0_line", hot, r.inl[0].line);
	T_EQ_STR("test_rep_lines_inl1_name", "inl_outer", r.inl[1].name);
	T_EQ_STR("test_rep_lines_inl1_file", src, r.inl[1].file);
	T_EQ_INT("test_rep_lines_inl1_line", call_mix, r.inl[1].line);
	T_EQ_STR("test_rep_lines_outer_file", src, r.file);
	T_EQ_INT("test_rep_lines_outer_line", call_outer, r.line);

	/* a return address inside the loop is looked up at addr - 1: same chain one byte on */
	sym_user__lookup(u, &proc, BASE + found + 1, true, &r);
	T_EQ_INT("test_rep_lines_return_address_ninl", 2, r.ninl);
	T_EQ_U64("test_rep_lines_return_address_offset", found + 1 - work->addr, r.offset);

	/* --no-inline, no -l: the name alone */
	plain = sym_user__new(&(struct sym_user_opts){ .open_files = true, .demangle = true });
	sym_user__lookup(plain, &proc, BASE + found, false, &r);
	T_EQ_STR("test_rep_lines_plain_name", "inl_work", r.name);
	T_EQ_INT("test_rep_lines_plain_ninl", 0, r.ninl);
	T_CHECK("test_rep_lines_plain_no_file", !r.file && !r.line, "file %s line %u",
		r.file ? r.file : "(null)", r.line);
	sym_user__free(plain);
	plain = NULL;

	/* symbols from the capture's embedded record (as stkrec writes them by default): the
	 * object file on this host, same build-id, still gives the DWARF */
	{
		struct cap_segment segs[16];
		struct cap_symbol syms[] = { { work->addr, work->size, "inl_work" } };
		struct cap_object obj = { .flags = CAP_OBJ_F_SYMTAB, .path = bin, .debuglink = "",
					  .segs = segs, .nsyms = 1, .syms = syms };
		const struct cap_object *objs[] = { &obj };
		uint32_t i;

		for (i = 0; i < e->nsegs && i < 16; i++)
			segs[i] = (struct cap_segment){ e->segs[i].offset, e->segs[i].vaddr,
							e->segs[i].filesz, e->segs[i].filesz };
		obj.nsegs = i;
		obj.build_id_len = e->build_id_len;
		memcpy(obj.build_id, e->build_id, e->build_id_len);
		plain = sym_user__new(&(struct sym_user_opts){ .open_files = true, .lines = true,
							       .inlines = true, .objects = objs,
							       .nobjects = 1 });
		sym_user__lookup(plain, &proc, BASE + found, false, &r);
		T_EQ_INT("test_rep_lines_embedded_ninl", 2, r.ninl);
		T_EQ_INT("test_rep_lines_embedded_line", call_outer, r.line);
	}
out:
	sym_user__free(u);
	sym_user__free(plain);
	sym_elf__close(e);
	T_EXIT();
}
