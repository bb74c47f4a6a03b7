// SPDX-License-Identifier: MIT
/*
 * rep_budget.c: stkreport on hostile captures (tests/tools/hostile.h) stays within its budgets
 * (format.md 2, "Limits"; stkreport(1), --max-memory and --max-debug):
 *  - an lz4 bomb stops loading at the memory budget (-EFBIG at a chunk, what was read kept) and
 *    gives every byte back when freed;
 *  - kernel symbol tables copied per interval are charged, not only the records;
 *  - symbol tables the symbolizer makes are charged: past the budget their frames are unnamed
 *    ("over the memory budget");
 *  - embedded objects with compressed DWARF: the debug budget bounds the bytes inflated and the
 *    entries visited, the objects left unread are counted, and every frame keeps its name;
 *  - the same for MiniDebugInfo (.gnu_debugdata) bombs, without -l.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../report/report.h"
#include "../test.h"
#include "../tools/hostile.h"

#define MiB (1u << 20)

static char dir[] = "/tmp/rep_budget.XXXXXX";
static char path[256];

static struct cap_writer *start(const char *name)
{
	struct cap_writer *w;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	w = cap_writer__open(path);
	if (!w) {
		printf("not ok rep_budget: cannot create %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return w;
}

static void finish(struct cap_writer *w, int err)
{
	cap_writer__close(w);
	if (err) {
		printf("not ok rep_budget: write %s: %s\n", path, strerror(-err));
		exit(1);
	}
}

static void test_bomb(void)
{
	struct cap_writer *w = start("bomb.stk");
	struct cap_budget b = { .limit = 10 * MiB };
	struct rep_capture *c;
	int err;

	/* 8 chunks of 4 MiB of zeros: 12 MiB of symbols and strings each once decoded */
	err = hostile_meta(w);
	finish(w, err ? err : hostile_ksyms_bomb(w, 8, 4 * MiB));
	c = rep_capture__load(path, &b);
	if (!T_CHECK("test_rep_budget_bomb_loads", c, "load: %s", strerror(errno)))
		return;
	T_CHECK("test_rep_budget_bomb_efbig", c->how == REP_END_ERROR && c->err == -EFBIG,
		"how %d err %d", c->how, c->err);
	/* chunk 0 is the META record: the budget stops the walk at a KSYMS chunk */
	T_CHECK("test_rep_budget_bomb_chunk", c->err_chunk >= 1 && c->err_chunk <= 8 &&
		c->err_offset > 16, "chunk %u at 0x%llx", c->err_chunk,
		(unsigned long long)c->err_offset);
	T_CHECK("test_rep_budget_bomb_peak", b.peak <= b.limit && b.refused >= 1,
		"peak %llu of %llu, %llu refused", (unsigned long long)b.peak,
		(unsigned long long)b.limit, (unsigned long long)b.refused);
	T_CHECK("test_rep_budget_bomb_kept", c->meta != NULL, "the META record before it is lost");
	rep_capture__free(c);
	T_EQ_U64("test_rep_budget_bomb_given_back", 0, b.used);

	/* the same file under no limit: a measure of what the budget saved */
	b = (struct cap_budget){ 0 };
	c = rep_capture__load(path, &b);
	T_CHECK("test_rep_budget_bomb_unlimited", c && c->how == REP_END_UNCLOSED &&
		b.peak > 8 * 10 * (uint64_t)MiB, "peak %llu", (unsigned long long)b.peak);
	rep_capture__free(c);
}

/*
 * A table of 50000 kernel symbols, then 40 times: one symbol replaced, and an interval whose
 * kernel stack uses it. Each replacement after the first interval copies the table (the
 * intervals before keep theirs, format.md 4.10): 40 tables of 1.6 MB from a file of a few
 * hundred KiB.
 */
static void test_ksyms_copies(void)
{
	enum { NSYMS = 50000, ROUNDS = 40 };
	static struct cap_ksym syms[NSYMS];
	struct cap_writer *w = start("ksyms.stk");
	struct cap_budget b = { 0 };
	struct rep_capture *c;
	uint64_t one_table = (uint64_t)NSYMS * sizeof(struct cap_ksym);
	int err = 0;

	for (uint32_t i = 0; i < NSYMS; i++)
		syms[i] = (struct cap_ksym){ 0xffffffff81000000ull + 16 * i, "f", NULL, 16 };
	err = cap_writer__put(w, &(struct cap_record){ .type = CAP_CHUNK_KSYMS_ADD,
						       .ksyms = { 0, NSYMS, syms } });
	for (uint32_t k = 0; k < ROUNDS && !err; k++) {
		struct cap_ksym one = { syms[k].addr, "g", NULL, 16 };
		uint64_t ip = one.addr + 4;
		struct cap_stack st = { .nips = 1, .ips = &ip };
		struct cap_row row = { .pid = 1, .tid = 1, .comm = "t", .kstack = 1, .count = 1 };

		err = cap_writer__put(w, &(struct cap_record){ .type = CAP_CHUNK_KSYMS_ADD,
							       .ksyms = { 0, 1, &one } });
		if (!err)
			err = cap_writer__put(w, &(struct cap_record){
				.type = CAP_CHUNK_INTERVAL,
				.interval = { .seq = k, .nkstacks = 1, .kstacks = &st, .nrows = 1,
					      .rows = &row } });
	}
	finish(w, err);
	c = rep_capture__load(path, &b);
	T_CHECK("test_rep_budget_ksyms_tables", c && c->nksyms == ROUNDS &&
		b.peak >= ROUNDS * one_table, "%u tables, peak %llu",
		c ? c->nksyms : 0, (unsigned long long)b.peak);
	rep_capture__free(c);
	T_EQ_U64("test_rep_budget_ksyms_given_back", 0, b.used);

	b = (struct cap_budget){ .limit = 16 * one_table };
	c = rep_capture__load(path, &b);
	T_CHECK("test_rep_budget_ksyms_refused", c && c->how == REP_END_ERROR &&
		c->err == -EFBIG && c->nksyms >= 8 && c->nksyms < 16 && b.peak <= b.limit,
		"how %d err %d, %u tables, peak %llu", c ? (int)c->how : -1, c ? c->err : 0,
		c ? c->nksyms : 0, (unsigned long long)b.peak);
	rep_capture__free(c);
}

/* Symbolize every user frame of c's one interval; count names and those from hostile_fn_N. */
static void resolve_all(const struct rep_capture *c, struct cap_budget *memory,
			struct sym_debug_budget *debug, bool lines, uint32_t *frames,
			uint32_t *named, uint32_t *budget_reason)
{
	struct rep_opts o = { .input = path, .memory = memory, .debug = debug, .no_demangle = true,
			      .no_inline = !lines, .no_objects = true };
	struct rep_resolver *r = rep_resolver__new(c, &o, lines ? REP_RESOLVE_LINES : 0);
	const struct rep_interval *ri = c->nintervals ? &c->intervals[0] : NULL;

	*frames = *named = *budget_reason = 0;
	for (uint32_t row = 0; r && ri && row < ri->iv->nrows; row++) {
		const struct cap_stack *st = &ri->iv->ustacks[ri->iv->rows[row].ustack - 1];

		for (uint32_t i = 0; i < st->nips; i++) {
			const struct rep_frame_info *f;

			if (rep_resolver__frame(r, ri, row, false, i > 0, st->ips[i], &f))
				continue;
			(*frames)++;
			*named += f->name && !strncmp(f->name, "hostile_fn_", 11);
			*budget_reason += f->reason == SYM_R_BUDGET;
		}
	}
	rep_resolver__free(r);
}

/*
 * 12 objects, each with a .debug_info of 1 MiB of zeros: libdw inflates it, and then walks 262144
 * empty units, which the budget counts too (SYM_DEBUG_VISIT_COST each): about 17 MiB per object.
 */
static void test_dwarf(void)
{
	enum { NOBJ = 12 };
	const uint64_t per_object = MiB + 262144ull * SYM_DEBUG_VISIT_COST;
	struct cap_writer *w = start("dwarf.stk");
	struct sym_debug_budget dbg = { 0 };
	struct rep_capture *c;
	uint32_t frames, named, over;

	finish(w, hostile_objects(w, NOBJ, MiB, 0));
	c = rep_capture__load(path, NULL);
	if (!T_CHECK("test_rep_budget_dwarf_loads", c && c->nobjects == NOBJ, "load: %s",
		     c ? "objects missing" : strerror(errno)))
		goto out;
	/* no limit: every object's DWARF is opened, inflated and walked */
	resolve_all(c, NULL, &dbg, true, &frames, &named, &over);
	T_CHECK("test_rep_budget_dwarf_unlimited", dbg.objects == NOBJ && !dbg.skipped &&
		dbg.inflated == NOBJ * (uint64_t)MiB && dbg.used >= NOBJ * per_object - NOBJ * 4096,
		"%u opened, %u skipped, %llu inflated, %llu used", dbg.objects, dbg.skipped,
		(unsigned long long)dbg.inflated, (unsigned long long)dbg.used);
	T_CHECK("test_rep_budget_dwarf_unlimited_named", frames == NOBJ && named == NOBJ,
		"%u of %u frames named", named, frames);

	/* room for two and a half objects: two read, the third cut short, the rest not opened */
	dbg = (struct sym_debug_budget){ .limit = per_object * 5 / 2 };
	resolve_all(c, NULL, &dbg, true, &frames, &named, &over);
	T_CHECK("test_rep_budget_dwarf_bounded", dbg.used <= dbg.limit && dbg.objects == 3 &&
		dbg.inflated == 3 * (uint64_t)MiB && dbg.skipped == NOBJ - 2,
		"%u opened, %u skipped, %llu inflated, %llu used of %llu", dbg.objects,
		dbg.skipped, (unsigned long long)dbg.inflated, (unsigned long long)dbg.used,
		(unsigned long long)dbg.limit);
	T_CHECK("test_rep_budget_dwarf_names_kept", frames == NOBJ && named == NOBJ,
		"%u of %u frames named", named, frames);
out:
	rep_capture__free(c);
}

/* 6 objects with only .dynsym and a .gnu_debugdata of 1 MiB of zeros (xz): symbols read
 * without -l, and the MiniDebugInfo decompressed until the budget ends. */
static void test_debugdata(void)
{
	struct cap_writer *w = start("debugdata.stk");
	struct sym_debug_budget dbg = { .limit = 5 * MiB / 2 };
	struct rep_capture *c;
	uint32_t frames, named, over;

	finish(w, hostile_objects(w, 6, MiB, MKELF_DEBUGDATA));
	c = rep_capture__load(path, NULL);
	resolve_all(c, NULL, &dbg, false, &frames, &named, &over);
	/* two whole, the third's first half; three never started */
	T_CHECK("test_rep_budget_debugdata_bounded", dbg.inflated == 5 * MiB / 2 &&
		dbg.used == dbg.inflated && dbg.objects == 3 && dbg.skipped == 4,
		"%u read, %u skipped, %llu inflated", dbg.objects, dbg.skipped,
		(unsigned long long)dbg.inflated);
	T_CHECK("test_rep_budget_debugdata_names_kept", frames == 6 && named == 6,
		"%u of %u frames named", named, frames);
	rep_capture__free(c);
}

/*
 * The symbolizer's tables: 6 objects whose OBJECTS records hold symbol tables only, of 100000
 * symbols each (2.4 MB of table each once indexed). A budget that holds the capture and three
 * of the tables: the other frames are unnamed, with their reason.
 */
static void test_symbol_tables(void)
{
	enum { NOBJ = 6, NSYMS = 100000 };
	static struct cap_symbol syms[NSYMS];
	struct cap_writer *w = start("symtabs.stk");
	struct cap_mapping maps[NOBJ];
	uint64_t ips[NOBJ];
	struct cap_budget b = { 0 };
	struct cap_process proc = { 100, 0, 1, "t", "", NOBJ, maps };
	struct cap_stack st = { .nips = NOBJ, .ips = ips };
	struct cap_row row = { .pid = 100, .tid = 100, .comm = "t", .ustack = 1, .count = 1 };
	struct rep_capture *c;
	uint32_t frames, named, over;
	uint64_t loaded, table;
	int err = 0;

	for (uint32_t i = 0; i < NSYMS; i++)
		syms[i] = (struct cap_symbol){ 0x1000 + 16 * i, 16, "hostile_fn_x" };
	for (uint32_t i = 0; i < NOBJ && !err; i++) {
		struct cap_segment seg = { 0, 0, 0x1000 + 16 * NSYMS, 0x1000 + 16 * NSYMS };
		struct cap_object o = { .flags = CAP_OBJ_F_SYMTAB, .build_id_len = 20,
					.path = "/hostile/symtab.so", .debuglink = "", .nsegs = 1,
					.segs = &seg, .nsyms = NSYMS, .syms = syms };

		memset(o.build_id, 0x40 + i, 20);
		err = cap_writer__put(w, &(struct cap_record){ .type = CAP_CHUNK_OBJECTS,
							       .objects = { 1, &o } });
		maps[i] = (struct cap_mapping){ .start = 0x10000000ull * (i + 1),
						.end = 0x10000000ull * (i + 1) + 0x200000,
						.kind = CAP_MAP_FILE, .build_id_len = 20,
						.path = "/hostile/symtab.so" };
		memcpy(maps[i].build_id, o.build_id, 20);
		ips[i] = maps[i].start + 0x1000 + 16 * 777 + 4;
	}
	if (!err)
		err = cap_writer__put(w, &(struct cap_record){ .type = CAP_CHUNK_PROCS,
							       .procs = { 1, &proc } });
	if (!err)
		err = cap_writer__put(w, &(struct cap_record){
			.type = CAP_CHUNK_INTERVAL,
			.interval = { .nustacks = 1, .ustacks = &st, .nrows = 1, .rows = &row } });
	finish(w, err);
	c = rep_capture__load(path, &b);
	loaded = b.used;
	resolve_all(c, &b, NULL, false, &frames, &named, &over);
	table = (b.peak - loaded) / NOBJ;
	T_CHECK("test_rep_budget_symtabs_charged", c && named == NOBJ && !over &&
		table >= NSYMS * sizeof(struct sym_symbol), "%u named, %u over, %llu per table",
		named, over, (unsigned long long)table);
	T_EQ_U64("test_rep_budget_symtabs_given_back", loaded, b.used);
	rep_capture__free(c);

	b = (struct cap_budget){ .limit = loaded + table * 7 / 2 };
	c = rep_capture__load(path, &b);
	resolve_all(c, &b, NULL, false, &frames, &named, &over);
	T_CHECK("test_rep_budget_symtabs_over", c && c->how == REP_END_UNCLOSED && named == 3 &&
		over == NOBJ - 3 && b.refused == NOBJ - 3 && b.peak <= b.limit,
		"%u named, %u over the budget, %llu refused", named, over,
		(unsigned long long)b.refused);
	rep_capture__free(c);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		printf("not ok rep_budget: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_bomb();
	test_ksyms_copies();
	test_dwarf();
	test_debugdata();
	test_symbol_tables();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			printf("not ok rep_budget: cannot remove %s\n", dir);
	}
	T_EXIT();
}
