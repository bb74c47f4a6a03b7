// SPDX-License-Identifier: MIT
/*
 * rep_sym_find.c: where the symbolizer finds names besides the object file itself: embedded
 * OBJECTS records (symbol tables, whole files, the vdso, a debug file's symbols), separate debug
 * files (.gnu_debuglink with its CRC, --debug-dir in build-id layout), MiniDebugInfo, perf maps
 * for JIT code, hidden kallsyms; symbol versions and aliases named alike from disk and from a
 * record; and demangling (exact libiberty output for C++ and Rust names, and a g++-built
 * object). Uses tests/golden/elf/golden.elf (stk_leaf at 0x401146, read_file at 0x401194) and
 * the binutils/gcc tools (objcopy, strip, xz, g++); checks that need a missing tool are skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../symbolize/sym_internal.h"
#include "stk/symbolize.h"
#include "../test.h"
#include "rep_sym.h"

#define LEAF 0x401146ull

static char tmp[] = "/tmp/rep_sym_find.XXXXXX";

static struct cap_mapping text_map(const struct sym_elf *e, const char *path)
{
	struct cap_mapping m = { .kind = CAP_MAP_FILE, .path = (char *)path };

	m.start = 0x401000;
	m.end = 0x402000;
	m.pgoff = 0x1000;
	m.build_id_len = e->build_id_len;
	memcpy(m.build_id, e->build_id, e->build_id_len);
	return m;
}

/* Name of addr in a one-mapping process, with the given options. */
static const char *name_at(const struct sym_user_opts *o, const struct cap_mapping *m,
			   uint64_t addr, struct sym_result *r, struct sym_user **keep)
{
	struct cap_process proc = { .pid = 1, .nmaps = 1, .maps = (struct cap_mapping *)m };

	*keep = sym_user__new(o);
	if (!*keep)
		return NULL;
	sym_user__lookup(*keep, &proc, addr, false, r);
	return r->name;
}

static void test_demangle(void)
{
	static const char *const cases[][2] = {
		{ "_ZN2ns3addEil", "ns::add(int, long)" },
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi",
		  "std::vector<int, std::allocator<int> >::push_back(int const&)" },
		{ "__ZN2ns3addEil", "ns::add(int, long)" },
		/* Rust legacy: the hash is dropped */
		{ "_ZN4core3fmt9Formatter3pad17h0123456789abcdefE", "core::fmt::Formatter::pad" },
		/* Rust v0 */
		{ "_RNvCs1234_7mycrate3foo", "mycrate::foo" },
		{ "_RNvMs_Cs4Cv8Wi1oAIB_7mycrateINtB4_3FooKy5_E3bar", "<mycrate::Foo<5>>::bar" },
	};
	char name[64];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = sym_demangle(cases[i][0]);

		snprintf(name, sizeof(name), "test_rep_demangle_%zu", i);
		T_EQ_STR(name, cases[i][1], d);
		free(d);
	}
	T_CHECK("test_rep_demangle_plain_c", !sym_demangle("main"), "demangled main");
	T_CHECK("test_rep_demangle_invalid", !sym_demangle("_Zinvalid"), "demangled _Zinvalid");
}

/* A g++-built program: its symbol comes out demangled, or raw with demangle off. */
static void test_cxx_object(const struct sym_elf *golden)
{
	char bin[256];
	struct sym_elf *e;
	struct sym_user *u = NULL;
	struct cap_mapping m;
	struct sym_result r;
	uint32_t i;
	uint64_t addr = 0;

	snprintf(bin, sizeof(bin), "%s/cxx", tmp);
	if (sh("printf 'namespace ns { __attribute__((noinline)) int add(int a, long b) "
	       "{ return a + (int)b; } }\\nint main(int c, char **v) { return ns::add(c, 2); }\\n'"
	       " > %s/cxx.cc && g++ -O1 -g -no-pie -fno-pie -o %s %s/cxx.cc 2>/dev/null",
	       tmp, bin, tmp)) {
		printf("skip test_rep_cxx_object: g++ not available\n");
		return;
	}
	e = sym_elf__open(bin);
	for (i = 0; e && i < e->nsyms; i++)
		if (!strcmp(e->syms[i].name, "_ZN2ns3addEil"))
			addr = e->syms[i].addr;
	if (!T_CHECK("test_rep_cxx_symbol", addr && addr >= 0x401000 && addr < 0x402000,
		     "no _ZN2ns3addEil in text"))
		goto out;
	m = text_map(e, bin);
	name_at(&(struct sym_user_opts){ .open_files = true, .demangle = true }, &m, addr, &r, &u);
	T_EQ_STR("test_rep_cxx_demangled", "ns::add(int, long)", r.name);
	sym_user__free(u);
	name_at(&(struct sym_user_opts){ .open_files = true }, &m, addr, &r, &u);
	T_EQ_STR("test_rep_cxx_no_demangle", "_ZN2ns3addEil", r.name);
out:
	(void)golden;
	sym_user__free(u);
	sym_elf__close(e);
}

/* An OBJECTS record names frames of a file absent from this host. */
static void test_embedded(const struct sym_elf *e)
{
	struct cap_segment segs[] = { { 0x1000, 0x401000, 0x259, 0x259 } };
	struct cap_symbol syms[] = {
		{ 0x401194, 0x40, "read_file_embedded" },
		{ 0x401146, 0x15, "_ZN2ns3addEil" },	/* unsorted on purpose */
	};
	struct cap_object obj = { .flags = CAP_OBJ_F_SYMTAB, .path = "/gone/golden.elf",
				  .debuglink = "", .nsegs = 1, .segs = segs, .nsyms = 2,
				  .syms = syms };
	const struct cap_object *objs[] = { &obj };
	struct sym_user_opts o = { .open_files = true, .demangle = true, .objects = objs,
				   .nobjects = 1 };
	struct cap_mapping m = text_map(e, "/gone/golden.elf");
	struct sym_user *u = NULL;
	struct sym_result r;

	obj.build_id_len = e->build_id_len;
	memcpy(obj.build_id, e->build_id, e->build_id_len);
	name_at(&o, &m, READ_FILE + 3, &r, &u);
	T_EQ_STR("test_rep_embedded_symtab", "read_file_embedded", r.name);
	T_EQ_U64("test_rep_embedded_offset", 3, r.offset);
	T_EQ_STR("test_rep_embedded_module_path", "/gone/golden.elf", r.module_path);
	T_CHECK("test_rep_embedded_build_id", r.build_id && r.build_id_len == e->build_id_len &&
		!memcmp(r.build_id, e->build_id, e->build_id_len), "build-id not reported");
	sym_user__free(u);
	name_at(&o, &m, LEAF, &r, &u);
	T_EQ_STR("test_rep_embedded_demangled", "ns::add(int, long)", r.name);
	sym_user__free(u);
	/* another build of the object: the record is not used */
	m.build_id[0] ^= 1;
	name_at(&o, &m, READ_FILE, &r, &u);
	T_EQ_INT("test_rep_embedded_other_build", SYM_R_NOT_FOUND, r.reason);
	sym_user__free(u);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	uint8_t *buf = NULL;
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc(n);
		if (buf && fread(buf, 1, n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = n;
	}
	fclose(f);
	return buf;
}

/* Whole embedded objects: the vdso (keyed by its build-id), and a damaged copy. */
static void test_embedded_whole(const struct sym_elf *e)
{
	size_t len = 0;
	uint8_t *data = slurp(GOLDEN, &len);
	struct cap_object obj = { .flags = CAP_OBJ_F_WHOLE, .path = "[vdso]", .debuglink = "" };
	const struct cap_object *objs[] = { &obj };
	struct sym_user_opts o = { .open_files = false, .objects = objs, .nobjects = 1 };
	struct cap_mapping m = text_map(e, "[vdso]");
	struct cap_process proc = { .pid = 1, .nmaps = 1, .maps = &m };
	struct sym_user *u = NULL;
	struct sym_result r;
	const void *tok1, *tok2;
	uint64_t off;

	if (!T_CHECK("test_rep_whole_setup", data, "cannot read " GOLDEN))
		return;
	obj.build_id_len = e->build_id_len;
	memcpy(obj.build_id, e->build_id, e->build_id_len);
	obj.data = data;
	obj.data_len = len;
	m.kind = CAP_MAP_VDSO;
	name_at(&o, &m, LEAF, &r, &u);
	T_EQ_STR("test_rep_vdso_named", "stk_leaf", r.name);
	T_EQ_STR("test_rep_vdso_module", "[vdso]", r.module);
	T_CHECK("test_rep_vdso_locate", !sym_user__locate(u, &proc, LEAF, false, &tok1, &off) &&
		(uintptr_t)tok1 < 4096 && off == 0x1146, "not an object token");
	sym_user__free(u);
	/* bytes whose build-id is not the key: never used */
	obj.build_id[1] ^= 1;
	m.build_id[1] ^= 1;
	name_at(&o, &m, LEAF, &r, &u);
	T_EQ_INT("test_rep_whole_mismatch", SYM_R_BUILD_ID, r.reason);
	sym_user__free(u);
	/* a vdso nobody embedded */
	o.nobjects = 0;
	name_at(&o, &m, LEAF, &r, &u);
	T_EQ_INT("test_rep_vdso_absent", SYM_R_SPECIAL, r.reason);
	T_CHECK("test_rep_vdso_absent_locate",
		!sym_user__locate(u, &proc, LEAF, false, &tok2, &off) && tok2 != tok1,
		"same token");
	sym_user__free(u);
	free(data);
}

/*
 * Symbol versions are not part of a name (format.md 4.8): the same name from a .symtab on disk
 * (NAME@VERSION, NAME@@VERSION) and from an embedded table; of aliases, the shortest.
 */
static void test_symbol_versions(const struct sym_elf *e)
{
	char path[300];
	struct cap_segment segs[] = { { 0x1000, 0x401000, 0x259, 0x259 } };
	struct cap_symbol syms[] = {
		{ LEAF, 0x15, "stk_leaf@@V_2" },
		{ READ_FILE, 0x57, "read_file@V_1" },
		{ READ_FILE, 0x57, "__GI_read_file" },
	};
	struct cap_object obj = { .flags = CAP_OBJ_F_SYMTAB, .path = "/gone/golden.elf",
				  .debuglink = "", .nsegs = 1, .segs = segs, .nsyms = 3,
				  .syms = syms };
	const struct cap_object *objs[] = { &obj };
	struct sym_user_opts o = { .open_files = true, .demangle = true };
	struct cap_mapping m;
	struct sym_user *u = NULL;
	struct sym_result r;

	snprintf(path, sizeof(path), "%s/versioned.elf", tmp);
	if (sh("objcopy --redefine-sym stk_leaf=stk_leaf@@V_2 "
	       "--redefine-sym read_file=read_file@V_1 %s %s", GOLDEN, path)) {
		printf("skip test_rep_versions_on_disk: objcopy failed\n");
	} else {
		m = text_map(e, path);
		name_at(&o, &m, LEAF, &r, &u);
		T_EQ_STR("test_rep_versions_on_disk_default", "stk_leaf", r.name);
		sym_user__free(u);
		name_at(&o, &m, READ_FILE + 2, &r, &u);
		T_EQ_STR("test_rep_versions_on_disk", "read_file", r.name);
		T_EQ_U64("test_rep_versions_on_disk_offset", 2, r.offset);
		sym_user__free(u);
	}
	o.objects = objs;
	o.nobjects = 1;
	obj.build_id_len = e->build_id_len;
	memcpy(obj.build_id, e->build_id, e->build_id_len);
	m = text_map(e, "/gone/golden.elf");
	name_at(&o, &m, LEAF, &r, &u);
	T_EQ_STR("test_rep_versions_embedded_default", "stk_leaf", r.name);
	sym_user__free(u);
	name_at(&o, &m, READ_FILE, &r, &u);
	T_EQ_STR("test_rep_versions_embedded_alias", "read_file", r.name);
	sym_user__free(u);
}

/*
 * A whole stripped object embedded with its debug file's symbols in the record (DEBUGFILE): the
 * record names its frames, not the image's .dynsym nor a debug file of this host.
 */
static void test_embedded_whole_debugfile(const struct sym_elf *e)
{
	char hex[2 * CAP_BUILD_ID_MAX + 1], path[300], dbgdir[300];
	const char *dirs[1] = { dbgdir };
	struct cap_segment segs[] = { { 0x1000, 0x401000, 0x259, 0x259 } };
	struct cap_symbol syms[] = { { READ_FILE, 0x57, "read_file_from_record" } };
	struct cap_object obj = { .flags = CAP_OBJ_F_WHOLE | CAP_OBJ_F_DYNSYM | CAP_OBJ_F_SYMTAB |
					   CAP_OBJ_F_DEBUGFILE,
				  .path = "/gone/golden.elf", .debuglink = "", .nsegs = 1,
				  .segs = segs, .nsyms = 1, .syms = syms };
	const struct cap_object *objs[] = { &obj };
	struct sym_user_opts o = { .open_files = true, .objects = objs, .nobjects = 1,
				   .debug_dirs = dirs, .ndebug_dirs = 1 };
	struct cap_mapping m = text_map(e, "/gone/golden.elf");
	struct sym_user *u = NULL;
	struct sym_result r;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/whole-stripped.elf", tmp);
	snprintf(dbgdir, sizeof(dbgdir), "%s/whole-dbg", tmp);
	elfobj_hex(e->build_id, e->build_id_len, hex);
	if (sh("strip -o %s %s && mkdir -p %s/.build-id/%.2s && "
	       "objcopy --only-keep-debug %s %s/.build-id/%.2s/%s.debug",
	       path, GOLDEN, dbgdir, hex, GOLDEN, dbgdir, hex, hex + 2)) {
		printf("skip test_rep_whole_debugfile: strip/objcopy failed\n");
		return;
	}
	obj.data = slurp(path, &len);
	obj.data_len = len;
	obj.build_id_len = e->build_id_len;
	memcpy(obj.build_id, e->build_id, e->build_id_len);
	if (!T_CHECK("test_rep_whole_debugfile_setup", obj.data, "cannot read %s", path))
		return;
	name_at(&o, &m, READ_FILE, &r, &u);
	T_EQ_STR("test_rep_whole_debugfile", "read_file_from_record", r.name);
	sym_user__free(u);
	/* without the flag the record's symbols are the image's: this host's debug file names it */
	obj.flags &= ~(CAP_OBJ_F_DEBUGFILE | CAP_OBJ_F_SYMTAB);
	name_at(&o, &m, READ_FILE, &r, &u);
	T_EQ_STR("test_rep_whole_without_debugfile", "read_file", r.name);
	sym_user__free(u);
	free(obj.data);
}

/* Perf maps: per process generation, later entries win. */
static void test_jit(void)
{
	struct cap_symbol first[] = { { 0x7f0000001000, 0x100, "jit_old" },
				      { 0x7f0000002000, 0x80, "jit_other" } };
	struct cap_symbol second[] = { { 0x7f0000001040, 0x20, "jit_new" } };
	struct cap_perfmap pm1 = { .pid = 7, .start_time = 100, .count = 2, .syms = first };
	struct cap_perfmap pm2 = { .pid = 7, .start_time = 100, .count = 1, .syms = second };
	const struct cap_perfmap *pms[] = { &pm1, &pm2 };
	struct cap_mapping m = { .start = 0x7f0000000000, .end = 0x7f0000010000,
				 .kind = CAP_MAP_ANON_EXEC, .path = "" };
	struct cap_process p7 = { .pid = 7, .start_time = 100, .nmaps = 1, .maps = &m };
	struct cap_process p7b = { .pid = 7, .start_time = 200, .nmaps = 1, .maps = &m };
	struct sym_user *u = sym_user__new(&(struct sym_user_opts){ .perfmaps = pms,
								    .nperfmaps = 2 });
	struct sym_result r;
	const void *t1, *t2;
	uint64_t o1, o2;

	if (!T_CHECK("test_rep_jit_setup", u, "no symbolizer"))
		return;
	sym_user__lookup(u, &p7, 0x7f0000001010, false, &r);
	T_EQ_STR("test_rep_jit_named", "jit_old", r.name);
	T_EQ_U64("test_rep_jit_offset", 0x10, r.offset);
	sym_user__lookup(u, &p7, 0x7f0000001048, false, &r);
	T_EQ_STR("test_rep_jit_later_wins", "jit_new", r.name);
	sym_user__lookup(u, &p7, 0x7f0000001060, false, &r);
	T_EQ_STR("test_rep_jit_after_overlap", "jit_old", r.name);
	sym_user__lookup(u, &p7, 0x7f0000002080, true, &r);
	T_EQ_STR("test_rep_jit_return_address", "jit_other", r.name);
	sym_user__lookup(u, &p7, 0x7f0000003000, false, &r);
	T_EQ_INT("test_rep_jit_gap", SYM_R_NO_SYMBOLS, r.reason);
	sym_user__lookup(u, &p7b, 0x7f0000001010, false, &r);
	T_EQ_INT("test_rep_jit_other_generation", SYM_R_SPECIAL, r.reason);
	/* the cache key of JIT frames is per process generation */
	sym_user__locate(u, &p7, 0x7f0000001010, false, &t1, &o1);
	sym_user__locate(u, &p7b, 0x7f0000001010, false, &t2, &o2);
	T_CHECK("test_rep_jit_locate_per_process", t1 != t2, "same token for two processes");
	sym_user__free(u);
}

static void test_kernel_hidden(void)
{
	struct cap_ksym syms[] = { { 0xffffffff81001000ull, "a", NULL } };
	struct cap_ksyms ks = { CAP_KSYMS_F_HIDDEN, 1, syms };
	struct sym_kernel *k = sym_kernel__new(&ks);
	struct sym_result r;

	sym_kernel__lookup(k, 0xffffffff81001010ull, &r);
	T_EQ_INT("test_rep_kernel_hidden_reason", SYM_R_KSYMS_HIDDEN, r.reason);
	T_CHECK("test_rep_kernel_hidden_no_name", !r.name, "named %s", r.name);
	sym_kernel__free(k);
}

/* Stripped object + .gnu_debuglink (CRC checked); --debug-dir in build-id layout. */
static void test_debug_files(const struct sym_elf *e)
{
	char hex[2 * CAP_BUILD_ID_MAX + 1], path[300], dbgdir[300];
	const char *dirs[1] = { dbgdir };
	struct sym_user_opts o = { .open_files = true };
	struct cap_segment segs[] = { { 0x1000, 0x401000, 0x259, 0x259 } };
	struct cap_object obj = { .flags = CAP_OBJ_F_DYNSYM, .path = "/no/such/dir/golden.elf",
				  .debuglink = "", .nsegs = 1, .segs = segs };
	const struct cap_object *objs[] = { &obj };
	struct cap_mapping m;
	struct sym_user *u = NULL;
	struct sym_result r;

	snprintf(path, sizeof(path), "%s/bin/golden.elf", tmp);
	snprintf(dbgdir, sizeof(dbgdir), "%s/dbg", tmp);
	if (sh("mkdir -p %s/bin/.debug %s && objcopy --only-keep-debug %s %s/bin/.debug/g.debug && "
	       "strip -o %s %s && objcopy --add-gnu-debuglink=%s/bin/.debug/g.debug %s",
	       tmp, dbgdir, GOLDEN, tmp, path, GOLDEN, tmp, path)) {
		printf("skip test_rep_debuglink: objcopy/strip failed\n");
		return;
	}
	m = text_map(e, path);
	name_at(&o, &m, READ_FILE, &r, &u);
	T_EQ_STR("test_rep_debuglink_dot_debug", "read_file", r.name);
	sym_user__free(u);
	/* same build-id, other bytes: the CRC says it is not the file the link names */
	sh("printf x >> %s/bin/.debug/g.debug", tmp);
	name_at(&o, &m, READ_FILE, &r, &u);
	T_EQ_INT("test_rep_debuglink_crc_mismatch", SYM_R_NO_SYMBOLS, r.reason);
	sym_user__free(u);

	/* --debug-dir DIR/.build-id/xx/rest.debug */
	elfobj_hex(e->build_id, e->build_id_len, hex);
	sh("mkdir -p %s/.build-id/%.2s && objcopy --only-keep-debug %s %s/.build-id/%.2s/%s.debug",
	   dbgdir, hex, GOLDEN, dbgdir, hex, hex + 2);
	o.debug_dirs = dirs;
	o.ndebug_dirs = 1;
	name_at(&o, &m, READ_FILE, &r, &u);
	T_EQ_STR("test_rep_debug_dir_build_id", "read_file", r.name);
	sym_user__free(u);
	/* the object gone, its record kept only segments (.dynsym-only objects): the debug file
	 * supplies the symbols; a debug file's own program headers lose the file offsets */
	m.path = "/no/such/dir/golden.elf";
	name_at(&o, &m, READ_FILE, &r, &u);
	T_EQ_INT("test_rep_debug_file_alone", SYM_R_NOT_FOUND, r.reason);
	sym_user__free(u);
	o.objects = objs;
	o.nobjects = 1;
	obj.build_id_len = e->build_id_len;
	memcpy(obj.build_id, e->build_id, e->build_id_len);
	name_at(&o, &m, READ_FILE, &r, &u);
	T_EQ_STR("test_rep_debug_file_with_record_segments", "read_file", r.name);
	sym_user__free(u);
	o.nobjects = 0;
	/* a debug file of another build under the right name is never used */
	sh("objcopy --only-keep-debug tests/golden/elf/golden-pie.elf %s/.build-id/%.2s/%s.debug",
	   dbgdir, hex, hex + 2);
	m.path = path;
	name_at(&o, &m, READ_FILE, &r, &u);
	T_EQ_INT("test_rep_debug_dir_mismatch", SYM_R_NO_SYMBOLS, r.reason);
	sym_user__free(u);
}

/* MiniDebugInfo, made as gdb's manual says (the local functions, xz-compressed). */
static void test_minidebuginfo(const struct sym_elf *e)
{
	char path[300];
	struct cap_mapping m;
	struct sym_user *u = NULL;
	struct sym_result r;
	struct sym_elf *s;

	snprintf(path, sizeof(path), "%s/mini.elf", tmp);
	if (sh("cd %s && cp %s/" GOLDEN " g && nm g --format=posix --defined-only | "
	       "awk '$2 ~ /[Tt]/ { print $1 }' | sort > funcs && "
	       "objcopy --only-keep-debug g g.dbg && objcopy -S --remove-section .comment "
	       "--keep-symbols=funcs g.dbg mini && xz -f mini && strip --strip-all g -o mini.elf && "
	       "objcopy --add-section .gnu_debugdata=mini.xz mini.elf",
	       tmp, getenv("PWD") ? getenv("PWD") : ".")) {
		printf("skip test_rep_minidebuginfo: nm/objcopy/xz failed\n");
		return;
	}
	s = sym_elf__open(path);
	T_CHECK("test_rep_minidebuginfo_flag", s && s->from_debugdata && s->full_symtab,
		"not read from .gnu_debugdata");
	sym_elf__close(s);
	m = text_map(e, path);
	name_at(&(struct sym_user_opts){ .open_files = true }, &m, READ_FILE, &r, &u);
	T_EQ_STR("test_rep_minidebuginfo", "read_file", r.name);
	sym_user__free(u);
}

int main(void)
{
	struct sym_elf *e = sym_elf__open(GOLDEN);

	if (!e || !mkdtemp(tmp)) {
		T_FAIL("test_rep_sym_find_setup", "cannot open " GOLDEN " or make a directory");
		T_EXIT();
	}
	test_demangle();
	test_cxx_object(e);
	test_embedded(e);
	test_embedded_whole(e);
	test_symbol_versions(e);
	test_embedded_whole_debugfile(e);
	test_jit();
	test_kernel_hidden();
	test_debug_files(e);
	test_minidebuginfo(e);
	sh("rm -rf %s", tmp);
	sym_elf__close(e);
	T_EXIT();
}
