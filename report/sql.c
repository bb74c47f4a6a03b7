// SPDX-License-Identifier: MIT
/*
 * sql.c: --sql, --sqlite: the captures as an SQLite database (schema: docs/sql.md), and a query
 * over it that can read that data and nothing else.
 *
 * Loading: one transaction, one prepared statement per table, rebound for each row; indexes are
 * built after the rows are in (one sort instead of a b-tree insert per row). Stacks are
 * deduplicated by content (context + addresses) across intervals; every distinct (object, file
 * offset) or (kernel symbol table, address) is symbolized once (resolve.c).
 *
 * Memory: the database is in memory, and it is the run's too (--max-memory): what SQLite holds
 * is taken from the run's budget after every row (struct sql_heap), and SQLite's own hard heap
 * limit keeps one statement (an index, VACUUM INTO, a query) from going past what was left
 * when the run began. Over either, the run ends with the budget's error (-EFBIG).
 *
 * Safety: after loading, the connection turns query_only and defensive, attaches nothing, loads
 * no extension, and an authorizer admits only reads, functions other than a few dangerous ones,
 * and introspection pragmas. The user's query is one statement; its refusal is one line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "report.h"

static const char schema[] =
	"CREATE TABLE captures (id INTEGER PRIMARY KEY, file TEXT, host TEXT, kernel TEXT,"
	" arch TEXT, ncpus INTEGER, mode TEXT, start_ns INTEGER, duration_ns INTEGER,"
	" probes INTEGER, freq_hz INTEGER, period INTEGER, weight TEXT, intervals INTEGER,"
	" events INTEGER, format TEXT, state TEXT);\n"
	"CREATE TABLE meta (capture INTEGER, key TEXT, value TEXT);\n"
	"CREATE TABLE probes (capture INTEGER, id INTEGER, kind TEXT, spec TEXT,"
	" attached INTEGER);\n"
	"CREATE TABLE intervals (capture INTEGER, seq INTEGER, start_ns INTEGER, end_ns INTEGER,"
	" per_event INTEGER, nrows INTEGER, count INTEGER);\n"
	"CREATE TABLE processes (id INTEGER PRIMARY KEY, capture INTEGER, pid INTEGER,"
	" start_time INTEGER, comm TEXT, exe TEXT, no_maps INTEGER);\n"
	"CREATE TABLE objects (id INTEGER PRIMARY KEY, build_id TEXT, path TEXT);\n"
	"CREATE TABLE mappings (process INTEGER, start INTEGER, end INTEGER, pgoff INTEGER,"
	" kind TEXT, deleted INTEGER, object INTEGER);\n"
	"CREATE TABLE stacks (id INTEGER PRIMARY KEY, capture INTEGER, kind TEXT,"
	" addresses INTEGER, frames INTEGER, truncated INTEGER);\n"
	"CREATE TABLE frames (stack INTEGER, depth INTEGER, ip INTEGER, address INTEGER,"
	" symbol TEXT, offset INTEGER, object INTEGER, file TEXT, line INTEGER, inlined INTEGER,"
	" kernel INTEGER, reason TEXT, language TEXT, PRIMARY KEY (stack, depth)) WITHOUT ROWID;\n"
	"CREATE TABLE samples (id INTEGER PRIMARY KEY, capture INTEGER, interval INTEGER,"
	" probe INTEGER, pid INTEGER, tid INTEGER, comm TEXT, process INTEGER, kstack INTEGER,"
	" ustack INTEGER, kstack_lost INTEGER, ustack_lost INTEGER, count INTEGER,"
	" ts_ns INTEGER, cpu INTEGER);\n"
	"CREATE TABLE losses (capture INTEGER, interval INTEGER, kind TEXT, cpu INTEGER,"
	" count INTEGER);\n"
	"CREATE TABLE stack_counts (stack INTEGER PRIMARY KEY, capture INTEGER, count INTEGER);\n"
	"CREATE TABLE stack_functions (stack INTEGER, function TEXT, kernel INTEGER,"
	" PRIMARY KEY (stack, function, kernel)) WITHOUT ROWID;\n";

/*
 * After the rows: derived tables, indexes for the documented queries, views.
 *
 * The views add counts with CAST(total(x) AS INTEGER), not sum(x): counts go up to 2^63-1
 * (docs/sql.md), and sum() fails the whole query ("integer overflow") when two of them add past
 * it. total() adds in doubles (exact below 2^53) and the cast holds a sum past 2^63-1 there.
 */
static const char finish_sql[] =
	"CREATE INDEX samples_interval ON samples (capture, interval);\n"
	"CREATE INDEX samples_kstack ON samples (kstack);\n"
	"CREATE INDEX samples_ustack ON samples (ustack);\n"
	"CREATE INDEX frames_symbol ON frames (symbol);\n"
	"CREATE INDEX stack_functions_function ON stack_functions (function);\n"
	"CREATE INDEX processes_pid ON processes (capture, pid);\n"
	/* self: the leaf of the sample (kernel leaf when it has a kernel stack) */
	"CREATE VIEW function_self AS SELECT st.capture AS capture,"
	" coalesce(f.symbol, '[unknown]') AS function, f.kernel AS kernel,"
	" CAST(total(l.n) AS INTEGER) AS self FROM"
	" (SELECT coalesce(kstack, ustack) AS stack, CAST(total(count) AS INTEGER) AS n"
	"  FROM samples"
	"  WHERE coalesce(kstack, ustack) IS NOT NULL GROUP BY 1) l"
	" JOIN frames f ON f.stack = l.stack AND f.depth = 0 JOIN stacks st ON st.id = l.stack"
	" GROUP BY 1, 2, 3;\n"
	/* total: once per sample whatever the recursion (stack_functions is distinct per stack,
	 * and kernel and user functions are told apart by the kernel column) */
	"CREATE VIEW function_total AS SELECT sc.capture AS capture, sf.function AS function,"
	" sf.kernel AS kernel, CAST(total(sc.count) AS INTEGER) AS total FROM stack_counts sc"
	" JOIN stack_functions sf ON sf.stack = sc.stack GROUP BY 1, 2, 3;\n"
	"CREATE VIEW functions AS SELECT t.capture AS capture, t.function AS function,"
	" t.kernel AS kernel, coalesce(s.self, 0) AS self, t.total AS total FROM function_total t"
	" LEFT JOIN function_self s ON s.capture = t.capture AND s.function = t.function"
	" AND s.kernel = t.kernel;\n"
	"CREATE VIEW process_totals AS SELECT capture, pid, comm,"
	" CAST(total(count) AS INTEGER) AS count, count(*) AS rows FROM samples"
	" GROUP BY capture, pid, comm;\n"
	"CREATE VIEW function_intervals AS"
	" SELECT s.capture AS capture, s.interval AS interval, sf.function AS function,"
	" sf.kernel AS kernel, CAST(total(s.count) AS INTEGER) AS count FROM samples s"
	" JOIN stack_functions sf ON sf.stack = s.kstack GROUP BY 1, 2, 3, 4"
	" UNION ALL SELECT s.capture, s.interval, sf.function, sf.kernel,"
	" CAST(total(s.count) AS INTEGER) FROM samples s"
	" JOIN stack_functions sf ON sf.stack = s.ustack GROUP BY 1, 2, 3, 4;\n"
	/* caller = the next frame outwards in the same stack (kernel stacks end at the syscall
	 * entry: their callers in user space are not linked) */
	/* per-event captures (stkrec --snoop): one row per event, in time order */
	"CREATE VIEW events AS SELECT id, capture, interval, ts_ns, cpu, probe, pid, tid, comm,"
	" kstack, ustack FROM samples WHERE ts_ns IS NOT NULL;\n"
	"CREATE VIEW callers AS SELECT sc.capture AS capture,"
	" coalesce(callee.symbol, '[unknown]') AS function, callee.kernel AS kernel,"
	" coalesce(caller.symbol, '[unknown]') AS caller, CAST(total(sc.count) AS INTEGER) AS count"
	" FROM frames callee"
	" JOIN frames caller ON caller.stack = callee.stack AND caller.depth = callee.depth + 1"
	" JOIN stack_counts sc ON sc.stack = callee.stack GROUP BY 1, 2, 3, 4;\n";

enum {
	ST_CAPTURE, ST_META, ST_PROBE, ST_INTERVAL, ST_PROCESS, ST_OBJECT, ST_MAPPING, ST_STACK,
	ST_FRAME, ST_SAMPLE, ST_LOSS, ST_STACK_COUNT, ST_STACK_FUNCTION, ST__COUNT
};

static const char *const insert_sql[ST__COUNT] = {
	[ST_CAPTURE] = "INSERT INTO captures VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_META] = "INSERT INTO meta VALUES (?,?,?)",
	[ST_PROBE] = "INSERT INTO probes VALUES (?,?,?,?,?)",
	[ST_INTERVAL] = "INSERT INTO intervals VALUES (?,?,?,?,?,?,?)",
	[ST_PROCESS] = "INSERT INTO processes VALUES (?,?,?,?,?,?,?)",
	[ST_OBJECT] = "INSERT INTO objects VALUES (?,?,?)",
	[ST_MAPPING] = "INSERT INTO mappings VALUES (?,?,?,?,?,?,?)",
	[ST_STACK] = "INSERT INTO stacks VALUES (?,?,?,?,?,?)",
	[ST_FRAME] = "INSERT INTO frames VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_SAMPLE] = "INSERT INTO samples VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_LOSS] = "INSERT INTO losses VALUES (?,?,?,?,?)",
	[ST_STACK_COUNT] = "INSERT INTO stack_counts VALUES (?,?,?)",
	[ST_STACK_FUNCTION] = "INSERT OR IGNORE INTO stack_functions VALUES (?,?,?)",
};

/*
 * SQLite's heap, counted in the run's budget: sqlite3_memory_used() is all SQLite holds (one
 * connection, this one), taken from the budget as it grows and given back as it shrinks.
 */
struct sql_heap {
	struct cap_budget *budget;
	uint64_t charged;
};

/* Set SQLite's hard heap limit to what b has left (none without a limit). */
static void sql_heap_start(struct sql_heap *h, struct cap_budget *b)
{
	uint64_t left = b && b->limit ? (b->used < b->limit ? b->limit - b->used : 1) : 0;

	*h = (struct sql_heap){ .budget = b };
	sqlite3_hard_heap_limit64(left > INT64_MAX ? INT64_MAX : (int64_t)left);
}

/* A result code that says SQLite's hard heap limit, the run's budget, was reached. */
static bool over_heap_limit(int rc)
{
	return (rc & 0xff) == SQLITE_NOMEM && sqlite3_hard_heap_limit64(-1) > 0;
}

/* Charge what SQLite holds now: 0, or -EFBIG when the budget has not that much left. */
static int sql_heap_sync(struct sql_heap *h)
{
	uint64_t used = (uint64_t)sqlite3_memory_used();

	if (used < h->charged) {
		cap_budget__give(h->budget, h->charged - used);
	} else if (used > h->charged) {
		if (cap_budget__take(h->budget, used - h->charged))
			return -EFBIG;
	}
	h->charged = used;
	return 0;
}

static void sql_heap_end(struct sql_heap *h)
{
	cap_budget__give(h->budget, h->charged);
	h->charged = 0;
	sqlite3_hard_heap_limit64(0);
}

/* A stack already inserted: its content, to find it again. */
struct stack_ent {
	const void *ctx;	/* process record (user) or kernel symbol table + 1 (kernel) */
	const uint64_t *ips;	/* into the capture's records */
	uint32_t nips;
	bool kernel;
};

struct loader {
	sqlite3 *db;
	sqlite3_stmt *st[ST__COUNT];
	struct sql_heap *heap;
	struct rep_charge charge;	/* the arrays below (the tables charge theirs) */
	const struct rep_opts *o;
	const struct rep_capture *c;	/* the capture being loaded */
	int64_t capture;
	struct rep_resolver *res;	/* per capture */
	/* stacks of this capture: content -> id */
	struct rep_htab stack_index;
	struct stack_ent *stacks;
	int64_t *stack_ids;
	uint32_t nstacks, stacks_cap;
	int64_t next_stack;
	uint64_t *stack_counts;		/* per stack: samples (the stack_counts table) */
	/* distinct function names of the stack being inserted, for stack_functions */
	const char **fnames;
	uint32_t nfnames, fnames_cap;
	struct rep_htab fname_index;
	/* process records of this capture -> processes.id */
	struct rep_htab proc_index;
	const struct cap_process **procs;
	uint32_t nprocs, procs_cap;
	int64_t next_process;
	int64_t proc_base;	/* processes.id of this capture's first record - 1 */
	/* wall time = CLOCK_MONOTONIC time + wall_offset, when has_clock (the meta clock pair,
	 * looked up once per capture rather than once per event row) */
	bool has_clock;
	int64_t wall_offset;
	/* "build-id-hex path" -> objects.id - 1, over every capture */
	struct rep_strtab objects;
	int64_t kernel_object;
	char key[8192];		/* scratch */
};

/* ---- helpers --------------------------------------------------------------------------------- */

static int db_error(sqlite3 *db, const char *what)
{
	fprintf(stderr, "stkreport: --sql: %s: %s\n", what, sqlite3_errmsg(db));
	return -EIO;
}

/* Run a statement already bound; reset it for the next row. */
static int step(struct loader *l, int which)
{
	sqlite3_stmt *s = l->st[which];
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc == SQLITE_DONE)
		return sql_heap_sync(l->heap);
	if (rc == SQLITE_INTERRUPT) {
		fprintf(stderr, "stkreport: --sql: interrupted\n");
		return -EINTR;
	}
	if (over_heap_limit(rc))
		return -EFBIG;	/* rep_run() names the budget */
	return db_error(l->db, "load");
}

static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
}

/* uint64 values over INT64_MAX (kernel addresses) wrap to negative: SQLite integers are signed */
/* Addresses: their bits, so kernel addresses read as negative numbers (docs/sql.md). */
static void bind_u64(sqlite3_stmt *s, int i, uint64_t v)
{
	sqlite3_bind_int64(s, i, (int64_t)v);
}

/* Counts: SQLite integers are signed, a count past INT64_MAX is held there (docs/sql.md). */
static void bind_count(sqlite3_stmt *s, int i, uint64_t v)
{
	sqlite3_bind_int64(s, i, v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

static const char *meta(const struct rep_capture *c, const char *key)
{
	return c->meta ? cap_meta_get(c->meta, key) : NULL;
}

static void bind_meta_int(sqlite3_stmt *s, int i, const struct rep_capture *c, const char *key)
{
	int64_t v;

	if (rep_capture_meta_i64(c, key, &v))
		sqlite3_bind_int64(s, i, v);
}

static void bind_wall(const struct loader *l, sqlite3_stmt *s, int i, uint64_t mono)
{
	/* unsigned arithmetic, as rep_capture_wall_ns(): hostile values wrap */
	if (l->has_clock)
		sqlite3_bind_int64(s, i, (int64_t)((uint64_t)l->wall_offset + mono));
}

/* ---- captures, processes, objects ------------------------------------------------------------ */

const char *rep_capture_state(enum rep_end how)
{
	static const char *const names[] = { "clean", "unclosed", "truncated", "damaged" };

	return how <= REP_END_ERROR ? names[how] : "damaged";
}

static int put_capture(struct loader *l, const char *name)
{
	const struct rep_capture *c = l->c;
	sqlite3_stmt *s = l->st[ST_CAPTURE];
	int64_t start = 0, end = 0;
	bool has_start, has_end;
	char format[16];
	uint32_t i;
	int err;

	has_start = rep_capture_meta_i64(c, "start.mono_ns", &start);
	if (!has_start && c->nintervals) {
		start = c->intervals[0].iv->start_ns;
		has_start = true;
	}
	has_end = c->has_end || c->nintervals;
	end = c->has_end ? (int64_t)c->end.end_ns
			 : c->nintervals ? (int64_t)c->intervals[c->nintervals - 1].iv->end_ns : 0;
	sqlite3_bind_int64(s, 1, l->capture);
	bind_text(s, 2, name);
	bind_text(s, 3, meta(c, "host"));
	bind_text(s, 4, meta(c, "kernel"));
	bind_text(s, 5, meta(c, "arch"));
	bind_meta_int(s, 6, c, "ncpus");
	bind_text(s, 7, meta(c, "mode") ? meta(c, "mode") : "count");	/* format.md 4.1 */
	if (has_start)
		bind_wall(l, s, 8, start);
	if (has_start && has_end)
		sqlite3_bind_int64(s, 9, end - start);
	sqlite3_bind_int64(s, 10, c->meta ? c->meta->nprobes : 0);
	bind_meta_int(s, 11, c, "freq_hz");
	bind_meta_int(s, 12, c, "period");
	bind_text(s, 13, meta(c, "weight"));
	sqlite3_bind_int64(s, 14, c->nseqs);
	bind_count(s, 15, c->events);
	snprintf(format, sizeof(format), "%u.%u", c->major, c->minor);
	bind_text(s, 16, format);
	bind_text(s, 17, rep_capture_state(c->how));
	err = step(l, ST_CAPTURE);
	for (i = 0; !err && c->meta && i < c->meta->nkv; i++) {
		s = l->st[ST_META];
		sqlite3_bind_int64(s, 1, l->capture);
		bind_text(s, 2, c->meta->kv[i].key);
		bind_text(s, 3, c->meta->kv[i].value);
		err = step(l, ST_META);
	}
	for (i = 0; !err && c->meta && i < c->meta->nprobes; i++) {
		const struct cap_probe *p = &c->meta->probes[i];

		s = l->st[ST_PROBE];
		sqlite3_bind_int64(s, 1, l->capture);
		sqlite3_bind_int64(s, 2, p->id);
		bind_text(s, 3, cap_probe_kind_name(p->kind));
		bind_text(s, 4, p->spec);
		sqlite3_bind_int64(s, 5, p->nattached);
		err = step(l, ST_PROBE);
	}
	return err;
}

/* objects.id of (build-id, path), inserting it when new; 0 with *id unset on -ENOMEM */
static int object_id(struct loader *l, const uint8_t *bid, uint32_t bid_len, const char *path,
		     int64_t *id)
{
	char hexid[2 * CAP_BUILD_ID_MAX + 1];
	sqlite3_stmt *s = l->st[ST_OBJECT];
	uint32_t before = l->objects.n;
	int64_t v;

	if (bid_len > CAP_BUILD_ID_MAX)
		bid_len = CAP_BUILD_ID_MAX;
	elfobj_hex(bid, bid ? bid_len : 0, hexid);
	snprintf(l->key, sizeof(l->key), "%s %s", hexid, path ? path : "");
	v = rep_strtab__intern(&l->objects, l->key);
	if (v < 0)
		return v;
	*id = v + 1;
	if (l->objects.n == before)
		return 0;
	sqlite3_bind_int64(s, 1, *id);
	if (*hexid)
		bind_text(s, 2, hexid);
	bind_text(s, 3, path);
	return step(l, ST_OBJECT);
}

static const char *map_kind_name(uint32_t kind)
{
	static const char *const names[] = { "file", "anon-exec", "vdso", "memfd", "other" };

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "other";
}

struct ptr_key {
	const struct loader *l;
	const struct cap_process *p;
};

static bool proc_eq(const void *ctx, uint32_t val)
{
	const struct ptr_key *k = ctx;

	return k->l->procs[val] == k->p;
}

static int put_process(struct loader *l, const struct cap_process *p)
{
	struct ptr_key key = { l, p };
	sqlite3_stmt *s = l->st[ST_PROCESS];
	uint64_t h = rep_hash_u64(0, (uintptr_t)p);
	int64_t id, obj;
	uint32_t i;
	int err;

	if (rep_htab__find(&l->proc_index, h, proc_eq, &key, &i))
		return 0;
	if (l->nprocs == l->procs_cap) {
		uint32_t cap = l->procs_cap ? l->procs_cap * 2 : 64;
		const struct cap_process **v;

		if (rep_charge__take(&l->charge, (uint64_t)(cap - l->procs_cap) * sizeof(*v)))
			return -EFBIG;
		v = realloc(l->procs, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->procs = v;
		l->procs_cap = cap;
	}
	err = rep_htab__insert(&l->proc_index, h, l->nprocs);
	if (err)
		return err;
	l->procs[l->nprocs++] = p;
	id = ++l->next_process;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, l->capture);
	sqlite3_bind_int64(s, 3, p->pid);
	bind_u64(s, 4, p->start_time);
	bind_text(s, 5, p->comm);
	bind_text(s, 6, p->exe);
	sqlite3_bind_int(s, 7, !!(p->flags & CAP_PROC_F_NO_MAPS));
	err = step(l, ST_PROCESS);
	for (i = 0; !err && i < p->nmaps; i++) {
		const struct cap_mapping *m = &p->maps[i];

		err = object_id(l, m->build_id, m->build_id_len, m->path, &obj);
		if (err)
			break;
		s = l->st[ST_MAPPING];
		sqlite3_bind_int64(s, 1, id);
		bind_u64(s, 2, m->start);
		bind_u64(s, 3, m->end);
		bind_u64(s, 4, m->pgoff);
		bind_text(s, 5, map_kind_name(m->kind));
		sqlite3_bind_int(s, 6, !!(m->flags & CAP_MAP_F_DELETED));
		sqlite3_bind_int64(s, 7, obj);
		err = step(l, ST_MAPPING);
	}
	return err;
}

/* processes.id of a row's process record (the ids follow record order), or 0 */
static int64_t process_id(const struct loader *l, const struct cap_process *p)
{
	struct ptr_key key = { l, p };
	uint32_t i;

	if (!p || !rep_htab__find(&l->proc_index, rep_hash_u64(0, (uintptr_t)p), proc_eq, &key, &i))
		return 0;
	return l->proc_base + 1 + i;
}

static int put_processes(struct loader *l)
{
	uint32_t i, j;
	int err;

	for (i = 0; i < l->c->nrecs; i++) {
		const struct cap_record *rec = l->c->recs[i];

		if (rec->type != CAP_CHUNK_PROCS)
			continue;
		for (j = 0; j < rec->procs.count; j++) {
			err = put_process(l, &rec->procs.procs[j]);
			if (err)
				return err;
		}
	}
	return 0;
}

/* ---- stacks and frames ----------------------------------------------------------------------- */

struct stack_key {
	const struct loader *l;
	const struct stack_ent *e;
};

static bool stack_eq(const void *ctx, uint32_t val)
{
	const struct stack_key *k = ctx;
	const struct stack_ent *a = k->e, *b = &k->l->stacks[val];

	return a->ctx == b->ctx && a->kernel == b->kernel && a->nips == b->nips &&
	       (a->ips == b->ips || !memcmp(a->ips, b->ips, a->nips * sizeof(*a->ips)));
}

static int put_frame(struct loader *l, int64_t stack, uint32_t depth, uint32_t ip, uint64_t addr,
		     const char *name, uint64_t offset, int64_t object, const char *file,
		     uint32_t line, bool inlined, const struct rep_frame_info *f)
{
	sqlite3_stmt *s = l->st[ST_FRAME];

	sqlite3_bind_int64(s, 1, stack);
	sqlite3_bind_int64(s, 2, depth);
	sqlite3_bind_int64(s, 3, ip);
	/* an interpreter frame: its code object's address and instruction offset (format.md 4.11) */
	bind_u64(s, 4, f->lang ? f->code_addr : addr);
	bind_text(s, 5, name);
	if (name && !inlined && !(f->lang && offset == CAP_CODE_OFF_NONE))
		bind_u64(s, 6, offset);	/* an inlined function has no symbol of its own */
	if (object)
		sqlite3_bind_int64(s, 7, object);
	bind_text(s, 8, file);
	if (line)
		sqlite3_bind_int64(s, 9, line);
	sqlite3_bind_int(s, 10, inlined);
	sqlite3_bind_int(s, 11, f->kernel);
	if (f->reason != SYM_OK)
		bind_text(s, 12, sym_reason_name(f->reason));
	bind_text(s, 13, f->lang == CAP_LANG_PYTHON ? "python" : f->lang ? "other" : "native");
	return step(l, ST_FRAME);
}

struct fname_key {
	const struct loader *l;
	const char *name;
};

static bool fname_eq(const void *ctx, uint32_t val)
{
	const struct fname_key *k = ctx;

	return !strcmp(k->l->fnames[val], k->name);
}

/*
 * Remember name (once) among the functions of the stack being inserted: hashed, so that a stack
 * of a thousand frames with as many names costs a thousand lookups, not a million compares.
 */
static int note_function(struct loader *l, const char *name)
{
	struct fname_key key = { l, name ? name : "[unknown]" };
	uint64_t h = rep_hash_bytes(0, key.name, strlen(key.name));
	uint32_t val;

	if (rep_htab__find(&l->fname_index, h, fname_eq, &key, &val))
		return 0;
	if (l->nfnames == l->fnames_cap) {
		uint32_t cap = l->fnames_cap ? l->fnames_cap * 2 : 64;
		const char **v;

		if (rep_charge__take(&l->charge, (uint64_t)(cap - l->fnames_cap) * sizeof(*v)))
			return -EFBIG;
		v = realloc(l->fnames, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->fnames = v;
		l->fnames_cap = cap;
	}
	l->fnames[l->nfnames] = key.name;
	return rep_htab__insert(&l->fname_index, h, l->nfnames++);
}

/* stack_functions: each function once per stack, so totals count a sample once (recursion) */
static int put_stack_functions(struct loader *l, int64_t stack, bool kernel)
{
	sqlite3_stmt *s = l->st[ST_STACK_FUNCTION];
	uint32_t i;
	int err = 0;

	for (i = 0; i < l->nfnames && !err; i++) {
		sqlite3_bind_int64(s, 1, stack);
		sqlite3_bind_text(s, 2, l->fnames[i], -1, SQLITE_STATIC);
		sqlite3_bind_int(s, 3, kernel);
		err = step(l, ST_STACK_FUNCTION);
	}
	l->nfnames = 0;
	rep_htab__clear(&l->fname_index);
	return err;
}

/* Frames of a new stack, leaf first; an address with inlined functions gives one row each. */
static int put_frames(struct loader *l, int64_t stack, const struct rep_interval *ri,
		      uint32_t row, const struct cap_stack *cs, bool kernel, uint32_t *depth)
{
	const struct rep_frame_info *f;
	uint32_t i, j;
	int64_t obj;
	int err;

	for (i = 0; i < cs->nips; i++) {
		if (!kernel && rep_ip_hidden(l->o, cs->ips, cs->nips, i))
			continue;	/* --python-frames */
		err = rep_resolver__frame(l->res, ri, row, kernel, i > 0, cs->ips[i], &f);
		if (err)
			return err;
		obj = l->kernel_object;
		if (!kernel) {
			obj = 0;
			if (f->module_path || f->build_id)
				err = object_id(l, f->build_id, f->build_id_len, f->module_path,
						&obj);
			if (err)
				return err;
		}
		for (j = 0; j < f->ninl; j++) {
			err = note_function(l, f->inl[j].name);
			if (!err)
				err = put_frame(l, stack, (*depth)++, i, cs->ips[i],
						f->inl[j].name, 0, obj, f->inl[j].file,
						f->inl[j].line, true, f);
			if (err)
				return err;
		}
		err = note_function(l, f->name);
		if (!err)
			err = put_frame(l, stack, (*depth)++, i, cs->ips[i], f->name, f->offset,
					obj, f->file, f->line, false, f);
		if (err)
			return err;
	}
	return put_stack_functions(l, stack, kernel);
}

static int grow_stacks(struct loader *l)
{
	uint32_t cap = l->stacks_cap ? l->stacks_cap * 2 : 1024;
	struct stack_ent *v;
	uint64_t *counts;
	int64_t *ids;

	if (rep_charge__take(&l->charge, (uint64_t)(cap - l->stacks_cap) *
			     (sizeof(*v) + sizeof(*ids) + sizeof(*counts))))
		return -EFBIG;
	v = realloc(l->stacks, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->stacks = v;
	ids = realloc(l->stack_ids, cap * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	l->stack_ids = ids;
	counts = realloc(l->stack_counts, cap * sizeof(*counts));
	if (!counts)
		return -ENOMEM;
	l->stack_counts = counts;
	l->stacks_cap = cap;
	return 0;
}

/* stacks.id of one of a row's stacks, inserting stack and frames when new; *id 0 when none */
static int stack_id(struct loader *l, const struct rep_interval *ri, uint32_t row, bool kernel,
		    int64_t *id)
{
	const struct cap_interval *iv = ri->iv;
	const struct cap_stack *cs = rep_row_stack(ri, row, !kernel);
	struct stack_ent e;
	struct stack_key key = { l, &e };
	sqlite3_stmt *s = l->st[ST_STACK];
	uint32_t val, depth = 0;
	uint64_t h;
	int err;

	*id = 0;
	if (!cs)
		return 0;
	/* a kernel stack means the same in every process; a user stack only in its process */
	e = (struct stack_ent){ kernel ? (const void *)(uintptr_t)(ri->ksyms + 1ull)
				       : (const void *)ri->procs[row],
				cs->ips, cs->nips, kernel };
	h = rep_hash_bytes(rep_hash_u64((uintptr_t)e.ctx, kernel), cs->ips,
			   cs->nips * sizeof(*cs->ips));
	if (rep_htab__find(&l->stack_index, h, stack_eq, &key, &val)) {
		*id = l->stack_ids[val];
		l->stack_counts[val] = rep_count_add(l->stack_counts[val], iv->rows[row].count,
						     NULL);
		return 0;
	}
	err = l->nstacks == l->stacks_cap ? grow_stacks(l) : 0;
	if (!err)
		err = rep_htab__insert(&l->stack_index, h, l->nstacks);
	if (err)
		return err;
	*id = ++l->next_stack;
	l->stacks[l->nstacks] = e;
	l->stack_counts[l->nstacks] = iv->rows[row].count;
	l->stack_ids[l->nstacks++] = *id;
	err = put_frames(l, *id, ri, row, cs, kernel, &depth);
	if (err)
		return err;
	sqlite3_bind_int64(s, 1, *id);
	sqlite3_bind_int64(s, 2, l->capture);
	bind_text(s, 3, kernel ? "kernel" : "user");
	sqlite3_bind_int64(s, 4, cs->nips);
	sqlite3_bind_int64(s, 5, depth);
	sqlite3_bind_int(s, 6, !!(cs->flags & CAP_STACK_F_TRUNCATED));
	return step(l, ST_STACK);
}

/* ---- samples --------------------------------------------------------------------------------- */

static int put_sample(struct loader *l, const struct rep_interval *ri, uint32_t r)
{
	const struct cap_row *row = &ri->iv->rows[r];
	sqlite3_stmt *s = l->st[ST_SAMPLE];
	char comm[CAP_COMM_LEN + 1];
	int64_t kid, uid, pid;
	int err;

	err = stack_id(l, ri, r, true, &kid);
	if (!err)
		err = stack_id(l, ri, r, false, &uid);
	if (err)
		return err;
	memcpy(comm, row->comm, CAP_COMM_LEN);
	comm[CAP_COMM_LEN] = 0;	/* hostile input may lack the NUL */
	pid = process_id(l, ri->procs[r]);
	sqlite3_bind_int64(s, 2, l->capture);
	sqlite3_bind_int64(s, 3, ri->iv->seq);
	sqlite3_bind_int64(s, 4, row->probe);
	sqlite3_bind_int64(s, 5, row->pid);
	sqlite3_bind_int64(s, 6, row->tid);
	sqlite3_bind_text(s, 7, comm, -1, SQLITE_TRANSIENT);
	if (pid)
		sqlite3_bind_int64(s, 8, pid);
	if (kid)
		sqlite3_bind_int64(s, 9, kid);
	if (uid)
		sqlite3_bind_int64(s, 10, uid);
	sqlite3_bind_int(s, 11, !!(row->flags & CAP_ROW_F_KSTACK_LOST));
	sqlite3_bind_int(s, 12, !!(row->flags & CAP_ROW_F_USTACK_LOST));
	bind_count(s, 13, row->count);
	if (ri->events) {
		bind_wall(l, s, 14, row->ts_ns);
		sqlite3_bind_int64(s, 15, row->cpu);
	}
	return step(l, ST_SAMPLE);
}

/*
 * One intervals row for chunks first..end-1, the parts of one interval (format.md 3.2, 2.2: a
 * split interval is several chunks with one seq, start and end): rows and counts summed.
 */
static int put_interval(struct loader *l, uint32_t first, uint32_t end)
{
	const struct rep_interval *ri = &l->c->intervals[first];
	sqlite3_stmt *s = l->st[ST_INTERVAL];
	uint64_t count = 0, nrows = 0;
	uint32_t i, r;

	for (i = first; i < end; i++) {
		const struct cap_interval *iv = l->c->intervals[i].iv;

		nrows += iv->nrows;
		for (r = 0; r < iv->nrows; r++)
			count = rep_count_add(count, iv->rows[r].count, NULL);
	}
	sqlite3_bind_int64(s, 1, l->capture);
	sqlite3_bind_int64(s, 2, ri->iv->seq);
	bind_wall(l, s, 3, ri->iv->start_ns);
	bind_wall(l, s, 4, ri->iv->end_ns);
	sqlite3_bind_int(s, 5, ri->events);
	sqlite3_bind_int64(s, 6, nrows);
	bind_count(s, 7, count);
	return step(l, ST_INTERVAL);
}

static int put_intervals(struct loader *l)
{
	const struct rep_capture *c = l->c;
	uint32_t i, j, end, r;
	int err = 0;

	for (i = 0; i < c->nintervals && !err; i = end) {
		for (end = i + 1; end < c->nintervals; end++)
			if (c->intervals[end].index != c->intervals[i].index)
				break;
		err = put_interval(l, i, end);
		for (j = i; !err && j < end; j++)
			for (r = 0; !err && r < c->intervals[j].iv->nrows; r++)
				err = put_sample(l, &c->intervals[j], r);
	}
	return err;
}

/* One losses row (none for a zero count); cpu < 0: not per CPU (NULL). */
static int put_loss(struct loader *l, uint32_t kind, int64_t cpu, uint64_t count)
{
	sqlite3_stmt *s = l->st[ST_LOSS];

	if (!count)
		return 0;
	sqlite3_bind_int64(s, 1, l->capture);
	bind_text(s, 3, cap_loss_name(kind));
	if (cpu >= 0)
		sqlite3_bind_int64(s, 4, cpu);
	bind_count(s, 5, count);
	return step(l, ST_LOSS);
}

/* load.c sums the LOSSES records of a capture, so losses carry no interval (NULL) */
static int put_losses(struct loader *l)
{
	const struct rep_capture *c = l->c;
	uint32_t i;
	int err = 0;

	for (i = 0; !err && i < CAP_LOSS__COUNT; i++)
		err = put_loss(l, i, -1, c->losses[i]);
	for (i = 0; !err && i < c->ncpus; i++)
		err = put_loss(l, CAP_LOSS_EVENTS_DROPPED, i, c->cpu_dropped[i]);
	return err;
}

static int put_stack_counts(struct loader *l)
{
	sqlite3_stmt *s = l->st[ST_STACK_COUNT];
	uint32_t i;
	int err = 0;

	for (i = 0; i < l->nstacks && !err; i++) {
		sqlite3_bind_int64(s, 1, l->stack_ids[i]);
		sqlite3_bind_int64(s, 2, l->capture);
		bind_count(s, 3, l->stack_counts[i]);
		err = step(l, ST_STACK_COUNT);
	}
	return err;
}

/* Per-capture state: stack and process identities are pointers into this capture. */
static void loader_reset(struct loader *l)
{
	rep_resolver__free(l->res);
	l->res = NULL;
	rep_htab__clear(&l->stack_index);
	l->nstacks = 0;
	rep_htab__clear(&l->proc_index);
	l->nprocs = 0;
}

static int load_capture(struct loader *l, const struct rep_capture *c, const char *name)
{
	int err;

	l->c = c;
	l->capture++;
	l->proc_base = l->next_process;
	l->has_clock = rep_capture_wall_ns(c, 0, &l->wall_offset);
	l->res = rep_resolver__new(c, l->o, REP_RESOLVE_LINES);
	if (!l->res)
		return -ENOMEM;
	err = put_capture(l, name);
	if (!err)
		err = put_processes(l);
	if (!err)
		err = put_intervals(l);
	if (!err)
		err = put_losses(l);
	if (!err)
		err = put_stack_counts(l);
	loader_reset(l);
	return err;
}

static int exec(sqlite3 *db, const char *sql, const char *what)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);

	if (rc == SQLITE_OK)
		return 0;
	if (over_heap_limit(rc)) {
		sqlite3_free(msg);
		return -EFBIG;
	}
	if (rc == SQLITE_INTERRUPT)
		fprintf(stderr, "stkreport: --sql: interrupted\n");
	else
		fprintf(stderr, "stkreport: --sql: %s: %s\n", what, msg ? msg : sqlite3_errstr(rc));
	sqlite3_free(msg);
	return rc == SQLITE_INTERRUPT ? -EINTR : -EIO;
}

/* The database being loaded: a loader and its statements over an in-memory SQLite. */
struct rep_sql {
	struct loader l;
	struct sql_heap heap;
	const struct rep_opts *o;
};

/* The loader's memory (statements are finalized by the caller). */
static void loader_free(struct loader *l)
{
	loader_reset(l);
	free(l->stacks);
	free(l->stack_ids);
	free(l->stack_counts);
	free(l->fnames);
	free(l->procs);
	rep_htab__clear(&l->fname_index);
	rep_strtab__clear(&l->objects);
	rep_charge__clear(&l->charge);
}

/* An ENOMEM of the loader is said here; SQLite's errors were said where they happened. */
static int load_error(int err)
{
	if (err == -ENOMEM)
		fprintf(stderr, "stkreport: --sql: %s\n", strerror(ENOMEM));
	return err;
}

static int load_begin(struct loader *l)
{
	int err, i;

	l->charge.budget = l->stack_index.charge.budget = l->proc_index.charge.budget = l->o->memory;
	l->fname_index.charge.budget = l->o->memory;
	rep_strtab__set_budget(&l->objects, l->o->memory);
	/* nothing to recover if loading fails half way: no journal, no syncs */
	err = exec(l->db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;", "set up");
	if (!err)
		err = exec(l->db, schema, "create schema");
	if (!err)
		err = exec(l->db, "BEGIN", "begin");
	for (i = 0; !err && i < ST__COUNT; i++)
		if (sqlite3_prepare_v3(l->db, insert_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &l->st[i],
				       NULL) != SQLITE_OK)
			err = db_error(l->db, "prepare");
	if (!err)
		err = object_id(l, NULL, 0, "[kernel.kallsyms]", &l->kernel_object);
	return err;
}

/* ---- --sqlite OUT.db ------------------------------------------------------------------------- */

/* VACUUM INTO a temporary file beside path, then rename: never a half-written database. */
static int write_db(sqlite3 *db, const char *path)
{
	size_t len = strlen(path);
	sqlite3_stmt *s = NULL;
	char *tmp = malloc(len + 8);
	int fd, err = 0;

	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, len + 8, "%sXXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		fprintf(stderr, "stkreport: %s: %s\n", path, strerror(errno));
		goto out;
	}
	close(fd);
	if (sqlite3_prepare_v2(db, "VACUUM INTO ?", -1, &s, NULL) != SQLITE_OK ||
	    sqlite3_bind_text(s, 1, tmp, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_DONE) {
		err = over_heap_limit(sqlite3_errcode(db)) ? -EFBIG : -EIO;
		if (err == -EIO)
			fprintf(stderr, "stkreport: %s: %s\n", path, sqlite3_errmsg(db));
	} else if (rename(tmp, path)) {
		err = -errno;
		fprintf(stderr, "stkreport: %s: %s\n", path, strerror(errno));
	}
	if (err)
		unlink(tmp);
out:
	sqlite3_finalize(s);
	free(tmp);
	return err;
}

/* ---- the query: what it may do --------------------------------------------------------------- */

struct guard {
	char refused[256];	/* what the authorizer refused, for the one-line error */
};

static bool in_list(const char *s, const char *const *list)
{
	for (; s && *list; list++)
		if (!sqlite3_stricmp(s, *list))
			return true;
	return false;
}

/*
 * Reads only. Functions that touch files or code (load_extension; readfile/writefile/edit exist
 * in the sqlite3 shell's extensions; fts3_tokenizer hands out function pointers) are refused by
 * name; pragmas only when they are known to be read-only introspection.
 */
static int authorize(void *ctx, int action, const char *a1, const char *a2, const char *db,
		     const char *trigger)
{
	static const char *const bad_functions[] = {
		"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", NULL
	};
	static const char *const read_pragmas[] = {
		"table_info", "table_xinfo", "table_list", "index_list", "index_info",
		"index_xinfo", "foreign_key_list", "collation_list", "function_list",
		"pragma_list", "compile_options", "database_list", NULL
	};
	static const char *const schema_tables[] = {
		"sqlite_master", "sqlite_temp_master", "sqlite_schema", "sqlite_temp_schema", NULL
	};
	static const char *const names[] = {
		[SQLITE_CREATE_INDEX] = "CREATE INDEX", [SQLITE_CREATE_TABLE] = "CREATE TABLE",
		[SQLITE_CREATE_TEMP_INDEX] = "CREATE INDEX",
		[SQLITE_CREATE_TEMP_TABLE] = "CREATE TABLE",
		[SQLITE_CREATE_TEMP_TRIGGER] = "CREATE TRIGGER",
		[SQLITE_CREATE_TEMP_VIEW] = "CREATE VIEW", [SQLITE_CREATE_TRIGGER] = "CREATE TRIGGER",
		[SQLITE_CREATE_VIEW] = "CREATE VIEW", [SQLITE_DELETE] = "DELETE",
		[SQLITE_DROP_INDEX] = "DROP INDEX", [SQLITE_DROP_TABLE] = "DROP TABLE",
		[SQLITE_DROP_TEMP_INDEX] = "DROP INDEX", [SQLITE_DROP_TEMP_TABLE] = "DROP TABLE",
		[SQLITE_DROP_TEMP_TRIGGER] = "DROP TRIGGER", [SQLITE_DROP_TEMP_VIEW] = "DROP VIEW",
		[SQLITE_DROP_TRIGGER] = "DROP TRIGGER", [SQLITE_DROP_VIEW] = "DROP VIEW",
		[SQLITE_INSERT] = "INSERT", [SQLITE_PRAGMA] = "PRAGMA", [SQLITE_TRANSACTION] =
		"transaction", [SQLITE_UPDATE] = "UPDATE", [SQLITE_ATTACH] = "ATTACH",
		[SQLITE_DETACH] = "DETACH", [SQLITE_ALTER_TABLE] = "ALTER TABLE",
		[SQLITE_REINDEX] = "REINDEX", [SQLITE_ANALYZE] = "ANALYZE",
		[SQLITE_CREATE_VTABLE] = "CREATE VIRTUAL TABLE",
		[SQLITE_DROP_VTABLE] = "DROP VIRTUAL TABLE", [SQLITE_SAVEPOINT] = "SAVEPOINT",
	};
	struct guard *g = ctx;
	const char *what, *object;

	/* one statement may ask several times: the first refusal is the one to name */
	if (g->refused[0])
		return SQLITE_DENY;

	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_FUNCTION:
		if (!in_list(a2, bad_functions))
			return SQLITE_OK;
		snprintf(g->refused, sizeof(g->refused), "function %s()", a2);
		return SQLITE_DENY;
	case SQLITE_INSERT:
	case SQLITE_UPDATE:
	case SQLITE_DELETE:
		/*
		 * The schema tables are asked about before the statement itself (CREATE TABLE
		 * inserts into sqlite_master; a pragma table-valued function "updates" it): let
		 * the statement's own action be the one refused. They stay unwritable: query_only
		 * and SQLITE_DBCONFIG_DEFENSIVE hold whatever the authorizer says.
		 */
		if (in_list(a1, schema_tables))
			return SQLITE_OK;
		break;
	case SQLITE_PRAGMA:
		if (in_list(a1, read_pragmas))
			return SQLITE_OK;
		snprintf(g->refused, sizeof(g->refused), "PRAGMA %s%s%s", a1 ? a1 : "",
			 a2 ? " = " : "", a2 ? a2 : "");
		return SQLITE_DENY;
	}
	what = action >= 0 && action < (int)(sizeof(names) / sizeof(names[0])) && names[action]
		       ? names[action] : "statement";
	/* the object refused: the name that is in the user's statement */
	object = action == SQLITE_ATTACH || action == SQLITE_TRANSACTION ? NULL
		 : action == SQLITE_SAVEPOINT || action == SQLITE_ALTER_TABLE ? a2 : a1;
	snprintf(g->refused, sizeof(g->refused), "%s%s%s", what, object ? " " : "",
		 object ? object : "");
	return SQLITE_DENY;
}

static int check_interrupt(void *ctx)
{
	const volatile sig_atomic_t *flag = ctx;

	return flag && *flag;
}

/* Settings that hold whatever the query says, then the authorizer. */
#define QUERY_MAX_LENGTH (16 << 20)

static int lock_down(sqlite3 *db, struct guard *g)
{
	/* the data is in memory already: sorts and temporary b-trees may as well be too */
	int err = exec(db, "PRAGMA temp_store = MEMORY; PRAGMA query_only = ON", "lock down");

	if (err)
		return err;
	if (sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL) != SQLITE_OK ||
	    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL) != SQLITE_OK ||
	    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL) != SQLITE_OK)
		return db_error(db, "lock down");
	sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
	/*
	 * One value of a query may not grow past QUERY_MAX_LENGTH: a single call such as
	 * printf('%.*c', 2000000000, 'x') built a gigabyte. (It still loops for seconds inside
	 * one VM step, where the progress handler cannot stop it: main.c's alarm does.) The
	 * loaded data's longest text is a path.
	 */
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, QUERY_MAX_LENGTH);
	if (sqlite3_set_authorizer(db, authorize, g) != SQLITE_OK)
		return db_error(db, "lock down");
	return 0;
}

/* ---- printing the result --------------------------------------------------------------------- */

/* Display width: code points (UTF-8 continuation bytes take no column). */
static size_t width(const char *s)
{
	size_t w = 0;

	for (; s && *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

struct table {
	int ncols;
	char **cells;		/* rows * ncols, NULL for SQL NULL; headers first */
	size_t n, cap;
	bool *numeric;		/* per column: every non-NULL value is a number */
	size_t *widths;
	struct rep_charge charge;	/* cells are held until the last row: the run's budget */
};

static int table_push(struct table *t, const char *s)
{
	char *copy = NULL;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		char **v;

		if (rep_charge__take(&t->charge, (cap - t->cap) * sizeof(*v)))
			return -EFBIG;
		v = realloc(t->cells, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->cells = v;
		t->cap = cap;
	}
	/* cells hold what prints (escape.h): widths are measured on it */
	if (s && !(copy = rep_escape_dup(s, 0)))
		return -ENOMEM;
	if (copy && rep_charge__take(&t->charge, strlen(copy) + 1 + 16)) {
		free(copy);
		return -EFBIG;
	}
	t->cells[t->n++] = copy;
	return 0;
}

/* Blanks are held back until something follows them: no line ends in blanks. */
static void print_cell(FILE *out, const char *s, size_t w, bool right, size_t *pending)
{
	size_t pad = w - width(s);

	if (right)
		*pending += pad;
	if (s && *s) {
		fprintf(out, "%*s%s", (int)*pending, "", s);
		*pending = 0;
	}
	if (!right)
		*pending += pad;
}

/*
 * Aligned table (the sqlite3 shell's .mode column, plus alignment): headers, a dashed rule,
 * then the rows; columns two spaces apart, numeric columns right-aligned, text left-aligned,
 * NULL as an empty cell, no trailing blanks.
 */
static void table_print(FILE *out, const struct table *t)
{
	size_t rows = t->n / t->ncols, r, pending;
	int c;

	for (c = 0; c < t->ncols; c++)
		for (r = 0; r < rows; r++)
			if (width(t->cells[r * t->ncols + c]) > t->widths[c])
				t->widths[c] = width(t->cells[r * t->ncols + c]);
	for (r = 0; r < rows; r++) {
		pending = 0;
		for (c = 0; c < t->ncols; c++) {
			if (c)
				pending += 2;
			print_cell(out, t->cells[r * t->ncols + c], t->widths[c], t->numeric[c],
				   &pending);
		}
		fputc('\n', out);
		if (r)
			continue;
		for (c = 0; c < t->ncols; c++) {
			size_t i;

			if (c)
				fputs("  ", out);
			for (i = 0; i < t->widths[c]; i++)
				fputc('-', out);
		}
		fputc('\n', out);
	}
}

/*
 * A CSV field: escaped as every text output (escape.h), so no CR or LF is left to quote and
 * every record is one line; then quoted when it holds a comma or a double quote or begins or
 * ends with a space. 0 or -ENOMEM.
 */
static int csv_field(FILE *out, const char *raw)
{
	char *esc = NULL;
	const char *s = raw;

	if (!s)
		return 0;
	if (rep_needs_escape(s, 0)) {
		esc = rep_escape_dup(s, 0);
		if (!esc)
			return -ENOMEM;
		s = esc;
	}
	if (!strpbrk(s, ",\"") && *s != ' ' && (!*s || s[strlen(s) - 1] != ' ')) {
		fputs(s, out);
	} else {
		fputc('"', out);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', out);
			fputc(*s, out);
		}
		fputc('"', out);
	}
	free(esc);
	return 0;
}

/* Length of the valid UTF-8 sequence at s, or 0. */
static int utf8_len(const unsigned char *s)
{
	int n, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* A JSON string; bytes that are not UTF-8 (comms can hold anything) become U+FFFD. */
static void json_string(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', out);
	while (*s) {
		int n = utf8_len(s);

		if (!n) {
			fputs("\\ufffd", out);
			s++;
		} else if (*s == '"' || *s == '\\') {
			fprintf(out, "\\%c", *s++);
		} else if (*s < 0x20) {
			fprintf(out, "\\u%04x", *s++);
		} else {
			fwrite(s, 1, n, out);
			s += n;
		}
	}
	fputc('"', out);
}

static void json_value(FILE *out, sqlite3_stmt *s, int c)
{
	const char *text = (const char *)sqlite3_column_text(s, c);

	switch (sqlite3_column_type(s, c)) {
	case SQLITE_NULL:
		fputs("null", out);
		break;
	case SQLITE_INTEGER:
		fprintf(out, "%lld", (long long)sqlite3_column_int64(s, c));
		break;
	case SQLITE_FLOAT:
		/* SQLite prints Inf and NaN as words; JSON has no spelling for them */
		if (text && strpbrk(text, "0123456789") && !strpbrk(text, "IiNn"))
			fputs(text, out);
		else
			fputs("null", out);
		break;
	default:
		json_string(out, text ? text : "");
	}
}

/* Why the query stopped: refused (VACUUM asks when it runs), interrupted, or else. */
static int query_error(sqlite3 *db, int rc, const struct guard *g)
{
	if (rc == SQLITE_AUTH || g->refused[0]) {
		fprintf(stderr, "stkreport: --sql: not authorized: %s\n",
			g->refused[0] ? g->refused : sqlite3_errmsg(db));
		return -EPERM;
	}
	if (rc == SQLITE_INTERRUPT) {
		fprintf(stderr, "stkreport: --sql: interrupted\n");
		return -EINTR;
	}
	if (over_heap_limit(rc))
		return -EFBIG;
	fprintf(stderr, "stkreport: --sql: %s\n", sqlite3_errmsg(db));
	return -EINVAL;
}

static int run_rows(FILE *out, sqlite3 *db, sqlite3_stmt *s, const struct rep_opts *o,
		    const struct guard *g)
{
	int ncols = sqlite3_column_count(s), c, rc, err = 0;
	struct table t = { .ncols = ncols, .charge.budget = o->memory };
	size_t nrows = 0, i;

	if (!o->csv && !o->json) {
		t.numeric = calloc(ncols ? ncols : 1, sizeof(*t.numeric));
		t.widths = calloc(ncols ? ncols : 1, sizeof(*t.widths));
		if (!t.numeric || !t.widths) {
			err = -ENOMEM;
			goto out;
		}
		for (c = 0; c < ncols && !err; c++) {
			err = table_push(&t, sqlite3_column_name(s, c));
			t.numeric[c] = true;
		}
	}
	if (o->csv) {
		for (c = 0; c < ncols && !err; c++) {
			if (c)
				fputc(',', out);
			err = csv_field(out, sqlite3_column_name(s, c));
		}
		fputs("\r\n", out);
	}
	if (o->json)
		fputc('[', out);
	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (o->json)
			fputs(nrows ? ",\n  {" : "\n  {", out);
		for (c = 0; c < ncols && !err; c++) {
			const char *text = (const char *)sqlite3_column_text(s, c);
			int type = sqlite3_column_type(s, c);

			if (o->json) {
				fputs(c ? ", " : "", out);
				json_string(out, sqlite3_column_name(s, c));
				fputs(": ", out);
				json_value(out, s, c);
			} else if (o->csv) {
				fputs(c ? "," : "", out);
				err = csv_field(out, text);
			} else {
				if (type != SQLITE_NULL && type != SQLITE_INTEGER &&
				    type != SQLITE_FLOAT)
					t.numeric[c] = false;
				err = table_push(&t, text);
			}
		}
		if (o->json)
			fputc('}', out);
		else if (o->csv)
			fputs("\r\n", out);
		nrows++;
	}
	if (err)
		goto out;
	/*
	 * Ctrl-C in a step the progress handler could not stop (one long function call) that then
	 * finished: the query was still asked to stop, and a faster host finished it in the grace.
	 */
	if (rc == SQLITE_DONE && o->interrupted && *o->interrupted)
		rc = SQLITE_INTERRUPT;
	if (rc != SQLITE_DONE) {
		if (o->json)
			fputs("\n", out);
		err = query_error(db, rc, g);
		goto out;
	}
	if (o->json)
		fputs(nrows ? "\n]\n" : "]\n", out);
	if (!o->csv && !o->json && ncols)
		table_print(out, &t);
out:
	if (err == -ENOMEM)
		fprintf(stderr, "stkreport: --sql: %s\n", strerror(ENOMEM));
	for (i = 0; i < t.n; i++)
		free(t.cells[i]);
	free(t.cells);
	free(t.numeric);
	free(t.widths);
	rep_charge__clear(&t.charge);
	return err;
}

/* The text after the first statement may hold comments and semicolons, nothing else. */
static int only_one(sqlite3 *db, const char *tail, struct guard *g)
{
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(db, tail, -1, &s, NULL);

	if (rc == SQLITE_OK && !s)
		return 0;
	sqlite3_finalize(s);
	fprintf(stderr, "stkreport: --sql: one statement only, found more: %.40s\n",
		tail + strspn(tail, " \t\r\n;"));
	return -EINVAL;
}

/* o->sql on a database locked down with g (lock_down()), its result on out. */
static int run_query(FILE *out, sqlite3 *db, struct guard *g, const struct rep_opts *o)
{
	sqlite3_stmt *s = NULL;
	const char *tail = NULL;
	int rc, err;

	g->refused[0] = 0;
	rc = sqlite3_prepare_v2(db, o->sql, -1, &s, &tail);
	if (rc != SQLITE_OK)
		return query_error(db, rc, g);
	if (!s) {
		fprintf(stderr, "stkreport: --sql: empty query\n");
		return -EINVAL;
	}
	err = only_one(db, tail, g);
	if (err)
		goto out;
	err = run_rows(out, db, s, o, g);
	if (!err && (fflush(out) || ferror(out))) {
		fprintf(stderr, "stkreport: standard output: %s\n", strerror(errno ? errno : EIO));
		err = -EIO;
	}
out:
	sqlite3_finalize(s);
	return err;
}

/* ---- the database, a capture at a time ------------------------------------------------------ */

struct rep_sql *rep_sql__open(const struct rep_opts *o)
{
	struct rep_sql *q = calloc(1, sizeof(*q));
	int err;

	if (!q) {
		fprintf(stderr, "stkreport: --sql: %s\n", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	q->o = o;
	q->l.o = o;
	q->l.heap = &q->heap;
	sql_heap_start(&q->heap, o->memory);
	/* one thread: no mutexes */
	if (sqlite3_open_v2(":memory:", &q->l.db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		fprintf(stderr, "stkreport: --sql: %s\n",
			q->l.db ? sqlite3_errmsg(q->l.db) : "out of memory");
		rep_sql__close(q);
		errno = ENOMEM;
		return NULL;
	}
	/* Ctrl-C: main.c's handler sets the flag, the engine polls it every 1000 steps */
	if (o->interrupted)
		sqlite3_progress_handler(q->l.db, 1000, check_interrupt, (void *)o->interrupted);
	err = load_error(load_begin(&q->l));
	if (err) {
		rep_sql__close(q);
		errno = -err;
		return NULL;
	}
	return q;
}

int rep_sql__add(struct rep_sql *q, const struct rep_capture *c, const char *name)
{
	return load_error(load_capture(&q->l, c, name));
}

void rep_sql__close(struct rep_sql *q)
{
	int i;

	if (!q)
		return;
	for (i = 0; i < ST__COUNT; i++)
		sqlite3_finalize(q->l.st[i]);
	loader_free(&q->l);
	sqlite3_close(q->l.db);
	sql_heap_end(&q->heap);
	free(q);
}

int rep_sql__finish(struct rep_sql *q, FILE *out, const struct rep_opts *const *qs, int nq)
{
	sqlite3 *db = q->l.db;
	struct guard g = { "" };
	bool locked = false;
	int err, i;

	err = exec(db, finish_sql, "index");
	if (!err)
		err = exec(db, "COMMIT", "commit");
	if (!err)
		err = sql_heap_sync(&q->heap);
	if (!err && q->o->sqlite_out)
		err = write_db(db, q->o->sqlite_out);
	for (i = 0; i < nq && !err; i++) {
		if (!qs[i]->sql)
			continue;
		/* once: the authorizer stays, and would refuse lock_down()'s own pragmas */
		if (!locked) {
			err = lock_down(db, &g);
			locked = true;
		}
		if (!err)
			err = run_query(out, db, &g, qs[i]);
	}
	return err;
}

int rep_sql_run_many(FILE *out, struct rep_capture **caps, const char **names, int n,
		     const struct rep_opts *const *qs, int nq)
{
	struct rep_sql *q = rep_sql__open(qs[0]);
	int err = q ? 0 : -errno, i;

	for (i = 0; i < n && !err; i++)
		err = rep_sql__add(q, caps[i], names[i]);
	if (!err)
		err = rep_sql__finish(q, out, qs, nq);
	rep_sql__close(q);
	return err;
}
