// SPDX-License-Identifier: MIT
/*
 * rep_symbolize.c: address translation (PT_LOAD math on PIE and non-PIE objects, return
 * addresses, build-id checks, --symfs) and kallsyms lookup boundaries. Uses the committed
 * tests/golden/elf/golden{,-pie}.elf (symbols: see tests/golden/elf/golden.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "stk/symbolize.h"
#include "../test.h"

#define ELF_DIR "tests/golden/elf"
#define PIE_BIAS 0x555555554000ull

static uint64_t addr_of(const struct sym_elf *e, const char *name)
{
	uint32_t i;

	for (i = 0; i < e->nsyms; i++)
		if (!strcmp(e->syms[i].name, name))
			return e->syms[i].addr;
	return 0;
}

static void test_segments(void)
{
	/* golden.elf's segments, plus one whose vaddr is not offset + base (prelinked, data) */
	const struct elfobj_segment segs[] = {
		{ 0x0, 0x400000, 0x560 },
		{ 0x1000, 0x401000, 0x259 },
		{ 0x2df8, 0x403df8, 0x230 },
		{ 0x4000, 0x800000, 0x100 },
	};
	uint64_t v = 0;

	T_EQ_INT("test_rep_segments_text", 0, sym_segments_to_vaddr(segs, 4, 0x1146, &v));
	T_EQ_U64("test_rep_segments_text_vaddr", 0x401146, v);
	T_EQ_INT("test_rep_segments_last_byte", 0, sym_segments_to_vaddr(segs, 4, 0x1258, &v));
	T_EQ_U64("test_rep_segments_last_byte_vaddr", 0x401258, v);
	T_EQ_INT("test_rep_segments_end_exclusive", -ENOENT,
		 sym_segments_to_vaddr(segs, 4, 0x1259, &v));
	T_EQ_INT("test_rep_segments_unaligned_start", 0,
		 sym_segments_to_vaddr(segs, 4, 0x2e00, &v));
	T_EQ_U64("test_rep_segments_unaligned_start_vaddr", 0x403e00, v);
	T_EQ_INT("test_rep_segments_shifted", 0, sym_segments_to_vaddr(segs, 4, 0x4010, &v));
	T_EQ_U64("test_rep_segments_shifted_vaddr", 0x800010, v);
	T_EQ_INT("test_rep_segments_none", -ENOENT, sym_segments_to_vaddr(segs, 0, 0x10, &v));
}

static const char *name_of(const struct sym_symbol *s)
{
	return s ? s->name : "(none)";
}

static void test_symbols_find(void)
{
	const struct sym_symbol syms[] = {
		{ 0x1000, 0x10, "a" },
		{ 0x1020, 0, "sizeless" },
		{ 0x1040, 0x100, "outer" },
		{ 0x1050, 0x8, "inner" },
	};
	const struct sym_symbol *s;

	T_CHECK("test_rep_symbols_below_first", !sym_symbols_find(syms, 4, 0xfff),
		"found a symbol");
	s = sym_symbols_find(syms, 4, 0x1000);
	T_EQ_STR("test_rep_symbols_start", "a", name_of(s));
	s = sym_symbols_find(syms, 4, 0x100f);
	T_EQ_STR("test_rep_symbols_last_byte", "a", name_of(s));
	T_CHECK("test_rep_symbols_gap", !sym_symbols_find(syms, 4, 0x1010), "found %s",
		sym_symbols_find(syms, 4, 0x1010)->name);
	s = sym_symbols_find(syms, 4, 0x103f);
	T_EQ_STR("test_rep_symbols_sizeless_reaches_next", "sizeless", name_of(s));
	s = sym_symbols_find(syms, 4, 0x1060);
	T_EQ_STR("test_rep_symbols_nested_falls_back_to_outer", "outer", name_of(s));
	T_CHECK("test_rep_symbols_past_end", !sym_symbols_find(syms, 4, 0x1140), "found a symbol");
}

static void test_elf_open(void)
{
	struct sym_elf *e = sym_elf__open(ELF_DIR "/golden.elf");
	struct sym_elf *p = sym_elf__open(ELF_DIR "/golden-pie.elf");

	if (!T_CHECK("test_rep_elf_open", e && p, "cannot open the golden ELF files (errno %d)",
		     errno))
		goto out;
	T_EQ_INT("test_rep_elf_build_id_len", 20, e->build_id_len);
	T_EQ_INT("test_rep_elf_pt_load_count", 4, e->nsegs);
	T_EQ_U64("test_rep_elf_nonpie_stk_leaf", 0x401146, addr_of(e, "stk_leaf"));
	T_EQ_U64("test_rep_elf_pie_stk_leaf", 0x1159, addr_of(p, "stk_leaf"));
	T_CHECK("test_rep_elf_build_ids_differ", memcmp(e->build_id, p->build_id, 20),
		"same build-id");
	T_CHECK("test_rep_elf_not_elf", !sym_elf__open(ELF_DIR "/golden.c") && errno == ENOEXEC,
		"errno %d", errno);
	T_CHECK("test_rep_elf_missing", !sym_elf__open(ELF_DIR "/nope") && errno == ENOENT,
		"errno %d", errno);
out:
	sym_elf__close(e);
	sym_elf__close(p);
}

/* The text mapping /proc/PID/maps would show for e's text segment at base + 0x1000. */
static struct cap_mapping text_map(const struct sym_elf *e, uint64_t base, const char *path)
{
	struct cap_mapping m = { .kind = CAP_MAP_FILE, .path = (char *)path };

	m.start = base + 0x1000;
	m.end = base + 0x2000;
	m.pgoff = 0x1000;
	m.build_id_len = e->build_id_len;
	memcpy(m.build_id, e->build_id, e->build_id_len);
	return m;
}

static void test_user_lookup(void)
{
	struct sym_elf *e = sym_elf__open(ELF_DIR "/golden.elf");
	struct sym_elf *p = sym_elf__open(ELF_DIR "/golden-pie.elf");
	struct sym_user *u = sym_user__new(&(struct sym_user_opts){ .symfs = ELF_DIR, .open_files = true });
	struct cap_mapping maps[2], other[3];
	struct cap_process proc = { .pid = 1, .nmaps = 2, .maps = maps };
	struct cap_process oproc = { .pid = 1, .nmaps = 1, .maps = other };
	struct sym_result r;

	if (!T_CHECK("test_rep_user_setup", e && p && u, "setup failed"))
		goto out;
	maps[0] = text_map(e, 0x400000, "/golden.elf");
	maps[1] = text_map(p, PIE_BIAS, "/golden-pie.elf");

	sym_user__lookup(u, &proc, 0x401146 + 4, false, &r);
	T_EQ_STR("test_rep_user_nonpie_leaf", "stk_leaf", r.name);
	T_EQ_U64("test_rep_user_nonpie_leaf_offset", 4, r.offset);

	sym_user__lookup(u, &proc, PIE_BIAS + 0x1159 + 2, false, &r);
	T_EQ_STR("test_rep_user_pie_leaf", "stk_leaf", r.name);
	T_EQ_U64("test_rep_user_pie_leaf_offset", 2, r.offset);
	T_EQ_STR("test_rep_user_pie_module", "golden-pie.elf", r.module);
	T_EQ_U64("test_rep_user_pie_module_offset", 0x115b, r.module_offset);

	/* a return address equal to the next function's start belongs to the caller before it */
	sym_user__lookup(u, &proc, 0x40115b, true, &r);
	T_EQ_STR("test_rep_user_return_address", "stk_leaf", r.name);
	T_EQ_U64("test_rep_user_return_address_offset", 0x15, r.offset);
	sym_user__lookup(u, &proc, 0x40115b, false, &r);
	T_EQ_STR("test_rep_user_leaf_at_start", "stk_mid", r.name);

	sym_user__lookup(u, &proc, 0x7f0000000000ull, false, &r);
	T_EQ_INT("test_rep_user_outside", SYM_R_OUTSIDE, r.reason);
	sym_user__lookup(u, &proc, 0x402000, false, &r);
	T_EQ_INT("test_rep_user_map_end_exclusive", SYM_R_OUTSIDE, r.reason);
	sym_user__lookup(u, NULL, 0x401146, false, &r);
	T_EQ_INT("test_rep_user_no_process", SYM_R_NO_MAPS, r.reason);
	proc.flags = CAP_PROC_F_NO_MAPS;
	sym_user__lookup(u, &proc, 0x401146, false, &r);
	T_EQ_INT("test_rep_user_no_maps", SYM_R_NO_MAPS, r.reason);
	proc.flags = 0;

	/* other mapping records (the symbolizer keeps a record's object: records never change) */
	other[0] = maps[0];
	other[0].build_id[0] ^= 0xff;
	sym_user__lookup(u, &oproc, 0x401146, false, &r);
	T_EQ_INT("test_rep_user_build_id_mismatch", SYM_R_BUILD_ID, r.reason);
	T_CHECK("test_rep_user_build_id_mismatch_no_name", !r.name, "named %s", r.name);
	/* the cache is keyed by (path, build-id): the right one still resolves */
	sym_user__lookup(u, &proc, 0x401146, false, &r);
	T_EQ_STR("test_rep_user_cache_by_build_id", "stk_leaf", r.name);

	other[1] = maps[0];
	other[1].path = "/no/such/golden.elf";
	oproc.maps = &other[1];
	sym_user__lookup(u, &oproc, 0x401146, false, &r);
	T_EQ_INT("test_rep_user_not_found", SYM_R_NOT_FOUND, r.reason);
	T_EQ_STR("test_rep_user_not_found_module", "golden.elf", r.module);
	other[2] = maps[0];
	other[2].kind = CAP_MAP_VDSO;
	oproc.maps = &other[2];
	sym_user__lookup(u, &oproc, 0x401146, false, &r);
	T_EQ_INT("test_rep_user_vdso", SYM_R_SPECIAL, r.reason);
	T_EQ_STR("test_rep_user_vdso_module", "[vdso]", r.module);
out:
	sym_user__free(u);
	sym_elf__close(e);
	sym_elf__close(p);
}

static void test_user_without_symfs(void)
{
	char path[PATH_MAX];
	struct sym_elf *e = sym_elf__open(ELF_DIR "/golden.elf");
	struct sym_user *u = sym_user__new(&(struct sym_user_opts){ .symfs = NULL, .open_files = true });
	struct cap_mapping m;
	struct cap_process proc = { .pid = 1, .nmaps = 1, .maps = &m };
	struct sym_result r;

	if (!T_CHECK("test_rep_user_path_setup", e && u, "setup failed"))
		goto out;
	/* the recorded path is tried when --symfs is absent (absolute, as stkrec records it) */
	if (!realpath(ELF_DIR "/golden.elf", path))
		goto out;
	m = text_map(e, 0x400000, path);
	sym_user__lookup(u, &proc, 0x401194, false, &r);
	T_EQ_STR("test_rep_user_recorded_path", "read_file", r.name);
out:
	sym_user__free(u);
	sym_elf__close(e);
}

/* A stripped object gets its local symbols from [SYMFS]/usr/lib/debug/.build-id/xx/rest.debug. */
static void test_debug_file(void)
{
	char dir[] = "/tmp/rep_symfs.XXXXXX", cmd[1024], hex[41];
	struct sym_elf *e = sym_elf__open(ELF_DIR "/golden.elf");
	struct sym_user *u = NULL;
	struct cap_mapping m;
	struct cap_process proc = { .pid = 1, .nmaps = 1, .maps = &m };
	struct sym_result r;
	uint32_t i;

	if (!e || !mkdtemp(dir)) {
		T_FAIL("test_rep_debug_setup", "cannot prepare");
		goto out;
	}
	for (i = 0; i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", e->build_id[i]);
	snprintf(cmd, sizeof(cmd),
		 "command -v strip >/dev/null && mkdir -p %s/usr/lib/debug/.build-id/%.2s && "
		 "cp %s/golden.elf %s/usr/lib/debug/.build-id/%.2s/%s.debug && "
		 "strip -o %s/golden.elf %s/golden.elf",
		 dir, hex, ELF_DIR, dir, hex, hex + 2, dir, ELF_DIR);
	if (system(cmd)) {
		printf("skip test_rep_debug_file: strip(1) not available\n");
		goto out;
	}
	u = sym_user__new(&(struct sym_user_opts){ .symfs = dir, .open_files = true });
	m = text_map(e, 0x400000, "/golden.elf");
	sym_user__lookup(u, &proc, 0x401194, false, &r);
	T_EQ_STR("test_rep_debug_file_symbols", "read_file", r.name);
	snprintf(cmd, sizeof(cmd), "rm -rf %s/usr", dir);
	if (system(cmd))
		T_FAIL("test_rep_debug_cleanup", "rm failed");
	sym_user__free(u);
	/* without the debug file the stripped object has no function symbols at all */
	u = sym_user__new(&(struct sym_user_opts){ .symfs = dir, .open_files = true });
	sym_user__lookup(u, &proc, 0x401194, false, &r);
	T_EQ_INT("test_rep_debug_file_absent", SYM_R_NO_SYMBOLS, r.reason);
out:
	if (dir[sizeof(dir) - 7] != 'X') {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", dir);
	}
	sym_user__free(u);
	sym_elf__close(e);
}

static void test_kernel(void)
{
	/* deliberately unsorted: the index must sort */
	struct cap_ksym syms[] = {
		{ 0xffffffff81002000ull, "b", NULL },
		{ 0xffffffff81001000ull, "a", NULL },
		{ 0xffffffffc0000000ull, "mod_fn", "mod" },
	};
	struct cap_ksyms ks = { 0, 3, syms };
	struct sym_kernel *k = sym_kernel__new(&ks), *none = sym_kernel__new(NULL);
	struct cap_ksym zero[] = { { 0, "a", NULL }, { 0, "b", NULL } };
	struct cap_ksyms hidden = { 0, 2, zero };
	struct sym_kernel *h = sym_kernel__new(&hidden);
	struct sym_result r;

	if (!T_CHECK("test_rep_kernel_setup", k && none && h, "setup failed"))
		goto out;
	sym_kernel__lookup(k, 0xffffffff81000fffull, &r);
	T_EQ_INT("test_rep_kernel_below_first", SYM_R_NO_SYMBOLS, r.reason);
	sym_kernel__lookup(k, 0xffffffff81001000ull, &r);
	T_EQ_STR("test_rep_kernel_exact", "a", r.name);
	T_EQ_U64("test_rep_kernel_exact_offset", 0, r.offset);
	sym_kernel__lookup(k, 0xffffffff81001fffull, &r);
	T_EQ_STR("test_rep_kernel_before_next", "a", r.name);
	T_EQ_U64("test_rep_kernel_before_next_offset", 0xfff, r.offset);
	sym_kernel__lookup(k, 0xffffffff81002000ull, &r);
	T_EQ_STR("test_rep_kernel_next", "b", r.name);
	sym_kernel__lookup(k, 0xffffffffc0000010ull, &r);
	T_EQ_STR("test_rep_kernel_last_covers_above", "mod_fn", r.name);
	T_EQ_U64("test_rep_kernel_last_offset", 0x10, r.offset);
	sym_kernel__lookup(none, 0xffffffff81001000ull, &r);
	T_EQ_INT("test_rep_kernel_no_ksyms", SYM_R_NO_KSYMS, r.reason);
	sym_kernel__lookup(h, 0xffffffff81001000ull, &r);
	T_EQ_INT("test_rep_kernel_zero_addresses_are_hidden", SYM_R_KSYMS_HIDDEN, r.reason);
out:
	sym_kernel__free(k);
	sym_kernel__free(none);
	sym_kernel__free(h);
}

/* format.md 4.10: a symbol with a size names only its range; one without reaches the next. */
static void test_kernel_sizes(void)
{
	struct cap_ksym syms[] = {
		{ 0xffffffff81001000ull, "a", NULL, 0x100 },
		{ 0xffffffff81002000ull, "b", NULL, 0 },
		{ 0xffffffff81003000ull, "c", NULL, 0x10 },
		{ 0xffffffffc0000000ull, "top", "bpf", 0x40000000ull },
	};
	struct cap_ksyms ks = { 0, 4, syms };
	struct sym_kernel *k = sym_kernel__new(&ks);
	struct sym_result r;

	if (!T_CHECK("test_rep_kernel_sizes_setup", k, "setup failed"))
		return;
	sym_kernel__lookup(k, 0xffffffff810010ffull, &r);
	T_CHECK("test_rep_kernel_sized_last_byte", r.name && !strcmp(r.name, "a") &&
		r.offset == 0xff, "%s+%#" PRIx64, r.name ? r.name : "(none)", r.offset);
	sym_kernel__lookup(k, 0xffffffff81001100ull, &r);
	T_EQ_INT("test_rep_kernel_sized_past_end", SYM_R_NO_SYMBOLS, r.reason);
	sym_kernel__lookup(k, 0xffffffff81002fffull, &r);
	T_EQ_STR("test_rep_kernel_unsized_up_to_next", "b", r.name);
	sym_kernel__lookup(k, 0xffffffff81003010ull, &r);
	T_EQ_INT("test_rep_kernel_sized_past_end_before_next", SYM_R_NO_SYMBOLS, r.reason);
	sym_kernel__lookup(k, 0xffffffffffffffffull, &r);
	T_CHECK("test_rep_kernel_sized_to_the_top", r.name && !strcmp(r.name, "top") &&
		r.offset == 0x3fffffff, "%s+%#" PRIx64, r.name ? r.name : "(none)", r.offset);
	sym_kernel__free(k);
}

int main(void)
{
	test_segments();
	test_symbols_find();
	test_elf_open();
	test_user_lookup();
	test_user_without_symfs();
	test_debug_file();
	test_kernel();
	test_kernel_sizes();
	T_EXIT();
}
